//! The engine as the hook session sees it: the resident index of one project, its
//! `RuleConfig`, and what changed on disk since it last looked. Implements the
//! session's [`Judge`] trait.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::cache::IndexCache;
use crate::config::RuleConfig;
use crate::finding::{Finding, Suggestion};
use crate::fingerprint::hash_text;
use crate::index::{Index, Keep, Source};
use crate::judge::{FileChange, Judge};
use crate::reuse;
use crate::rules;
use crate::suggest;
use crate::tools::{self, ToolError};
use crate::units::{OverBudget, ParsedFile, UnitData};
use crate::walk::{self, WalkOptions};

/// What the engine keeps of the files it indexes at its start, so that a write
/// to one fingerprints only the units it touches: the text of files of 12 KiB
/// and more, and the syntax tree of those of 24 KiB and more, whose whole
/// parse (about 10 MB/s) would take most of a PreToolUse budget. A tree takes
/// about 25 bytes a byte of source: on tokio the trees of files from 12 to 24
/// KiB were 30 of the open engine's 77 MB (docs/experiments/scale.md). Every
/// file keeps its text and tree once the engine re-indexes it (files being
/// worked on).
const KEEP: Keep = Keep {
    text_from: 12 * 1024,
    tree_from: 24 * 1024,
};

/// What a file looked like when the engine last read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified: Option<SystemTime>,
    hash: u64,
    /// When the stamp was taken: a file modified within [`MTIME_SLACK`] of it may
    /// change again without its size or (coarse) mtime showing it.
    taken: SystemTime,
}

/// Modification times closer than this to the stamp are not trusted.
const MTIME_SLACK: Duration = Duration::from_secs(2);

impl Stamp {
    /// The file certainly still has the stamped content.
    fn unchanged(&self, meta: &std::fs::Metadata) -> bool {
        let modified = meta.modified().ok();
        self.size == meta.len()
            && modified.is_some()
            && self.modified == modified
            && modified.is_some_and(|m| m + MTIME_SLACK < self.taken)
    }
}

pub struct Engine {
    root: PathBuf,
    opts: WalkOptions,
    index: Index,
    /// Every file the walk offers (indexed or skipped by content), by relative path.
    stamps: FxHashMap<String, Stamp>,
    /// Text (and tree) of large files and of files re-indexed since the start,
    /// so a write to them fingerprints (and re-parses) only what it changes.
    sources: FxHashMap<String, Source>,
    /// Every prompt of the session: functions they name are not orphans.
    prompts: String,
    /// The on-disk cache folder, which also keeps the suggestions' symbol vectors.
    cache_dir: Option<PathBuf>,
}

impl Engine {
    /// Indexes the project at `root`.
    pub fn open(root: &Path, cfg: RuleConfig) -> Result<Self> {
        Self::open_with_cache(root, cfg, None)
    }

    /// Indexes the project at `root`, taking every file's parse that the on-disk
    /// `cache` holds from it and storing the others there.
    pub fn open_with_cache(
        root: &Path,
        cfg: RuleConfig,
        cache: Option<&IndexCache>,
    ) -> Result<Self> {
        let root = root.canonicalize().with_context(|| {
            format!(
                "{} is not a folder: give the project's root folder",
                root.display()
            )
        })?;
        let (index, _, sources) =
            Index::build_with_sources(&root, cfg, WalkOptions::default(), Some(KEEP), cache)?;
        // What the agent changes is judged at any size: a large file must not
        // pass unjudged, and the parse budget bounds its cost.
        let opts = WalkOptions {
            max_bytes: u64::MAX,
        };
        let mut engine = Self {
            root,
            opts,
            index,
            stamps: FxHashMap::default(),
            sources: sources
                .into_iter()
                .map(|s| (s.path.to_string(), s))
                .collect(),
            prompts: String::new(),
            cache_dir: cache.map(|c| c.dir().to_path_buf()),
        };
        for candidate in walk::walk(&engine.root, opts)?.candidates {
            let stamp = match engine.sources.get(&candidate.rel) {
                Some(source) => stamp(&candidate.abs, source.text.as_bytes())?,
                None => {
                    let bytes = std::fs::read(&candidate.abs)
                        .with_context(|| format!("cannot read {}", candidate.abs.display()))?;
                    stamp(&candidate.abs, &bytes)?
                }
            };
            engine.stamps.insert(candidate.rel, stamp);
        }
        Ok(engine)
    }

