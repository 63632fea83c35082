//! The resident index (docs/contract.md, "The index"): units with their fingerprints,
//! tables from exact and renamed fingerprints and LSH band keys to units
//! ([`KeyBuckets`]), their sketches by unit id, the symbol table and usage counts. Built
//! once in parallel, then updated one file at a time; finding a unit's copies looks up
//! buckets and never scans all units.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::Result;
use rustc_hash::FxHashMap;
use serde::Serialize;
use tree_sitter::Tree;

use crate::buckets::{Buckets, Entry, KeyBuckets, prefetch};
use crate::cache::{CacheStats, IndexCache};
use crate::config::RuleConfig;
use crate::fingerprint::{Counts, NearRule, Sketch, common_at_least};
use crate::lang;
use crate::units::{self, Fingerprinter, ParsedFile, UnitData, UnitKind};
use crate::walk::{self, SkipReason, WalkOptions};

mod footprint;
pub use footprint::Footprint;

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
    pub identifiers: Vec<(Box<str>, u32)>,
    pub parse_errors: bool,
}

/// How a unit copies another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum CopyKind {
    #[serde(rename = "copy.exact")]
    Exact,
    #[serde(rename = "copy.renamed")]
    Renamed,
    #[serde(rename = "copy.near")]
    Near,
}

