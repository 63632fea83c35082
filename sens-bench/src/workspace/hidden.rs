//! Folders laid over a copy: a source folder, and a task's (or step's) hidden
//! files, which are copied in for grading, removed again, or saved and restored
//! around the tests. One walk ([`walk`]) lists a folder for all of them, so what
//! is saved is exactly what is copied.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ignore::DirEntry;

/// Every entry under `from` but `from` itself, with its path relative to it.
/// Only the folder's own ignore files count (e.g. a source's `node_modules`),
/// never this machine's global ones; `.git` is left out; other hidden files are
/// listed.
fn walk(from: &Path) -> impl Iterator<Item = Result<(PathBuf, DirEntry)>> + '_ {
    ignore::WalkBuilder::new(from)
        .hidden(false)
        .git_global(false)
        .git_exclude(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .filter(|entry| entry.as_ref().map_or(true, |e| e.depth() > 0))
        .map(move |entry| {
            let entry = entry.with_context(|| format!("cannot list {}", from.display()))?;
            let relative = entry.path().strip_prefix(from).with_context(|| {
                format!("{} is outside {}", entry.path().display(), from.display())
            })?;
            Ok((relative.to_path_buf(), entry))
        })
}

/// The files (and links) of a hidden folder, relative to it: the paths they take
/// in the project.
pub fn hidden_files(hidden: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in walk(hidden) {
        let (relative, entry) = entry?;
        if !entry.file_type().is_some_and(|kind| kind.is_dir()) {
            files.push(relative);
        }
    }
    Ok(files)
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
    for relative in hidden_files(hidden)? {
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

/// What the project held where a hidden folder's files land: each file's own
/// content, or `None` where the file is new.
pub struct Overwritten(Vec<(PathBuf, Option<Vec<u8>>)>);

impl Overwritten {
    /// Saves the project's files that copying `hidden` in would replace.
    pub fn save(hidden: &Path, root: &Path) -> Result<Overwritten> {
        let mut saved = Vec::new();
        for relative in hidden_files(hidden)? {
            let target = root.join(&relative);
            let before = match std::fs::read(&target) {
                Ok(bytes) => Some(bytes),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
                Err(err) => {
                    return Err(err).with_context(|| format!("cannot read {}", target.display()));
                }
            };
            saved.push((relative, before));
        }
        Ok(Overwritten(saved))
    }

    /// Puts the saved files back and removes the new ones, with the folders they
    /// brought in once empty.
    pub fn restore(self, root: &Path) -> Result<()> {
        for (relative, before) in self.0 {
            let target = root.join(&relative);
            match before {
                Some(bytes) => std::fs::write(&target, bytes),
                None => std::fs::remove_file(&target),
            }
            .with_context(|| format!("cannot restore {}", target.display()))?;
            let mut parent = relative.parent();
            while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
                if std::fs::remove_dir(root.join(dir)).is_err() {
                    break;
                }
                parent = dir.parent();
            }
        }
        Ok(())
    }
}

/// Copies every entry under `from` into `to` (which may exist), keeping modes
/// and links, replacing files of the same name (see [`walk`] for what is left
/// out).
pub(super) fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    for entry in walk(from) {
        let (relative, entry) = entry?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn hidden_files_go_in_for_grading_and_the_agents_files_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let (root, hidden) = (dir.path().join("project"), dir.path().join("hidden"));
        write(&root, "tests/test_a.py", "agent's version\n");
        write(&hidden, "tests/test_a.py", "hidden version\n");
        write(&hidden, "hidden_tests/deep/test_x.py", "hidden test\n");

        let saved = Overwritten::save(&hidden, &root).unwrap();
        copy_hidden(&hidden, &root).unwrap();
        let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(read("tests/test_a.py"), "hidden version\n");
        assert_eq!(read("hidden_tests/deep/test_x.py"), "hidden test\n");
        saved.restore(&root).unwrap();
        assert_eq!(read("tests/test_a.py"), "agent's version\n");
        assert!(
            !root.join("hidden_tests").exists(),
            "folders it brought go too"
        );
    }
}
