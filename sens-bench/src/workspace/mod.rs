//! Materialized copies of a project: a fresh temporary folder holding the source,
//! its own git repository and a reproducible baseline commit. Hidden files and
//! reference patches enter a copy only through [`hidden::copy_hidden`] and
//! [`git::apply_patch`], which the grader calls; [`diff`] reads back what the
//! agent changed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::{Oid, Repository};
use tempfile::TempDir;

use crate::sandbox::View;
use crate::spec::sequence::Sequence;
use crate::spec::task::{Source, Task};
use cache::{Cache, Lease, download_sdist, fetch_git};
use git::{apply_patch, resolve_commit};
use hidden::copy_folder;
use sources::{checkout_tree, unpack_sdist};

pub mod beneath;
pub mod cache;
pub mod diff;
pub mod git;
pub mod hidden;
pub mod seed;
pub mod sources;

/// The pool of build folders a task's copies lease from, if any: Rust tasks on
/// this repository share one per pinned commit (see [`Workspace::for_task`]).
pub fn build_pool(task: &Task) -> Result<Option<String>> {
    match &task.source {
        Source::SelfRepo { rev, repo } if task.language == "rust" => Ok(Some(
            resolve_commit(&Repository::open(repo)?, rev)?.to_string(),
        )),
        _ => Ok(None),
    }
}

/// One materialized copy. The folder is removed when this is dropped.
#[derive(Debug)]
pub struct Workspace {
    _tmp: TempDir,
    /// The project root (inside the temporary folder).
    pub root: PathBuf,
    /// The baseline commit of the copy's own repository.
    pub baseline: Oid,
    /// Variables every command in this copy runs with (e.g. a shared
    /// `CARGO_TARGET_DIR` for Rust tasks on this repository).
    pub env: Vec<(String, String)>,
    /// The harness's own ignore patterns (what set-up made, test caches): with
    /// the baseline's `.gitignore` files, the only rules that hide a file from the
    /// diff (docs/integrity.md, "Ignore rules that count").
    pub excluded: Vec<String>,
    /// The build folder this copy holds alone while it lives.
    _build: Option<Lease>,
}

impl Workspace {
    /// What the tests of this copy see in their sandbox: the copy and the
    /// folders its variables name (a Rust task's build folder), writable; the
    /// toolchains on `PATH`, read-only; a loopback of their own.
    pub fn test_view(&self) -> View {
        let mut writable = vec![self.root.clone()];
        writable.extend(named_folders(&self.env));
        let path = std::env::var_os("PATH").unwrap_or_default();
        View::for_commands(writable, &path, false)
    }

    /// What the set-up sees: the tests' view with the network, and the
    /// toolchains writable, since installing the task's dependencies is its
    /// work (`pip install`, `cargo fetch`). It runs before the agent, on the
    /// task's own source, so no code of the agent's ever runs with this view.
    pub fn setup_view(&self) -> View {
        let mut view = self.test_view();
        view.writable.append(&mut view.readable);
        view.network = true;
        view
    }

    /// A fresh copy of a task's project (without hidden files or reference).
    pub fn for_task(task: &Task, cache: &Cache) -> Result<Workspace> {
        let mut env = Vec::new();
        let mut build = None;
        if let Some(commit) = build_pool(task)? {
            // Copies of the same commit reuse idle build folders, so the
            // dependencies are compiled once per folder, not once per copy.
            let lease = cache.lease(&["cargo-target", &commit])?;
            if let Some(from) = seed::seed_from_env() {
                seed::seed_build(&from, &lease.dir)
                    .with_context(|| format!("task `{}`: cannot seed its build folder", task.id))?;
            }
            env.push(("CARGO_TARGET_DIR".to_string(), path_string(&lease.dir)?));
            build = Some(lease);
        }
        let mut workspace = Self::materialize(&task.source, &task.subdir, cache, env)
            .with_context(|| format!("task `{}`: cannot materialize its source", task.id))?;
        workspace._build = build;
        Ok(workspace)
    }

