//! What differs between two trees: the paths, the text files with their
//! contents on each side, the `git diff` text, and each file's blobs.

use std::path::Path;

use anyhow::Context;
use git2::{Oid, Repository};

use super::Checkpoints;
use crate::judge::FileChange;

impl Checkpoints {
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
    pub(super) fn deltas(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<Delta>> {
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

/// (path, blob before, blob after); `None` when the file is absent on that side.
pub type Delta = (String, Option<Oid>, Option<Oid>);
