//! The hook ledger: one JSON line per engine callback, written and
//! flushed before the answer goes back, holding what a replay needs: the full
//! hook input, the tree the engine judged, the approved tree, the verdict and
//! the findings.
//!
//! Verdicts:
//! - `allow`: PreToolUse without objection (the answer carries no permission
//!   decision, so the CLI's own permission mode still applies);
//! - `deny`: PreToolUse denied (a copy, a protected path, or a failing audit
//!   before `git commit`/`git push`);
//! - `context`: UserPromptSubmit or PostToolUse answered with `additionalContext`
//!   (suggestions, or new pending findings);
//! - `quiet`: UserPromptSubmit or PostToolUse with nothing to say;
//! - `pass`: Stop/SubagentStop audit passed; the approved point moved;
//! - `block`: Stop/SubagentStop audit failed; the agent continues;
//! - `paused`: the audit failed for the last allowed round; the agent may stop
//!   and the turn awaits a human decision (nothing approved);
//! - `error`: the engine failed; `error` says how and `output` what was answered
//!   (a deny for PreToolUse, a block or pause for Stop, nothing otherwise);
//! - `approved`: a human approved the current state (`approve_by_human`);
//! - `answer`: one of the engine's query tools answered (event `ToolCall`,
//!   `tool` its name, `input` `{tool_name, tool_input, tool_use_id}`, `output`
//!   the answer;
//!   a call that fails is an `error` line).
//! - `rejected`: a human restored the approved state (`reject_by_human`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::guards::Decision;
use crate::finding::{Finding, Suggestion};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Deny,
    Context,
    Quiet,
    Pass,
    Block,
    Paused,
    Error,
    Approved,
    Answer,
    Rejected,
}

/// One ledger line. Its field names are a stable format: readers outside the
/// engine parse them, so a rename is a breaking change.
#[derive(Debug, Serialize)]
pub struct Entry<'a> {
    pub seq: u64,
    pub event: &'a str,
    pub tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<&'a str>,
    pub input_digest: String,
    /// `RuleConfig::digest` of the rules the engine judged with.
    pub rules_digest: &'a str,
    /// The project state the engine judged (hex tree id): for PreToolUse the
    /// state of the last rescan (the tool has not run; a Write is judged as this
    /// tree plus the input's content), except a `git commit`/`git push` audit; for
    /// every other event a snapshot taken when the callback arrived. A
    /// PostToolUse rescan covers the change from the previous rescan's tree (the
    /// latest earlier UserPromptSubmit or PostToolUse line) to this one.
    pub tree_before: Option<String>,
    /// The approved point's tree when the callback arrived.
    pub approved_tree: Option<String>,
    pub verdict: Verdict,
    /// The engine's own verdict, when guards changed it (a guard's deny or
    /// block over the engine's allow or pass): what a replay of the engine compares.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine_verdict: Option<Verdict>,
    /// A session of guards alone (no judge): no line of it is an engine decision.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guards_only: bool,
    pub findings: &'a [Finding],
    #[serde(skip_serializing_if = "<[Suggestion]>::is_empty")]
    pub suggestions: &'a [Suggestion],
    /// The guards' decisions on this callback (`guard`, `decision`: note, deny,
    /// block or mark, `message`); absent when no guard decided anything.
    #[serde(skip_serializing_if = "<[Decision]>::is_empty")]
    pub guards: &'a [Decision],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// The Stop audit's review, when one ran: calls, tokens, and its findings
    /// blocking, as hints, or dropped (a quote not verbatim in the diff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<&'a ReviewRecord>,
    pub latency_us: u64,
    /// What the engine answered.
    pub output: &'a Value,
    /// The hook input, each string longer than [`LARGE_STRING`] bytes (a huge
    /// Write's content) kept as `{"omitted_bytes", "sha256"}`: a ledger line
    /// stays small whatever the agent wrote.
    #[serde(serialize_with = "serialize_bounded")]
    pub input: &'a Value,
}

/// Strings longer than this are kept in the ledger as their size and digest.
pub const LARGE_STRING: usize = 64 * 1024;

