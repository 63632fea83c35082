//! The snapshot: the working directory as it stands, as a git tree built in an
//! in-memory index and written only into the object database.

use std::collections::HashSet;

use anyhow::Context;
use git2::{Index, IndexEntry, IndexTime, Oid};
use rayon::prelude::*;

use super::Checkpoints;
use super::tracked::{
    FileState, Listing, Stamp, TrackedFile, TrackedFiles, git_mode, is_missing, stamp,
};
use crate::ignores::ENGINE_DIR;

/// Everything a snapshot's tree depends on besides the index's content: the
/// real index's stat (its content is read again when that changes), and the files
/// that differ from it on disk. Equal inputs give the same tree, so a snapshot
/// that finds them unchanged skips rebuilding and writing it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct SnapshotInputs {
    index: Option<Stamp>,
    gone: Vec<String>,
    /// Sorted by path: mode and blob id of each file new or changed on disk.
    on_disk: Vec<(String, u32, Oid)>,
}

impl Checkpoints {
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
}

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