    /// A fresh copy of a sequence's start.
    pub fn for_sequence_start(sequence: &Sequence) -> Result<Workspace> {
        Self::build(
            |project| copy_folder(&sequence.start, project),
            Path::new(""),
            Vec::new(),
        )
        .with_context(|| format!("sequence `{}`: cannot copy its start", sequence.name))
    }

    fn materialize(
        source: &Source,
        subdir: &Path,
        cache: &Cache,
        env: Vec<(String, String)>,
    ) -> Result<Workspace> {
        match source {
            Source::Path(dir) => Self::build(|project| copy_folder(dir, project), subdir, env),
            Source::SelfRepo { repo, rev } => {
                let repo = Repository::open(repo)
                    .with_context(|| format!("cannot open the repository at {}", repo.display()))?;
                let commit = resolve_commit(&repo, rev)?;
                Self::build(|project| checkout_tree(&repo, commit, project), subdir, env)
            }
            Source::Git { url, rev } => {
                let (repo, commit) = fetch_git(cache, url, rev)?;
                Self::build(|project| checkout_tree(&repo, commit, project), subdir, env)
            }
            Source::Pypi { name, version } => {
                let sdist = download_sdist(cache, name, version)?;
                Self::build(|project| unpack_sdist(&sdist, project), subdir, env)
            }
            Source::Snapshot { sequence, step } => Self::build(
                |project| {
                    copy_folder(&sequence.start, project)?;
                    for earlier in &sequence.steps[..*step] {
                        apply_patch(project, &earlier.reference)?;
                    }
                    Ok(())
                },
                subdir,
                env,
            ),
        }
    }

    /// Fills `<tmp>/source` with `fill`, moves its `subdir` to `<tmp>/project`,
    /// and commits the baseline there.
    fn build(
        fill: impl FnOnce(&Path) -> Result<()>,
        subdir: &Path,
        env: Vec<(String, String)>,
    ) -> Result<Workspace> {
        let tmp = tempfile::Builder::new()
            .prefix("sens-bench-")
            .tempdir()
            .context("cannot create a temporary folder")?;
        let source = tmp.path().join("source");
        let root = tmp.path().join("project");
        std::fs::create_dir(&source)
            .with_context(|| format!("cannot create {}", source.display()))?;
        // Patches (snapshots) need a repository to apply in; it is replaced below.
        Repository::init(&source)
            .with_context(|| format!("cannot create a repository in {}", source.display()))?;
        fill(&source)?;
        std::fs::remove_dir_all(source.join(".git"))
            .with_context(|| format!("cannot remove {}", source.join(".git").display()))?;
        let inner = source.join(subdir);
        if !inner.is_dir() {
            bail!(
                "field `source.subdir`: `{}` is not a folder of the source",
                subdir.display()
            );
        }
        std::fs::rename(&inner, &root)
            .with_context(|| format!("cannot move {} to {}", inner.display(), root.display()))?;
        if source.exists() {
            std::fs::remove_dir_all(&source)
                .with_context(|| format!("cannot remove {}", source.display()))?;
        }
        let baseline = commit_baseline(&root)?;
        Ok(Workspace {
            _tmp: tmp,
            root,
            baseline,
            env,
            excluded: Vec::new(),
            _build: None,
        })
    }
}

/// Creates the copy's repository with one commit of every file not ignored.
fn commit_baseline(root: &Path) -> Result<Oid> {
    Repository::init(root)
        .with_context(|| format!("cannot create a repository in {}", root.display()))?;
    git::commit_all(root, "baseline")
}

/// The folders that variables name (`CARGO_TARGET_DIR=/cache/...`): a
/// sandbox shows them writable, since the commands build into them.
pub fn named_folders(env: &[(String, String)]) -> impl Iterator<Item = PathBuf> + '_ {
    env.iter()
        .map(|(_, value)| PathBuf::from(value))
        .filter(|p| p.is_absolute() && p.is_dir())
}

fn path_string(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not valid UTF-8", path.display()))
}

#[cfg(test)]
mod tests {
    use super::hidden::copy_hidden;
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn read(root: &Path, rel: &str) -> String {
        std::fs::read_to_string(root.join(rel)).expect("readable")
    }

    fn cache() -> (TempDir, Cache) {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache {
            root: dir.path().to_path_buf(),
        };
        (dir, cache)
    }

