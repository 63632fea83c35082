//! What the stages of one attempt pass forward: the attempt's input, the
//! prepared copy, the timings, and why a run stopped early. The stages
//! (`prepare`, `play`, `grade`) and the pipeline over them (`attempt`) all use
//! these, so they live below every stage.

use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use git2::Oid;
use serde::Serialize;

use crate::exec;
use crate::measure::Size;
use crate::record::RunStatus;
use crate::sandbox::View;
use crate::spec::Commands;
use crate::spec::files::{FileSet, Probe};
use crate::spec::hidden::Hidden;
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
    pub(super) fn now() -> Started {
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
    /// Of `agent`: C2's engine indexing the copy, from the shared index cache.
    pub engine_start: f64,
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
    /// What its tests see ([`Attempt::sandbox`]).
    pub sandbox: Option<View>,
    /// The first attempt's start and the preparation's timings; later attempts
    /// on the same copy start afresh.
    pub(super) first: Cell<Option<(Started, Timings)>>,
}

impl Prepared {
    pub(super) fn start(&self) -> (Started, Timings) {
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
    /// The harness's own ignore patterns ([`crate::workspace::Workspace::excluded`]).
    pub excluded: &'a [String],
    pub env: &'a [(String, String)],
    /// The sandbox the copy's tests run in
    /// ([`crate::workspace::Workspace::test_view`]); `None` with `--no-sandbox`.
    pub sandbox: Option<&'a View>,
    /// The run folder (empty but for set-up logs).
    pub dir: &'a Path,
    pub prompt: &'a Path,
    pub timeout: Duration,
    /// The reference patch (the oracle plays it).
    pub reference: &'a Path,
    pub commands: &'a Commands,
    pub hidden: &'a Hidden,
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