impl CopyKind {
    /// The rule id of docs/contract.md, "Copy rules".
    pub fn rule(self) -> &'static str {
        match self {
            Self::Exact => "copy.exact",
            Self::Renamed => "copy.renamed",
            Self::Near => "copy.near",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyMatch {
    pub id: UnitId,
    pub kind: CopyKind,
    /// 1.0 for exact and renamed copies; for near copies the exact Jaccard, or
    /// the existing unit's share contained in the new one (`NearRule`).
    pub similarity: f64,
}

pub struct Index {
    cfg: RuleConfig,
    near: NearRule,
    fp: Fingerprinter,
    files: FxHashMap<Arc<str>, FileEntry>,
    units: Vec<Option<Unit>>,
    /// By unit id, what a copy lookup reads of a candidate whose size passed
    /// (the size is in its bucket entry, see [`Candidate`]) before its
    /// shingles: most LSH candidates are ruled out here, in two cache lines.
    sketches: Vec<Sketch>,
    free: Vec<UnitId>,
    exact: KeyBuckets,
    renamed: KeyBuckets,
    lsh: KeyBuckets,
    symbols: Buckets<Box<str>>,
    /// Identifier occurrences outside the definitions they name, over all files.
    usages: FxHashMap<Box<str>, u32>,
    /// How long one file's parse may take (see [`units::OverBudget`]).
    parse_budget: Duration,
}

/// Source bytes per unit, to size a build's tables before its files are
/// parsed (tokio averages 272, windows counted); a project with more units
/// grows them once or twice.
const BYTES_PER_UNIT: u64 = 256;

/// Wall-clock seconds per phase of a full build; the parallel phase is split
/// between reading, parsing and fingerprinting in proportion to their CPU time.
/// Inserting runs beside the parallel phase (`insert` is its busy time), so the
/// phases may add up to more than `total`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Phases {
    pub walk: f64,
    pub read: f64,
    pub parse: f64,
    pub fingerprint: f64,
    pub insert: f64,
    pub total: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildReport {
    pub files: usize,
    pub units: usize,
    pub functions: usize,
    pub classes: usize,
    pub windows: usize,
    /// Language name -> files indexed.
    pub languages: BTreeMap<&'static str, usize>,
    /// Files whose tree holds errors (indexed anyway).
    pub parse_errors: usize,
    /// Reason -> files skipped.
    pub skipped: BTreeMap<&'static str, usize>,
    pub seconds: Phases,
    /// How the on-disk cache served this build, when one was used.
    pub cache: Option<CacheStats>,
    /// What the built index holds in memory, by what for.
    pub memory: Footprint,
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
            sketches: Vec::new(),
            free: Vec::new(),
            exact: KeyBuckets::default(),
            renamed: KeyBuckets::default(),
            lsh: KeyBuckets::default(),
            symbols: Buckets::default(),
            usages: FxHashMap::default(),
            parse_budget: units::DEFAULT_PARSE_BUDGET,
        })
    }

    /// Sets how long one file's parse may take from now on.
    pub fn set_parse_budget(&mut self, budget: Duration) {
        self.parse_budget = budget;
    }

    /// Walks `root`, parses every indexable file in parallel and indexes it.
    pub fn build(root: &Path, cfg: RuleConfig, opts: WalkOptions) -> Result<(Self, BuildReport)> {
        let (index, report, _) = Self::build_with_sources(root, cfg, opts, None, None)?;
        Ok((index, report))
    }

    /// [`Index::build`], also returning the text and syntax tree of every indexed
    /// file of at least `keep_from` bytes (so later edits re-parse incrementally).
    /// With a `cache`, a file whose parse it holds is not parsed again (unless
    /// its tree is to be kept), and every other file's parse is stored in it.
    pub fn build_with_sources(
        root: &Path,
        cfg: RuleConfig,
        opts: WalkOptions,
        keep_from: Option<usize>,
        cache: Option<&IndexCache>,
    ) -> Result<(Self, BuildReport, Vec<Source>)> {
        let start = Instant::now();
        let mut index = Self::new(cfg)?;
        let walked = walk::walk(root, opts)?;
        let walk_time = start.elapsed();
        let pass_start = Instant::now();
        let fp = index.fp.clone();
        let budget = index.parse_budget;
        let candidates = &walked.candidates;
        let bytes: u64 = candidates.iter().map(|c| c.size).sum();
        index.reserve(usize::try_from(bytes / BYTES_PER_UNIT).unwrap_or(usize::MAX));
        // Files are parsed in parallel, each worker taking the next one, and
        // inserted on a thread of their own in the walk's order (so unit ids
        // are those of a serial build) while later files are still parsed.
        let next = AtomicUsize::new(0);
        let (sender, outcomes) = mpsc::channel();
        let inserted = std::thread::scope(|scope| {
            let inserter = scope.spawn(|| index.insert_in_order(outcomes));
            rayon::broadcast(|_| {
                let sender = sender.clone();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(c) = candidates.get(i) else { break };
                    let outcome = file_outcome(c, &fp, budget, keep_from, cache);
                    if sender.send((i, outcome)).is_err() {
                        // The inserter stopped at an error: nothing more is needed.
                        break;
                    }
                }
            });
            drop(sender);
            inserter.join()
        });
        let inserted = match inserted {
            Ok(inserted) => inserted?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let pass_time = pass_start.elapsed();
        let mut report = BuildReport::default();
        for (reason, n) in walked.skipped.iter().chain(&inserted.skipped) {
            *report.skipped.entry(reason.label()).or_default() += n;
        }
        let cpu = inserted.cpu;
        let cpu_total: f64 = cpu.iter().map(Duration::as_secs_f64).sum();
        let share = |i: usize| {
            if cpu_total > 0.0 {
                pass_time.saturating_sub(inserted.tail).as_secs_f64() * cpu[i].as_secs_f64()
                    / cpu_total
            } else {
                0.0
            }
        };
        report.seconds = Phases {
            walk: walk_time.as_secs_f64(),
            read: share(0),
            parse: share(1),
            fingerprint: share(2),
            insert: inserted.busy.as_secs_f64(),
            total: start.elapsed().as_secs_f64(),
        };
        report.cache = cache.map(IndexCache::stats);
        index.fill_counts(&mut report);
        report.memory = index.footprint();
        Ok((index, report, inserted.sources))
    }

    /// Inserts the outcomes of the parallel pass in the walk's order, whatever
    /// order they arrive in; the first error in that order ends the build.
    fn insert_in_order(
        &mut self,
        outcomes: mpsc::Receiver<(usize, Result<FileOutcome>)>,
    ) -> Result<Inserted> {
        let mut inserted = Inserted::default();
        let mut waiting: BTreeMap<usize, Result<FileOutcome>> = BTreeMap::new();
        let mut next = 0;
        let mut last_arrival = Instant::now();
        for (i, outcome) in outcomes {
            last_arrival = Instant::now();
            waiting.insert(i, outcome);
            while let Some(outcome) = waiting.remove(&next) {
                next += 1;
                let outcome = outcome?;
                let started = Instant::now();
                for (total, t) in inserted.cpu.iter_mut().zip(outcome.times) {
                    *total += t;
                }
                match outcome.parsed {
                    Ok(parsed) => self.insert_parsed(outcome.path, parsed),
                    Err(reason) => *inserted.skipped.entry(reason).or_default() += 1,
                }
                inserted.sources.extend(outcome.source);
                inserted.busy += started.elapsed();
            }
        }
        inserted.tail = last_arrival.elapsed();
        Ok(inserted)
    }

    fn fill_counts(&self, report: &mut BuildReport) {
        report.files = self.files.len();
        for entry in self.files.values() {
            *report.languages.entry(entry.language).or_default() += 1;
            report.parse_errors += usize::from(entry.parse_errors);
        }
        for (_, unit) in self.units() {
            report.units += 1;
            match unit.data.kind {
                UnitKind::Function => report.functions += 1,
                UnitKind::Class => report.classes += 1,
                UnitKind::Window => report.windows += 1,
            }
        }
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

    /// The units of `path` changed by an edit from `old` (parsed as `old_tree`)
    /// to `new`: only units touching the edited bytes, re-parsed incrementally.
    pub fn parse_edit(
        &self,
        path: &str,
        old: &str,
        old_tree: &Tree,
        new: &str,
    ) -> Result<Option<ParsedFile>> {
        let Some(lang) = lang::for_path(path) else {
            return Ok(None);
        };
        let (tree, changed) = units::reparse(lang, old, old_tree, new, self.parse_budget)
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
        while let Some(data) = units.next() {
            // The tables are far larger than the caches: announce the next
            // unit's slots so their misses overlap this unit's inserts.
            if let Some(next) = units.peek() {
                self.prefetch_slots(next);
            }
            let id = self.alloc(Unit {
                file: Arc::clone(&path),
                data,
            });
            let unit = self.units[id as usize].as_ref().map(|u| &u.data);
            if let Some(data) = unit {
                let entry = Entry {
                    id,
                    meta: Candidate::meta(data),
                };
                self.exact.insert(data.exact, entry);
                self.renamed.insert(data.renamed, entry);
                for &key in data.bands.iter() {
                    self.lsh.insert(key, entry);
                }
                if data.kind != UnitKind::Window {
                    let name: Box<str> = data.name.as_str().into();
                    self.symbols.insert(name, id);
                }
            }
            ids.push(id);
        }
        for (name, n) in &parsed.identifiers {
            // Most names are already counted: no new key to allocate.
            match self.usages.get_mut(name) {
                Some(count) => *count += n,
                None => {
                    self.usages.insert(name.clone(), *n);
                }
            }
        }
        self.files.insert(
            path,
            FileEntry {
                language: parsed.language,
                units: ids,
                identifiers: parsed.identifiers,
                parse_errors: parsed.parse_errors,
            },
        );
    }

    /// A hint that `data`'s fingerprint and band slots will be written soon.
    fn prefetch_slots(&self, data: &UnitData) {
        self.exact.prefetch(data.exact);
        self.renamed.prefetch(data.renamed);
        data.bands.iter().for_each(|&key| self.lsh.prefetch(key));
    }

    /// Room for `units` more units in every table, each band key counted.
    fn reserve(&mut self, units: usize) {
        self.units.reserve(units);
        self.sketches.reserve(units);
        self.exact.reserve(units);
        self.renamed.reserve(units);
        self.lsh.reserve(units * self.cfg.bands);
        self.symbols.reserve(units / 2);
    }

    fn alloc(&mut self, unit: Unit) -> UnitId {
        let sketch = Sketch::of(&unit.data.shingles);
        match self.free.pop() {
            Some(id) => {
                self.units[id as usize] = Some(unit);
                self.sketches[id as usize] = sketch;
                id
            }
            None => {
                self.units.push(Some(unit));
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
            self.exact.remove(data.exact, id);
            self.renamed.remove(data.renamed, id);
            for &key in data.bands.iter() {
                self.lsh.remove(key, id);
            }
            if data.kind != UnitKind::Window {
                self.symbols.remove(data.name.as_str(), id);
            }
            self.free.push(id);
        }
        for (name, n) in &entry.identifiers {
            if let Some(count) = self.usages.get_mut(name) {
                *count = count.saturating_sub(*n);
                if *count == 0 {
                    self.usages.remove(name);
                }
            }
        }
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
            .get(name)
            .iter()
            .filter_map(|&id| Some((id, self.unit(id)?)))
    }

    /// References to `name` outside its definitions, over the whole project.
    pub fn usages(&self, name: &str) -> u32 {
        self.usages.get(name).copied().unwrap_or(0)
    }

    /// The indexed units `data` copies: exact, then renamed, then near (LSH
    /// candidates of its band keys and of its leave-one-out keys, confirmed by
    /// [`NearRule`] on their exact shingle sets). `skip` filters units out (the unit
    /// itself, its own file); each unit is reported once, under its strongest kind.
    pub fn copies(&self, data: &UnitData, skip: impl Fn(UnitId, &Unit) -> bool) -> Vec<CopyMatch> {
        self.copies_by(data, skip, Prefilter::Sketch)
    }

    /// [`Index::copies`], ruling candidates out before their shingles are read
    /// as `prefilter` says: the matches are the same either way.
    pub fn copies_by(
        &self,
        data: &UnitData,
        skip: impl Fn(UnitId, &Unit) -> bool,
        prefilter: Prefilter,
    ) -> Vec<CopyMatch> {
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => self.lookup(data, &skip, prefilter, &mut scratch),
            // A lookup from inside `skip`: its own buffers.
            Err(_) => self.lookup(data, &skip, prefilter, &mut Scratch::default()),
        })
    }

    /// See [`Index::copies_by`]. In steps, each announcing the reads of the
    /// next ([`prefetch`]) so that their cache misses overlap: every bucket,
    /// then the sketches of the candidates whose sizes pass, then the units of
    /// those the sketch lets through, whose shingles confirm them.
    fn lookup(
        &self,
        data: &UnitData,
        skip: &dyn Fn(UnitId, &Unit) -> bool,
        prefilter: Prefilter,
        scratch: &mut Scratch,
    ) -> Vec<CopyMatch> {
        // The leave-one-out keys only add candidates, confirmed like the others.
        let keys = || data.bands.iter().chain(data.leave_one_out.iter()).copied();
        self.prefetch_slots(data);
        data.leave_one_out
            .iter()
            .for_each(|&key| self.lsh.prefetch(key));
        let mut found: Vec<CopyMatch> = Vec::new();
        for (map, key, kind) in [
            (&self.exact, data.exact, CopyKind::Exact),
            (&self.renamed, data.renamed, CopyKind::Renamed),
        ] {
            for &Entry { id, .. } in map.get(key) {
                let Some(unit) = self.unit(id) else { continue };
                // An exact copy also has the same renamed fingerprint: report it once.
                if (kind == CopyKind::Renamed && unit.data.exact == data.exact) || skip(id, unit) {
                    continue;
                }
                found.push(CopyMatch {
                    id,
                    kind,
                    similarity: 1.0,
                });
            }
        }
        let n = data.shingles.len();
        let new_whole = data.kind != UnitKind::Window;
        scratch.start(self.units.len());
        for key in keys() {
            for &entry in self.lsh.get(key) {
                if !scratch.first_time(entry.id) {
                    continue;
                }
                let (m, whole) = Candidate::sizes(entry.meta);
                if let Some(needed) = self.near.needed(n, m, whole && new_whole) {
                    scratch.candidates.push(Candidate {
                        id: entry.id,
                        needed,
                    });
                }
            }
        }
        scratch.finish();
        let counts = match prefilter {
            Prefilter::Sketch if !scratch.candidates.is_empty() => Counts::of(&data.shingles),
            _ => None,
        };
        if let Some(counts) = &counts {
            let sketch = |c: &Candidate| self.sketches.get(c.id as usize);
            scratch
                .candidates
                .iter()
                .filter_map(sketch)
                .for_each(prefetch);
            scratch.candidates.retain(|c| {
                sketch(c).is_none_or(|sketch| counts.common_at_most(sketch) >= c.needed)
            });
        }
        // In id order, as the matches are reported.
        scratch.candidates.sort_unstable_by_key(|c| c.id);
        let units = || {
            scratch
                .candidates
                .iter()
                .filter_map(|c| Some((c, self.unit(c.id)?)))
        };
        units().for_each(|(_, unit)| prefetch(unit));
        for (&Candidate { id, needed }, unit) in units() {
            // Same renamed fingerprint: already reported above.
            if unit.data.renamed == data.renamed || skip(id, unit) {
                continue;
            }
            let (m, whole) = (unit.data.shingles.len(), unit.data.kind != UnitKind::Window);
            let Some(similarity) = common_at_least(&data.shingles, &unit.data.shingles, needed)
                .and_then(|common| self.near.similarity(n, m, common, whole && new_whole))
            else {
                continue;
            };
            found.push(CopyMatch {
                id,
                kind: CopyKind::Near,
                similarity,
            });
        }
        found
    }

    /// A canonical description of the index's content, independent of unit ids
    /// and insertion order: equal for equal projects however they were built.
    pub fn digest(&self) -> IndexDigest {
        let describe = |id: UnitId| {
            self.unit(id)
                .map(|u| {
                    format!(
                        "{}:{}-{}:{:?}:{}",
                        u.file, u.data.start_line, u.data.end_line, u.data.kind, u.data.name
                    )
                })
                .unwrap_or_else(|| format!("dangling unit {id}"))
        };
        let sorted = |ids: &[UnitId]| {
            let mut v: Vec<String> = ids.iter().map(|&id| describe(id)).collect();
            v.sort();
            v
        };
        let buckets = |map: &KeyBuckets| {
            let mut out: Vec<(u64, Vec<String>)> = map
                .iter()
                .filter(|(_, entries)| !entries.is_empty())
                .map(|(k, entries)| {
                    let ids: Vec<UnitId> = entries.iter().map(|e| e.id).collect();
                    (k, sorted(&ids))
                })
                .collect();
            out.sort();
            out
        };
        let mut units: Vec<String> = self
            .units()
            .map(|(id, u)| {
                format!(
                    "{} {:x} {:x} {}",
                    describe(id),
                    u.data.exact,
                    u.data.renamed,
                    u.data.tokens
                )
            })
            .collect();
        units.sort();
        let mut usages: Vec<(String, u32)> = self
            .usages
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        usages.sort();
        let mut symbols: Vec<(String, Vec<String>)> = self
            .symbols
            .iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(k, ids)| (k.to_string(), sorted(ids)))
            .collect();
        symbols.sort();
        IndexDigest {
            units,
            exact: buckets(&self.exact),
            renamed: buckets(&self.renamed),
            lsh: buckets(&self.lsh),
            symbols,
            usages,
        }
    }
}

