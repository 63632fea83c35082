//! Measurement of a run (docs/contract.md, "Measurement"). One definition per quantity,
//! used by task runs and sequence steps alike:
//!
//! - `loc_added` / `loc_removed`: lines of code (tokei's code lines: non-blank,
//!   non-comment) among the lines the diff adds / removes, each file read as its
//!   language by its name; files tokei does not know (data, config) hold no code.
//! - `loc_total`: lines of code of the project's size files after the change
//!   (`loc.rs`, the one definition of size).
//! - Size files: a sequence's `size` globs; for a task (which names none), every file in
//!   one of the engine's languages (code, not docs or data) that is not a test file
//!   (`sens_engine::paths::is_test_path`) and that the ignore rules that count do not
//!   hide (docs/integrity.md, "Ignore rules that count": a file the agent hid with
//!   `.git/info/exclude` counts). Only these count for the size, functions and
//!   duplicates: tests an agent adds are not code it made the project carry.
//! - `functions_added`: function units (the engine's parse) in the size files
//!   after the change, beyond those of the same name in the same file before it;
//!   `function_lines_median`: the median of their lengths in lines (first to last
//!   line), `null` when none was added.
//! - `dup_lines_engine`: over the engine's duplicate groups among the size files
//!   (exact, renamed and near copies, at its default floor), the lines of every
//!   unit but the first of its group: the lines that repeat code already there.
//! - `dup_lines_jscpd`: jscpd 5.3.2's `duplicatedLines` over the size files;
//!   `null` when jscpd is not installed.
//! - `probes`: each probe's matches over its files (sequences; none for tasks).
//! - Hook counts from the ledger: `deny`, `block` and `paused` verdicts, and the
//!   suggestions every callback gave. Engine errors stay in the ledger only.
//! - `outcomes`: what the agent did after each denial and block (`outcomes.rs`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use git2::Oid;
use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::index::Index;
use sens_engine::units::{OverBudget, UnitKind};

use sens_engine::paths::is_test_path;

use crate::spec::files::{FileSet, Probe, relative_files};
use crate::workspace::diff::{Change, ChangeSet, FileDiff};
use crate::workspace::git::{baseline_tree, copy_rules, open_copy};
use loc::{count_probes, lines_of_code_in};
use sens_engine::ignores::Ignores;

pub mod integrity;
pub use sens::bench::jscpd;
pub mod ledger;
pub mod loc;
pub mod outcomes;

/// Which files make the project's size.
#[derive(Debug, Clone, Copy)]
pub enum Size<'a> {
    /// A sequence's globs.
    Globs(&'a FileSet),
    /// A task's source files (see the module documentation).
    Source,
}

impl Size<'_> {
    /// The size files under `root`, sorted, project-relative.
    pub fn files(self, root: &Path, rules: &Ignores) -> anyhow::Result<Vec<PathBuf>> {
        match self {
            Size::Globs(set) => set.files(root, rules),
            Size::Source => source_files(root, rules),
        }
    }
}

/// A measured file's text; bytes that are not UTF-8 read as U+FFFD, so such a
/// file is measured like any other, never an error.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn source_files(root: &Path, rules: &Ignores) -> anyhow::Result<Vec<PathBuf>> {
    relative_files(rules.walk(root).build(), root, |relative| {
        let text = relative.to_string_lossy().replace('\\', "/");
        !is_test_path(&text) && sens_engine::lang::for_path(&text).is_some()
    })
}

/// Everything measured on a graded run.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    pub loc_added: u64,
    pub loc_removed: u64,
    pub loc_total: u64,
    pub functions_added: u64,
    pub function_lines_median: Option<f64>,
    pub dup_lines_engine: u64,
    pub dup_lines_jscpd: Option<u64>,
    pub probes: BTreeMap<String, u64>,
}

/// What the measures need besides the change.
pub struct Inputs<'a> {
    pub root: &'a Path,
    pub baseline: Oid,
    /// The harness's own ignore patterns ([`crate::workspace::Workspace::excluded`]).
    pub excluded: &'a [String],
    pub size: Size<'a>,
    /// A sequence's probes with its size globs (their default files).
    pub probes: Option<(&'a [Probe], &'a FileSet)>,
    pub jscpd: Option<&'a Path>,
}

