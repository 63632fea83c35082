//! Snapshots of the working directory as git trees, and checkpoints as commits
//! under private refs (`refs/sens/*`). Nothing here touches HEAD, the git index
//! file, the working tree or any branch: trees are built in an in-memory index,
//! and only objects and `refs/sens/*` are written.

//!
//! This root holds the checkpoints' state and opening; the rest is a file of
//! `checkpoint/` each: the snapshot (`snapshot`), the git index's tracked files
//! (`tracked`), checkpoints and the other refs (`refs`), the differences between
//! two trees (`diff`), and restoring one (`restore`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use git2::{Oid, Repository};

use crate::ignores::Ignores;

mod diff;
mod refs;
mod restore;
mod snapshot;
mod tracked;

pub use diff::{Delta, tree_changes, tree_deltas};

use refs::latest_checkpoint;
use snapshot::SnapshotInputs;
use tracked::{Stamp, TrackedFiles};

const CHECKPOINT_PREFIX: &str = "refs/sens/checkpoints/";
/// A checkpoint commit's message, before its number.
const CHECKPOINT_MESSAGE: &str = "sens checkpoint ";
/// Points at the approved checkpoint.
pub const APPROVED_REF: &str = "refs/sens/approved";
/// A chain of commits holding every tree the ledger names, so that the trees a
/// replay needs stay reachable (git gc keeps them).
pub const TREES_REF: &str = "refs/sens/trees";
/// The states a human rejected, one ref each (`refs/sens/rejected/N`), so a
/// rejection can be undone.
const REJECTED_PREFIX: &str = "refs/sens/rejected/";

/// A project state recorded as a commit under `refs/sens/checkpoints/<number>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    pub number: u64,
    pub commit: Oid,
    pub tree: Oid,
}

pub struct Checkpoints {
    repo: Repository,
    root: PathBuf,
    /// The repository's index file, and what it listed when last read.
    real_index: PathBuf,
    tracked: TrackedFiles,
    blobs: HashMap<String, (Stamp, Oid)>,
    next_number: u64,
    last_checkpoint: Option<Oid>,
    last_kept: Option<(Oid, Oid)>,
    /// What the last snapshot was made of, and its tree.
    last_snapshot: Option<(SnapshotInputs, Oid)>,
    /// The ignore rules that count; `None` (a repository with no commit yet):
    /// git's own.
    ignores: Option<Ignores>,
}

impl Checkpoints {
    /// Opens the repository whose working directory is `root`; the ignore rules
    /// that count are those of HEAD's `.gitignore` files as it stands now.
    pub fn open(root: &Path) -> anyhow::Result<Self> {
        Self::open_with(root, Ignores::of_head(root, &[])?)
    }

