//! Filling a folder from a source: a commit's tree, an sdist.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::{Oid, Repository};

/// Writes the tree of `commit` into `dest`, without touching the repository's
/// index or work tree.
pub(super) fn checkout_tree(repo: &Repository, commit: Oid, dest: &Path) -> Result<()> {
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
        let rest = crate::spec::relative_inside("archive entry", rest)
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
