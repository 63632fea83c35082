//! Reading, writing and removing under a folder whose contents an agent made.
//! The harness does this as the user that runs it (often root) while the
//! agent's links are still there: a link `hidden_tests -> /tmp` or
//! `tests/test_a.py -> /etc/passwd` must never make a copy, a save or a restore
//! touch the place the link names. So every path is taken one component at a
//! time: a folder on the way that is a link (or a file) is replaced by a real
//! folder when writing and ends the walk when reading or removing, and the last
//! component is read, removed or made as what it is, never followed.
//!
//! Nothing else writes in the folder meanwhile: the agent's sandbox and the
//! commands' sandboxes have ended, with every process in them, before the
//! harness lays files over the copy.

use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// What the project holds at one path, as it is (a link is kept as a link).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Absent,
    File { bytes: Vec<u8>, mode: u32 },
    Link(PathBuf),
}

impl Entry {
    /// What is at `root/relative`; `Absent` also when a folder on the way is
    /// not a real folder (nothing of the project is there). A folder at the
    /// path itself is refused: no file can be laid there without losing it.
    pub fn read(root: &Path, relative: &Path) -> Result<Entry> {
        let path = root.join(relative);
        if !real_folders(root, parent(relative), false)? {
            return Ok(Entry::Absent);
        }
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Entry::Absent),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        if meta.is_symlink() {
            let target = std::fs::read_link(&path)
                .with_context(|| format!("cannot read the link {}", path.display()))?;
            return Ok(Entry::Link(target));
        }
        if meta.is_dir() {
            bail!("{} is a folder where a file goes", path.display());
        }
        let bytes = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut file| {
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut file, &mut bytes).map(|_| bytes)
            })
            .with_context(|| format!("cannot read {}", path.display()))?;
        Ok(Entry::File {
            bytes,
            mode: meta.permissions().mode() & 0o7777,
        })
    }

    /// Puts this entry at `root/relative`, replacing whatever is there and
    /// every link on the way; `Absent` removes what is there.
    pub fn put(&self, root: &Path, relative: &Path) -> Result<()> {
        let path = root.join(relative);
        if matches!(self, Entry::Absent) {
            return remove(root, relative);
        }
        real_folders(root, parent(relative), true)?;
        clear(&path)?;
        match self {
            Entry::Absent => Ok(()),
            Entry::File { bytes, mode } => std::fs::OpenOptions::new()
                .write(true)
                // A new file: a link planted here since `clear` fails it.
                .create_new(true)
                .mode(*mode)
                .open(&path)
                .and_then(|mut file| {
                    file.write_all(bytes)?;
                    // The creation mode went through the umask.
                    file.set_permissions(std::fs::Permissions::from_mode(*mode))
                }),
            Entry::Link(target) => std::os::unix::fs::symlink(target, &path),
        }
        .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// Removes what is at `root/relative` (a file, a link, a folder with its
/// contents) when every folder on the way is a real one; otherwise nothing of
/// the project is there and nothing is removed.
pub fn remove(root: &Path, relative: &Path) -> Result<()> {
    if real_folders(root, parent(relative), false)? {
        clear(&root.join(relative))?;
    }
    Ok(())
}

fn parent(relative: &Path) -> &Path {
    relative.parent().unwrap_or(Path::new(""))
}

/// Whether `root/folder` and every folder between it and `root` are real
/// folders. With `create`, missing ones are made and links or files in the way
/// are replaced by folders, and the answer is always `true`.
pub fn real_folders(root: &Path, folder: &Path, create: bool) -> Result<bool> {
    let mut at = root.to_path_buf();
    for component in folder.components() {
        match component {
            Component::Normal(name) => at.push(name),
            Component::CurDir => continue,
            _ => bail!("{} leaves the folder it names a path in", folder.display()),
        }
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) if create => clear(&at)?,
            Err(err) if err.kind() == io::ErrorKind::NotFound && create => {}
            Ok(_) => return Ok(false),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", at.display())),
        }
        std::fs::create_dir(&at).with_context(|| format!("cannot create {}", at.display()))?;
    }
    Ok(true)
}

/// Removes whatever `path` itself is, following no link (std's `remove_dir_all`
/// does not follow the links inside a folder either).
fn clear(path: &Path) -> Result<()> {
    let removed = match path.symlink_metadata() {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    };
    removed.with_context(|| format!("cannot remove {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_on_the_way_are_replaced_when_writing_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("project"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.py"), "host file\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("hidden_tests")).unwrap();
        std::os::unix::fs::symlink(outside.join("victim.py"), root.join("t.py")).unwrap();

        let rel = Path::new("hidden_tests/victim.py");
        assert_eq!(Entry::read(&root, rel).unwrap(), Entry::Absent);
        assert_eq!(
            Entry::read(&root, Path::new("t.py")).unwrap(),
            Entry::Link(outside.join("victim.py"))
        );
        let file = Entry::File {
            bytes: b"hidden test\n".to_vec(),
            mode: 0o644,
        };
        file.put(&root, rel).unwrap();
        file.put(&root, Path::new("t.py")).unwrap();
        let host = std::fs::read_to_string(outside.join("victim.py")).unwrap();
        assert_eq!(host, "host file\n", "the link's target is untouched");
        assert!(
            root.join("hidden_tests")
                .symlink_metadata()
                .unwrap()
                .is_dir()
        );
        assert_eq!(Entry::read(&root, rel).unwrap(), file);

        // Removing through a link removes nothing where it points.
        std::fs::remove_dir_all(root.join("hidden_tests")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("hidden_tests")).unwrap();
        remove(&root, rel).unwrap();
        assert!(outside.join("victim.py").exists());
        Entry::Link(outside.join("victim.py"))
            .put(&root, Path::new("t.py"))
            .unwrap();
        assert_eq!(
            std::fs::read_link(root.join("t.py")).unwrap(),
            outside.join("victim.py")
        );
        assert!(real_folders(&root, Path::new("../x"), true).is_err());
    }
}