    fn head_commit(root: &Path) -> (Oid, usize) {
        let repo = Repository::open(root).expect("a repository");
        let head = repo.head().expect("head").peel_to_commit().expect("commit");
        let files = head.tree().expect("tree").len();
        (head.id(), files)
    }

    #[test]
    fn a_path_copy_has_a_reproducible_baseline_and_honours_subdir() {
        let src = tempfile::tempdir().expect("temp dir");
        write(src.path(), "inner/a.txt", "a\n");
        write(src.path(), "inner/.gitignore", "build/\n");
        write(src.path(), "other.txt", "o\n");
        let (_d, cache) = cache();
        let source = Source::Path(src.path().to_path_buf());
        let one =
            Workspace::materialize(&source, Path::new("inner"), &cache, Vec::new()).expect("copy");
        let two =
            Workspace::materialize(&source, Path::new("inner"), &cache, Vec::new()).expect("copy");
        assert_ne!(one.root, two.root);
        assert_eq!(one.baseline, two.baseline);
        assert_eq!(read(&one.root, "a.txt"), "a\n");
        assert!(!one.root.join("other.txt").exists());
        assert_eq!(head_commit(&one.root), (one.baseline, 2));
        let err = Workspace::materialize(&source, Path::new("absent"), &cache, Vec::new())
            .expect_err("missing subdir");
        assert!(format!("{err:#}").contains("source.subdir"), "{err:#}");
    }

    #[test]
    fn hidden_files_and_patches_enter_only_when_asked() {
        let src = tempfile::tempdir().expect("temp dir");
        write(src.path(), "a.txt", "one\ntwo\n");
        let hidden = tempfile::tempdir().expect("temp dir");
        write(hidden.path(), "hidden_tests/t.sh", "exit 0\n");
        let patch = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(
            patch.path(),
            "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n",
        )
        .expect("write");
        let (_d, cache) = cache();
        let copy = Workspace::materialize(
            &Source::Path(src.path().to_path_buf()),
            Path::new(""),
            &cache,
            Vec::new(),
        )
        .expect("copy");
        assert!(!copy.root.join("hidden_tests").exists());
        let hidden = crate::spec::hidden::Hidden::folder(hidden.path().to_path_buf());
        copy_hidden(&hidden, &copy.root).expect("hidden copied");
        assert_eq!(read(&copy.root, "hidden_tests/t.sh"), "exit 0\n");
        apply_patch(&copy.root, patch.path()).expect("applies");
        assert_eq!(read(&copy.root, "a.txt"), "one\nthree\n");
        let err = apply_patch(&copy.root, patch.path()).expect_err("no longer applies");
        assert!(format!("{err:#}").contains("does not apply"), "{err:#}");
    }

    #[test]
    fn a_self_source_checks_out_a_commit_of_the_repository() {
        let repo_dir = tempfile::tempdir().expect("temp dir");
        let repo = Repository::init(repo_dir.path()).expect("init");
        write(repo_dir.path(), "src/lib.rs", "pub fn old() {}\n");
        write(repo_dir.path(), "run.sh", "echo hi\n");
        std::fs::set_permissions(
            repo_dir.path().join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
        let first = commit_baseline(repo_dir.path()).expect("first commit");
        // A later change in the work tree must not reach the copy.
        write(repo_dir.path(), "src/lib.rs", "pub fn new() {}\n");
        drop(repo);
        let (_d, cache) = cache();
        let source = Source::SelfRepo {
            repo: repo_dir.path().to_path_buf(),
            rev: first.to_string()[..8].to_string(),
        };
        let copy =
            Workspace::materialize(&source, Path::new("src"), &cache, Vec::new()).expect("copy");
        assert_eq!(read(&copy.root, "lib.rs"), "pub fn old() {}\n");
        let full =
            Workspace::materialize(&source, Path::new(""), &cache, Vec::new()).expect("copy");
        let mode = std::fs::metadata(full.root.join("run.sh")).expect("exists");
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o111,
            0o111
        );
    }

