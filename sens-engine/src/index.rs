//! The resident index (docs/contract.md, "The index"): units with their fingerprints,
//! tables from exact and renamed fingerprints and LSH band keys to units
//! ([`KeyBuckets`]), their sketches by unit id, the symbol table and usage counts.
//! This module holds the index and its updates, one file at a time; it is built
//! once in parallel (`build`), finding a unit's copies looks up buckets and never
//! scans all units (`copies`), and its content is described for tests (`digest`).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use rustc_hash::FxHashMap;
use tree_sitter::Tree;

use crate::buckets::KeyBuckets;
use crate::config::RuleConfig;
use crate::fingerprint::{NearRule, Sketch, hash_text};
use crate::lang;
use crate::units::{self, Fingerprinter, ParsedFile, UnitData, UnitKind};

mod build;
mod copies;
mod digest;
mod footprint;
mod usages;

pub use build::{BuildReport, Keep, Phases, Source};
use copies::Candidate;
pub use copies::{CopyKind, CopyMatch, Prefilter};
pub use digest::IndexDigest;
pub use footprint::Footprint;
pub use usages::NameId;
use usages::Usages;

pub type UnitId = u32;

/// A unit in the index: its data and the file it lives in.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Project-relative, `/`-separated.
    pub file: Arc<str>,
    pub data: UnitData,
}

/// What one indexed file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    pub language: &'static str,
    pub units: Vec<UnitId>,
    /// Its identifiers' names (see [`Index::identifiers`]) and counts.
    pub identifiers: Vec<(NameId, u32)>,
    pub parse_errors: bool,
}

pub struct Index {
    cfg: RuleConfig,
    near: NearRule,
    fp: Fingerprinter,
    files: FxHashMap<Arc<str>, FileEntry>,
    units: Vec<Option<Unit>>,
    /// By unit id, what a copy lookup reads of an LSH candidate first: its
    /// shingle count and whether it is whole ([`Candidate::meta`]), four bytes
    /// of an array far smaller than the units'.
    sizes: Vec<u32>,
    /// By unit id, what a copy lookup reads of a candidate whose size passed
    /// before its shingles: most LSH candidates are ruled out here, in two
    /// cache lines.
    sketches: Vec<Sketch>,
    free: Vec<UnitId>,
    exact: KeyBuckets,
    renamed: KeyBuckets,
    lsh: KeyBuckets,
    /// Functions and class-likes by the hash of their name ([`symbol_key`]):
    /// a slot of the table instead of a copy of the name and a hash map's
    /// entry; a lookup keeps the units whose name is the one sought.
    symbols: KeyBuckets,
    /// Identifier occurrences outside the definitions they name, over all files.
    usages: Usages,
    /// How long one file's parse may take (see [`units::OverBudget`]).
    parse_budget: Duration,
}

impl Index {
    pub fn new(cfg: RuleConfig) -> Result<Self> {
        cfg.validate()?;
        Ok(Self {
            fp: Fingerprinter::new(&cfg),
            near: NearRule::new(&cfg),
            cfg,
            files: FxHashMap::default(),
            units: Vec::new(),
            sizes: Vec::new(),
            sketches: Vec::new(),
            free: Vec::new(),
            exact: KeyBuckets::default(),
            renamed: KeyBuckets::default(),
            lsh: KeyBuckets::default(),
            symbols: KeyBuckets::default(),
            usages: Usages::default(),
            parse_budget: units::DEFAULT_PARSE_BUDGET,
        })
    }

    /// Sets how long one file's parse may take from now on.
    pub fn set_parse_budget(&mut self, budget: Duration) {
        self.parse_budget = budget;
    }

    pub fn config(&self) -> &RuleConfig {
        &self.cfg
    }

    /// Parses `content` as the file `path` would hold it; `None` when no grammar
    /// knows the extension. Does not touch the index.
    pub fn parse(&self, path: &str, content: &str) -> Result<Option<ParsedFile>> {
        Ok(self
            .parse_with_tree(path, content)?
            .map(|(parsed, _)| parsed))
    }

    /// [`Index::parse`], also returning the syntax tree.
    pub fn parse_with_tree(&self, path: &str, content: &str) -> Result<Option<(ParsedFile, Tree)>> {
        let Some(lang) = lang::for_path(path) else {
            return Ok(None);
        };
        let tree = units::parse_tree(lang, content, self.parse_budget)
            .map_err(|e| e.context(format!("cannot parse {path}")))?;
        let parsed = units::extract(lang, content, &tree, &self.fp, None);
        Ok(Some((parsed, tree)))
    }

