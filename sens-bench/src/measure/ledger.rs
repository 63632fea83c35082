//! The hook ledger (`hooks.jsonl`) read back: each line parsed once into a typed
//! line (the engine's own [`Verdict`]), and the record's hook counts from them:
//! `deny`, `block` and `paused` verdicts, the suggestions every callback
//! gave, and the Stop audit reviewer's calls, tokens and findings; and its calls
//! of the engine's query tools per tool. Engine errors stay in the ledger only.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use sens_engine::session::TOOL_CALL_EVENT;
use sens_engine::session::guards::Kind;
use sens_engine::session::guards::acceptance::Checklist;
use sens_engine::session::ledger::Verdict;
use serde::{Deserialize, Serialize};

use crate::jsonl;

/// A run folder's hook ledger.
pub const LEDGER_FILE: &str = "hooks.jsonl";
/// A run folder's acceptance checklist (the `acceptance` guard's).
pub const ACCEPTANCE_FILE: &str = "acceptance.json";

pub use sens::ledger::LedgerLine;

/// Hook counts from the run's ledger (zero for conditions without hooks).
/// `denials` and `blocks` count the answers, whoever gave them (the engine or
/// a guard); `guards` counts each guard's own decisions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookCounts {
    pub denials: u64,
    pub blocks: u64,
    pub pauses: u64,
    pub suggestions: u64,
    /// Left out of records of runs without a review.
    #[serde(default, skip_serializing_if = "ReviewCounts::is_empty")]
    pub review: ReviewCounts,
    /// Guard name -> its notes and blocks (denials included); absent in records
    /// written before guards.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub guards: BTreeMap<String, GuardCounts>,
}

/// The Stop audit reviewer over a run: model calls, their tokens, and its
/// findings by fate (dropped: no quote, or one not verbatim in the diff).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewCounts {
    pub calls: u64,
    pub tokens: u64,
    pub blocking: u64,
    pub hints: u64,
    pub dropped: u64,
}

impl ReviewCounts {
    fn add(&mut self, other: &ReviewCounts) {
        self.calls += other.calls;
        self.tokens += other.tokens;
        self.blocking += other.blocking;
        self.hints += other.hints;
        self.dropped += other.dropped;
    }

    fn is_empty(&self) -> bool {
        *self == ReviewCounts::default()
    }
}

/// One guard's decisions in a run: notes given, and tool calls denied or Stops
/// blocked. Marks (ledger-only) are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardCounts {
    pub notes: u64,
    pub blocks: u64,
    /// `acceptance`: the checklist's points, and those a passing run proved.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub points: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub proved: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The acceptance checklist's counts into `counts` (none without the file).
pub fn count_acceptance(dir: &Path, counts: &mut HookCounts) -> anyhow::Result<()> {
    let path = dir.join(ACCEPTANCE_FILE);
    if !path.exists() {
        return Ok(());
    }
    let checklist = Checklist::read(&path)?;
    let guard = counts.guards.entry("acceptance".into()).or_default();
    guard.points = checklist.points.len() as u64;
    guard.proved = checklist.proved() as u64;
    Ok(())
}

impl HookCounts {
    /// Adds another run's counts (a report's per-condition sums).
    pub fn add(&mut self, other: &HookCounts) {
        self.denials += other.denials;
        self.blocks += other.blocks;
        self.pauses += other.pauses;
        self.suggestions += other.suggestions;
        self.review.add(&other.review);
        for (name, counts) in &other.guards {
            let sum = self.guards.entry(name.clone()).or_default();
            sum.notes += counts.notes;
            sum.blocks += counts.blocks;
            sum.points += counts.points;
            sum.proved += counts.proved;
        }
    }
}

/// Every line of a ledger; an empty ledger has none. A line that is not a ledger
/// line is an error naming it.
pub fn read_ledger<T: serde::de::DeserializeOwned>(ledger: &Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(ledger)
        .with_context(|| format!("cannot read the hook ledger {}", ledger.display()))?;
    jsonl::lines(&text, ledger, "a hook ledger entry")
        .map(|line| line.map(|(_, line)| line))
        .collect()
}

