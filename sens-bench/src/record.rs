//! The run record: one JSON object per line of a batch's `runs.jsonl`
//! (docs/contract.md, "The run record"). Field names are binding; the batch (`batch/`)
//! writes these records and the report reads them back.
//!
//! What each measured field means (one definition, used by every command):
//! - measures of the **change** the agent made (its diff against the run's
//!   baseline, or for a sequence step against the previous step):
//!   `loc_added`, `loc_removed`, `functions_added`, `function_lines_median` (the
//!   median length in lines of the functions added);
//! - measures of the **project state** after the run or step: `loc_total`,
//!   `dup_lines_engine`, `dup_lines_jscpd`, `probes`.
//!
//! A measurement is `null` when it was not taken (a run that failed before grading,
//! jscpd not installed); every field must still be present, so a writer that forgets
//! a field is caught instead of read as "not measured".

pub mod format;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs;
use std::path::Path;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::Usage;
// The record's field types, named where readers of records look for them.
pub use crate::measure::ledger::HookCounts;
pub use crate::measure::outcomes::{Outcome, OutcomeCounts};

/// How a run ended. Only `Ok` runs enter the statistics; the others are counted
/// and listed apart, never mixed into results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The agent finished its turn and the run was graded: a real result, whether
    /// or not the tests pass.
    Ok,
    /// The agent failed: an API error, the CLI reported an error result, or it
    /// ended without finishing the turn.
    AgentError,
    /// The agent did not finish within the task's `timeout_s`.
    Timeout,
    /// The run passed `--max-tokens` or `--max-cost-usd` (see `agent::budget`).
    Budget,
    /// The harness failed around the agent: materializing, setup, the CLI crashed
    /// or could not start, grading could not run.
    InfraError,
}

impl RunStatus {
    /// Every status, in the order reports list them.
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Ok,
        RunStatus::AgentError,
        RunStatus::Timeout,
        RunStatus::Budget,
        RunStatus::InfraError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::AgentError => "agent_error",
            RunStatus::Timeout => "timeout",
            RunStatus::Budget => "budget",
            RunStatus::InfraError => "infra_error",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Integrity flags: recorded, never hidden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// The agent read or ran anything under the task folder, hidden files or reference.
    pub touched_task_files: bool,
    /// The agent edited the project's own tests.
    pub edited_tests: bool,
    /// The agent added a file that shadows a test runner, a standard-library
    /// module or a runner's configuration (`measure::integrity::shadowed_runner`).
    /// Written only when set, so records from before the flag read back unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadowed_runner: bool,
    /// The tests tried to reach outside their sandbox, which has a loopback of
    /// its own only (`exec::reach`). Written only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reached_out: bool,
}

impl Integrity {
    pub fn any(&self) -> bool {
        self.touched_task_files || self.edited_tests || self.shadowed_runner || self.reached_out
    }
}

/// The agent of a run; the same shape as the batch manifest's agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub name: String,
    /// The Claude Code CLI's version.
    pub version: String,
    pub model: String,
    pub effort: String,
    /// The agent ran without its sandbox (`--no-sandbox`); absent when it had one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_sandbox: bool,
}

