//! Temporary folders a run makes in TMPDIR (its copy, its private HOME) are
//! removed when the run ends; a SIGKILLed batch leaves them. So each is listed in
//! the batch folder's `temporary.list` once made, and the next command that holds
//! the batch lock (no run of the batch is live then) removes every folder the
//! list names and starts the list anew. Only folders named `sens-bench-...` are
//! ever removed, whatever the list says. A kill in the instant between making a
//! folder and listing it can still leave that one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context;

use crate::sync::lock;

/// The list's name inside a batch folder.
pub const LIST_FILE: &str = "temporary.list";

/// The prefix of every temporary folder a run makes.
const PREFIX: &str = "sens-bench-";

pub struct Leftovers {
    path: PathBuf,
    file: Mutex<File>,
}

impl Leftovers {
    /// Removes what earlier commands listed and left, then opens an empty list.
    /// Returns the list and how many folders were removed. The caller holds the
    /// batch lock.
    pub fn clean(out: &Path) -> anyhow::Result<(Leftovers, usize)> {
        let path = out.join(LIST_FILE);
        let listed = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        let mut removed = 0;
        for dir in listed.lines().map(Path::new).filter(|dir| removable(dir)) {
            if dir.is_dir() {
                std::fs::remove_dir_all(dir).with_context(|| {
                    format!("cannot remove {}, left by a killed run", dir.display())
                })?;
                removed += 1;
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let list = Leftovers {
            path,
            file: Mutex::new(file),
        };
        Ok((list, removed))
    }

    /// Lists `dir`, a temporary folder a run just made.
    pub fn note(&self, dir: &Path) -> anyhow::Result<()> {
        let mut file = lock(&self.file);
        writeln!(file, "{}", dir.display())
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// An absolute path whose folder name starts with [`PREFIX`].
fn removable(dir: &Path) -> bool {
    dir.is_absolute()
        && dir
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with(PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_folders_are_removed_and_others_are_never_touched() {
        let out = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let left = tmp.path().join("sens-bench-abc");
        let other = tmp.path().join("precious");
        std::fs::create_dir_all(left.join("project")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let (list, removed) = Leftovers::clean(out.path()).unwrap();
        assert_eq!(removed, 0);
        list.note(&left).unwrap();
        list.note(&other).unwrap();
        drop(list);
        let (_, removed) = Leftovers::clean(out.path()).unwrap();
        assert_eq!(removed, 1);
        assert!(!left.exists() && other.exists());
        let text = std::fs::read_to_string(out.path().join(LIST_FILE)).unwrap();
        assert!(text.is_empty(), "a new list: {text}");
    }
}
