//! One attempt: prepare -> play -> grade -> save. A task run is one attempt on
//! its own copy; a sequence runs one attempt per step on the same copy, each
//! measured against the state the previous step left.

use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, Utc};
use git2::Oid;
use serde::Serialize;

use super::BatchFolder;
use super::grade::grade;
use super::prepare::prepare;
use crate::agent::claude::{AgentError, TurnResult};
use crate::exec;
use crate::measure::Size;
use crate::record::{RunKey, RunRecord, RunStatus};
use crate::spec::Commands;
use crate::spec::files::{FileSet, Probe};
use crate::workspace::Workspace;

/// Why a run stopped before it was graded.
pub(super) enum Stop {
    /// Ctrl-C: no record.
    Interrupted,
    /// A failure recorded with its class.
    Failed(RunStatus, String),
}

impl Stop {
    /// A harness failure is an `infra_error`, unless it came from Ctrl-C.
    pub(super) fn infra(err: anyhow::Error) -> Stop {
        if exec::interrupted() {
            Stop::Interrupted
        } else {
            Stop::Failed(RunStatus::InfraError, format!("{err:#}"))
        }
    }
}

/// When a run started (the record's `started_at`).
#[derive(Clone, Copy)]
pub(super) struct Started {
    pub at: DateTime<Utc>,
}

impl Started {
    fn now() -> Started {
        Started { at: Utc::now() }
    }
}

/// The harness's own time in one run, in seconds (`timings.json`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(super) struct Timings {
    /// Copy the source, create the repository and its baseline commit.
    pub materialize: f64,
    pub setup: f64,
    pub baseline_tests: f64,
    pub agent: f64,
    pub diff: f64,
    /// Our own measures (size, functions, engine duplicates, probes).
    pub measure: f64,
    /// jscpd's run (a Node tool, most of it start-up), apart from ours.
    pub jscpd: f64,
    pub tests: f64,
    pub record: f64,
}

impl Timings {
    /// Everything but the agent, the set-up, the tests and jscpd.
    pub(super) fn overhead(&self) -> f64 {
        self.materialize + self.diff + self.measure + self.record
    }
}

pub(super) fn timed<T>(slot: &mut f64, work: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = work();
    *slot += start.elapsed().as_secs_f64();
    out
}

/// A prepared copy, ready for its first attempt.
pub struct Prepared {
    pub workspace: Workspace,
    /// The first attempt's start and the preparation's timings; later attempts
    /// on the same copy start afresh.
    first: Cell<Option<(Started, Timings)>>,
}

impl Prepared {
    fn start(&self) -> (Started, Timings) {
        self.first
            .take()
            .unwrap_or_else(|| (Started::now(), Timings::default()))
    }
}

/// One agent session's input: a prepared copy and what to grade it with.
pub struct Attempt<'a> {
    pub root: &'a Path,
    /// The state the agent starts from; its change is measured against it.
    pub baseline: Oid,
    pub env: &'a [(String, String)],
    /// The run folder (empty but for set-up logs).
    pub dir: &'a Path,
    pub prompt: &'a Path,
    pub timeout: Duration,
    /// The reference patch (the oracle plays it).
    pub reference: &'a Path,
    pub commands: &'a Commands,
    pub hidden: &'a Path,
    /// The task's (or sequence's) folder: the agent must not reach it.
    pub task_dir: &'a Path,
    pub size: Size<'a>,
    /// A sequence's probes with its size globs (their default files).
    pub probes: Option<(&'a [Probe], &'a FileSet)>,
    /// One of the batch's conditions.
    pub condition: &'a str,
    /// The project's tests passed before this session.
    pub passed_before: bool,
}

impl BatchFolder {
    /// Prepares a copy for the run `key` in its folder `dir`. `None` when it
    /// cannot be used: the failure is recorded (set-up failed, tests fail before
    /// the agent starts), or Ctrl-C came (no record).
    pub fn prepare(
        &self,
        key: &RunKey,
        dir: &Path,
        materialize: impl FnOnce() -> anyhow::Result<Workspace>,
        commands: &Commands,
        timeout: Duration,
    ) -> anyhow::Result<Option<Prepared>> {
        let started = Started::now();
        let mut timings = Timings::default();
        match prepare(materialize, commands, timeout, dir, &mut timings) {
            Ok(workspace) => Ok(Some(Prepared {
                workspace,
                first: Cell::new(Some((started, timings))),
            })),
            Err(Stop::Interrupted) => Ok(None),
            Err(Stop::Failed(status, error)) => {
                let mut record = self.blank_record(key, started);
                record.status = status;
                record.error = Some(error);
                self.save(&record, dir, &mut timings)?;
                Ok(None)
            }
        }
    }

    /// Runs the agent on the copy, grades and measures the result, writes
    /// `record.json` and appends the record. `None` when Ctrl-C stopped it (no
    /// record).
    pub fn attempt(
        &self,
        prepared: &Prepared,
        input: &Attempt<'_>,
        key: &RunKey,
    ) -> anyhow::Result<Option<RunRecord>> {
        let (started, mut timings) = prepared.start();
        let condition = self.condition(input.condition)?;
        let prompt = std::fs::read_to_string(input.prompt)
            .with_context(|| format!("cannot read the prompt {}", input.prompt.display()))?;
        // Kept for the viewer's run page.
        let kept = input.dir.join("prompt.md");
        std::fs::write(&kept, &prompt)
            .with_context(|| format!("cannot write {}", kept.display()))?;
        let ledger = input.dir.join("hooks.jsonl");
        std::fs::write(&ledger, "")
            .with_context(|| format!("cannot create the hook ledger {}", ledger.display()))?;
        let agent_start = Instant::now();
        let played = self.play(input, condition, &prompt, &ledger);
        timings.agent = agent_start.elapsed().as_secs_f64();
        let Some(result) = played else {
            return Ok(None);
        };
        let mut record = self.blank_record(key, started);
        record.duration_s = timings.agent;
        let graded = grade(
            self.jscpd.as_deref(),
            input,
            condition.engine,
            &ledger,
            &result,
            &mut record,
            &mut timings,
        );
        match (result, graded) {
            (_, Err(Stop::Interrupted)) => return Ok(None),
            (_, Err(Stop::Failed(status, error))) => {
                record.status = status;
                record.error = Some(error);
            }
            (Ok(turn), Ok(())) => keep_usage(&mut record, &turn),
            (Err(err), Ok(())) => {
                record.status = status_of(&err);
                record.error = Some(one_line(&format!("{err:#}")));
                if let AgentError::ApiError { result } = &err {
                    keep_usage(&mut record, result);
                }
            }
        }
        self.save(&record, input.dir, &mut timings)?;
        Ok(Some(record))
    }
}

fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The turn's tokens, cost and turns in the record.
fn keep_usage(record: &mut RunRecord, turn: &TurnResult) {
    record.tokens = Some(turn.usage);
    record.cost_usd = Some(turn.total_cost_usd);
    record.turns = Some(u32::try_from(turn.num_turns).unwrap_or(u32::MAX));
}

/// The record's class of an agent failure.
fn status_of(err: &AgentError) -> RunStatus {
    match err {
        AgentError::ApiError { .. } => RunStatus::AgentError,
        AgentError::Timeout { .. } => RunStatus::Timeout,
        AgentError::CliMissing { .. } | AgentError::CliCrashed { .. } | AgentError::Harness(_) => {
            RunStatus::InfraError
        }
    }
}
