//! The files that say what to run (docs/contract.md, "Task files", "Conditions",
//! "Horizonte sequences"): task files, sequence files and the conditions file, each
//! parsed into plain types and checked before anything runs. Errors name the file and the
//! field.
//!
//! This module holds what task and sequence files share (languages, paths inside
//! the file's folder, command lines); `task` builds on `sequence` (a snapshot
//! source is a sequence's state), never the other way round.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde::de::DeserializeOwned;

pub mod conditions;
pub mod files;
pub mod hidden;
pub mod review_rules;
pub mod sequence;
pub mod task;

/// Languages a task or sequence may declare: those the engine parses.
pub const LANGUAGES: [&str; 21] = [
    "bash",
    "c",
    "cpp",
    "csharp",
    "dart",
    "elixir",
    "go",
    "haskell",
    "java",
    "javascript",
    "kotlin",
    "lua",
    "ocaml",
    "php",
    "python",
    "ruby",
    "rust",
    "scala",
    "swift",
    "typescript",
    "zig",
];

/// The command lines of a task or sequence, each run with `bash -c` in the
/// project root.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Commands {
    /// Once per materialized copy; absent or empty: nothing to set up.
    #[serde(default)]
    pub setup: Option<String>,
    pub test: String,
    pub hidden: String,
}

impl Commands {
    /// The set-up line, if there is one to run.
    pub fn setup(&self) -> Option<&str> {
        self.setup.as_deref().filter(|line| !line.trim().is_empty())
    }

    pub(crate) fn check(&self) -> Result<()> {
        for (field, line) in [
            ("commands.test", &self.test),
            ("commands.hidden", &self.hidden),
        ] {
            if line.trim().is_empty() {
                bail!("field `{field}`: expected a command line, found an empty string");
            }
        }
        Ok(())
    }
}

pub(crate) fn check_language(language: &str) -> Result<()> {
    if LANGUAGES.contains(&language) {
        Ok(())
    } else {
        bail!(
            "field `language`: `{language}` is not known; expected one of {}",
            LANGUAGES.join(", ")
        )
    }
}

/// Reads and parses a TOML file; the error names the file and the field.
pub(crate) fn read_toml<T: DeserializeOwned>(file: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    toml::from_str(&text)
        .map_err(|err| anyhow::anyhow!("{}: {}", file.display(), err.to_string().trim_end()))
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    File,
    Folder,
}

/// `relative` resolved against `dir`, which must exist as a file or folder.
pub(crate) fn existing(
    dir: &Path,
    field: &str,
    relative: &Path,
    expect: Expect,
) -> Result<PathBuf> {
    let path = dir.join(relative);
    let (ok, what) = match expect {
        Expect::File => (path.is_file(), "file"),
        Expect::Folder => (path.is_dir(), "folder"),
    };
    if !ok {
        bail!(
            "field `{field}`: expected a {what} at {} (relative to {}); it does not exist",
            relative.display(),
            dir.display()
        );
    }
    Ok(path)
}

/// [`existing`] for a prompt file, which must also be non-empty UTF-8 text: it
/// is what the agent is asked.
pub(crate) fn prompt_file(dir: &Path, field: &str, relative: &Path) -> Result<PathBuf> {
    let path = existing(dir, field, relative, Expect::File)?;
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    match std::str::from_utf8(&bytes) {
        Err(err) => bail!(
            "field `{field}`: {} is not UTF-8 text (byte {})",
            path.display(),
            err.valid_up_to()
        ),
        Ok(text) if text.trim().is_empty() => {
            bail!("field `{field}`: {} is empty", path.display())
        }
        Ok(_) => Ok(path),
    }
}

/// The longest name [`check_name`] accepts.
pub const NAME_MAX: usize = 100;

/// A name from a file that becomes a folder of run folders (task id, condition,
/// sequence name, step id) is a name, never a path: 1 to [`NAME_MAX`] characters
/// of `[A-Za-z0-9._-]`, the first a letter or a digit (so never `.`, `..` or a
/// hidden folder). Checked before anything is created.
pub fn check_name(field: &str, name: &str) -> Result<()> {
    let safe = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if safe && first_ok && name.len() <= NAME_MAX {
        Ok(())
    } else {
        bail!(
            "field `{field}`: `{}` is not a safe name: use 1 to {NAME_MAX} of A-Z a-z 0-9 . _ -, \
             starting with a letter or digit",
            name.escape_debug()
        )
    }
}

/// A relative path that stays inside its root (no `..`, not absolute).
pub(crate) fn relative_inside(field: &str, path: &Path) -> Result<PathBuf> {
    if path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        Ok(path.to_path_buf())
    } else {
        bail!(
            "field `{field}`: expected a relative path inside the project, found `{}`",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_must_be_non_empty_utf8_text() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("empty.md", &b" \n"[..]), ("latin1.md", b"caf\xe9\n")] {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            let err = prompt_file(dir.path(), "prompt", Path::new(name))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("field `prompt`") && err.contains(name),
                "{err}"
            );
        }
        std::fs::write(dir.path().join("ok.md"), "Do it.\n").unwrap();
        prompt_file(dir.path(), "prompt", Path::new("ok.md")).unwrap();
    }

    #[test]
    fn names_are_names_not_paths() {
        for good in ["C0", "tiny-mul", "01-a", "py.v2_x"] {
            check_name("id", good).unwrap();
        }
        let long = "a".repeat(NAME_MAX + 1);
        for bad in [
            "",
            ".",
            "..",
            "../../../victim",
            "a/b",
            ".git",
            "-x",
            "a b",
            "é",
            &long,
        ] {
            let err = check_name("id", bad).unwrap_err().to_string();
            assert!(
                err.contains("field `id`") && err.contains("not a safe name"),
                "{bad}: {err}"
            );
        }
    }
}