    /// Makes the suggestions' symbol vectors now (kept in the on-disk cache when
    /// the engine has one) instead of in the background after the first
    /// suggestion: a benchmark run calls it before its agent starts, so that its
    /// first suggestion ranks as its later ones and as every other run's do.
    /// Returns how many symbols it embedded.
    pub fn prepare_suggestions(&self) -> Result<usize> {
        match &self.cache_dir {
            Some(dir) => suggest::prepare_with_store(&self.index, dir),
            None => Ok(suggest::prepare(&self.index)),
        }
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project-relative path of `path` (absolute, or relative to the root);
    /// `None` when it lies outside the project.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let abs = normalize(&abs);
        let inside = abs
            .strip_prefix(&self.root)
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| {
                // The root is canonical; the path may reach it through a symlink.
                let parent = abs.parent()?.canonicalize().ok()?;
                let rel_parent = parent.strip_prefix(&self.root).ok()?;
                Some(rel_parent.join(abs.file_name()?))
            })?;
        let parts: Option<Vec<&str>> = inside
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect();
        let rel = parts?.join("/");
        (!rel.is_empty()).then_some(rel)
    }

    /// Sets how long one file's parse may take from now on.
    pub fn set_parse_budget(&mut self, budget: Duration) {
        self.index.set_parse_budget(budget);
    }

    /// Indexes `rel` from `text`, keeping its tree; drops it when no grammar knows it.
    fn reindex(&mut self, rel: &str, text: &str) -> Result<()> {
        match self.index.parse_with_tree(rel, text)? {
            Some((parsed, tree)) => {
                let path: Arc<str> = Arc::from(rel);
                self.index.insert_parsed(Arc::clone(&path), parsed);
                let source = Source {
                    path,
                    text: text.to_string(),
                    tree: Some(tree),
                };
                self.sources.insert(rel.to_string(), source);
            }
            None => self.forget(rel),
        }
        Ok(())
    }

    fn forget(&mut self, rel: &str) {
        self.index.remove_file(rel);
        self.sources.remove(rel);
    }

    /// The file as the index holds it, as a parsed file.
    fn indexed(&self, rel: &str) -> Option<ParsedFile> {
        let entry = self.index.file(rel)?;
        Some(ParsedFile {
            language: entry.language,
            units: entry
                .units
                .iter()
                .filter_map(|&id| Some(self.index.unit(id)?.data.clone()))
                .collect(),
            identifiers: self.index.identifiers(entry),
            parse_errors: entry.parse_errors,
        })
    }
}

/// The units the index holds for `rel` (none for a new file).
fn indexed_units<'a>(index: &'a Index, rel: &str) -> Vec<&'a UnitData> {
    index.file(rel).map_or_else(Vec::new, |entry| {
        entry
            .units
            .iter()
            .filter_map(|&id| Some(&index.unit(id)?.data))
            .collect()
    })
}

/// The PreToolUse findings of writing `content` to `rel`, judged against the
/// index of everything else; `old` is the file's kept text and tree, if any.
/// Files the index would skip (vendored, lock, minified, oversized, no grammar)
/// are not the project's code: nothing to judge. Shared by the engine and a replay.
pub(crate) fn write_findings(
    index: &Index,
    opts: WalkOptions,
    rel: &str,
    content: &str,
    old: Option<&Source>,
) -> Result<Vec<Finding>> {
    let size = u64::try_from(content.len()).unwrap_or(u64::MAX);
    if walk::path_verdict(rel, size, opts).is_err() {
        return Ok(Vec::new());
    }
    let parsed = match old {
        Some(old) => index.parse_edit(rel, &old.text, old.tree.as_ref(), content),
        None => index.parse(rel, content),
    };
    let after = match parsed {
        Ok(Some(after)) => after,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => return Ok(vec![unjudged(rel, e)?]),
    };
    let before = indexed_units(index, rel);
    Ok(rules::copy_findings(
        index,
        rel,
        content,
        &after,
        before.as_ref(),
    ))
}

