//! The copy's own repository: commits with a fixed identity (so the same files
//! always give the same commit id) and patches applied to its work tree.

use std::collections::HashSet;
use std::fs::Permissions;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::{
    ApplyLocation, Delta, Diff, FileMode, IndexAddOption, Oid, Repository, Signature, Time, Tree,
};
use sens_engine::ignores::Ignores;

/// The fixed identity and date of every commit the harness makes in a copy.
const COMMITTER: (&str, &str) = ("sens-bench", "sens-bench@localhost");
const COMMIT_TIME: i64 = 946_684_800; // 2000-01-01T00:00:00Z

pub fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid> {
    let commit = repo
        .revparse_single(rev)
        .and_then(|obj| obj.peel_to_commit())
        .with_context(|| {
            format!(
                "`{rev}` is not a commit of the repository at {}",
                repo.path().display()
            )
        })?;
    Ok(commit.id())
}

/// The repository of a run's copy at `root`.
pub fn open_copy(root: &Path) -> Result<Repository> {
    Repository::open(root)
        .with_context(|| format!("cannot open the run's repository at {}", root.display()))
}

/// The tree of the copy's baseline commit: what the agent's change is measured
/// against.
pub fn baseline_tree(repo: &Repository, baseline: Oid) -> Result<Tree<'_>> {
    repo.find_commit(baseline)
        .and_then(|commit| commit.tree())
        .with_context(|| format!("the baseline commit {baseline} is missing"))
}

/// The ignore rules that count in the copy at `root`
/// (docs/integrity.md, "Ignore rules that count"): the `.gitignore` files of the commit
/// `baseline` and the harness's own `excluded` patterns.
pub fn copy_rules(root: &Path, baseline: Oid, excluded: &[String]) -> Result<Ignores> {
    let repo = open_copy(root)?;
    let tree = baseline_tree(&repo, baseline)?;
    Ignores::of_tree(&repo, &tree, excluded)
        .with_context(|| format!("cannot read the ignore rules of {}", root.display()))
}

/// The tree of the copy's files as they stand, as the rules that count
/// ([`copy_rules`]) see them: every file git tracks, and every other file those
/// rules do not hide. git's own ignore handling is bypassed by a forced add that
/// asks them about each file; names that are not UTF-8 stay bytes. The index is
/// changed in memory only.
pub fn work_tree(root: &Path, baseline: Oid, excluded: &[String]) -> Result<Oid> {
    let rules = copy_rules(root, baseline, excluded)?;
    let repo = open_copy(root)?;
    let mut index = repo.index().context("cannot read the copy's git index")?;
    let tracked: HashSet<Vec<u8>> = index.iter().map(|entry| entry.path).collect();
    let mut skip = |path: &Path, _: &[u8]| -> i32 {
        let known = tracked.contains(path.as_os_str().as_encoded_bytes());
        i32::from(!known && rules.is_ignored(&path.to_string_lossy(), false))
    };
    index
        .add_all(["*"], IndexAddOption::FORCE, Some(&mut skip))
        .and_then(|()| index.update_all(["*"], None))
        .with_context(|| format!("cannot list the files of {}", root.display()))?;
    index
        .write_tree()
        .with_context(|| format!("cannot store the files of {}", root.display()))
}

/// Commits the copy's files after a sequence step, as the diff of that step saw
/// them ([`work_tree`] against `baseline`, the state the step started from), on
/// its HEAD; the git index is made to match, so the next step starts clean.
pub fn commit_state(root: &Path, baseline: Oid, excluded: &[String], message: &str) -> Result<Oid> {
    let tree = work_tree(root, baseline, excluded)?;
    let repo = open_copy(root)?;
    let tree = repo.find_tree(tree)?;
    let mut index = repo.index().context("cannot read the copy's git index")?;
    index
        .read_tree(&tree)
        .and_then(|()| index.write())
        .with_context(|| format!("cannot write the git index of {}", root.display()))?;
    commit_on_head(&repo, &tree, message)
        .with_context(|| format!("cannot commit `{message}` in {}", root.display()))
}

/// Commits the copy's files as they stand (new, changed and deleted files; what
/// git ignores left out) on its HEAD, with the fixed identity: the baseline,
/// before any agent wrote an ignore rule.
pub fn commit_all(root: &Path, message: &str) -> Result<Oid> {
    let repo = Repository::open(root)
        .with_context(|| format!("cannot open the repository at {}", root.display()))?;
    let mut index = repo.index().context("cannot read the copy's git index")?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .and_then(|()| index.update_all(["*"], None))
        .and_then(|()| index.write())
        .with_context(|| format!("cannot stage the files of {}", root.display()))?;
    let tree = repo.find_tree(index.write_tree()?)?;
    commit_on_head(&repo, &tree, message)
        .with_context(|| format!("cannot commit `{message}` in {}", root.display()))
}