/// One run (task x condition x rep), or one step of a Horizonte sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The record's format version ([`format`]); written first.
    #[serde(default = "format::unstated", deserialize_with = "format::known")]
    pub format: u32,
    pub batch: String,
    /// The task id; for a sequence step, the step's id.
    pub task: String,
    /// The Horizonte sequence's name; `null` for a task run.
    #[serde(deserialize_with = "required")]
    pub sequence: Option<String>,
    /// The step number, 1-based; `null` for a task run.
    #[serde(deserialize_with = "required")]
    pub step: Option<u32>,
    pub condition: String,
    pub rep: u32,
    pub status: RunStatus,
    #[serde(deserialize_with = "required")]
    pub hidden_pass: Option<bool>,
    #[serde(deserialize_with = "required")]
    pub project_pass: Option<bool>,
    /// A project test that passed at the start failed twice in a row after the run.
    #[serde(deserialize_with = "required")]
    pub regression: Option<bool>,
    /// A test failed once and passed on the second try.
    #[serde(deserialize_with = "required")]
    pub flaky: Option<bool>,
    #[serde(deserialize_with = "required")]
    pub loc_added: Option<u64>,
    #[serde(deserialize_with = "required")]
    pub loc_removed: Option<u64>,
    #[serde(deserialize_with = "required")]
    pub loc_total: Option<u64>,
    #[serde(deserialize_with = "required")]
    pub functions_added: Option<u64>,
    #[serde(deserialize_with = "required")]
    pub function_lines_median: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub dup_lines_engine: Option<u64>,
    /// `null` when jscpd is not installed.
    #[serde(deserialize_with = "required")]
    pub dup_lines_jscpd: Option<u64>,
    /// Implementations of each concept in the project (sequences); empty for tasks
    /// without probes.
    pub probes: BTreeMap<String, u64>,
    #[serde(deserialize_with = "required")]
    pub tokens: Option<Usage>,
    /// `total_cost_usd` of the CLI's result (includes subagents).
    #[serde(deserialize_with = "required")]
    pub cost_usd: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub turns: Option<u32>,
    pub duration_s: f64,
    /// Denials, blocks, pauses and suggestions of the hook session, and per
    /// guard its notes and blocks (`hooks.guards`, absent before guards; see
    /// `measure::ledger::HookCounts`).
    pub hooks: HookCounts,
    /// What the agent did after each denial and block, per class (zero without
    /// the engine). Absent in records written before it existed, read as zero.
    /// The classes, as `measure::outcomes::Outcome` defines them:
    /// - `complied`: after a denial, the same agent's next write to the finding's
    ///   file no longer holds the copy or calls the unit the finding named; after
    ///   a block, the next audit no longer has the finding;
    /// - `retried`: the same content written again (same file, or Bash), by the
    ///   same or another tool; after a block, the next audit blocks on it again;
    /// - `worked_around`: the copy landed by another route (an allowed write to
    ///   another file, or another agent's), or a block's copy moved to another file;
    /// - `gave_up`: the session ended with the finding standing;
    /// - `unjust_labelled`: a human labelled the decision unjust.
    #[serde(default)]
    pub outcomes: OutcomeCounts,
    /// The same classes for the re-implementation notes (rule `reuse.note`):
    /// complied when the agent called the unit named or took its own
    /// definition out, retried when it wrote the definition again, worked around
    /// when the definition moved to another file, gave up when nothing addressed
    /// it. Written only when a note was given.
    #[serde(default, skip_serializing_if = "OutcomeCounts::is_zero")]
    pub note_outcomes: OutcomeCounts,
    /// The agent's calls of the engine's query tools (`already_exists`,
    /// `find_symbol`) that reached the engine, per tool; empty (and not written)
    /// without them. Absent in records written before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_calls: BTreeMap<String, u64>,
    pub integrity: Integrity,
    pub agent: AgentInfo,
    pub started_at: DateTime<Utc>,
    pub engine_rev: String,
    /// Why a run that is not `ok` failed (one line, for the report); `null` for `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Which attempt at its run this is: 1, then one more for each `--retry` of it.
    /// A later line with the same key and a higher attempt supersedes the earlier
    /// ones, which stay in `runs.jsonl`. Written only from 2 on, so a batch without
    /// retries reads and writes as before; absent means 1.
    #[serde(default = "first_attempt", skip_serializing_if = "is_first_attempt")]
    pub attempt: u32,
}

fn first_attempt() -> u32 {
    1
}

fn is_first_attempt(attempt: &u32) -> bool {
    *attempt == 1
}

/// A record line read as its run's key and attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
pub struct AttemptKey {
    #[serde(flatten)]
    pub run: RunKey,
    #[serde(default = "first_attempt")]
    pub attempt: u32,
}

/// Makes an `Option` field required: it must be present, though it may be `null`.
/// (serde otherwise reads a missing `Option` field as `None`.)
fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// What identifies a run in a batch, a task run or one step of a sequence run:
/// a batch records each once. A record's line reads as its key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunKey {
    /// The task id; for a sequence step, the step's id.
    pub task: String,
    pub sequence: Option<String>,
    pub step: Option<u32>,
    pub condition: String,
    pub rep: u32,
}

impl RunRecord {
    pub fn key(&self) -> RunKey {
        RunKey {
            task: self.task.clone(),
            sequence: self.sequence.clone(),
            step: self.step,
            condition: self.condition.clone(),
            rep: self.rep,
        }
    }