fn serialize_bounded<S: serde::Serializer>(
    input: &&Value,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if has_large_string(input) {
        bounded(input).serialize(serializer)
    } else {
        input.serialize(serializer)
    }
}

fn has_large_string(value: &Value) -> bool {
    match value {
        Value::String(text) => text.len() > LARGE_STRING,
        Value::Array(items) => items.iter().any(has_large_string),
        Value::Object(map) => map.values().any(has_large_string),
        _ => false,
    }
}

/// `value` with each large string replaced by its size and sha256 (hex).
fn bounded(value: &Value) -> Value {
    match value {
        Value::String(text) if text.len() > LARGE_STRING => json!({
            "omitted_bytes": text.len(),
            "sha256": hex::encode(Sha256::digest(text.as_bytes())),
        }),
        Value::Array(items) => items.iter().map(bounded).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| (key.clone(), bounded(value)))
            .collect(),
        other => other.clone(),
    }
}

/// One thing a reviewer found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewFinding {
    /// The review rule's id, or `reviewer` for the reviewer model.
    pub rule: String,
    pub message: String,
    /// The diff text the finding is about; a reviewer model's findings must carry one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    pub confidence: f64,
}

/// The ledger's `review` field: calls, tokens, and each finding by its fate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub calls: u32,
    pub tokens: u64,
    pub blocking: Vec<ReviewFinding>,
    pub hints: Vec<ReviewFinding>,
    pub dropped: Vec<ReviewFinding>,
}

pub struct Ledger {
    path: PathBuf,
    file: File,
    next_seq: u64,
    /// Bytes of a last line that had no newline when the ledger was opened.
    torn_bytes: u64,
}

impl Ledger {
    /// Opens `path` for appending; a ledger that already has lines continues
    /// their numbering (a resumed session). A symlink at `path` is refused, never
    /// written through. Lines are counted as bytes, so one
    /// that is not UTF-8 is a line like any other; a torn last line (a writer
    /// that died mid-line) is ended with a newline, so the next entry starts a
    /// line of its own, and reported by [`Ledger::torn_bytes`].
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating the ledger's folder {}", parent.display()))?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .with_context(|| format!("opening the hook ledger {}", path.display()))?;
        ensure_not_a_link(&file, path)?;
        let reading = || format!("reading the hook ledger {}", path.display());
        let (mut lines, mut last_len) = (0, 0);
        for line in BufReader::new(&file).split(b'\n') {
            last_len = line.with_context(reading)?.len();
            lines += 1;
        }
        let torn_bytes = if ends_in_newline(&file).with_context(reading)? {
            0
        } else {
            file.write_all(b"\n")
                .with_context(|| format!("ending the torn last line of {}", path.display()))?;
            last_len as u64
        };
        Ok(Self {
            path: path.to_path_buf(),
            file,
            next_seq: lines + 1,
            torn_bytes,
        })
    }

    /// The length of the torn last line [`Ledger::open`] ended (0: none).
    pub fn torn_bytes(&self) -> u64 {
        self.torn_bytes
    }

    /// The sequence number the next entry gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends `entry` as one line (one write) and flushes it to the file.
    pub fn append(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(entry).context("encoding a ledger line")?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .with_context(|| format!("writing the hook ledger {}", self.path.display()))?;
        self.next_seq += 1;
        Ok(())
    }
}

/// Refuses a ledger opened through a symlink (one planted at its place would
/// have the engine append to a file of the person's): nothing has been written
/// yet when this is checked.
fn ensure_not_a_link(file: &File, path: &Path) -> anyhow::Result<()> {
    let opened = file
        .metadata()
        .with_context(|| format!("reading the hook ledger {}", path.display()))?;
    let named = std::fs::symlink_metadata(path)
        .with_context(|| format!("reading the hook ledger {}", path.display()))?;
    if named.file_type().is_symlink() || (named.dev(), named.ino()) != (opened.dev(), opened.ino())
    {
        anyhow::bail!(
            "the hook ledger {} is a symlink (or was replaced while it was opened); Sens does \
             not write through links: remove it",
            path.display()
        );
    }
    Ok(())
}

/// Whether `file` is empty or its last byte is a newline.
fn ends_in_newline(file: &File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last == *b"\n")
}