/// What a copy lookup does before reading a candidate's shingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefilter {
    /// The sizes' bound, then the shingle counts' (the candidate's [`Sketch`]).
    Sketch,
    /// The sizes' bound only.
    Sizes,
}

/// An LSH candidate of a lookup whose size admits a near copy, with the fewest
/// shingles it must share ([`NearRule::needed`]).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    id: UnitId,
    needed: usize,
}

/// The bit of an entry's `meta` that says its unit is whole (see `NearRule`).
const WHOLE: u32 = 1 << 31;

impl Candidate {
    /// What every bucket entry of a unit carries: its shingle count (below
    /// 2^31: a unit of 8 GB of shingles is not indexed) and whether it is whole.
    fn meta(data: &UnitData) -> u32 {
        let m = u32::try_from(data.shingles.len()).unwrap_or(u32::MAX) & !WHOLE;
        m | if data.kind == UnitKind::Window {
            0
        } else {
            WHOLE
        }
    }

    /// The shingle count and the whole flag of a [`Candidate::meta`].
    fn sizes(meta: u32) -> (usize, bool) {
        ((meta & !WHOLE) as usize, meta & WHOLE != 0)
    }
}

/// A lookup's buffers, kept per thread so that a lookup allocates only its
/// result: the candidates, and a bit per unit id seen (cleared after).
#[derive(Debug, Default)]
struct Scratch {
    candidates: Vec<Candidate>,
    seen: Vec<u64>,
    /// The ids marked in `seen`, to clear them.
    marked: Vec<UnitId>,
}

