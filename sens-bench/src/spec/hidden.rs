//! The hidden files of a task or a sequence step: the folders laid over a copy
//! for grading, never part of the copy the agent works on. A task has one; a
//! sequence step has its own and, when the sequence names one (`hidden_shared`),
//! the sequence's shared folder, which every step lays over the copy with its
//! own. One listing of a folder ([`entries`]) serves the clash check here and
//! the copying, removing and saving in `workspace::hidden`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ignore::DirEntry;

/// The folders of one task's or step's hidden files; no two put a file at the
/// same path in the project, so the order they are laid over in does not matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    folders: Vec<PathBuf>,
}

impl Hidden {
    /// A task's single hidden folder.
    pub fn folder(folder: PathBuf) -> Hidden {
        Hidden {
            folders: vec![folder],
        }
    }

    /// Folders laid over a copy together; refused when two of them hold a file
    /// at the same relative path, naming both files.
    pub fn layered(folders: Vec<PathBuf>) -> Result<Hidden> {
        let mut owner: BTreeMap<PathBuf, &Path> = BTreeMap::new();
        for folder in &folders {
            for relative in folder_files(folder)? {
                if let Some(first) = owner.get(&relative) {
                    bail!(
                        "{} and {} both put `{}` in the project",
                        first.join(&relative).display(),
                        folder.join(&relative).display(),
                        relative.display()
                    );
                }
                owner.insert(relative, folder);
            }
        }
        Ok(Hidden { folders })
    }

    /// The folders, in the order they are laid over a copy.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// The files (and links) of every folder, relative to their folder: the paths
    /// they take in the project.
    pub fn files(&self) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for folder in &self.folders {
            files.extend(folder_files(folder)?);
        }
        Ok(files)
    }
}

/// The files (and links) of one folder, relative to it.
fn folder_files(folder: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in entries(folder) {
        let (relative, entry) = entry?;
        if !entry.file_type().is_some_and(|kind| kind.is_dir()) {
            files.push(relative);
        }
    }
    Ok(files)
}

/// Every entry under `from` but `from` itself, with its path relative to it.
/// Only the folder's own ignore files count (e.g. a source's `node_modules`),
/// never this machine's global ones; `.git` is left out; other hidden files are
/// listed.
pub(crate) fn entries(from: &Path) -> impl Iterator<Item = Result<(PathBuf, DirEntry)>> + '_ {
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