    #[test]
    fn live_copies_of_a_rust_task_never_share_a_target_folder() {
        let repo_dir = tempfile::tempdir().expect("temp dir");
        Repository::init(repo_dir.path()).expect("init");
        write(repo_dir.path(), "Cargo.toml", "[workspace]\n");
        let commit = commit_baseline(repo_dir.path()).expect("commit");
        let (_d, cache) = cache();
        let task = |language: &str| Task {
            id: "t".into(),
            dir: repo_dir.path().to_path_buf(),
            language: language.into(),
            kind: crate::spec::task::Kind::Plain,
            prompt: PathBuf::new(),
            reference: PathBuf::new(),
            hidden: crate::spec::hidden::Hidden::folder(PathBuf::new()),
            timeout: std::time::Duration::from_secs(1),
            source: Source::SelfRepo {
                repo: repo_dir.path().to_path_buf(),
                rev: commit.to_string()[..10].to_string(),
            },
            subdir: PathBuf::new(),
            commands: crate::spec::Commands {
                setup: None,
                test: "true".into(),
                hidden: "true".into(),
            },
        };
        let pool = cache.root.join("cargo-target").join(commit.to_string());
        let target = |slot: &str| {
            vec![(
                "CARGO_TARGET_DIR".to_string(),
                pool.join(slot).display().to_string(),
            )]
        };
        let one = Workspace::for_task(&task("rust"), &cache).expect("copy");
        let two = Workspace::for_task(&task("rust"), &cache).expect("copy");
        assert_eq!(one.env, target("0"));
        assert_eq!(two.env, target("1"));
        // A copy made once `one` is gone reuses its folder (and what was built there).
        drop(one);
        let three = Workspace::for_task(&task("rust"), &cache).expect("copy");
        assert_eq!(three.env, target("0"));
        drop(two);
        assert!(
            Workspace::for_task(&task("python"), &cache)
                .expect("copy")
                .env
                .is_empty()
        );
    }

    #[test]
    fn a_git_source_is_fetched_into_the_cache_once() {
        let upstream = tempfile::tempdir().expect("temp dir");
        Repository::init(upstream.path()).expect("init");
        write(upstream.path(), "README", "upstream\n");
        let commit = commit_baseline(upstream.path()).expect("commit");
        let (_d, cache) = cache();
        let source = Source::Git {
            url: format!("file://{}", upstream.path().display()),
            rev: commit.to_string(),
        };
        let copy =
            Workspace::materialize(&source, Path::new(""), &cache, Vec::new()).expect("copy");
        assert_eq!(read(&copy.root, "README"), "upstream\n");
        // The second copy comes from the cache even with the upstream gone.
        drop(upstream);
        let again =
            Workspace::materialize(&source, Path::new(""), &cache, Vec::new()).expect("copy");
        assert_eq!(read(&again.root, "README"), "upstream\n");
    }

    #[test]
    fn a_pypi_source_unpacks_the_sdist_without_its_top_folder() {
        let (_d, cache) = cache();
        let source = Source::Pypi {
            name: "click".into(),
            version: "8.1.7".into(),
        };
        let copy =
            Workspace::materialize(&source, Path::new(""), &cache, Vec::new()).expect("copy");
        assert!(copy.root.join("src/click/core.py").is_file());
        assert!(copy.root.join("tests").is_dir());
        assert!(read(&copy.root, "PKG-INFO").contains("Version: 8.1.7"));
        let (_, files) = head_commit(&copy.root);
        assert!(files > 3);
    }

    #[test]
    fn a_snapshot_applies_the_reference_patches_up_to_its_step() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sequences/tiny");
        let sequence = crate::spec::sequence::load_sequence(&fixture).expect("fixture sequence");
        let (_d, cache) = cache();
        let at = |step| {
            let source = Source::Snapshot {
                sequence: Box::new(sequence.clone()),
                step,
            };
            Workspace::materialize(&source, Path::new(""), &cache, Vec::new()).expect("snapshot")
        };
        let start = at(0);
        let first = at(1);
        let second = at(2);
        assert!(!read(&start.root, "calc.sh").contains("mul"));
        assert!(read(&first.root, "calc.sh").contains("mul"));
        assert!(!read(&first.root, "calc.sh").contains("pow"));
        assert!(read(&second.root, "calc.sh").contains("pow"));
    }
}
