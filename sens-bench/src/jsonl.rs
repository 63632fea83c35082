//! JSON lines (`runs.jsonl`, `hooks.jsonl`, `transcript.jsonl`): the one reader
//! every file of one JSON value per line goes through, and the one appender
//! every writer of such a file shares.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, bail};
use serde::de::DeserializeOwned;

/// Every non-blank line of `text` parsed as `T`, with its 1-based line number.
/// A line that does not parse is an error `PATH:LINE: not WHAT`; `path` only
/// names the file in errors.
pub fn lines<'a, T: DeserializeOwned>(
    text: &'a str,
    path: &'a Path,
    what: &'a str,
) -> impl Iterator<Item = anyhow::Result<(usize, T)>> + 'a {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(move |(index, line)| {
            let number = index + 1;
            serde_json::from_str(line)
                .with_context(|| format!("{}:{number}: not {what}", path.display()))
                .map(|value| (number, value))
        })
}

/// `text` cut into its complete lines (each ended by a newline) and what follows
/// the last newline: a torn line an interrupted append left, or nothing.
pub fn complete_lines(text: &str) -> (&str, &str) {
    text.split_at(text.rfind('\n').map_or(0, |i| i + 1))
}

/// Appends `line` (one whole JSON line, its newline included) to `file`, all or
/// nothing: under the file's exclusive lock, so writers of other processes never
/// interleave, and on a failed write (a full disk) the file is cut back to the
/// length it had, its last complete line, before the lock is released. A file
/// that does not end in a newline (a cut that failed too) is refused rather
/// than glued onto. `file` is open for reading and appending.
pub fn append_line(file: &File, line: &[u8], path: &Path) -> anyhow::Result<()> {
    // One write of the whole line: `&File` writes straight to the descriptor.
    append_with(file, line, path, |mut file, bytes| file.write_all(bytes))
}

fn append_with(
    file: &File,
    line: &[u8],
    path: &Path,
    write: impl FnOnce(&File, &[u8]) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    let appended = append_locked(file, line, path, write);
    // Closing the file would release the lock too; the caller keeps it open.
    let unlocked = file
        .unlock()
        .with_context(|| format!("cannot unlock {}", path.display()));
    appended.and(unlocked)
}

fn append_locked(
    file: &File,
    line: &[u8],
    path: &Path,
    write: impl FnOnce(&File, &[u8]) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let before = file
        .metadata()
        .with_context(|| format!("cannot stat {}", path.display()))?
        .len();
    if before > 0 {
        let mut last = [0u8];
        file.read_exact_at(&mut last, before - 1)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if last != *b"\n" {
            bail!(
                "{} ends in a torn line: nothing is appended to it (the next batch command cuts it)",
                path.display()
            );
        }
    }
    let Err(err) = write(file, line).and_then(|()| file.sync_data()) else {
        return Ok(());
    };
    match file.set_len(before).and_then(|()| file.sync_data()) {
        Ok(()) => Err(err).with_context(|| {
            format!(
                "cannot append to {}; the partial line was cut, the file ends at its last complete line",
                path.display()
            )
        }),
        Err(cut) => Err(err).with_context(|| {
            format!(
                "cannot append to {}, nor cut the partial line back ({cut}): the next batch command cuts it",
                path.display()
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_are_skipped_and_a_bad_line_is_named() {
        let text = "{\"a\": 1}\n\n  \nnot json\n{\"a\": 2}\n";
        let parsed: Vec<_> =
            lines::<serde_json::Value>(text, Path::new("f.jsonl"), "a value").collect();
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[0].as_ref().unwrap().0, 1);
        let err = format!("{:#}", parsed[1].as_ref().unwrap_err());
        assert!(err.starts_with("f.jsonl:4: not a value"), "{err}");
        assert_eq!(
            parsed[2].as_ref().unwrap(),
            &(5, serde_json::json!({"a": 2}))
        );
    }

    #[test]
    fn a_torn_tail_is_split_from_the_complete_lines() {
        assert_eq!(complete_lines("{}\n{\"a"), ("{}\n", "{\"a"));
        assert_eq!(complete_lines("{}\n"), ("{}\n", ""));
        assert_eq!(complete_lines("{\"a"), ("", "{\"a"));
    }

    /// Writes half the line, then fails as a full disk does.
    fn fail_midway(mut file: &File, bytes: &[u8]) -> std::io::Result<()> {
        file.write_all(&bytes[..bytes.len() / 2])?;
        Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
    }

    #[test]
    fn a_write_that_fails_midway_is_cut_back_and_the_next_append_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.jsonl");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .unwrap();
        append_line(&file, b"{\"a\": 1}\n", &path).unwrap();
        let err = append_with(&file, b"{\"a\": 2}\n", &path, fail_midway).unwrap_err();
        assert!(
            format!("{err:#}").contains("the partial line was cut"),
            "{err:#}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\": 1}\n");
        append_line(&file, b"{\"a\": 3}\n", &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed: Vec<_> = lines::<serde_json::Value>(&text, &path, "a value").collect();
        assert_eq!(parsed.len(), 2);
        assert!(parsed.iter().all(Result::is_ok), "{text}");
    }

    #[test]
    fn a_torn_file_is_not_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        std::fs::write(&path, "{\"a\": 1}\n{\"a\"").unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .unwrap();
        let err = append_line(&file, b"{\"a\": 2}\n", &path).unwrap_err();
        assert!(err.to_string().contains("ends in a torn line"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\": 1}\n{\"a\""
        );
    }
}