/// sha256 (hex) of the canonical JSON of `value`: object keys sorted, no
/// whitespace, so equal inputs get equal digests whatever their key order.
pub fn digest(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_ignores_key_order_but_not_values() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert_eq!(digest(&a).len(), 64);
    }

    fn append(ledger: &mut Ledger, input: &Value) -> anyhow::Result<()> {
        ledger.append(&Entry {
            seq: ledger.next_seq(),
            event: "Stop",
            tool: None,
            agent_id: None,
            input_digest: digest(input),
            rules_digest: "0123456789abcdef",
            tree_before: None,
            approved_tree: None,
            verdict: Verdict::Pass,
            engine_verdict: None,
            guards_only: false,
            findings: &[],
            suggestions: &[],
            guards: &[],
            error: None,
            review: None,
            latency_us: 1,
            output: &json!({}),
            input,
        })
    }

    fn stop() -> Value {
        json!({"hook_event_name": "Stop"})
    }

    #[test]
    fn numbering_continues_across_opens() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("sub/hooks.jsonl");
        let mut ledger = Ledger::open(&path)?;
        append(&mut ledger, &stop())?;
        append(&mut ledger, &stop())?;
        let mut reopened = Ledger::open(&path)?;
        assert_eq!(reopened.next_seq(), 3);
        append(&mut reopened, &stop())?;
        let text = std::fs::read_to_string(&path)?;
        let seqs: Vec<u64> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).map(|v| v["seq"].as_u64().unwrap_or(0)))
            .collect::<Result<_, _>>()?;
        assert_eq!(seqs, vec![1, 2, 3]);
        Ok(())
    }

    #[test]
    fn a_torn_last_line_is_ended_not_glued_onto() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("hooks.jsonl");
        std::fs::write(&path, "{\"seq\":1}\n{\"seq\":2,\"ev")?;
        let mut ledger = Ledger::open(&path)?;
        assert_eq!(ledger.torn_bytes(), 12, "the torn line is reported");
        append(&mut ledger, &stop())?;
        let text = std::fs::read_to_string(&path)?;
        let last: Value = serde_json::from_str(text.lines().last().unwrap_or(""))?;
        assert_eq!(last["event"], "Stop", "{text}");
        assert_eq!(text.lines().count(), 3, "{text}");
        Ok(())
    }

    #[test]
    fn a_line_that_is_not_utf8_does_not_stop_the_ledger() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("hooks.jsonl");
        std::fs::write(&path, b"{\"seq\":1}\n\xff\xfe\n")?;
        let mut ledger = Ledger::open(&path)?;
        assert_eq!(ledger.next_seq(), 3);
        append(&mut ledger, &stop())?;
        Ok(())
    }

    #[test]
    fn a_ledger_is_never_written_through_a_link() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let victim = dir.path().join("precious");
        std::fs::write(&victim, "precious")?;
        let path = dir.path().join("hooks.jsonl");
        std::os::unix::fs::symlink(&victim, &path)?;
        let err = Ledger::open(&path).err().expect("a link is refused");
        assert!(format!("{err:#}").contains("hooks.jsonl"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&victim)?, "precious");
        Ok(())
    }

    #[test]
    fn a_large_input_is_kept_as_its_digest_and_size() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("hooks.jsonl");
        let content = "x".repeat(LARGE_STRING + 1);
        let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": "/p/a.py", "content": content}});
        let mut ledger = Ledger::open(&path)?;
        append(&mut ledger, &input)?;
        let text = std::fs::read_to_string(&path)?;
        assert!(text.len() < LARGE_STRING, "{} bytes", text.len());
        let line: Value = serde_json::from_str(&text)?;
        assert_eq!(line["input"]["tool_input"]["file_path"], "/p/a.py");
        let kept = &line["input"]["tool_input"]["content"];
        assert_eq!(kept["omitted_bytes"], LARGE_STRING + 1, "{kept}");
        assert_eq!(
            kept["sha256"],
            hex::encode(Sha256::digest(content.as_bytes())),
            "{kept}"
        );
        assert_eq!(line["input_digest"], digest(&input), "of the whole input");
        Ok(())
    }
}
