//! Static word vectors for the suggestions: a table distilled from
//! all-MiniLM-L6-v2 by `scripts/vectors.py` (each WordPiece token's row is the
//! model's mean-pooled output for that token alone, reduced by PCA), so a text's
//! vector is the mean of its tokens' rows, with no forward pass at run time. It
//! bridges words a prompt and a helper do not share (`batches` and `chunked`).
//!
//! The table's format (integers little-endian): `SENSVEC1`, `u32` dims, `u32`
//! count, `count` tokens as a `u8` length and UTF-8 bytes (the vocabulary in id
//! order), then `count x dims` `f16` rows.
//!
//! Where it is found: `SENS_VECTORS` (a path; empty: no vectors), else
//! [`TABLE_FILE`] under `.tools/vectors/` of the first folder above the running
//! executable that has one (`scripts/setup.sh` builds it there, so the bench's
//! binaries and tests find it). Without a table the ranking is lexical only.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result, bail, ensure};
use rustc_hash::FxHashMap;

use crate::index::Unit;
use crate::words::{plain_words, word_hash};

/// The table's file name under `.tools/vectors/`.
pub const TABLE_FILE: &str = "all-minilm-l6-v2.vec";
const MAGIC: &[u8; 8] = b"SENSVEC1";
/// BERT's limit: a longer word is one unknown token.
const MAX_WORD_CHARS: usize = 100;
/// How much more a name's token counts in a symbol's vector than a doc's.
const NAME_WEIGHT: f32 = 2.0;

pub struct Vectors {
    dims: usize,
    ids: FxHashMap<String, u32>,
    rows: Vec<f32>,
    /// Symbol vectors by a hash of the text they were made from: computed when
    /// first asked, kept by the resident engine, never stale.
    symbols: Mutex<FxHashMap<u64, Option<Arc<[f32]>>>>,
}

impl std::fmt::Debug for Vectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Vectors({} x {})", self.ids.len(), self.dims)
    }
}

/// The process's table, found and loaded once; `None` when there is none (or it
/// cannot be read: the error, naming the file, goes to stderr once).
pub fn shared() -> Option<&'static Vectors> {
    static TABLE: OnceLock<Option<Vectors>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let path = table_path()?;
            Vectors::load(&path)
                .map_err(|e| eprintln!("sens: suggestions without word vectors: {e:#}"))
                .ok()
        })
        .as_ref()
}

fn table_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SENS_VECTORS") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .map(|dir| dir.join(".tools/vectors").join(TABLE_FILE))
        .find(|p| p.is_file())
}

