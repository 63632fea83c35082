//! Restoring a tree: the working directory's files made to hold another state,
//! modes and links included.

use std::path::Path;

use anyhow::Context;
use git2::Oid;

use super::Checkpoints;

impl Checkpoints {
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
