//! Building the index of a project: its files walked, read, parsed (or taken from
//! the on-disk cache) and fingerprinted in parallel, inserted in the walk's
//! order, and the build's report of what it indexed, skipped and took how long.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;
use tree_sitter::Tree;

use super::{Footprint, Index};
use crate::cache::{CacheStats, IndexCache};
use crate::config::RuleConfig;
use crate::units::{self, Fingerprinter, ParsedFile, UnitKind};
use crate::walk::{self, SkipReason, WalkOptions};

/// Source bytes per unit, to size a build's tables before its files are
/// parsed: tokio averages 272 (windows counted), the vendored corpus about 350
/// (files skipped for their content counted). A table sized over the count
/// holds its slack through the build, when the index is largest; one under it
/// grows in place, once or twice.
const BYTES_PER_UNIT: u64 = 320;

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
    /// Files with a module item (a doc or re-exports): not counted as units.
    pub modules: usize,
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
    /// Walks `root`, parses every indexable file in parallel and indexes it.
    pub fn build(root: &Path, cfg: RuleConfig, opts: WalkOptions) -> Result<(Self, BuildReport)> {
        let (index, report, _) = Self::build_with_sources(root, cfg, opts, None, None)?;
        Ok((index, report))
    }

    /// [`Index::build`], also returning the text (and syntax tree) of every
    /// indexed file as large as `keep` says (so that later edits fingerprint
    /// only what they touch, and re-parse only it where the tree is kept).
    /// With a `cache`, a file whose parse it holds is not parsed again (unless
    /// its tree is to be kept), and every other file's parse is stored in it.
    pub fn build_with_sources(
        root: &Path,
        cfg: RuleConfig,
        opts: WalkOptions,
        keep: Option<Keep>,
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
                    let outcome = file_outcome(c, &fp, budget, keep, cache);
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
        index.shrink_to_fit();
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
            report.units += usize::from(unit.data.kind.has_fingerprints());
            match unit.data.kind {
                UnitKind::Function => report.functions += 1,
                UnitKind::Class => report.classes += 1,
                UnitKind::Window => report.windows += 1,
                UnitKind::Module => report.modules += 1,
            }
        }
    }
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
    keep: Option<Keep>,
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
    let keep_text = keep.is_some_and(|k| text.len() >= k.text_from);
    let keep_tree = keep_text && keep.is_some_and(|k| text.len() >= k.tree_from);
    let parsed = match cache {
        Some(cache) => cache.parsed(c.lang, &text, fresh),
        None => fresh(),
    }
    .and_then(|parsed| {
        // A kept tree is parsed even when the cache had the file's units.
        if keep_tree && tree.is_none() {
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
        source: keep_text.then(|| Source {
            path: Arc::clone(&path),
            text,
            tree: tree.filter(|_| keep_tree).map(|(tree, _)| tree),
        }),
        path,
        parsed: Ok(parsed),
        times,
    })
}

/// A file's text and, where kept, its syntax tree.
pub struct Source {
    pub path: Arc<str>,
    pub text: String,
    pub tree: Option<Tree>,
}

/// What a build keeps of the files it indexes (see [`Source`]).
#[derive(Debug, Clone, Copy)]
pub struct Keep {
    /// The text of every file of at least this many bytes.
    pub text_from: usize,
    /// Its syntax tree too, from this many bytes on.
    pub tree_from: usize,
}