    /// The units of `path` changed by an edit from `old` to `new`: only units
    /// touching the edited bytes, re-parsed incrementally from `old_tree` (the
    /// parse of `old`) when there is one, else parsed whole.
    pub fn parse_edit(
        &self,
        path: &str,
        old: &str,
        old_tree: Option<&Tree>,
        new: &str,
    ) -> Result<Option<ParsedFile>> {
        let Some(lang) = lang::for_path(path) else {
            return Ok(None);
        };
        let (tree, changed) = match old_tree {
            Some(old_tree) => units::reparse(lang, old, old_tree, new, self.parse_budget),
            None => units::parse_changed(lang, old, new, self.parse_budget),
        }
        .map_err(|e| e.context(format!("cannot parse {path}")))?;
        Ok(Some(units::extract(
            lang,
            new,
            &tree,
            &self.fp,
            Some(changed),
        )))
    }

    /// Re-indexes one file from its new content. Returns false (and drops the
    /// file from the index) when no grammar knows its extension.
    pub fn update_file(&mut self, path: &str, content: &str) -> Result<bool> {
        match self.parse(path, content)? {
            Some(parsed) => {
                self.insert_parsed(Arc::from(path), parsed);
                Ok(true)
            }
            None => {
                self.remove_file(path);
                Ok(false)
            }
        }
    }

    /// Replaces whatever the index held for `path` with `parsed`.
    pub fn insert_parsed(&mut self, path: Arc<str>, parsed: ParsedFile) {
        self.remove_file(&path);
        let mut ids = Vec::with_capacity(parsed.units.len());
        let mut units = parsed.units.into_iter().peekable();
        while let Some(mut data) = units.next() {
            // The tables are far larger than the caches: announce the next
            // unit's slots so their misses overlap this unit's inserts.
            if let Some(next) = units.peek() {
                self.prefetch_slots(next, &next.bands);
            }
            // Not kept: a lookup or removal recomputes them (`band_keys`).
            let bands = std::mem::take(&mut data.bands);
            if data.kind == UnitKind::Module {
                // Named by where it stands: the cache keys a parse by content.
                data.name = path.to_string();
            }
            let id = self.alloc(Unit {
                file: Arc::clone(&path),
                data,
            });
            let unit = self.units[id as usize].as_ref().map(|u| &u.data);
            if let Some(data) = unit.filter(|d| d.kind.has_fingerprints()) {
                self.exact.insert(data.exact, id);
                self.renamed.insert(data.renamed, id);
                for &key in bands.iter() {
                    self.lsh.insert(key, id);
                }
                if data.kind.is_symbol() {
                    self.symbols.insert(symbol_key(&data.name), id);
                }
            }
            ids.push(id);
        }
        let identifiers = self.usages.add(&parsed.identifiers);
        self.files.insert(
            path,
            FileEntry {
                language: parsed.language,
                units: ids,
                identifiers,
                parse_errors: parsed.parse_errors,
            },
        );
    }

    /// A hint that `data`'s fingerprint and band slots will be read or written soon.
    fn prefetch_slots(&self, data: &UnitData, bands: &[u64]) {
        self.exact.prefetch(data.exact);
        self.renamed.prefetch(data.renamed);
        if data.kind.is_symbol() {
            self.symbols.prefetch(symbol_key(&data.name));
        }
        bands.iter().for_each(|&key| self.lsh.prefetch(key));
    }

