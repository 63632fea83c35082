//! The change the agent made (docs/contract.md, "Runs"), read from the copy's own
//! repository.

use std::path::Path;

use super::git::{baseline_tree, open_copy, work_tree};
use anyhow::Context;
use git2::{Delta, DiffFormat, Oid};

/// How a file differs from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Modified,
    Deleted,
}

/// One file the agent changed, with the text of the lines the diff adds and
/// removes (binary files: none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Project-relative, `/`-separated.
    pub path: String,
    pub change: Change,
    pub added: String,
    pub removed: String,
}

/// The agent's whole change against the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// `git diff` text (a/ b/ prefixes), untracked files included; its bytes as
    /// they are (content that is not UTF-8 replays exactly).
    pub patch: Vec<u8>,
    pub files: Vec<FileDiff>,
}

impl ChangeSet {
    /// Every changed path with how it changed, for the integrity checks.
    pub fn changes(&self) -> Vec<(String, Change)> {
        self.files
            .iter()
            .map(|f| (f.path.clone(), f.change))
            .collect()
    }
}

/// The work tree of the repository at `root` against the commit `baseline`:
/// whatever the agent did (edits, new files not added to git, deletions, even its
/// own commits) shows. Only the ignore rules that count hide a file: the
/// baseline's `.gitignore` files and the harness's `excluded` patterns, never
/// ignore files or settings written since (the engine's snapshot, given those
/// rules, lists the work tree).
pub fn collect_changes(
    root: &Path,
    baseline: Oid,
    excluded: &[String],
) -> anyhow::Result<ChangeSet> {
    let repo = open_copy(root)?;
    let tree = baseline_tree(&repo, baseline)?;
    let now = work_tree(root, baseline, excluded)?;
    let now = repo
        .find_tree(now)
        .with_context(|| format!("cannot read the snapshot of {}", root.display()))?;
    let diff = repo
        .diff_tree_to_tree(Some(&tree), Some(&now), None)
        .with_context(|| format!("cannot diff {} against the baseline", root.display()))?;
    let mut set = ChangeSet::default();
    diff.print(DiffFormat::Patch, |delta, _hunk, line| {
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if set.files.last().is_none_or(|f| f.path != path) {
            set.files.push(FileDiff {
                path,
                change: change_of(delta.status()),
                added: String::new(),
                removed: String::new(),
            });
        }
        let content = String::from_utf8_lossy(line.content());
        let origin = line.origin();
        if let '+' | '-' | ' ' = origin {
            set.patch.push(origin as u8);
        }
        set.patch.extend_from_slice(line.content());
        if let Some(file) = set.files.last_mut() {
            match origin {
                '+' => file.added.push_str(&content),
                '-' => file.removed.push_str(&content),
                _ => {}
            }
        }
        true
    })
    .with_context(|| format!("cannot print the diff of {}", root.display()))?;
    Ok(set)
}

fn change_of(status: Delta) -> Change {
    match status {
        Delta::Added => Change::Added,
        Delta::Deleted => Change::Deleted,
        _ => Change::Modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{IndexAddOption, Repository, Signature};

    fn baseline(root: &Path) -> Oid {
        let repo = Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = Signature::now("t", "t@localhost").unwrap();
        repo.commit(Some("HEAD"), &who, &who, "baseline", &tree, &[])
            .unwrap()
    }

    #[test]
    fn edits_new_untracked_and_deleted_files_all_show() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.py"), "x = 1\ny = 2\n").unwrap();
        std::fs::write(root.join("gone.py"), "z = 3\n").unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        let base = baseline(root);
        std::fs::write(root.join("a.py"), "x = 1\ny = 20\n").unwrap();
        std::fs::remove_file(root.join("gone.py")).unwrap();
        std::fs::create_dir_all(root.join("pkg/deep")).unwrap();
        std::fs::write(root.join("pkg/deep/new.py"), "def f():\n    return 1\n").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/out.py"), "ignored\n").unwrap();

        let set = collect_changes(root, base, &[]).unwrap();
        let patch = String::from_utf8_lossy(&set.patch);
        assert_eq!(
            set.changes(),
            [
                ("a.py".to_string(), Change::Modified),
                ("gone.py".to_string(), Change::Deleted),
                ("pkg/deep/new.py".to_string(), Change::Added),
            ]
        );
        assert_eq!(set.files[0].added, "y = 20\n");
        assert_eq!(set.files[0].removed, "y = 2\n");
        assert_eq!(set.files[2].added, "def f():\n    return 1\n");
        assert!(patch.contains("diff --git a/a.py b/a.py"), "{}", patch);
        assert!(patch.contains("+++ b/pkg/deep/new.py"));
        assert!(patch.contains("-y = 2\n+y = 20\n"));
        assert!(!patch.contains("ignored"));
    }

    #[test]
    fn ignore_rules_written_after_the_baseline_hide_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        let base = baseline(root);
        // The agent's three ways to hide a file from git, and a build output.
        std::fs::write(root.join(".git/info/exclude"), "excluded.py\n").unwrap();
        let global = root.join(".git/global-ignore");
        std::fs::write(&global, "global.py\n").unwrap();
        Repository::open(root)
            .unwrap()
            .config()
            .unwrap()
            .set_str("core.excludesFile", &global.display().to_string())
            .unwrap();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/.gitignore"), "nested.py\n").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        for file in ["excluded.py", "global.py", "pkg/nested.py", "build/out.py"] {
            std::fs::write(root.join(file), format!("# {file}\n")).unwrap();
        }

        let set = collect_changes(root, base, &["/setup-made/".to_string()]).unwrap();
        let patch = String::from_utf8_lossy(&set.patch);
        let added = |path: &str| (path.to_string(), Change::Added);
        assert_eq!(
            set.changes(),
            [
                added("excluded.py"),
                added("global.py"),
                added("pkg/.gitignore"),
                added("pkg/nested.py"),
            ]
        );
        assert!(patch.contains("+# excluded.py\n"), "{patch}");
        assert!(patch.contains("+# pkg/nested.py\n"), "{patch}");
        assert!(!patch.contains("build/out.py"), "{patch}");
    }

    #[test]
    fn the_patch_applies_back_onto_the_baseline() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        let base = baseline(root);
        std::fs::write(root.join("a.txt"), "one\nthree\n").unwrap();
        std::fs::write(root.join("b.txt"), "new\n").unwrap();
        // Bytes that are not UTF-8 are kept, not replaced.
        std::fs::write(root.join("latin1.py"), b"caf\xe9 = 1\n").unwrap();
        let set = collect_changes(root, base, &[]).unwrap();

        let copy = tempfile::tempdir().unwrap();
        std::fs::write(copy.path().join("a.txt"), "one\ntwo\n").unwrap();
        baseline(copy.path());
        let repo = Repository::open(copy.path()).unwrap();
        let diff = git2::Diff::from_buffer(&set.patch).unwrap();
        repo.apply(&diff, git2::ApplyLocation::WorkDir, None)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.path().join("a.txt")).unwrap(),
            "one\nthree\n"
        );
        assert_eq!(
            std::fs::read_to_string(copy.path().join("b.txt")).unwrap(),
            "new\n"
        );
        assert_eq!(
            std::fs::read(copy.path().join("latin1.py")).unwrap(),
            b"caf\xe9 = 1\n"
        );
    }
}
