//! JSON lines (`runs.jsonl`, `hooks.jsonl`, `transcript.jsonl`): the one reader
//! every file of one JSON value per line goes through.

use std::path::Path;

use anyhow::Context;
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
}