    /// `data`'s LSH band keys: those it carries (a parse's units), else made
    /// again from its shingles, as a unit the index holds keeps none: 160 bytes
    /// a unit against one MinHash per lookup or removal (docs/performance.md,
    /// "What the index keeps per unit").
    pub fn band_keys<'a>(&self, data: &'a UnitData) -> Cow<'a, [u64]> {
        if data.bands.is_empty() {
            Cow::Owned(self.fp.minhash.band_keys(&data.shingles))
        } else {
            Cow::Borrowed(&data.bands)
        }
    }

    /// Room for `units` more units in every table, each band key counted.
    fn reserve(&mut self, units: usize) {
        self.units.reserve(units);
        self.sizes.reserve(units);
        self.sketches.reserve(units);
        self.exact.reserve(units);
        self.renamed.reserve(units);
        self.lsh.reserve(units * self.cfg.bands);
        self.symbols.reserve(units / 2);
    }

    /// Gives back what [`Index::reserve`] set aside and the build did not
    /// use: its estimate of the unit count is rough.
    fn shrink_to_fit(&mut self) {
        self.units.shrink_to_fit();
        self.sizes.shrink_to_fit();
        self.sketches.shrink_to_fit();
        self.exact.shrink_to_fit();
        self.renamed.shrink_to_fit();
        self.lsh.shrink_to_fit();
        self.symbols.shrink_to_fit();
    }

    fn alloc(&mut self, unit: Unit) -> UnitId {
        let sketch = Sketch::of(&unit.data.shingles);
        let size = Candidate::meta(&unit.data);
        match self.free.pop() {
            Some(id) => {
                self.units[id as usize] = Some(unit);
                self.sizes[id as usize] = size;
                self.sketches[id as usize] = sketch;
                id
            }
            None => {
                self.units.push(Some(unit));
                self.sizes.push(size);
                self.sketches.push(sketch);
                UnitId::try_from(self.units.len() - 1).unwrap_or(UnitId::MAX)
            }
        }
    }

    /// Drops a file and everything it contributed. Returns whether it was indexed.
    pub fn remove_file(&mut self, path: &str) -> bool {
        let Some(entry) = self.files.remove(path) else {
            return false;
        };
        for id in entry.units {
            let Some(unit) = self.units.get_mut(id as usize).and_then(Option::take) else {
                continue;
            };
            let data = &unit.data;
            if data.kind.has_fingerprints() {
                self.exact.remove(data.exact, id);
                self.renamed.remove(data.renamed, id);
                for &key in self.band_keys(data).iter() {
                    self.lsh.remove(key, id);
                }
            }
            if data.kind.is_symbol() {
                self.symbols.remove(symbol_key(&data.name), id);
            }
            self.free.push(id);
        }
        self.usages.remove(&entry.identifiers);
        true
    }

    pub fn unit(&self, id: UnitId) -> Option<&Unit> {
        self.units.get(id as usize).and_then(Option::as_ref)
    }

    pub fn units(&self) -> impl Iterator<Item = (UnitId, &Unit)> {
        self.units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| Some((UnitId::try_from(i).ok()?, u.as_ref()?)))
    }

    pub fn file(&self, path: &str) -> Option<&FileEntry> {
        self.files.get(path)
    }

    pub fn files(&self) -> impl Iterator<Item = (&str, &FileEntry)> {
        self.files.iter().map(|(p, e)| (&**p, e))
    }

    /// The symbol table: functions and class-likes named `name`.
    pub fn definitions(&self, name: &str) -> impl Iterator<Item = (UnitId, &Unit)> {
        self.symbols
            .get(symbol_key(name))
            .iter()
            .filter_map(|&id| Some((id, self.unit(id)?)))
            .filter(move |(_, unit)| unit.data.name == name)
    }

    /// References to `name` outside its definitions, over the whole project.
    pub fn usages(&self, name: &str) -> u32 {
        self.usages.count(name)
    }

    /// A file's identifiers with their counts, as its parse gave them.
    pub fn identifiers(&self, entry: &FileEntry) -> Vec<(Box<str>, u32)> {
        entry
            .identifiers
            .iter()
            .map(|&(id, n)| (self.usages.name(id).into(), n))
            .collect()
    }
}

/// The symbol table's key of a function or class-like named `name`.
fn symbol_key(name: &str) -> u64 {
    hash_text(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit the index holds keeps no band keys, and those made again from
    /// its shingles are the keys its parse gave, for every unit of a real
    /// corpus; removing every file takes every key out of the LSH table.
    #[test]
    fn band_keys_are_not_kept_and_are_made_again_as_parsed() -> Result<()> {
        let mut index = Index::new(RuleConfig::default())?;
        let corpus = units::test_corpus()?;
        let mut keys = Vec::new();
        for (path, text) in &corpus {
            let parsed = index.parse(path, text)?.expect("a known language");
            index.update_file(path, text)?;
            let entry = index.file(path).expect("indexed");
            assert_eq!(entry.units.len(), parsed.units.len(), "{path}");
            for (&id, fresh) in entry.units.iter().zip(&parsed.units) {
                let held = &index.unit(id).expect("held").data;
                assert!(held.bands.is_empty(), "{path}:{}", held.start_line);
                assert_eq!(*index.band_keys(held), *fresh.bands, "{path}");
                keys.extend_from_slice(&fresh.bands);
            }
        }
        assert!(keys.iter().all(|&key| !index.lsh.get(key).is_empty()));
        for (path, _) in &corpus {
            assert!(index.remove_file(path), "{path}");
        }
        assert!(keys.iter().all(|&key| index.lsh.get(key).is_empty()));
        Ok(())
    }
}
