//! The symbols' vectors: what the model reads of a symbol (its name's words and
//! its doc), the key its vector is kept by, and the vectors made ahead of a
//! ranking, kept in the process and in the engine's cache folders
//! (`VectorCache`).

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::Model;
use crate::index::Unit;
use crate::suggest::vector_cache::VectorCounts;

/// Word pieces of a symbol's text (the model's positions are 512; a doc's first
/// sentences say what the symbol does).
const SYMBOL_TOKENS: usize = 126;
/// Symbols embedded in one forward pass: the dense layers' products then pack
/// each weight matrix once for all of them (packing it for each symbol alone was
/// still a third of an embedding's time).
const SYMBOL_BATCH: usize = 16;

/// Comment markers that stand alone in a collapsed doc comment.
const COMMENT_MARKERS: [&str; 6] = ["///", "//!", "/**", "*/", "*", "#"];

impl Model {
    /// The unit-length vector of a unit's [`symbol_text`], as the candidates'
    /// own are made (a unit not in the index compared with those that are).
    pub fn embed_symbol(&self, unit: &Unit) -> Vec<f32> {
        self.embed(&symbol_text(unit), SYMBOL_TOKENS)
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