/// The audit's findings (copies and orphans) over `changes`; the index must
/// already hold the project as it is after them; `prompt` is what the person
/// asked for in the session. Shared by the engine and a replay.
pub(crate) fn audit_findings(
    index: &Index,
    changes: &[FileChange],
    prompt: &str,
) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    for change in changes {
        let Some(text) = &change.after else { continue };
        let after = match index.parse(&change.path, text) {
            Ok(Some(after)) => after,
            Ok(None) => continue,
            Err(e) => {
                findings.push(unjudged(&change.path, e)?);
                continue;
            }
        };
        // An old version over budget had no units the index knew.
        let before = match &change.before {
            Some(old) => {
                index
                    .parse(&change.path, old)
                    .or_else(|e| match e.is::<OverBudget>() {
                        true => Ok(None),
                        false => Err(e),
                    })?
            }
            None => None,
        };
        let before = units_of(before.as_ref());
        findings.extend(rules::copy_findings(
            index,
            &change.path,
            text,
            &after,
            &before,
        ));
        findings.extend(rules::orphan_findings(
            index,
            &change.path,
            text,
            &after,
            &before,
            prompt,
        ));
    }
    Ok(findings)
}

/// The blocking `unjudged` finding for a file whose parse ran over its budget;
/// any other error stays an error (the engine never approves on error).
fn unjudged(path: &str, err: anyhow::Error) -> Result<Finding> {
    match err.downcast_ref::<OverBudget>() {
        Some(why) => Ok(rules::unjudged_finding(path, why)),
        None => Err(err),
    }
}

/// The candidates' vectors a PostToolUse may make before its note (about a
/// second of the model on this machine); with more missing (a session whose
/// background pass has not ended) it says nothing, as without the model.
pub(crate) const NOTE_MAX_EMBED: usize = 256;

/// The re-implementation notes (rule `reuse.note`) for the units `changes`
/// add, judged on `index` (which holds them, as after a rescan); none when the
/// index's rules turn the note off. A file the finder cannot parse has no
/// units to look up: the change rules already reported it.
pub(crate) fn reuse_notes(index: &Index, changes: &[FileChange], max_embed: usize) -> Vec<Finding> {
    if !index.config().reuse_notes {
        return Vec::new();
    }
    changes
        .iter()
        // Only files the index holds, as a replay judges them (a hidden or
        // skipped file is not the project's code).
        .filter(|c| index.file(&c.path).is_some())
        .filter_map(|c| {
            let after = c.after.as_deref()?;
            reuse::notes(index, &c.path, c.before.as_deref(), after, max_embed).ok()
        })
        .flatten()
        .collect()
}

pub(crate) fn units_of(parsed: Option<&ParsedFile>) -> Vec<&UnitData> {
    parsed.map_or_else(Vec::new, |p| p.units.iter().collect())
}

/// Drops `.` and resolves `..` lexically (the file may not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn stamp(abs: &Path, bytes: &[u8]) -> Result<Stamp> {
    let meta = std::fs::metadata(abs)
        .with_context(|| format!("cannot read the metadata of {}", abs.display()))?;
    Ok(Stamp {
        size: meta.len(),
        modified: meta.modified().ok(),
        hash: hash_text(&String::from_utf8_lossy(bytes)),
        taken: SystemTime::now(),
    })
}

impl Judge for Engine {
    /// Writes outside the project, to files no grammar knows, or to files the index
    /// skips by their path have nothing to judge.
    fn check_write(&mut self, path: &Path, content: &str) -> Result<Vec<Finding>> {
        let Some(rel) = self.relative(path) else {
            return Ok(Vec::new());
        };
        write_findings(
            &self.index,
            self.opts,
            &rel,
            content,
            self.sources.get(&rel),
        )
    }

