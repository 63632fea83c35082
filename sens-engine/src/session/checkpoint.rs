//! Snapshots of the working directory as git trees, and checkpoints as commits
//! under private refs (`refs/sens/*`). Nothing here touches HEAD, the git index
//! file, the working tree or any branch: trees are built in an in-memory index,
//! and only objects and `refs/sens/*` are written.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Signature};
use rayon::prelude::*;

use crate::ignores::{ENGINE_DIR, Ignores};
use crate::judge::FileChange;

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

/// The cached blob id of a working-tree file, valid while its stat is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    inode: u64,
    mode: u32,
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

/// Everything a snapshot's tree depends on besides the index's content: the
/// real index's stat (its content is read again when that changes), and the files
/// that differ from it on disk. Equal inputs give the same tree, so a snapshot
/// that finds them unchanged skips rebuilding and writing it.
#[derive(Debug, PartialEq, Eq)]
struct SnapshotInputs {
    index: Option<Stamp>,
    gone: Vec<String>,
    /// Sorted by path: mode and blob id of each file new or changed on disk.
    on_disk: Vec<(String, u32, Oid)>,
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

    /// The tree of the working directory as it stands: tracked files as they are
    /// on disk, plus untracked files the ignore rules that count do not hide;
    /// `.sens/` left out.
    /// Tracked files whose stat matches the git index reuse its blob ids; changed
    /// and untracked files are hashed once per (size, mtime, ctime, inode).
    pub fn snapshot(&mut self) -> anyhow::Result<Oid> {
        self.read_index()?;
        let (mut on_disk, gone) = self.changes_on_disk()?;
        on_disk.sort_unstable();
        on_disk.dedup();
        let mut hashed = Vec::with_capacity(on_disk.len());
        for path in on_disk.iter().filter(|p| !p.starts_with(ENGINE_DIR)) {
            if let Some((mode, id)) = self.hash_file(path)? {
                hashed.push((path.clone(), mode, id));
            }
        }
        let inputs = SnapshotInputs {
            index: self.tracked.stamp,
            gone,
            on_disk: hashed,
        };
        if let Some((last, tree)) = &self.last_snapshot
            && *last == inputs
        {
            return Ok(*tree);
        }
        // The index's own tree with what differs on disk applied: only the
        // folders on a changed path are written again. Removals go first, on
        // their own: a file that became a folder is removed before what the
        // folder holds is added.
        let base = self.index_tree()?;
        let upserted: HashSet<&str> = inputs.on_disk.iter().map(|(p, _, _)| p.as_str()).collect();
        let removals: Vec<&str> = inputs
            .gone
            .iter()
            .chain(&on_disk)
            .map(String::as_str)
            .filter(|path| !upserted.contains(path) && self.tracked.in_tree(path))
            .collect();
        let mut tree = base;
        if !removals.is_empty() {
            let mut removed = git2::build::TreeUpdateBuilder::new();
            for path in removals {
                removed.remove(path);
            }
            tree = self.updated(&mut removed, tree)?;
        }
        let mut added = git2::build::TreeUpdateBuilder::new();
        for (path, mode, id) in &inputs.on_disk {
            added.upsert(path.as_str(), *id, file_mode(*mode));
        }
        if !upserted.is_empty() {
            tree = self.updated(&mut added, tree)?;
        }
        self.last_snapshot = Some((inputs, tree));
        Ok(tree)
    }

