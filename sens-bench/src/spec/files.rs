//! File sets and probes as sequence files name them: globs over
//! project-relative paths, and concept probes (a pattern over some files).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;

/// Project-relative files chosen by globs (`/`-separated; `*` stays within one
/// folder, `**` crosses folders), minus exclusions.
#[derive(Debug, Clone)]
pub struct FileSet {
    include: GlobSet,
    exclude: GlobSet,
}

impl FileSet {
    /// Compiles the globs; the error names the glob that is not valid.
    pub fn new(include: &[String], exclude: &[String]) -> Result<FileSet> {
        Ok(FileSet {
            include: glob_set(include)?,
            exclude: glob_set(exclude)?,
        })
    }

    pub fn matches(&self, relative: &Path) -> bool {
        self.include.is_match(relative) && !self.exclude.is_match(relative)
    }

    /// The matching files under `root`, sorted, as paths relative to `root`.
    /// Files ignored by the project's `.gitignore` and hidden files are skipped, so
    /// `node_modules` or build output never count.
    pub fn files(&self, root: &Path) -> Result<Vec<PathBuf>> {
        // The project's own ignore files count, never this machine's global ones.
        let walk = ignore::WalkBuilder::new(root)
            .git_global(false)
            .git_exclude(false)
            .build();
        relative_files(walk, root, |relative| self.matches(relative))
    }
}

/// The files (not folders) `walk` finds under `root` that `keep` accepts, as
/// paths relative to `root`, sorted.
pub fn relative_files(
    walk: ignore::Walk,
    root: &Path,
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in walk {
        let entry = entry.with_context(|| format!("cannot list files under {}", root.display()))?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .with_context(|| format!("{} is outside {}", entry.path().display(), root.display()))?;
        if keep(relative) {
            found.push(relative.to_path_buf());
        }
    }
    found.sort();
    Ok(found)
}

fn glob_set(globs: &[String]) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let compiled = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .with_context(|| format!("`{glob}` is not a valid glob"))?;
        set.add(compiled);
    }
    set.build().context("cannot compile the globs")
}

/// One concept's probe: non-overlapping matches of `pattern` count its
/// implementations.
#[derive(Debug, Clone)]
pub struct Probe {
    pub concept: String,
    pub pattern: Regex,
    /// `None`: the project's size files.
    pub files: Option<FileSet>,
}