    /// Opens the repository whose working directory is `root`, with the ignore
    /// rules that count.
    pub fn open_with(root: &Path, ignores: Option<Ignores>) -> anyhow::Result<Self> {
        let repo = Repository::discover(root).with_context(|| {
            format!(
                "{} is not in a git repository: run `git init` there first",
                root.display()
            )
        })?;
        let workdir = repo
            .workdir()
            .with_context(|| format!("{} is a bare repository: it has no files", root.display()))?;
        let same = workdir.canonicalize().ok() == root.canonicalize().ok();
        if !same {
            bail!(
                "{} is inside the git repository at {}: give the repository's top folder as the project root",
                root.display(),
                workdir.display()
            );
        }
        // Every object a snapshot tree names is one this repository lists in its
        // index or that the snapshot has just stored, so libgit2's check that each
        // exists (one object lookup per file, ~250 ms on 10,000 files) is skipped.
        // The option is process-wide; it only drops that check.
        git2::opts::strict_object_creation(false);
        let (next_number, last_checkpoint) = latest_checkpoint(&repo)?;
        let last_kept = match repo.find_reference(TREES_REF) {
            Ok(reference) => {
                let commit = reference.peel_to_commit().with_context(|| {
                    format!("{TREES_REF} does not point at a commit: delete it with `git update-ref -d {TREES_REF}`")
                })?;
                Some((commit.tree_id(), commit.id()))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {TREES_REF}")),
        };
        let git_dir = repo.path().to_path_buf();
        Ok(Self {
            repo,
            root: root.to_path_buf(),
            real_index: git_dir.join("index"),
            tracked: TrackedFiles::default(),
            blobs: HashMap::new(),
            next_number,
            last_checkpoint,
            last_kept,
            last_snapshot: None,
            ignores,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(root: &Path, args: &[&str]) -> anyhow::Result<()> {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(root)
            .status()
            .context("running git")?;
        anyhow::ensure!(status.success(), "git {args:?} failed");
        Ok(())
    }

    fn repo_with_files() -> anyhow::Result<tempfile::TempDir> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::write(root.join("kept.txt"), "kept\n")?;
        std::fs::write(root.join("edited.txt"), "old\n")?;
        std::fs::write(root.join("deleted.txt"), "bye\n")?;
        std::fs::write(root.join(".gitignore"), "*.log\n")?;
        git(root, &["init", "-q"])?;
        git(root, &["add", "-A"])?;
        git(root, &["commit", "-qm", "base"])?;
        Ok(dir)
    }

    #[test]
    fn restore_brings_back_contents_modes_and_links_and_removes_added_files() -> anyhow::Result<()>
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = repo_with_files()?;
        let root = dir.path();
        let run = root.join("run.sh");
        std::fs::write(&run, "echo hi\n")?;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755))?;
        std::os::unix::fs::symlink("kept.txt", root.join("link"))?;
        let mut checkpoints = Checkpoints::open(root)?;
        assert_eq!(checkpoints.approved()?, None);
        let approved_tree = checkpoints.snapshot()?;
        let approved = checkpoints.checkpoint(approved_tree)?;
        checkpoints.mark_approved(&approved)?;
        assert_eq!(Checkpoints::open(root)?.approved()?, Some(approved));

        std::fs::write(root.join("edited.txt"), "new\n")?;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o644))?;
        std::fs::remove_file(root.join("link"))?;
        std::fs::write(root.join("added.txt"), "added\n")?;
        std::fs::write(root.join("build.log"), "ignored\n")?;
        let rejected = checkpoints.snapshot()?;
        assert_eq!(checkpoints.keep_rejected(rejected)?, "refs/sens/rejected/1");
        checkpoints.restore(rejected, approved_tree)?;

        assert_eq!(checkpoints.snapshot()?, approved_tree);
        assert!(!root.join("added.txt").exists());
        assert!(
            root.join("build.log").exists(),
            "ignored files are left alone"
        );
        assert_eq!(
            std::fs::read_link(root.join("link"))?,
            Path::new("kept.txt")
        );
        assert_eq!(std::fs::metadata(&run)?.permissions().mode() & 0o111, 0o111);
        let kept = checkpoints.repo.find_reference("refs/sens/rejected/1")?;
        assert_eq!(kept.peel_to_commit()?.tree_id(), rejected);
        drop(kept);
        assert_eq!(checkpoints.keep_rejected(rejected)?, "refs/sens/rejected/2");
        Ok(())
    }

    fn blob_text(checkpoints: &Checkpoints, tree: Oid, path: &str) -> Option<String> {
        let tree = checkpoints.repo.find_tree(tree).ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = checkpoints.repo.find_blob(entry.id()).ok()?;
        Some(String::from_utf8_lossy(blob.content()).into_owned())
    }

    #[test]
    fn ignore_rules_written_during_the_run_hide_nothing_from_snapshots_or_the_walk()
    -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        let harness = ["/made-by-setup/".to_string()];
        let mut checkpoints = Checkpoints::open_with(root, Ignores::of_head(root, &harness)?)?;
        std::fs::create_dir(root.join("made-by-setup"))?;
        std::fs::write(root.join("made-by-setup/site.py"), "x = 1\n")?;
        // The three kinds of ignore rule an agent can add, each hiding a file.
        std::fs::write(root.join(".git/info/exclude"), "excluded.py\n")?;
        let global = root.join(".git/global-ignore");
        std::fs::write(&global, "global.py\n")?;
        git(
            root,
            &["config", "core.excludesFile", &global.display().to_string()],
        )?;
        std::fs::create_dir_all(root.join("pkg"))?;
        std::fs::write(root.join("pkg/.gitignore"), "nested.py\n")?;
        for file in ["excluded.py", "global.py", "pkg/nested.py", "build.log"] {
            std::fs::write(root.join(file), "def f():\n    return 1\n")?;
        }
        let now = checkpoints.snapshot()?;
        for file in [
            "excluded.py",
            "global.py",
            "pkg/nested.py",
            "pkg/.gitignore",
        ] {
            assert!(
                blob_text(&checkpoints, now, file).is_some(),
                "{file} is hidden"
            );
        }
        assert_eq!(
            blob_text(&checkpoints, now, "build.log"),
            None,
            "the baseline's .gitignore still counts"
        );
        assert_eq!(blob_text(&checkpoints, now, "made-by-setup/site.py"), None);
        let walked = crate::walk::walk(root, crate::walk::WalkOptions::default())?;
        let indexed: Vec<&str> = walked.candidates.iter().map(|c| c.rel.as_str()).collect();
        for file in ["excluded.py", "global.py", "pkg/nested.py"] {
            assert!(
                indexed.contains(&file),
                "{file} is not indexed: {indexed:?}"
            );
        }
        Ok(())
    }

    #[test]
    fn snapshot_is_the_working_directory_as_it_stands() -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        let mut checkpoints = Checkpoints::open(root)?;
        let base = checkpoints.snapshot()?;
        std::fs::write(root.join("edited.txt"), "new\n")?;
        std::fs::remove_file(root.join("deleted.txt"))?;
        std::fs::write(root.join("untracked.txt"), "fresh\n")?;
        std::fs::write(root.join("build.log"), "ignored\n")?;
        std::fs::create_dir_all(root.join(".sens"))?;
        std::fs::write(root.join(".sens/state"), "engine\n")?;
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n")?;
        std::fs::set_permissions(
            root.join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )?;
        std::os::unix::fs::symlink("kept.txt", root.join("link"))?;
        let index_before = std::fs::read(root.join(".git/index"))?;

        let now = checkpoints.snapshot()?;
        assert_eq!(
            blob_text(&checkpoints, now, "kept.txt").as_deref(),
            Some("kept\n")
        );
        assert_eq!(
            blob_text(&checkpoints, now, "edited.txt").as_deref(),
            Some("new\n")
        );
        assert_eq!(
            blob_text(&checkpoints, now, "untracked.txt").as_deref(),
            Some("fresh\n")
        );
        assert_eq!(
            blob_text(&checkpoints, now, "link").as_deref(),
            Some("kept.txt")
        );
        assert_eq!(blob_text(&checkpoints, now, "deleted.txt"), None);
        assert_eq!(blob_text(&checkpoints, now, "build.log"), None);
        assert_eq!(blob_text(&checkpoints, now, ".sens/state"), None);
        let tree = checkpoints.repo.find_tree(now)?;
        assert_eq!(tree.get_path(Path::new("run.sh"))?.filemode(), 0o100755);
        assert_eq!(tree.get_path(Path::new("link"))?.filemode(), 0o120000);
        assert_eq!(std::fs::read(root.join(".git/index"))?, index_before);

        let mut changed = checkpoints.changed_paths(base, now)?;
        changed.sort();
        assert_eq!(
            changed,
            [
                "deleted.txt",
                "edited.txt",
                "link",
                "run.sh",
                "untracked.txt"
            ]
        );
        let changes = checkpoints.changes(base, now)?;
        let edited = changes.iter().find(|c| c.path == "edited.txt");
        assert_eq!(edited.and_then(|c| c.before.as_deref()), Some("old\n"));
        assert_eq!(edited.and_then(|c| c.after.as_deref()), Some("new\n"));
        let deleted = changes.iter().find(|c| c.path == "deleted.txt");
        assert_eq!(deleted.map(|c| c.after.is_none()), Some(true));
        Ok(())
    }

    #[test]
    fn a_fifo_a_socket_and_a_link_to_a_folder_are_snapshotted_or_left_out_never_an_error()
    -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        let mut checkpoints = Checkpoints::open(root)?;
        checkpoints.snapshot()?;
        let made = Command::new("mkfifo").arg(root.join("pipe")).status()?;
        assert!(made.success());
        let _socket = std::os::unix::net::UnixListener::bind(root.join("engine.sock"))?;
        std::fs::create_dir(root.join("real"))?;
        std::fs::write(root.join("real/inside.txt"), "inside\n")?;
        std::os::unix::fs::symlink("real", root.join("folder-link"))?;

        let now = checkpoints.snapshot()?;
        assert_eq!(
            blob_text(&checkpoints, now, "folder-link").as_deref(),
            Some("real")
        );
        assert_eq!(
            blob_text(&checkpoints, now, "real/inside.txt").as_deref(),
            Some("inside\n")
        );
        assert_eq!(blob_text(&checkpoints, now, "pipe"), None);
        assert_eq!(blob_text(&checkpoints, now, "engine.sock"), None);
        Ok(())
    }

    #[test]
    fn snapshot_follows_the_real_index_and_repeats_when_nothing_changed() -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        let mut checkpoints = Checkpoints::open(root)?;
        let first = checkpoints.snapshot()?;
        assert_eq!(checkpoints.snapshot()?, first);
        // A file git now tracks although .gitignore names it stays in the snapshot.
        std::fs::write(root.join("forced.log"), "tracked anyway\n")?;
        git(root, &["add", "-f", "forced.log"])?;
        let forced = checkpoints.snapshot()?;
        assert_eq!(
            blob_text(&checkpoints, forced, "forced.log").as_deref(),
            Some("tracked anyway\n")
        );
        // Rewriting a file with the same size within the same second is seen.
        std::fs::write(root.join("kept.txt"), "KEPT\n")?;
        let rewritten = checkpoints.snapshot()?;
        assert_eq!(
            blob_text(&checkpoints, rewritten, "kept.txt").as_deref(),
            Some("KEPT\n")
        );
        Ok(())
    }

    #[test]
    fn checkpoints_number_on_across_sessions_under_private_refs() -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        let head_before = std::fs::read(root.join(".git/HEAD"))?;
        let mut checkpoints = Checkpoints::open(root)?;
        let tree = checkpoints.snapshot()?;
        let first = checkpoints.checkpoint(tree)?;
        let second = checkpoints.checkpoint(tree)?;
        assert_eq!((first.number, second.number), (1, 2));
        checkpoints.mark_approved(&second)?;
        let mut reopened = Checkpoints::open(root)?;
        let third = reopened.checkpoint(tree)?;
        assert_eq!(third.number, 3);
        let commit = reopened.repo.find_commit(third.commit)?;
        assert_eq!(commit.parent_id(0)?, second.commit);
        let approved = reopened.repo.find_reference(APPROVED_REF)?.target();
        assert_eq!(approved, Some(second.commit));
        assert_eq!(std::fs::read(root.join(".git/HEAD"))?, head_before);
        Ok(())
    }

    /// The tree `git add -A && git write-tree` makes of the same folder, in a
    /// scratch index (the repository's own is left alone).
    fn git_write_tree(root: &Path) -> anyhow::Result<Oid> {
        let scratch = tempfile::tempdir()?;
        let index = scratch.path().join("index");
        if root.join(".git/index").exists() {
            std::fs::copy(root.join(".git/index"), &index)?;
        }
        let run = |args: &[&str]| -> anyhow::Result<String> {
            let out = Command::new("git")
                .args(args)
                .env("GIT_INDEX_FILE", &index)
                .current_dir(root)
                .output()
                .context("running git")?;
            anyhow::ensure!(out.status.success(), "git {args:?} failed");
            Ok(String::from_utf8(out.stdout)?.trim().to_string())
        };
        run(&["add", "-A"])?;
        Ok(Oid::from_str(&run(&["write-tree"])?)?)
    }

    #[test]
    fn snapshot_is_the_tree_git_would_stage_and_skips_only_what_the_baseline_hides()
    -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "*.log\nnode_modules/\n")?;
        std::fs::create_dir_all(root.join("node_modules/kept"))?;
        std::fs::write(root.join("node_modules/kept/index.js"), "old\n")?;
        std::fs::create_dir_all(root.join("src/deep"))?;
        std::fs::write(root.join("src/deep/a.py"), "a = 1\n")?;
        git(root, &["add", "-A"])?;
        git(root, &["add", "-f", "node_modules/kept/index.js"])?;
        git(root, &["commit", "-qm", "ignored folder"])?;
        let mut checkpoints = Checkpoints::open(root)?;
        assert_eq!(checkpoints.snapshot()?, git_write_tree(root)?);

        // A new file in a new folder, an edit, a deletion, a folder removed.
        std::fs::create_dir_all(root.join("fresh/sub"))?;
        std::fs::write(root.join("fresh/sub/new.py"), "def f():\n    pass\n")?;
        std::fs::write(root.join("edited.txt"), "changed\n")?;
        std::fs::remove_file(root.join("deleted.txt"))?;
        std::fs::remove_dir_all(root.join("src"))?;
        std::fs::remove_file(root.join("kept.txt"))?;
        std::fs::create_dir(root.join("kept.txt"))?;
        std::fs::write(root.join("kept.txt/inside.txt"), "a folder now\n")?;
        // A tracked file inside an ignored folder is still followed; the
        // folder's untracked files are not read.
        std::fs::write(root.join("node_modules/kept/index.js"), "new\n")?;
        std::fs::create_dir_all(root.join("node_modules/pkg"))?;
        std::fs::write(root.join("node_modules/pkg/x.js"), "x\n")?;
        std::fs::write(root.join("fresh/run.log"), "ignored\n")?;
        let now = checkpoints.snapshot()?;
        assert_eq!(now, git_write_tree(root)?);
        for (file, text) in [
            ("fresh/sub/new.py", Some("def f():\n    pass\n")),
            ("node_modules/kept/index.js", Some("new\n")),
            ("kept.txt/inside.txt", Some("a folder now\n")),
            ("node_modules/pkg/x.js", None),
            ("src/deep/a.py", None),
        ] {
            assert_eq!(
                blob_text(&checkpoints, now, file).as_deref(),
                text,
                "{file}"
            );
        }

        // A folder only git's exclude file hides still counts; an untracked
        // nested repository is not copied.
        std::fs::write(root.join(".git/info/exclude"), "local/\n")?;
        std::fs::create_dir_all(root.join("local"))?;
        std::fs::write(root.join("local/mine.py"), "m = 1\n")?;
        std::fs::create_dir_all(root.join("other"))?;
        git(&root.join("other"), &["init", "-q"])?;
        std::fs::write(root.join("other/inner.py"), "i = 1\n")?;
        let later = checkpoints.snapshot()?;
        assert_eq!(
            blob_text(&checkpoints, later, "local/mine.py").as_deref(),
            Some("m = 1\n")
        );
        assert_eq!(blob_text(&checkpoints, later, "other/inner.py"), None);
        Ok(())
    }

    #[test]
    fn without_a_commit_snapshots_keep_gits_own_ignore_rules() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        git(root, &["init", "-q"])?;
        std::fs::write(root.join(".gitignore"), "*.log\n")?;
        std::fs::write(root.join(".git/info/exclude"), "secret.txt\n")?;
        for file in ["a.txt", "b.log", "secret.txt"] {
            std::fs::write(root.join(file), "x\n")?;
        }
        let mut checkpoints = Checkpoints::open(root)?;
        let now = checkpoints.snapshot()?;
        assert_eq!(now, git_write_tree(root)?);
        assert!(blob_text(&checkpoints, now, "a.txt").is_some());
        assert_eq!(blob_text(&checkpoints, now, "b.log"), None);
        assert_eq!(blob_text(&checkpoints, now, "secret.txt"), None);
        Ok(())
    }

    #[test]
    fn a_folder_inside_a_repository_is_refused() -> anyhow::Result<()> {
        let dir = repo_with_files()?;
        std::fs::create_dir_all(dir.path().join("sub"))?;
        let error = Checkpoints::open(&dir.path().join("sub"))
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("top folder")));
        let plain = tempfile::tempdir()?;
        assert!(Checkpoints::open(plain.path()).is_err());
        Ok(())
    }
}