/// Commits `tree` on HEAD with the fixed identity.
fn commit_on_head(repo: &Repository, tree: &Tree<'_>, message: &str) -> Result<Oid> {
    let who = Signature::new(COMMITTER.0, COMMITTER.1, &Time::new(COMMIT_TIME, 0))?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    Ok(repo.commit(Some("HEAD"), &who, &who, message, tree, &parents)?)
}

/// Applies a `git diff` patch to the files under `root` (which must be a
/// repository's work tree).
pub fn apply_patch(root: &Path, patch: &Path) -> Result<()> {
    let bytes = std::fs::read(patch)
        .with_context(|| format!("cannot read the patch {}", patch.display()))?;
    let diff = Diff::from_buffer(&bytes)
        .with_context(|| format!("{} is not a patch in `git diff` format", patch.display()))?;
    let repo = Repository::open(root)
        .with_context(|| format!("cannot open the repository at {}", root.display()))?;
    // A change without mode lines keeps the file's mode under `git apply`;
    // libgit2 writes it as a plain file, so the modes are put back after.
    let modes: Vec<(PathBuf, Permissions)> = diff
        .deltas()
        .filter(|d| d.status() == Delta::Modified && d.new_file().mode() == FileMode::Unreadable)
        .filter_map(|d| d.new_file().path().map(|path| root.join(path)))
        .filter_map(|path| {
            let meta = std::fs::symlink_metadata(&path)
                .ok()
                .filter(|m| m.is_file())?;
            Some((path, meta.permissions()))
        })
        .collect();
    repo.apply(&diff, ApplyLocation::WorkDir, None)
        .with_context(|| {
            format!(
                "the patch {} does not apply to {}",
                patch.display(),
                root.display()
            )
        })?;
    for (path, permissions) in modes {
        std::fs::set_permissions(&path, permissions)
            .with_context(|| format!("cannot keep the mode of {}", path.display()))?;
    }
    Ok(())
}

/// `git apply --check PATCH` in `root`: whether the patch applies, changing
/// nothing. The git command, not libgit2, since libgit2 reads text without a
/// `diff --git` header as an empty patch that applies. An empty file applies.
pub fn check_patch(root: &Path, patch: &Path) -> Result<()> {
    let empty = std::fs::metadata(patch)
        .with_context(|| format!("cannot read the patch {}", patch.display()))?
        .len()
        == 0;
    if empty {
        return Ok(());
    }
    let output = std::process::Command::new("git")
        .args(["apply", "--check"])
        .arg(patch)
        .current_dir(root)
        .output()
        .context("cannot run `git apply --check`")?;
    if output.status.success() {
        return Ok(());
    }
    bail!(
        "the patch {} does not apply to {} (`git apply --check`: {})",
        patch.display(),
        root.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    )
}

/// The rules of `root` once its files are committed as the baseline.
#[cfg(test)]
pub(crate) fn baseline_rules(root: &Path) -> Ignores {
    Repository::init(root).expect("init");
    let base = commit_all(root, "baseline").expect("commit");
    copy_rules(root, base, &[]).expect("rules")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_state_holds_what_its_diff_saw_and_the_next_step_starts_clean() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let root = dir.path();
        std::fs::write(root.join("a.py"), "x = 1\n").expect("write");
        Repository::init(root).expect("init");
        let base = commit_all(root, "baseline").expect("commit");
        std::fs::write(root.join(".git/info/exclude"), "hidden.py\n").expect("write");
        std::fs::write(root.join("hidden.py"), "y = 2\n").expect("write");
        let state = commit_state(root, base, &[], "after step 1").expect("committed");
        let repo = open_copy(root).expect("open");
        let tree = repo
            .find_commit(state)
            .and_then(|c| c.tree())
            .expect("tree");
        assert!(tree.get_path(Path::new("hidden.py")).is_ok());
        let next = crate::workspace::diff::collect_changes(root, state, &[]).expect("diff");
        assert_eq!(next.files, []);
    }

    #[test]
    fn a_patch_without_mode_lines_keeps_the_files_mode_as_git_apply_does() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::TempDir::new().expect("temp dir");
        let root = dir.path().join("project");
        std::fs::create_dir(&root).expect("mkdir");
        std::fs::write(root.join("run.sh"), "#!/bin/sh\necho old\n").expect("write");
        std::fs::set_permissions(root.join("run.sh"), Permissions::from_mode(0o755))
            .expect("chmod");
        Repository::init(&root).expect("init");
        commit_all(&root, "baseline").expect("commit");
        let patch = dir.path().join("change.patch");
        std::fs::write(
            &patch,
            "diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n",
        )
        .expect("write");
        apply_patch(&root, &patch).expect("applies");
        let meta = std::fs::metadata(root.join("run.sh")).expect("stat");
        assert_eq!(
            std::fs::read_to_string(root.join("run.sh")).unwrap(),
            "#!/bin/sh\necho new\n"
        );
        assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    }
}