impl Scratch {
    fn start(&mut self, units: usize) {
        self.candidates.clear();
        self.seen.resize(self.seen.len().max(units.div_ceil(64)), 0);
    }

    /// Marks `id` seen; false when it already was.
    fn first_time(&mut self, id: UnitId) -> bool {
        let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
        let Some(w) = self.seen.get_mut(word) else {
            return false;
        };
        let first = *w & bit == 0;
        *w |= bit;
        if first {
            self.marked.push(id);
        }
        first
    }

    fn finish(&mut self) {
        for id in self.marked.drain(..) {
            self.seen[id as usize / 64] = 0;
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// What [`Index::insert_in_order`] gathered: the parallel pass's CPU time per
/// step, files skipped, kept sources, its own time inserting, and how long it
/// went on after the last file arrived.
#[derive(Default)]
struct Inserted {
    cpu: [Duration; 3],
    skipped: BTreeMap<SkipReason, usize>,
    sources: Vec<Source>,
    busy: Duration,
    tail: Duration,
}

/// One file of the parallel pass: its units or why it was skipped, its source
/// when kept, and the CPU time spent reading, parsing and fingerprinting it.
struct FileOutcome {
    path: Arc<str>,
    parsed: Result<ParsedFile, SkipReason>,
    source: Option<Source>,
    times: [Duration; 3],
}

/// What the parallel pass makes of one file: its text read, parsed (or its
/// parse taken from `cache`) and fingerprinted, timed per step.
fn file_outcome(
    c: &walk::Candidate,
    fp: &Fingerprinter,
    budget: Duration,
    keep_from: Option<usize>,
    cache: Option<&IndexCache>,
) -> Result<FileOutcome> {
    let path: Arc<str> = Arc::from(c.rel.as_str());
    let t0 = Instant::now();
    let text = match walk::read(c)? {
        Ok(text) => text,
        Err(reason) => {
            return Ok(FileOutcome {
                path,
                parsed: Err(reason),
                source: None,
                times: [t0.elapsed(), Duration::ZERO, Duration::ZERO],
            });
        }
    };
    let t1 = Instant::now();
    let parse_tree = || {
        let started = Instant::now();
        let tree = units::parse_tree(c.lang, &text, budget)?;
        Ok::<_, anyhow::Error>((tree, started.elapsed()))
    };
    let mut tree = None;
    let mut fresh = || {
        let (parsed_tree, took) = parse_tree()?;
        let parsed = units::extract(c.lang, &text, &parsed_tree, fp, None);
        tree = Some((parsed_tree, took));
        Ok(parsed)
    };
    let keep = keep_from.is_some_and(|min| text.len() >= min);
    let parsed = match cache {
        Some(cache) => cache.parsed(c.lang, &text, fresh),
        None => fresh(),
    }
    .and_then(|parsed| {
        // A kept file needs its tree even when the cache had its units.
        if keep && tree.is_none() {
            tree = Some(parse_tree()?);
        }
        Ok(parsed)
    });
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(e) if e.is::<units::OverBudget>() => {
            return Ok(FileOutcome {
                path,
                parsed: Err(SkipReason::OverBudget),
                source: None,
                times: [t1 - t0, t1.elapsed(), Duration::ZERO],
            });
        }
        Err(e) => return Err(e.context(format!("cannot parse {}", c.rel))),
    };
    let parse_time = tree.as_ref().map_or(Duration::ZERO, |(_, took)| *took);
    let times = [t1 - t0, parse_time, t1.elapsed().saturating_sub(parse_time)];
    Ok(FileOutcome {
        source: tree.filter(|_| keep).map(|(tree, _)| Source {
            path: Arc::clone(&path),
            text,
            tree,
        }),
        path,
        parsed: Ok(parsed),
        times,
    })
}

/// A file's text and its syntax tree.
pub struct Source {
    pub path: Arc<str>,
    pub text: String,
    pub tree: Tree,
}

/// See [`Index::digest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDigest {
    pub units: Vec<String>,
    pub exact: Vec<(u64, Vec<String>)>,
    pub renamed: Vec<(u64, Vec<String>)>,
    pub lsh: Vec<(u64, Vec<String>)>,
    pub symbols: Vec<(String, Vec<String>)>,
    pub usages: Vec<(String, u32)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lookup as it reads on paper, without buckets' sizes, sketches,
    /// prefetches or buffers: every candidate of every key, confirmed on its
    /// shingles. The oracle `Index::copies` must agree with.
    fn plain_copies(
        index: &Index,
        data: &UnitData,
        skip: impl Fn(UnitId, &Unit) -> bool,
    ) -> Vec<CopyMatch> {
        let mut found = Vec::new();
        let mut ids: Vec<(UnitId, CopyKind)> = Vec::new();
        for (id, unit) in index.units() {
            if unit.data.exact == data.exact {
                ids.push((id, CopyKind::Exact));
            } else if unit.data.renamed == data.renamed {
                ids.push((id, CopyKind::Renamed));
            }
        }
        for kind in [CopyKind::Exact, CopyKind::Renamed] {
            for &(id, _) in ids.iter().filter(|(_, k)| *k == kind) {
                let unit = index.unit(id).unwrap();
                if !skip(id, unit) {
                    found.push(CopyMatch {
                        id,
                        kind,
                        similarity: 1.0,
                    });
                }
            }
        }
        let mut near: Vec<UnitId> = data
            .bands
            .iter()
            .chain(data.leave_one_out.iter())
            .flat_map(|&key| index.lsh.get(key).iter().map(|e| e.id))
            .collect();
        near.sort_unstable();
        near.dedup();
        for id in near {
            let unit = index.unit(id).unwrap();
            let whole = unit.data.kind != UnitKind::Window && data.kind != UnitKind::Window;
            let (n, m) = (data.shingles.len(), unit.data.shingles.len());
            let Some(needed) = index.near.needed(n, m, whole) else {
                continue;
            };
            let similarity = common_at_least(&data.shingles, &unit.data.shingles, needed)
                .and_then(|common| index.near.similarity(n, m, common, whole));
            if let Some(similarity) = similarity
                && unit.data.renamed != data.renamed
                && !skip(id, unit)
            {
                found.push(CopyMatch {
                    id,
                    kind: CopyKind::Near,
                    similarity,
                });
            }
        }
        found
    }

    /// Over a real corpus (this crate's sources, and the near-copy fixtures of
    /// its tests, some of them removed and indexed again so that ids are reused
    /// and buckets shrink), every lookup finds the same matches with the
    /// sketch, without it, and as [`plain_copies`] does, while the sketch rules
    /// out candidates the sizes let through.
    #[test]
    fn the_sketch_changes_no_match_and_rules_out_candidates() -> Result<()> {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut index, _) = Index::build(
            &crate_dir.join("src"),
            RuleConfig::default(),
            WalkOptions::default(),
        )?;
        for name in ["original", "near", "renamed"] {
            for ext in ["rs", "py", "ts", "js"] {
                let fixture = crate_dir.join(format!("tests/fixtures/{name}.{ext}.txt"));
                let text = std::fs::read_to_string(&fixture)?;
                index.update_file(&format!("fixtures/{name}.{ext}"), &text)?;
                index.update_file(&format!("fixtures/again/{name}.{ext}"), &text)?;
            }
        }
        for path in [
            "index.rs",
            "fixtures/again/near.rs",
            "fixtures/again/original.py",
        ] {
            assert!(index.remove_file(path), "{path}");
        }
        let text = std::fs::read_to_string(crate_dir.join("src/index.rs"))?;
        index.update_file("index.rs", &text)?;
        let (mut near, mut ruled_out) = (0, 0);
        for (_, unit) in index.units() {
            let other_file = |_: UnitId, other: &Unit| other.file == unit.file;
            let with = index.copies_by(&unit.data, other_file, Prefilter::Sketch);
            let without = index.copies_by(&unit.data, other_file, Prefilter::Sizes);
            let at = format!("{}:{}", unit.file, unit.data.start_line);
            assert_eq!(with, without, "{at}");
            let by_kind_and_id = |mut v: Vec<CopyMatch>| {
                v.sort_by_key(|m| (m.kind, m.id));
                v
            };
            assert_eq!(
                by_kind_and_id(with.clone()),
                by_kind_and_id(plain_copies(&index, &unit.data, other_file)),
                "{at}"
            );
            near += with.iter().filter(|m| m.kind == CopyKind::Near).count();
            let Some(counts) = Counts::of(&unit.data.shingles) else {
                continue;
            };
            for &key in unit.data.bands.iter() {
                for entry in index.lsh.get(key) {
                    let (m, whole) = Candidate::sizes(entry.meta);
                    let whole = whole && unit.data.kind != UnitKind::Window;
                    if let Some(needed) = index.near.needed(unit.data.shingles.len(), m, whole) {
                        let sketch = &index.sketches[entry.id as usize];
                        ruled_out += usize::from(counts.common_at_most(sketch) < needed);
                    }
                }
            }
        }
        assert!(near > 0, "the corpus holds no near copy");
        assert!(ruled_out > 0, "the sketch ruled nothing out");
        Ok(())
    }
}