    /// `tree` with `update` applied, written into the object database.
    fn updated(
        &self,
        update: &mut git2::build::TreeUpdateBuilder,
        tree: Oid,
    ) -> anyhow::Result<Oid> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("finding a tree to update")?;
        update
            .create_updated(&self.repo, &tree)
            .context("writing the snapshot tree into the git object database")
    }

    /// The tree of the git index's entries (merged ones, `.sens/` left out),
    /// written once per read of the index.
    fn index_tree(&mut self) -> anyhow::Result<Oid> {
        if let Some(tree) = self.tracked.tree {
            return Ok(tree);
        }
        let mut tree_index = Index::new().context("creating an in-memory git index")?;
        for entry in &self.tracked.entries {
            if self.tracked.in_tree(&entry.path) {
                tree_index.add(&tree_entry(&entry.path, entry.mode, entry.id))?;
            }
        }
        let tree = tree_index
            .write_tree_to(&self.repo)
            .context("writing the git index's tree into the git object database")?;
        self.tracked.tree = Some(tree);
        Ok(tree)
    }

    /// Reads the repository's git index again when its stat changed since the
    /// last read. It is only read: the engine never writes it.
    fn read_index(&mut self) -> anyhow::Result<()> {
        let stamp = match std::fs::metadata(&self.real_index) {
            Ok(m) => Some(stamp(&m, 0)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("reading {}", self.real_index.display()));
            }
        };
        if self.tracked.read && self.tracked.stamp == stamp {
            return Ok(());
        }
        let mut entries = Vec::new();
        if stamp.is_some() {
            let index = Index::open(&self.real_index)
                .with_context(|| format!("reading the git index {}", self.real_index.display()))?;
            for entry in index.iter() {
                entries.push(TrackedFile::of(&entry));
            }
        }
        self.tracked = TrackedFiles {
            read: true,
            stamp,
            entries,
            tree: None,
        };
        Ok(())
    }

    /// The files that differ from the git index on disk (tracked ones changed,
    /// of another type or in conflict, and untracked ones that count), and the
    /// tracked ones gone. The working directory is listed folder by folder, each
    /// level's folders in parallel, without entering `.git`, nested repositories
    /// or folders the ignore rules that count hide; a listed tracked file costs
    /// one `fstatat` in its open folder, and one whose stat matches its entry is
    /// unchanged, as in git.
    fn changes_on_disk(&self) -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let racy_from = self.tracked.stamp.map_or(i128::MIN, |s| s.mtime_ns);
        let entries = &self.tracked.entries;
        let mut seen = vec![false; entries.len()];
        let (mut on_disk, mut gone) = (Vec::new(), Vec::new());
        let mut folders = vec![String::new()];
        let (root, tracked) = (self.root.as_path(), &self.tracked);
        while !folders.is_empty() {
            let listings: Vec<Listing> = folders
                .par_iter()
                .map(|dir| tracked.list(root, dir, racy_from))
                .collect::<anyhow::Result<_>>()?;
            folders.clear();
            for listing in listings {
                for dir in listing.folders {
                    if !self.hides(&dir, true)? {
                        folders.push(dir + "/");
                    }
                }
                for (at, state) in listing.tracked {
                    seen[at] = true;
                    if state == FileState::Changed {
                        on_disk.push(entries[at].path.clone());
                    }
                }
                for file in listing.untracked {
                    if !self.hides(&file, false)? {
                        on_disk.push(file);
                    }
                }
            }
        }
        // Tracked files the listing did not reach: gone, or in a folder it
        // does not enter.
        for (entry, _) in entries.iter().zip(&seen).filter(|(_, seen)| !**seen) {
            let file = self.root.join(&entry.path);
            let metadata = match std::fs::symlink_metadata(&file) {
                Ok(m) => Some(m),
                Err(e) if is_missing(&e) => None,
                Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
            };
            match entry.state(metadata.as_ref(), racy_from) {
                FileState::Same => {}
                FileState::Changed => on_disk.push(entry.path.clone()),
                FileState::Gone => gone.push(entry.path.clone()),
            }
        }
        gone.sort_unstable();
        Ok((on_disk, gone))
    }

    /// Whether the ignore rules that count hide `rel`; with no baseline,
    /// whether git's own do.
    fn hides(&self, rel: &str, is_dir: bool) -> anyhow::Result<bool> {
        match &self.ignores {
            Some(rules) => Ok(rules.is_ignored(rel, is_dir)),
            None => self
                .repo
                .is_path_ignored(if is_dir {
                    format!("{rel}/")
                } else {
                    rel.to_string()
                })
                .with_context(|| format!("asking git whether {rel} is ignored")),
        }
    }

    /// The file's mode and blob id, or `None` when it vanished or is not a file.
    fn hash_file(&mut self, path: &str) -> anyhow::Result<Option<(u32, Oid)>> {
        let absolute = self.root.join(path);
        let metadata = match std::fs::symlink_metadata(&absolute) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", absolute.display())),
        };
        let Some(mode) = git_mode(&metadata) else {
            return Ok(None);
        };
        let stamp = stamp(&metadata, mode);
        if let Some((cached, id)) = self.blobs.get(path)
            && *cached == stamp
        {
            return Ok(Some((mode, *id)));
        }
        let id = if mode == 0o120000 {
            let target = std::fs::read_link(&absolute)
                .with_context(|| format!("reading the link {}", absolute.display()))?;
            self.repo
                .blob(target.as_os_str().as_encoded_bytes())
                .with_context(|| format!("storing the link {}", absolute.display()))?
        } else {
            self.repo
                .blob_path(&absolute)
                .with_context(|| format!("storing {} as a git blob", absolute.display()))?
        };
        self.blobs.insert(path.to_string(), (stamp, id));
        Ok(Some((mode, id)))
    }

    /// Records `tree` as checkpoint N (the next free number) under
    /// `refs/sens/checkpoints/N`, its parent the previous checkpoint.
    pub fn checkpoint(&mut self, tree: Oid) -> anyhow::Result<Checkpoint> {
        let number = self.next_number;
        let message = format!("{CHECKPOINT_MESSAGE}{number}");
        let commit = self.commit_tree(tree, self.last_checkpoint, &message)?;
        let name = format!("{CHECKPOINT_PREFIX}{number}");
        self.repo
            .reference(&name, commit, false, &message)
            .with_context(|| format!("creating {name}"))?;
        self.next_number += 1;
        self.last_checkpoint = Some(commit);
        Ok(Checkpoint {
            number,
            commit,
            tree,
        })
    }

    /// Points `refs/sens/approved` at `checkpoint`.
    pub fn mark_approved(&self, checkpoint: &Checkpoint) -> anyhow::Result<()> {
        let message = format!("sens approved checkpoint {}", checkpoint.number);
        self.repo
            .reference(APPROVED_REF, checkpoint.commit, true, &message)
            .with_context(|| format!("moving {APPROVED_REF}"))?;
        Ok(())
    }

    /// The approved checkpoint an earlier process recorded, if any.
    pub fn approved(&self) -> anyhow::Result<Option<Checkpoint>> {
        let reference = match self.repo.find_reference(APPROVED_REF) {
            Ok(reference) => reference,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {APPROVED_REF}")),
        };
        let commit = reference.peel_to_commit().with_context(|| {
            format!("{APPROVED_REF} does not point at a commit: delete it with `git update-ref -d {APPROVED_REF}`")
        })?;
        let number = commit
            .message()
            .ok()
            .and_then(|m| m.strip_prefix(CHECKPOINT_MESSAGE))
            .and_then(|n| n.parse().ok())
            .with_context(|| {
                format!(
                    "{APPROVED_REF} points at {}, which is no sens checkpoint",
                    commit.id()
                )
            })?;
        Ok(Some(Checkpoint {
            number,
            commit: commit.id(),
            tree: commit.tree_id(),
        }))
    }

    /// Keeps `tree` under a new `refs/sens/rejected/N` and returns that ref's name.
    pub fn keep_rejected(&mut self, tree: Oid) -> anyhow::Result<String> {
        let taken = self
            .repo
            .references_glob(&format!("{REJECTED_PREFIX}*"))
            .context("listing rejected states")?
            .count();
        let name = format!("{REJECTED_PREFIX}{}", taken + 1);
        let commit = self.commit_tree(tree, None, "sens rejected state")?;
        self.repo
            .reference(&name, commit, false, "sens rejected state")
            .with_context(|| format!("creating {name}"))?;
        Ok(name)
    }

    /// Makes the working directory's files hold `to` where they hold `from` now
    /// (a snapshot): files that differ are rewritten from `to`, files `to` lacks
    /// are removed. Nothing else is touched: ignored files, `.sens/`, the index.
    pub fn restore(&self, from: Oid, to: Oid) -> anyhow::Result<()> {
        let target = self
            .repo
            .find_tree(to)
            .context("finding the tree to restore")?;
        for (path, _, wanted) in self.deltas(from, to)? {
            let file = self.root.join(&path);
            let Some(blob) = wanted else {
                std::fs::remove_file(&file)
                    .with_context(|| format!("removing {}", file.display()))?;
                continue;
            };
            let entry = target
                .get_path(Path::new(&path))
                .with_context(|| format!("finding {path} in the tree to restore"))?;
            let content = self.repo.find_blob(blob).context("reading a blob")?;
            write_entry(&file, content.content(), entry.filemode())?;
        }
        Ok(())
    }

    /// Keeps `tree` reachable from `refs/sens/trees` (one commit per new tree).
    pub fn keep(&mut self, tree: Oid) -> anyhow::Result<()> {
        if self.last_kept.is_some_and(|(kept, _)| kept == tree) {
            return Ok(());
        }
        let parent = self.last_kept.map(|(_, commit)| commit);
        let commit = self.commit_tree(tree, parent, "sens ledger tree")?;
        self.repo
            .reference(TREES_REF, commit, true, "sens ledger tree")
            .with_context(|| format!("moving {TREES_REF}"))?;
        self.last_kept = Some((tree, commit));
        Ok(())
    }

    fn commit_tree(&self, tree: Oid, parent: Option<Oid>, message: &str) -> anyhow::Result<Oid> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("finding a snapshot tree")?;
        let parent = parent
            .map(|id| self.repo.find_commit(id))
            .transpose()
            .context("finding the previous sens commit")?;
        let signature = Signature::now("sens", "sens@localhost").context("making a signature")?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(None, &signature, &signature, message, &tree, &parents)
            .context("writing a sens commit")
    }

    /// Paths whose content differs between two trees.
    pub fn changed_paths(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<String>> {
        Ok(self
            .deltas(from, to)?
            .into_iter()
            .map(|(path, _, _)| path)
            .collect())
    }

    /// The text files changed between two trees, with their contents on each
    /// side. Files that are not UTF-8 text are left out: the rules read code.
    pub fn changes(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<FileChange>> {
        tree_changes(&self.repo, from, to)
    }

    /// The `git diff` text (3 lines of context) between two trees; binary
    /// files show as git shows them, without content.
    pub fn patch(&self, from: Oid, to: Oid) -> anyhow::Result<String> {
        let old = self
            .repo
            .find_tree(from)
            .context("finding the earlier tree")?;
        let new = self.repo.find_tree(to).context("finding the later tree")?;
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&old), Some(&new), None)
            .context("comparing two snapshot trees")?;
        let mut patch = Vec::new();
        diff.print(git2::DiffFormat::Patch, |_, _, line| {
            if matches!(line.origin(), '+' | '-' | ' ') {
                patch.push(line.origin() as u8);
            }
            patch.extend_from_slice(line.content());
            true
        })
        .context("printing the change as a patch")?;
        Ok(String::from_utf8_lossy(&patch).into_owned())
    }

    /// Each file that differs, with its blob on each side.
    fn deltas(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<Delta>> {
        tree_deltas(&self.repo, from, to)
    }
}