/// The counts a run record carries.
pub fn hook_counts(lines: &[LedgerLine]) -> HookCounts {
    let mut counts = HookCounts::default();
    for line in lines {
        match line.verdict {
            Verdict::Deny => counts.denials += 1,
            Verdict::Block => counts.blocks += 1,
            Verdict::Paused => counts.pauses += 1,
            _ => {}
        }
        counts.suggestions += line.suggestions.len() as u64;
        if let Some(review) = &line.review {
            counts.review.calls += u64::from(review.calls);
            counts.review.tokens += review.tokens;
            counts.review.blocking += review.blocking.len() as u64;
            counts.review.hints += review.hints.len() as u64;
            counts.review.dropped += review.dropped.len() as u64;
        }
        for decision in &line.guards {
            let guard = counts.guards.entry(decision.guard.clone()).or_default();
            match decision.decision {
                Kind::Note => guard.notes += 1,
                Kind::Deny | Kind::Block => guard.blocks += 1,
                Kind::Mark => {}
            }
        }
    }
    counts
}

/// The agent's calls of the engine's query tools that reached the engine
/// (answered or failed), per tool; none without them.
pub fn tool_calls(lines: &[LedgerLine]) -> BTreeMap<String, u64> {
    let mut calls = BTreeMap::new();
    for line in lines.iter().filter(|l| l.event == TOOL_CALL_EVENT) {
        let tool = line.tool.clone().unwrap_or_default();
        *calls.entry(tool).or_default() += 1;
    }
    calls
}

/// The verdict compared: `paused` is a block; an engine `error` is what it
/// answered (a deny before a tool, a block at a Stop, nothing after a tool).
pub fn normalized(event: &str, verdict: Verdict) -> Verdict {
    match (verdict, event) {
        (Verdict::Paused, _) => Verdict::Block,
        (Verdict::Error, "PreToolUse") => Verdict::Deny,
        (Verdict::Error, "Stop" | "SubagentStop") => Verdict::Block,
        (Verdict::Error, _) => Verdict::Quiet,
        (other, _) => other,
    }
}

/// Whether the verdict denies or blocks the agent.
pub fn objects(event: &str, verdict: Verdict) -> bool {
    matches!(normalized(event, verdict), Verdict::Deny | Verdict::Block)
}

/// The lines of a run folder's ledger as JSON; an error names the file and line.
pub fn ledger_lines(dir: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    read_ledger(&dir.join(LEDGER_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_counts_read_the_ledger_verdicts_and_suggestions() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("hooks.jsonl");
        let lines = [
            r#"{"seq":1,"event":"UserPromptSubmit","verdict":"context","suggestions":[{"a":1},{"b":2}]}"#,
            r#"{"seq":2,"event":"PreToolUse","verdict":"deny","findings":[]}"#,
            r#"{"seq":3,"event":"PreToolUse","verdict":"allow"}"#,
            r#"{"seq":4,"event":"Stop","verdict":"block"}"#,
            r#"{"seq":5,"event":"Stop","verdict":"block"}"#,
            r#"{"seq":6,"event":"Stop","verdict":"paused"}"#,
            r#"{"seq":7,"event":"PreToolUse","verdict":"error","error":"x"}"#,
            r#"{"seq":8,"event":"ToolCall","tool":"find_symbol","verdict":"answer"}"#,
            r#"{"seq":9,"event":"PreToolUse","tool":"mcp__sens__find_symbol","verdict":"allow"}"#,
            r#"{"seq":10,"event":"ToolCall","tool":"find_symbol","verdict":"error"}"#,
            r#"{"seq":11,"event":"ToolCall","tool":"already_exists","verdict":"answer"}"#,
            r#"{"seq":8,"event":"Stop","verdict":"pass","review":{"calls":2,"tokens":9,"blocking":[],"hints":[{"rule":"r","message":"m","confidence":0.5}],"dropped":[]}}"#,
        ];
        std::fs::write(&ledger, lines.join("\n") + "\n").unwrap();
        let calls = tool_calls(&read_ledger(&ledger).unwrap());
        let expected = [
            ("already_exists".to_string(), 1),
            ("find_symbol".to_string(), 2),
        ];
        assert_eq!(calls, BTreeMap::from(expected));
        let counts = hook_counts(&read_ledger(&ledger).unwrap());
        assert_eq!(
            counts,
            HookCounts {
                denials: 1,
                blocks: 2,
                pauses: 1,
                suggestions: 2,
                review: ReviewCounts {
                    calls: 2,
                    tokens: 9,
                    blocking: 0,
                    hints: 1,
                    dropped: 0
                },
                guards: BTreeMap::new(),
            }
        );
        std::fs::write(&ledger, "").unwrap();
        assert_eq!(
            hook_counts(&read_ledger(&ledger).unwrap()),
            HookCounts::default()
        );
        std::fs::write(&ledger, "{\"seq\":1}\n").unwrap();
        let err = format!("{:#}", read_ledger::<LedgerLine>(&ledger).unwrap_err());
        assert!(err.contains("hooks.jsonl:1"), "{err}");
    }
}