    fn rescan(&mut self) -> Result<Vec<Finding>> {
        let walked = walk::walk(&self.root, self.opts)?;
        let mut findings = Vec::new();
        let mut changed: Vec<(String, String, Option<ParsedFile>)> = Vec::new();
        let mut present: FxHashSet<String> = FxHashSet::default();
        for candidate in walked.candidates {
            present.insert(candidate.rel.clone());
            let meta = std::fs::metadata(&candidate.abs).with_context(|| {
                format!("cannot read the metadata of {}", candidate.abs.display())
            })?;
            let old = self.stamps.get(&candidate.rel).copied();
            if old.is_some_and(|s| s.unchanged(&meta)) {
                continue;
            }
            let bytes = std::fs::read(&candidate.abs)
                .with_context(|| format!("cannot read {}", candidate.abs.display()))?;
            let new = stamp(&candidate.abs, &bytes)?;
            self.stamps.insert(candidate.rel.clone(), new);
            if old.is_some_and(|s| s.hash == new.hash) {
                continue;
            }
            let before = self.indexed(&candidate.rel);
            match walk::content_verdict(bytes) {
                Ok(text) => match self.reindex(&candidate.rel, &text) {
                    Ok(()) => changed.push((candidate.rel, text, before)),
                    Err(e) => {
                        self.forget(&candidate.rel);
                        findings.push(unjudged(&candidate.rel, e)?);
                    }
                },
                Err(_) => self.forget(&candidate.rel),
            }
        }
        let gone: Vec<String> = self
            .stamps
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        for rel in gone {
            self.stamps.remove(&rel);
            self.forget(&rel);
        }
        // Judged after every update, so copies between two changed files count.
        for (rel, text, before) in &changed {
            if let Some(after) = self.indexed(rel) {
                findings.extend(rules::copy_findings(
                    &self.index,
                    rel,
                    text,
                    &after,
                    &units_of(before.as_ref()),
                ));
            }
        }
        Ok(findings)
    }

    fn audit(&mut self, changes: &[FileChange]) -> Result<Vec<Finding>> {
        let mut unjudged_files = Vec::new();
        for change in changes {
            let Some(text) = &change.after else {
                self.forget(&change.path);
                continue;
            };
            if let Err(e) = self.reindex(&change.path, text) {
                self.forget(&change.path);
                unjudged_files.push(unjudged(&change.path, e)?);
            }
        }
        if unjudged_files.is_empty() {
            return audit_findings(&self.index, changes, &self.prompts);
        }
        // An over-budget file is reported once, not parsed again.
        let judged: Vec<FileChange> = changes
            .iter()
            .filter(|c| unjudged_files.iter().all(|f| f.new.file != c.path))
            .cloned()
            .collect();
        let mut findings = audit_findings(&self.index, &judged, &self.prompts)?;
        findings.extend(unjudged_files);
        Ok(findings)
    }

    fn note_prompt(&mut self, prompt: &str) {
        self.prompts.push_str(prompt);
        self.prompts.push('\n');
    }

    fn reuse_candidates(&self, changes: &[FileChange]) -> Result<Vec<Finding>> {
        let mut found = Vec::new();
        for change in changes {
            let Some(after) = &change.after else { continue };
            // A file the finder cannot parse has no units to look up; the change
            // rules already reported it.
            let Ok(lookups) =
                reuse::find(&self.index, &change.path, change.before.as_deref(), after)
            else {
                continue;
            };
            found.extend(
                lookups
                    .iter()
                    .flat_map(|lookup| reuse::review_candidates(&change.path, lookup)),
            );
        }
        Ok(found)
    }

    fn reuse_notes(&self, changes: &[FileChange]) -> Result<Vec<Finding>> {
        Ok(reuse_notes(&self.index, changes, NOTE_MAX_EMBED))
    }

    fn suggest(&self, prompt: &str) -> Result<Vec<Suggestion>> {
        Ok(suggest::suggest_with_store(
            &self.index,
            prompt,
            self.cache_dir.as_deref(),
        ))
    }

    fn tool(&self, name: &str, input: &serde_json::Value) -> Result<serde_json::Value, ToolError> {
        // A description is searched as a prompt is: the vectors the tool's pass
        // makes are kept in the same cache folder.
        if let (Some(m), Some(dir)) = (suggest::model::shared(), &self.cache_dir) {
            m.read_store(dir);
        }
        tools::call(&self.index, name, input)
    }
}