/// [`Checkpoints::changes`] in any repository holding both trees (a replay's).
pub fn tree_changes(repo: &Repository, from: Oid, to: Oid) -> anyhow::Result<Vec<FileChange>> {
    let mut changes = Vec::new();
    for (path, before, after) in tree_deltas(repo, from, to)? {
        let (Some(before), Some(after)) = (blob_text(repo, before)?, blob_text(repo, after)?)
        else {
            continue;
        };
        changes.push(FileChange {
            path,
            before,
            after,
        });
    }
    Ok(changes)
}

/// `Some(None)` for an absent side, `Some(Some(text))` for text (bytes that are
/// not UTF-8 decoded lossily, so they hide nothing), `None` for binary content
/// (a NUL byte near the top, as the walk decides).
fn blob_text(repo: &Repository, id: Option<Oid>) -> anyhow::Result<Option<Option<String>>> {
    let Some(id) = id else {
        return Ok(Some(None));
    };
    let blob = repo
        .find_blob(id)
        .context("reading a changed file's blob")?;
    let content = blob.content();
    Ok((!crate::walk::is_binary(content))
        .then(|| Some(String::from_utf8_lossy(content).into_owned())))
}

/// Each file that differs between two trees, with its blob on each side.
pub fn tree_deltas(repo: &Repository, from: Oid, to: Oid) -> anyhow::Result<Vec<Delta>> {
    let old = repo.find_tree(from).context("finding the earlier tree")?;
    let new = repo.find_tree(to).context("finding the later tree")?;
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .context("comparing two snapshot trees")?;
    let present = |file: git2::DiffFile<'_>| {
        let blob = file.mode() != git2::FileMode::Commit && !file.id().is_zero();
        blob.then(|| file.id())
    };
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let file = delta.new_file().path().or_else(|| delta.old_file().path());
        let Some(path) = file.and_then(Path::to_str) else {
            continue;
        };
        out.push((
            path.to_string(),
            present(delta.old_file()),
            present(delta.new_file()),
        ));
    }
    Ok(out)
}