    /// The fields a graded (`ok`) run must carry; `None` when they are all there,
    /// else the name of the first missing one.
    pub fn missing_graded_field(&self) -> Option<&'static str> {
        if self.status != RunStatus::Ok {
            return None;
        }
        let present = [
            ("hidden_pass", self.hidden_pass.is_some()),
            ("project_pass", self.project_pass.is_some()),
            ("loc_added", self.loc_added.is_some()),
            ("loc_removed", self.loc_removed.is_some()),
            ("loc_total", self.loc_total.is_some()),
            ("tokens", self.tokens.is_some()),
            ("cost_usd", self.cost_usd.is_some()),
        ];
        present
            .into_iter()
            .find(|(_, here)| !here)
            .map(|(name, _)| name)
    }

    /// The sequence step key, when this record is a sequence step.
    pub fn sequence_step(&self) -> Option<(&str, u32)> {
        Some((self.sequence.as_deref()?, self.step?))
    }
}

/// Reads the latest attempt of every run of a `runs.jsonl` (superseded attempts
/// are left out), in the order runs were first recorded. A malformed line, or a graded run missing a
/// measurement, is an error naming the file and line. Blank lines are skipped,
/// and so is a torn last line (a batch interrupted mid-write), with a note on
/// standard error: the next batch command cuts it.
pub fn read_records(path: &Path) -> anyhow::Result<Vec<RunRecord>> {
    let text = fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}: is this a batch folder written by `sens-bench run`?",
            path.display()
        )
    })?;
    let (complete, torn) = crate::jsonl::complete_lines(&text);
    if !torn.trim().is_empty() {
        eprintln!(
            "note: {}: skipped a torn last line ({} bytes, left by an interrupted write); \
             only complete lines are read",
            path.display(),
            torn.len()
        );
    }
    parse_records(complete, path)
}