/// Measures the project at `inputs.root` after `changes`; jscpd's time (an
/// external tool, slow to start) is added to `jscpd_seconds`.
pub fn measure(
    inputs: &Inputs<'_>,
    changes: &ChangeSet,
    jscpd_seconds: &mut f64,
) -> anyhow::Result<Measures> {
    let root = inputs.root;
    let rules = copy_rules(root, inputs.baseline, inputs.excluded)?;
    let size_files = inputs.size.files(root, &rules)?;
    // A name that is not UTF-8 is recorded lossily; the file is read by its path.
    let size: Vec<(String, PathBuf)> = size_files
        .iter()
        .map(|p| (p.to_string_lossy().replace('\\', "/"), root.join(p)))
        .collect();
    // jscpd takes names on its command line: it gets the UTF-8 ones.
    let jscpd_names: Vec<String> = size_files
        .iter()
        .filter_map(|p| Some(p.to_str()?.replace('\\', "/")))
        .collect();
    let (loc_added, loc_removed) = diff_loc(root, &changes.files);
    let loc_total = lines_of_code_in(root, &size_files)?;
    let engine = Index::new(RuleConfig::default())?;
    let lengths = functions_added(&engine, root, inputs.baseline, changes, &size)?;
    let dup_lines_engine = engine_duplicate_lines(&size)?;
    let jscpd_start = std::time::Instant::now();
    let dup_lines_jscpd = inputs
        .jscpd
        .map(|jscpd| jscpd::duplicated_lines(jscpd, root, &jscpd_names))
        .transpose()?;
    *jscpd_seconds += jscpd_start.elapsed().as_secs_f64();
    let probes = match inputs.probes {
        Some((probes, files)) => count_probes(root, probes, files, &rules)?,
        None => BTreeMap::new(),
    };
    Ok(Measures {
        loc_added,
        loc_removed,
        loc_total,
        functions_added: lengths.len() as u64,
        function_lines_median: crate::stats::median(&lengths),
        dup_lines_engine,
        dup_lines_jscpd,
        probes,
    })
}

/// The lengths of the functions the change added to size files.
fn functions_added(
    engine: &Index,
    root: &Path,
    baseline: Oid,
    changes: &ChangeSet,
    size: &[(String, PathBuf)],
) -> anyhow::Result<Vec<f64>> {
    let repo = open_copy(root)?;
    let tree = baseline_tree(&repo, baseline)?;
    let mut lengths = Vec::new();
    for file in &changes.files {
        if file.change == Change::Deleted {
            continue;
        }
        let Some((_, path)) = size.iter().find(|(name, _)| *name == file.path) else {
            continue;
        };
        let after = read_text(path)?;
        let before = match tree.get_path(Path::new(&file.path)) {
            Ok(entry) => {
                let blob = entry
                    .to_object(&repo)
                    .and_then(|object| object.peel_to_blob())
                    .with_context(|| format!("cannot read {} at the baseline", file.path))?;
                String::from_utf8_lossy(blob.content()).into_owned()
            }
            Err(_) => String::new(),
        };
        let mut existing: HashMap<String, u32> = HashMap::new();
        for name in function_units(engine, &file.path, &before)?
            .into_iter()
            .map(|(name, _)| name)
        {
            *existing.entry(name).or_default() += 1;
        }
        for (name, length) in function_units(engine, &file.path, &after)? {
            match existing.get_mut(&name) {
                Some(left) if *left > 0 => *left -= 1,
                _ => lengths.push(length),
            }
        }
    }
    Ok(lengths)
}

/// (name, lines) of every function unit the engine finds in `content`.
fn function_units(engine: &Index, path: &str, content: &str) -> anyhow::Result<Vec<(String, f64)>> {
    let Some(parsed) = within_budget(engine.parse(path, content))?.flatten() else {
        return Ok(Vec::new());
    };
    Ok(parsed
        .units
        .into_iter()
        .filter(|unit| unit.kind == UnitKind::Function)
        .map(|unit| (unit.name, f64::from(unit.end_line - unit.start_line + 1)))
        .collect())
}

fn engine_duplicate_lines(size: &[(String, PathBuf)]) -> anyhow::Result<u64> {
    let mut index = Index::new(RuleConfig::default())?;
    for (name, path) in size {
        let content = read_text(path)?;
        within_budget(index.update_file(name, &content))?;
    }
    let floor = index.config().floor;
    let mut lines = 0;
    for group in dupes::groups(&index, floor) {
        for id in group.units.iter().skip(1) {
            if let Some(unit) = index.unit(*id) {
                lines += u64::from(unit.data.end_line - unit.data.start_line + 1);
            }
        }
    }
    Ok(lines)
}

/// `None` for a file whose parse ran over the engine's budget (an agent's
/// generated file of megabytes): the engine left it unjudged, and its measures
/// leave it out rather than fail the run's grading.
fn within_budget<T>(parsed: anyhow::Result<T>) -> anyhow::Result<Option<T>> {
    match parsed {
        Ok(value) => Ok(Some(value)),
        Err(err) if err.is::<OverBudget>() => Ok(None),
        Err(err) => Err(err),
    }
}

