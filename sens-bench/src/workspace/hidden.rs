//! Folders laid over a copy: a source folder, and a task's (or step's) hidden
//! files ([`Hidden`]: a step's own folder with its sequence's shared one), which
//! are copied in for grading, removed again, or saved and restored around the
//! tests. One walk ([`entries`]) lists a folder for all of them, so what is saved
//! is exactly what is copied. Every write, save and removal in the copy goes
//! through [`beneath`], so no link the agent made can redirect it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::beneath::{self, Entry};
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
        beneath::remove(root, &relative)?;
    }
    Ok(())
}

/// What the project held where hidden files land, as it was (a link the agent
/// made is kept as a link, and a link on the way as the entry it replaced).
pub struct Overwritten(Vec<(PathBuf, Entry)>);

impl Overwritten {
    /// Saves the project's entries that copying `hidden` in would replace.
    pub fn save(hidden: &Hidden, root: &Path) -> Result<Overwritten> {
        let mut saved: Vec<(PathBuf, Entry)> = Vec::new();
        for relative in hidden.files()? {
            let replaced = outermost_replaced(root, &relative);
            if !saved.iter().any(|(done, _)| *done == replaced) {
                let before = Entry::read(root, &replaced)?;
                saved.push((replaced, before));
            }
        }
        Ok(Overwritten(saved))
    }

    /// Puts the saved entries back and removes the new ones, with the folders
    /// they brought in once empty.
    pub fn restore(self, root: &Path) -> Result<()> {
        for (relative, before) in self.0 {
            before.put(root, &relative)?;
            let mut parent = relative.parent();
            while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
                // Fails on a folder that is not empty, and on a link.
                if std::fs::remove_dir(root.join(dir)).is_err() {
                    break;
                }
                parent = dir.parent();
            }
        }
        Ok(())
    }
}

/// The path under `root` whose entry laying `relative` there replaces: the
/// first folder on the way that is a link or a file, else `relative` itself.
fn outermost_replaced(root: &Path, relative: &Path) -> PathBuf {
    let mut prefix = PathBuf::new();
    for component in relative.parent().into_iter().flat_map(Path::components) {
        prefix.push(component);
        match root.join(&prefix).symlink_metadata() {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => return prefix,
            // Nothing of the project is there, nor further down.
            Err(_) => break,
        }
    }
    relative.to_path_buf()
}

/// Copies every entry under `from` into `to` (which may exist), keeping modes
/// and links, replacing files of the same name and any link on their way (see
/// [`entries`] for what is left out).
pub(super) fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    for entry in entries(from) {
        let (relative, entry) = entry?;
        let kind = entry
            .file_type()
            .with_context(|| format!("{} has no file type", entry.path().display()))?;
        if kind.is_dir() {
            beneath::real_folders(to, &relative, true)?;
        } else {
            // Read as it is in the task's folder: a link there is copied as a link.
            let source = Entry::read(from, &relative)?;
            source.put(to, &relative).with_context(|| {
                format!("cannot copy {} to {}", entry.path().display(), to.display())
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

    #[test]
    fn the_agents_links_redirect_no_copy_and_come_back_as_links() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside, own) = (
            dir.path().join("project"),
            dir.path().join("outside"),
            dir.path().join("own"),
        );
        write(&outside, "test_x.py", "host file\n");
        write(&outside, "victim.py", "host file\n");
        write(&own, "hidden_tests/test_x.py", "hidden test\n");
        write(&own, "tests/test_a.py", "hidden version\n");
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("hidden_tests")).unwrap();
        std::os::unix::fs::symlink(outside.join("victim.py"), root.join("tests/test_a.py"))
            .unwrap();
        let hidden = Hidden::folder(own);

        let saved = Overwritten::save(&hidden, &root).unwrap();
        copy_hidden(&hidden, &root).unwrap();
        let read = |path: PathBuf| std::fs::read_to_string(path).unwrap();
        assert_eq!(read(root.join("hidden_tests/test_x.py")), "hidden test\n");
        assert_eq!(read(root.join("tests/test_a.py")), "hidden version\n");
        saved.restore(&root).unwrap();
        assert_eq!(read(outside.join("test_x.py")), "host file\n");
        assert_eq!(read(outside.join("victim.py")), "host file\n");
        assert_eq!(
            std::fs::read_link(root.join("hidden_tests")).unwrap(),
            outside
        );
        assert_eq!(
            std::fs::read_link(root.join("tests/test_a.py")).unwrap(),
            outside.join("victim.py")
        );

        remove_hidden(&hidden, &root).unwrap();
        assert!(outside.join("test_x.py").exists() && outside.join("victim.py").exists());
    }
}
