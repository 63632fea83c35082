//! Folders laid over a copy: a source folder, and a task's (or step's) hidden
//! files ([`Hidden`]: a step's own folder with its sequence's shared one), which
//! are copied in for grading, removed again, or saved and restored around the
//! tests. One walk ([`entries`]) lists a folder for all of them, so what is saved
//! is exactly what is copied.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::spec::hidden::{Hidden, entries};

/// Copies the contents of a task's (or step's) hidden folders over the project,
/// replacing files of the same name.
pub fn copy_hidden(hidden: &Hidden, root: &Path) -> Result<()> {
    for folder in hidden.folders() {
        copy_folder(folder, root)
            .with_context(|| format!("cannot copy the hidden files of {}", folder.display()))?;
    }
    Ok(())
}

/// Removes from `root` every file that `hidden` holds (the inverse of
/// [`copy_hidden`]), so that a later check runs without them.
pub fn remove_hidden(hidden: &Hidden, root: &Path) -> Result<()> {
    for relative in hidden.files()? {
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

/// What the project held where hidden files land: each file's own
/// content, or `None` where the file is new.
pub struct Overwritten(Vec<(PathBuf, Option<Vec<u8>>)>);

impl Overwritten {
    /// Saves the project's files that copying `hidden` in would replace.
    pub fn save(hidden: &Hidden, root: &Path) -> Result<Overwritten> {
        let mut saved = Vec::new();
        for relative in hidden.files()? {
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
/// and links, replacing files of the same name (see [`entries`] for what is left
/// out).
pub(super) fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    for entry in entries(from) {
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
        let root = dir.path().join("project");
        let (shared, own) = (dir.path().join("shared"), dir.path().join("own"));
        write(&root, "tests/test_a.py", "agent's version\n");
        write(&own, "tests/test_a.py", "hidden version\n");
        write(&own, "hidden_tests/deep/test_x.py", "hidden test\n");
        write(&shared, "hidden_tests/harness.py", "shared helper\n");
        let hidden = Hidden::layered(vec![shared, own]).unwrap();

        let saved = Overwritten::save(&hidden, &root).unwrap();
        copy_hidden(&hidden, &root).unwrap();
        let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(read("tests/test_a.py"), "hidden version\n");
        assert_eq!(read("hidden_tests/deep/test_x.py"), "hidden test\n");
        assert_eq!(read("hidden_tests/harness.py"), "shared helper\n");
        saved.restore(&root).unwrap();
        assert_eq!(read("tests/test_a.py"), "agent's version\n");
        assert!(
            !root.join("hidden_tests").exists(),
            "folders it brought go too"
        );

        copy_hidden(&hidden, &root).unwrap();
        remove_hidden(&hidden, &root).unwrap();
        assert!(!root.join("hidden_tests/harness.py").exists());
        assert!(!root.join("tests/test_a.py").exists());
    }
}