/// Lines of code among the added and removed lines of `files`, by each file's
/// language (from its name, under `root`). Comment lines and blank lines do not
/// count, as in every size the bench reports.
pub fn diff_loc(root: &Path, files: &[FileDiff]) -> (u64, u64) {
    let config = tokei::Config::default();
    let mut added = 0;
    let mut removed = 0;
    for file in files {
        let Some(language) = tokei::LanguageType::from_path(root.join(&file.path), &config) else {
            continue;
        };
        added += language.parse_from_str(&file.added, &config).code as u64;
        removed += language.parse_from_str(&file.removed, &config).code as u64;
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, added: &str, removed: &str) -> FileDiff {
        FileDiff {
            path: path.into(),
            change: Change::Modified,
            added: added.into(),
            removed: removed.into(),
        }
    }

    #[test]
    fn counts_code_lines_only_and_skips_unknown_languages() {
        let files = [
            file(
                "src/a.py",
                "# a comment\n\ndef f():\n    return 1\n",
                "x = 1\n",
            ),
            file("src/b.rs", "// note\nfn g() {}\n", ""),
            file("data.unknownext", "lots\nof\nlines\n", "more\n"),
        ];
        assert_eq!(diff_loc(Path::new("/nonexistent"), &files), (3, 1));
    }

    #[test]
    fn a_task_size_counts_code_files_but_not_tests_docs_or_ignored_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("src/pkg/a.py", "x = 1\n");
        write("tests/test_a.py", "def test(): pass\n");
        write("docs/index.rst", "Title\n=====\n");
        write("build/gen.py", "y = 2\n");
        write(".gitignore", "build/\n");
        let rules = crate::workspace::git::baseline_rules(root);
        // The agent's own ignore rules hide nothing.
        write(".git/info/exclude", "hidden.py\n");
        write("src/.gitignore", "*.py\n");
        write("hidden.py", "z = 3\n");
        let files = Size::Source.files(root, &rules).unwrap();
        assert_eq!(
            files,
            [PathBuf::from("hidden.py"), PathBuf::from("src/pkg/a.py")]
        );
    }

    #[test]
    fn functions_added_count_new_names_per_file_and_engine_duplicates_count_copies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let body = |name: &str| {
            format!(
                "def {name}(values):\n    total = 0\n    for v in values:\n        if v > 10:\n            total += v * 2 - 1\n        else:\n            total -= v // 3 + 7\n    result = [total, len(values), max(values), min(values)]\n    scaled = [r * 5 - total for r in result if r % 2 == 0]\n    extra = {{k: v + 1 for k, v in enumerate(scaled)}}\n    if extra and total > 100:\n        total += sum(extra.values()) - len(extra)\n    return sum(result) * 3 + total - 11\n\n\n"
            )
        };
        std::fs::write(root.join("a.py"), body("first")).unwrap();
        let repo = git2::Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = git2::Signature::now("t", "t@localhost").unwrap();
        let base = repo
            .commit(Some("HEAD"), &who, &who, "b", &tree, &[])
            .unwrap();
        std::fs::write(root.join("a.py"), body("first") + &body("second")).unwrap();
        let changes = crate::workspace::diff::collect_changes(root, base, &[]).unwrap();
        let inputs = Inputs {
            root,
            baseline: base,
            excluded: &[],
            size: Size::Source,
            probes: None,
            jscpd: None,
        };
        let mut jscpd = 0.0;
        let measures = measure(&inputs, &changes, &mut jscpd).unwrap();
        assert_eq!(measures.functions_added, 1);
        assert_eq!(measures.function_lines_median, Some(13.0));
        assert_eq!(measures.loc_added, 13);
        assert_eq!(measures.loc_total, 26);
        assert_eq!(measures.dup_lines_engine, 13, "the copy's lines");
        assert_eq!(measures.dup_lines_jscpd, None);
    }

    #[test]
    fn a_file_over_the_parse_budget_is_left_out_and_other_errors_stay_errors() {
        let over = anyhow::Error::new(OverBudget {
            language: "python",
            budget: std::time::Duration::from_secs(2),
        })
        .context("cannot parse big.py");
        assert_eq!(within_budget::<u8>(Err(over)).unwrap(), None);
        assert_eq!(within_budget(Ok(3)).unwrap(), Some(3));
        assert!(within_budget::<u8>(Err(anyhow::anyhow!("disk full"))).is_err());
    }
}