/// One file of a restored tree: a symlink, or a file with the tree's executable bit.
fn write_entry(file: &Path, content: &[u8], mode: i32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    if file.symlink_metadata().is_ok() {
        std::fs::remove_file(file).with_context(|| format!("replacing {}", file.display()))?;
    }
    if mode == i32::from(git2::FileMode::Link) {
        let target = std::str::from_utf8(content)
            .with_context(|| format!("the link target of {} is not UTF-8", file.display()))?;
        return std::os::unix::fs::symlink(target, file)
            .with_context(|| format!("linking {}", file.display()));
    }
    std::fs::write(file, content).with_context(|| format!("writing {}", file.display()))?;
    let executable = mode == i32::from(git2::FileMode::BlobExecutable);
    let permissions = std::fs::Permissions::from_mode(if executable { 0o755 } else { 0o644 });
    std::fs::set_permissions(file, permissions)
        .with_context(|| format!("setting the mode of {}", file.display()))
}

/// (path, blob before, blob after); `None` when the file is absent on that side.
pub type Delta = (String, Option<Oid>, Option<Oid>);

/// A blob's git mode as a tree entry's.
fn file_mode(mode: u32) -> git2::FileMode {
    match mode {
        0o120000 => git2::FileMode::Link,
        0o100755 => git2::FileMode::BlobExecutable,
        _ => git2::FileMode::Blob,
    }
}