/// Parses the text of a `runs.jsonl`; `path` only names the file in errors.
pub fn parse_records(text: &str, path: &Path) -> anyhow::Result<Vec<RunRecord>> {
    let mut records: Vec<RunRecord> = Vec::new();
    // Which line and index hold each run's latest attempt: a resumed batch must
    // never record an attempt twice.
    let mut seen: HashMap<RunKey, (usize, usize)> = HashMap::new();
    for line in crate::jsonl::lines::<RunRecord>(
        text,
        path,
        "a valid run record (docs/runs.md lists the fields)",
    ) {
        let (line_no, record) = line?;
        if let Some(field) = record.missing_graded_field() {
            bail!(
                "{}:{line_no}: status is \"ok\" but `{field}` is null; a graded run must carry it \
                 (use a failure status if the run was not graded)",
                path.display()
            );
        }
        if record.sequence.is_some() != record.step.is_some() {
            bail!(
                "{}:{line_no}: `sequence` and `step` must both be set (a sequence step) or both be null (a task run)",
                path.display()
            );
        }
        if record.step == Some(0) {
            bail!("{}:{line_no}: `step` is 1-based; found 0", path.display());
        }
        match seen.get(&record.key()) {
            // A retry: the later attempt takes the earlier one's place.
            Some(&(_, index)) if record.attempt > records[index].attempt => {
                seen.insert(record.key(), (line_no, index));
                records[index] = record;
            }
            Some(&(first, _)) => bail!(
                "{}:{line_no}: the same run (task {}, condition {}, rep {}{}, attempt {}) is already \
                 recorded on line {first}; a batch records each attempt at a run once",
                path.display(),
                record.task,
                record.condition,
                record.rep,
                record
                    .sequence_step()
                    .map(|(name, step)| format!(", sequence {name} step {step}"))
                    .unwrap_or_default(),
                record.attempt
            ),
            None => {
                seen.insert(record.key(), (line_no, records.len()));
                records.push(record);
            }
        }
    }
    Ok(records)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A complete `ok` record as JSON, for tests to alter.
    pub(crate) fn sample_json() -> serde_json::Value {
        serde_json::json!({
            "format": 1, "batch": "b1", "task": "t1", "sequence": null, "step": null,
            "condition": "C0", "rep": 1, "status": "ok",
            "hidden_pass": true, "project_pass": true, "regression": false, "flaky": false,
            "loc_added": 12, "loc_removed": 3, "loc_total": 400,
            "functions_added": 1, "function_lines_median": 8.0,
            "dup_lines_engine": 0, "dup_lines_jscpd": null,
            "probes": {"dates": 1},
            "tokens": {"input": 10, "output": 20, "cache_read": 30, "cache_creation": 40},
            "cost_usd": 0.25, "turns": 4, "duration_s": 61.5,
            "hooks": {"denials": 0, "blocks": 0, "pauses": 0, "suggestions": 2},
            "outcomes": {"complied": 0, "retried": 0, "worked_around": 0, "gave_up": 0, "unjust_labelled": 0},
            "integrity": {"touched_task_files": false, "edited_tests": false},
            "agent": {"name": "oracle", "version": "2.1.197", "model": "oracle", "effort": "medium"},
            "started_at": "2026-11-30T10:00:00Z", "engine_rev": "abc123"
        })
    }

    fn parse_one(value: &serde_json::Value) -> anyhow::Result<Vec<RunRecord>> {
        parse_records(&value.to_string(), Path::new("runs.jsonl"))
    }

    #[test]
    fn reads_a_complete_record_and_writes_it_back_unchanged() {
        let records = parse_one(&sample_json()).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].tokens.unwrap().total(), 100);
        assert_eq!(records[0].status, RunStatus::Ok);
        let back = serde_json::to_value(&records[0]).unwrap();
        assert_eq!(back, sample_json());
    }

    #[test]
    fn a_record_of_an_unknown_format_is_refused_by_line_and_one_without_reads_as_1() {
        let mut value = sample_json();
        value["format"] = 2.into();
        let err = format!("{:#}", parse_one(&value).unwrap_err());
        assert!(err.contains("runs.jsonl:1"), "{err}");
        assert!(err.contains("`format` is 2"), "{err}");

        value.as_object_mut().unwrap().remove("format");
        assert_eq!(parse_one(&value).unwrap()[0].format, 1);
        let line = serde_json::to_string(&parse_one(&sample_json()).unwrap()[0]).unwrap();
        assert!(line.starts_with(r#"{"format":1,"#), "{line}");
    }

    #[test]
    fn a_record_from_before_outcomes_reads_them_as_zero() {
        let mut value = sample_json();
        value.as_object_mut().unwrap().remove("outcomes");
        let records = parse_one(&value).unwrap();
        assert_eq!(records[0].outcomes, OutcomeCounts::default());
    }

    #[test]
    fn a_missing_field_is_an_error_even_when_it_may_be_null() {
        let mut value = sample_json();
        value.as_object_mut().unwrap().remove("dup_lines_jscpd");
        let err = format!("{:#}", parse_one(&value).unwrap_err());
        assert!(err.contains("runs.jsonl:1"), "{err}");
        assert!(err.contains("dup_lines_jscpd"), "{err}");
    }

    #[test]
    fn an_ok_record_without_a_measurement_names_the_field_and_line() {
        let mut value = sample_json();
        value["loc_added"] = serde_json::Value::Null;
        let text = format!("{}\n\n{}", sample_json(), value);
        let err = parse_records(&text, Path::new("b/runs.jsonl")).unwrap_err();
        let err = format!("{err:#}");
        assert!(err.contains("b/runs.jsonl:3"), "{err}");
        assert!(err.contains("loc_added"), "{err}");
    }

    #[test]
    fn a_failed_record_may_lack_measurements() {
        let mut value = sample_json();
        value["status"] = "timeout".into();
        value["loc_added"] = serde_json::Value::Null;
        value["tokens"] = serde_json::Value::Null;
        value["error"] = "no result after 900 s".into();
        let records = parse_one(&value).unwrap();
        assert_eq!(records[0].status, RunStatus::Timeout);
        assert_eq!(records[0].error.as_deref(), Some("no result after 900 s"));
    }

    #[test]
    fn a_run_recorded_twice_names_both_lines() {
        let mut other = sample_json();
        other["rep"] = 2.into();
        let text = format!("{}\n{}\n{}\n", sample_json(), other, sample_json());
        let err = format!(
            "{:#}",
            parse_records(&text, Path::new("runs.jsonl")).unwrap_err()
        );
        assert!(err.contains("runs.jsonl:3"), "{err}");
        assert!(err.contains("already recorded on line 1"), "{err}");
    }

    #[test]
    fn an_unknown_status_and_a_half_sequence_key_are_errors() {
        let mut value = sample_json();
        value["status"] = "crashed".into();
        assert!(parse_one(&value).is_err());
        let mut value = sample_json();
        value["sequence"] = "cuentas".into();
        let err = format!("{:#}", parse_one(&value).unwrap_err());
        assert!(err.contains("both be set"), "{err}");
    }
}
