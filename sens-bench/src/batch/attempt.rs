//! One attempt: prepare -> play -> grade -> save. A task run is one attempt on
//! its own copy; a sequence runs one attempt per step on the same copy, each
//! measured against the state the previous step left.

use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::BatchFolder;
use super::grade::grade;
use super::prepare::prepare;
use super::stage::{Attempt, Prepared, Started, Stop, Timings};
use crate::agent::claude::{AgentError, TurnResult};
use crate::record::{RunKey, RunRecord, RunStatus};
use crate::spec::Commands;
use crate::workspace::Workspace;

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
        let listed = || {
            let workspace = materialize()?;
            // The copy lives in `<temporary folder>/project`.
            if let Some(tmp) = workspace.root.parent() {
                self.leftovers.note(tmp)?;
            }
            Ok(workspace)
        };
        match prepare(listed, commands, timeout, self.sandbox, dir, &mut timings) {
            Ok(workspace) => Ok(Some(Prepared {
                sandbox: self.sandbox.then(|| workspace.test_view()),
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
        let ledger = input.dir.join(crate::measure::ledger::LEDGER_FILE);
        std::fs::write(&ledger, "")
            .with_context(|| format!("cannot create the hook ledger {}", ledger.display()))?;
        let agent_start = Instant::now();
        let played = self.play(
            input,
            condition,
            &prompt,
            &ledger,
            &mut timings.engine_start,
        );
        timings.agent = agent_start.elapsed().as_secs_f64();
        let Some(result) = played else {
            return Ok(None);
        };
        let mut record = self.blank_record(key, started);
        record.duration_s = timings.agent;
        let graded = grade(
            self.jscpd.as_deref(),
            input,
            condition,
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
                match &err {
                    AgentError::ApiError { result }
                    | AgentError::Budget {
                        result: Some(result),
                        ..
                    } => keep_usage(&mut record, result),
                    AgentError::Budget { spent, .. } => {
                        record.tokens = Some(spent.usage);
                        record.cost_usd = Some(spent.cost_usd);
                    }
                    _ => {}
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
        AgentError::Budget { .. } => RunStatus::Budget,
        AgentError::CliMissing { .. } | AgentError::CliCrashed { .. } | AgentError::Harness(_) => {
            RunStatus::InfraError
        }
    }
}
