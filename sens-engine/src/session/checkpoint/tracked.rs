//! The git index's tracked files and their stat: an unchanged file costs one
//! `lstat` and no read.

use std::path::Path;

use anyhow::{Context, bail};
use git2::{IndexEntry, Oid};

use crate::ignores::ENGINE_DIR;

/// The cached blob id of a working-tree file, valid while its stat is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub(super) size: u64,
    pub(super) mtime_ns: i128,
    pub(super) ctime_ns: i128,
    pub(super) inode: u64,
    pub(super) mode: u32,
}

/// A file that is not there, or under a path that is no longer a folder.
pub(super) fn is_missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The git mode of a file, symlink or executable file; `None` for anything else.
pub(super) fn git_mode(metadata: &std::fs::Metadata) -> Option<u32> {
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
pub(super) struct TrackedFiles {
    /// Whether it was read at all (`stamp` is `None` without an index file).
    pub(super) read: bool,
    pub(super) stamp: Option<Stamp>,
    pub(super) entries: Vec<TrackedFile>,
    /// See [`Checkpoints::index_tree`].
    pub(super) tree: Option<Oid>,
}

impl TrackedFiles {
    /// One folder (`""` or `a/b/`) of the working directory: its subfolders
    /// but `.git` and nested repositories, its tracked files against their
    /// entries, and its other files.
    pub(super) fn list(&self, root: &Path, dir: &str, racy_from: i128) -> anyhow::Result<Listing> {
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
    pub(super) fn in_tree(&self, path: &str) -> bool {
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
pub(super) struct Listing {
    pub(super) folders: Vec<String>,
    /// Index of the entry, and how the file on disk compares to it.
    pub(super) tracked: Vec<(usize, FileState)>,
    pub(super) untracked: Vec<String>,
}

/// One entry of the git index: what it records of the file's stat when it was
/// staged, so an unchanged file costs one `lstat` and no read.
pub(super) struct TrackedFile {
    pub(super) path: String,
    pub(super) mode: u32,
    pub(super) id: Oid,
    pub(super) stage: u16,
    /// Skip-worktree (sparse checkout) or a submodule: not looked at on disk.
    pub(super) not_on_disk: bool,
    pub(super) size: u32,
    pub(super) mtime: (i32, u32),
    pub(super) ctime: (i32, u32),
    pub(super) inode: u32,
}

/// A tracked file on disk against its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileState {
    Same,
    Changed,
    Gone,
}

/// The extended index flag of a skip-worktree entry.
const SKIP_WORKTREE: u16 = 1 << 14;

impl TrackedFile {
    pub(super) fn of(entry: &IndexEntry) -> Self {
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
    pub(super) fn state(&self, metadata: Option<&std::fs::Metadata>, racy_from: i128) -> FileState {
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

pub(super) fn stamp(metadata: &std::fs::Metadata, mode: u32) -> Stamp {
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