fn tree_entry(path: &str, mode: u32, id: Oid) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// A file that is not there, or under a path that is no longer a folder.
fn is_missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The git mode of a file, symlink or executable file; `None` for anything else.
fn git_mode(metadata: &std::fs::Metadata) -> Option<u32> {
    if metadata.file_type().is_symlink() {
        Some(0o120000)
    } else if metadata.is_file() {
        let executable = std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o111;
        Some(if executable != 0 { 0o100755 } else { 0o100644 })
    } else {
        None
    }
}

/// What the git index lists, in its order (by path, then stage).
#[derive(Default)]
struct TrackedFiles {
    /// Whether it was read at all (`stamp` is `None` without an index file).
    read: bool,
    stamp: Option<Stamp>,
    entries: Vec<TrackedFile>,
    /// See [`Checkpoints::index_tree`].
    tree: Option<Oid>,
}

impl TrackedFiles {
    /// One folder (`""` or `a/b/`) of the working directory: its subfolders
    /// but `.git` and nested repositories, its tracked files against their
    /// entries, and its other files.
    fn list(&self, root: &Path, dir: &str, racy_from: i128) -> anyhow::Result<Listing> {
        let path = root.join(dir);
        let read = std::fs::read_dir(&path).with_context(|| format!("listing {}", path.display()));
        let mut listing = Listing::default();
        for entry in read? {
            let entry = entry.with_context(|| format!("listing {}", path.display()))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                bail!(
                    "a file name in {} is not UTF-8 ({}): rename it",
                    path.display(),
                    name.display()
                );
            };
            if name == ".git" {
                continue;
            }
            let rel = format!("{dir}{name}");
            let kind = entry
                .file_type()
                .with_context(|| format!("reading {}", entry.path().display()))?;
            if kind.is_dir() {
                // An untracked nested repository is not ours to copy.
                if std::fs::symlink_metadata(entry.path().join(".git")).is_err() {
                    listing.folders.push(rel);
                }
                continue;
            }
            match self.position(&rel) {
                Some(at) => {
                    let metadata = match entry.metadata() {
                        Ok(m) => Some(m),
                        Err(e) if is_missing(&e) => None,
                        Err(e) => {
                            return Err(e)
                                .with_context(|| format!("reading {}", entry.path().display()));
                        }
                    };
                    let state = self.entries[at].state(metadata.as_ref(), racy_from);
                    listing.tracked.push((at, state));
                }
                None => listing.untracked.push(rel),
            }
        }
        Ok(listing)
    }

    /// Whether the index's tree holds `path`: merged, and not in `.sens/`.
    fn in_tree(&self, path: &str) -> bool {
        let merged = self
            .position(path)
            .is_some_and(|at| self.entries[at].stage == 0);
        merged && !path.starts_with(ENGINE_DIR)
    }

    /// The first entry of `path`.
    fn position(&self, path: &str) -> Option<usize> {
        let at = self.entries.partition_point(|e| e.path.as_str() < path);
        (self.entries.get(at)?.path == path).then_some(at)
    }
}