impl Vectors {
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&bytes).with_context(|| format!("word vectors {}", path.display()))
    }

    fn parse(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader(bytes);
        ensure!(r.take(8)? == MAGIC, "not a SENSVEC1 table");
        let dims = r.u32()? as usize;
        let count = r.u32()? as usize;
        ensure!(dims > 0 && count > 0, "empty table ({dims} dims, {count} tokens)");
        let mut ids = FxHashMap::default();
        for id in 0..count {
            let len = r.take(1)?[0] as usize;
            let token = std::str::from_utf8(r.take(len)?)
                .with_context(|| format!("token {id} is not UTF-8"))?;
            ids.insert(token.to_owned(), id as u32);
        }
        let raw = r.take(count * dims * 2)?;
        if !r.0.is_empty() {
            bail!("{} bytes after the rows", r.0.len());
        }
        let rows = raw
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        Ok(Vectors {
            dims,
            ids,
            rows,
            symbols: Mutex::default(),
        })
    }

    /// WordPiece: the token ids of one lower-case word, greedy longest match with
    /// `##` continuations; empty when some part of it is not in the vocabulary
    /// (BERT's `[UNK]`, which carries nothing here).
    pub fn tokens(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return Vec::new();
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
                self.ids.get(&piece).map(|&id| (id, end))
            });
            let Some((id, end)) = found else {
                return Vec::new();
            };
            out.push(id);
            start = end;
        }
        out
    }

    /// The unit-length mean of weighted texts' token rows (words split and stop
    /// words dropped as the lexical ranker does, unstemmed); `None` when no word
    /// is in the vocabulary.
    pub fn embed(&self, texts: &[(&str, f32)]) -> Option<Vec<f32>> {
        let mut sum = vec![0.0f32; self.dims];
        let mut any = false;
        for &(text, weight) in texts {
            for word in plain_words(text) {
                for id in self.tokens(&word) {
                    let row = &self.rows[id as usize * self.dims..][..self.dims];
                    sum.iter_mut().zip(row).for_each(|(s, x)| *s += weight * x);
                    any = true;
                }
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        (any && norm > 0.0).then(|| sum.into_iter().map(|x| x / norm).collect())
    }

    /// A symbol's vector: its name (counted [`NAME_WEIGHT`] times), signature and
    /// doc comment.
    pub fn symbol(&self, unit: &Unit) -> Option<Arc<[f32]>> {
        let d = &unit.data;
        let key = word_hash(&format!("{}\0{}\0{}", d.name, d.signature, d.facts.doc));
        let mut cache = self.symbols.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(key)
            .or_insert_with(|| {
                self.embed(&[
                    (&d.name, NAME_WEIGHT),
                    (&d.signature, 1.0),
                    (&d.facts.doc, 1.0),
                ])
                .map(Arc::from)
            })
            .clone()
    }
}

/// The cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    f64::from(a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        ensure!(n <= self.0.len(), "truncated: {n} bytes wanted, {} left", self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of the given tokens, row i holding i + 1 in dimension i % dims.
    fn table(tokens: &[&str], dims: u32) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(dims.to_le_bytes());
        out.extend((tokens.len() as u32).to_le_bytes());
        for t in tokens {
            out.push(t.len() as u8);
            out.extend(t.as_bytes());
        }
        for i in 0..tokens.len() {
            for d in 0..dims as usize {
                let x = if d == i % dims as usize { i as f32 + 1.0 } else { 0.0 };
                out.extend(half::f16::from_f32(x).to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn wordpiece_takes_the_longest_piece_then_continuations() {
        let v = Vectors::parse(&table(&["[UNK]", "un", "unwant", "##want", "##ed", "run", "##ning"], 2)).unwrap();
        assert_eq!(v.tokens("unwanted"), [2, 4]);
        assert_eq!(v.tokens("running"), [5, 6]);
        assert_eq!(v.tokens("run"), [5]);
        // A part outside the vocabulary makes the whole word unknown.
        assert!(v.tokens("unwantedx").is_empty());
        assert!(v.tokens("wanted").is_empty());
    }

    #[test]
    fn a_text_vector_is_the_unit_mean_of_its_known_tokens() {
        let v = Vectors::parse(&table(&["[UNK]", "sort", "##ed", "list"], 2)).unwrap();
        // sort -> [0, 2], list -> [0, 4]: the mean points along dimension 1.
        let e = v.embed(&[("sort the list", 1.0)]).unwrap();
        assert!((e[1] - 1.0).abs() < 1e-6 && e[0].abs() < 1e-6, "{e:?}");
        assert!(v.embed(&[("zebra", 1.0)]).is_none());
    }

    #[test]
    fn a_truncated_or_corrupt_table_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = table(&["[UNK]", "word"], 4);
        let cases: [(&str, Vec<u8>); 4] = [
            ("truncated", good[..good.len() - 3].to_vec()),
            ("magic", [b"SENSVEC0", &good[8..]].concat()),
            ("trailing", [&good[..], &[0]].concat()),
            ("header", good[..10].to_vec()),
        ];
        for (name, bytes) in cases {
            let path = dir.path().join(format!("{name}.vec"));
            std::fs::write(&path, bytes).unwrap();
            let err = format!("{:#}", Vectors::load(&path).unwrap_err());
            assert!(err.contains(&path.display().to_string()), "{name}: {err}");
        }
        let path = dir.path().join("good.vec");
        std::fs::write(&path, good).unwrap();
        assert_eq!(Vectors::load(&path).unwrap().tokens("word"), [1]);
    }
}
