//! Prepare, the first stage of an attempt: materialize a copy, run its set-up,
//! and check its tests pass before the agent starts.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::grade::test_verdict;
use super::stage::{Stop, Timings, timed};
use crate::exec::{self, CommandLine};
use crate::record::RunStatus;
use crate::spec::Commands;
use crate::workspace::Workspace;

/// Files left by test runs in any project; never part of an agent's change.
const TEST_LEFTOVERS: [&str; 4] = ["__pycache__/", "*.pyc", ".pytest_cache/", ".ruff_cache/"];

/// Materializes a copy, runs its set-up and checks its tests pass before the
/// agent starts, in the copy's sandbox when `sandboxed` (set-up with the
/// network, the tests without). Logs go to `dir`.
pub(super) fn prepare(
    materialize: impl FnOnce() -> anyhow::Result<Workspace>,
    commands: &Commands,
    timeout: Duration,
    sandboxed: bool,
    dir: &Path,
    timings: &mut Timings,
) -> Result<Workspace, Stop> {
    let mut workspace = timed(&mut timings.materialize, || {
        let mut workspace = materialize()?;
        exclude(
            &workspace.root,
            &mut workspace.excluded,
            TEST_LEFTOVERS.iter().map(|s| s.to_string()),
        )?;
        Ok(workspace)
    })
    .map_err(Stop::infra)?;
    if let Some(setup) = commands.setup() {
        let view = sandboxed.then(|| workspace.setup_view());
        let outcome = timed(&mut timings.setup, || {
            exec::run(&CommandLine {
                line: setup,
                dir: &workspace.root,
                env: &workspace.env,
                timeout,
                log: &dir.join("setup.log"),
                sandbox: view.as_ref(),
            })
        })
        .map_err(Stop::infra)?;
        if !outcome.status.passed() {
            return Err(Stop::Failed(
                RunStatus::InfraError,
                format!(
                    "set-up `{setup}` {}; see {}",
                    outcome.status,
                    outcome.log.display()
                ),
            ));
        }
        let products = untracked(&workspace.root).map_err(Stop::infra)?;
        exclude(&workspace.root, &mut workspace.excluded, products).map_err(Stop::infra)?;
    }
    let view = sandboxed.then(|| workspace.test_view());
    let verdict = timed(&mut timings.baseline_tests, || {
        test_verdict(
            &workspace.root,
            &workspace.env,
            view.as_ref(),
            &commands.test,
            timeout,
            dir,
            "baseline-tests",
        )
    })
    .map_err(Stop::infra)?;
    if !verdict.pass {
        return Err(Stop::Failed(
            RunStatus::InfraError,
            format!(
                "the project's tests fail before the agent started (twice); see {}",
                dir.join("baseline-tests.2.log").display()
            ),
        ));
    }
    Ok(workspace)
}

/// Paths git sees as new (not ignored) in the copy: what set-up created.
fn untracked(root: &Path) -> anyhow::Result<Vec<String>> {
    let repo = git2::Repository::open(root)
        .with_context(|| format!("cannot open the repository at {}", root.display()))?;
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false);
    let statuses = repo
        .statuses(Some(&mut options))
        .with_context(|| format!("cannot read the status of {}", root.display()))?;
    Ok(statuses
        .iter()
        .filter(|entry| entry.status().contains(git2::Status::WT_NEW))
        .filter_map(|entry| entry.path().ok().map(|p| format!("/{p}")))
        .collect())
}

/// Adds patterns to the harness's own exclusions (`excluded`), and to the copy's
/// `.git/info/exclude` so that `git status` in the copy hides them too (that file
/// itself hides nothing from the diff: the agent can write it).
fn exclude(
    root: &Path,
    excluded: &mut Vec<String>,
    patterns: impl IntoIterator<Item = String>,
) -> anyhow::Result<()> {
    use std::io::Write;
    let path = root.join(".git/info/exclude");
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    for pattern in patterns {
        writeln!(file, "{pattern}").with_context(|| format!("cannot write {}", path.display()))?;
        excluded.push(pattern);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn what_setup_creates_is_excluded_from_the_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.py", "x = 1\n");
        let repo = git2::Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = git2::Signature::now("t", "t@localhost").unwrap();
        let base = repo
            .commit(Some("HEAD"), &who, &who, "b", &tree, &[])
            .unwrap();
        let mut excluded = Vec::new();
        exclude(
            root,
            &mut excluded,
            TEST_LEFTOVERS.iter().map(|s| s.to_string()),
        )
        .unwrap();
        write(root, ".venv/lib/site.py", "installed\n");
        write(root, "pkg.egg-info/PKG-INFO", "x\n");
        write(root, "__pycache__/a.cpython.pyc", "bytes\n");
        let products = untracked(root).unwrap();
        assert_eq!(products, ["/.venv/", "/pkg.egg-info/"]);
        exclude(root, &mut excluded, products).unwrap();
        write(root, "b.py", "y = 2\n");
        // What the agent adds to the exclude file hides nothing.
        let mut agent = Vec::new();
        exclude(root, &mut agent, ["c.py".to_string()]).unwrap();
        write(root, "c.py", "z = 3\n");
        let changes = crate::workspace::diff::collect_changes(root, base, &excluded).unwrap();
        let paths: Vec<String> = changes.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(paths, ["b.py", "c.py"]);
    }
}