/// What [`TrackedFiles::list`] found in one folder.
#[derive(Default)]
struct Listing {
    folders: Vec<String>,
    /// Index of the entry, and how the file on disk compares to it.
    tracked: Vec<(usize, FileState)>,
    untracked: Vec<String>,
}

/// One entry of the git index: what it records of the file's stat when it was
/// staged, so an unchanged file costs one `lstat` and no read.
struct TrackedFile {
    path: String,
    mode: u32,
    id: Oid,
    stage: u16,
    /// Skip-worktree (sparse checkout) or a submodule: not looked at on disk.
    not_on_disk: bool,
    size: u32,
    mtime: (i32, u32),
    ctime: (i32, u32),
    inode: u32,
}

/// A tracked file on disk against its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileState {
    Same,
    Changed,
    Gone,
}

/// The extended index flag of a skip-worktree entry.
const SKIP_WORKTREE: u16 = 1 << 14;

impl TrackedFile {
    fn of(entry: &IndexEntry) -> Self {
        Self {
            path: String::from_utf8_lossy(&entry.path).into_owned(),
            mode: entry.mode,
            id: entry.id,
            stage: (entry.flags >> 12) & 0x3,
            not_on_disk: entry.flags_extended & SKIP_WORKTREE != 0 || entry.mode == 0o160000,
            size: entry.file_size,
            mtime: (entry.mtime.seconds(), entry.mtime.nanoseconds()),
            ctime: (entry.ctime.seconds(), entry.ctime.nanoseconds()),
            inode: entry.ino,
        }
    }

    /// Compared as git does (stat fields truncated to the index's 32 bits); an
    /// entry staged no earlier than the index was written (`racy_from`, its
    /// mtime in ns) may hide a later edit of the same stat, so it counts as
    /// changed and is hashed (once per stat, see `hash_file`).
    fn state(&self, metadata: Option<&std::fs::Metadata>, racy_from: i128) -> FileState {
        use std::os::unix::fs::MetadataExt;
        if self.stage != 0 {
            return FileState::Changed;
        }
        if self.not_on_disk {
            return FileState::Same;
        }
        let Some(metadata) = metadata else {
            return FileState::Gone;
        };
        let time = |secs: i64, ns: i64| (secs as i32, ns as u32);
        let racy = i128::from(self.mtime.0) * 1_000_000_000 + i128::from(self.mtime.1) >= racy_from;
        let same = !racy
            && git_mode(metadata) == Some(self.mode)
            && metadata.len() as u32 == self.size
            && time(metadata.mtime(), metadata.mtime_nsec()) == self.mtime
            && time(metadata.ctime(), metadata.ctime_nsec()) == self.ctime
            && metadata.ino() as u32 == self.inode;
        if same {
            FileState::Same
        } else {
            FileState::Changed
        }
    }
}

fn stamp(metadata: &std::fs::Metadata, mode: u32) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let nanos = |secs: i64, ns: i64| i128::from(secs) * 1_000_000_000 + i128::from(ns);
    Stamp {
        size: metadata.len(),
        mtime_ns: nanos(metadata.mtime(), metadata.mtime_nsec()),
        ctime_ns: nanos(metadata.ctime(), metadata.ctime_nsec()),
        inode: metadata.ino(),
        mode,
    }
}

/// The next free checkpoint number and the newest checkpoint commit, so that a
/// new session in the same repository continues the numbering.
fn latest_checkpoint(repo: &Repository) -> anyhow::Result<(u64, Option<Oid>)> {
    let mut best: Option<(u64, Oid)> = None;
    let references = repo
        .references_glob(&format!("{CHECKPOINT_PREFIX}*"))
        .context("listing sens checkpoints")?;
    for reference in references {
        let reference = reference.context("reading a sens checkpoint ref")?;
        let Ok(name) = reference.name() else {
            continue;
        };
        let Ok(number) = name[CHECKPOINT_PREFIX.len()..].parse::<u64>() else {
            continue;
        };
        let Some(target) = reference.target() else {
            continue;
        };
        if best.is_none_or(|(n, _)| number > n) {
            best = Some((number, target));
        }
    }
    Ok(match best {
        Some((n, id)) => (n + 1, Some(id)),
        None => (1, None),
    })
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
