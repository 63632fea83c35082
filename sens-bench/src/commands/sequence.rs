//! `sens-bench sequence run` (docs/contract.md, "Horizonte sequences"): each sequence
//! under each condition and repetition, from its `start`, the steps in order, each
//! building on the agent's own previous result (one CLI process per step, on the same
//! copy). Every step is one attempt (`batch::attempt`), graded, measured and recorded
//! like a task run, with `sequence`, `step` (1-based) and `loc_total` = the project size
//! after the step.
//!
//! Decisions where the contract (docs/contract.md) is silent:
//! - Resume replays: a rerun rebuilds the copy from `start` and applies the
//!   recorded steps' `diff.patch` files in order (each holds the agent's change
//!   over the previous step, binary files included), then runs the first
//!   unrecorded step. No step is run twice and none is recorded twice.
//! - The harness commits the copy after each step (a fixed identity), so the next
//!   step's change is measured against the agent's own previous result.
//! - A step's `hidden_pass` runs that step's hidden tests; earlier steps' hidden
//!   tests are the validation's concern (`sequence validate`).
//! - Sequences have no `timeout_s`: each step gets `--step-timeout-s` (900).
//! - A step whose agent failed (timeout, error, a per-run `budget`) is recorded
//!   as such and the sequence goes on from whatever the agent left: that is its
//!   own result.
//! - `--batch-max-cost-usd` is checked before every step: past it the
//!   repetition stops between steps, and a resume replays the recorded ones.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::batch::manifest::{Inputs, digest_dir, file_digests};
use crate::batch::plan::PlannedRun;
use crate::batch::stage::Attempt;
use crate::batch::{BatchArgs, BatchFolder};
use crate::measure::Size;
use crate::record::{RunKey, RunRecord};
use crate::spec::sequence::{Sequence, load_sequence};
use crate::workspace::Workspace;
use crate::workspace::git::{apply_patch, commit_state};

/// `sens-bench sequence run`.
#[derive(clap::Args, Debug, Clone)]
pub struct SequenceRunArgs {
    /// Sequence folders (each holding a `sequence.toml`).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The agent's time limit for each step, in seconds.
    #[arg(long, default_value_t = 900)]
    pub step_timeout_s: u64,
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// Runs every sequence x condition x rep; see the module documentation.
pub fn run(args: &SequenceRunArgs) -> anyhow::Result<ExitCode> {
    let mut sequences = Vec::new();
    let mut units = BTreeMap::new();
    let mut inputs = Inputs::new();
    for dir in &args.dirs {
        let sequence = load_sequence(dir)?;
        units.insert(sequence.name.clone(), digest_dir(&sequence.dir)?);
        inputs.insert(
            format!("sequence {}", sequence.name),
            file_digests(&sequence.dir)?,
        );
        sequences.push(sequence);
    }
    let batch = BatchFolder::open(&args.batch, units, inputs)?;
    let names: Vec<String> = sequences.iter().map(|s| s.name.clone()).collect();
    let by_name: BTreeMap<&str, &Sequence> =
        sequences.iter().map(|s| (s.name.as_str(), s)).collect();
    // A sequence weighs its number of steps when shards are balanced.
    let planned = batch.plan(&names, |name| {
        by_name.get(name).map_or(1, |s| s.steps.len() as u64)
    })?;
    let mut total = 0u64;
    let mut done = 0u64;
    let mut todo = Vec::new();
    for run in planned {
        let sequence = by_name
            .get(run.unit.as_str())
            .with_context(|| format!("sequence {} is not loaded", run.unit))?;
        let recorded = settled_steps(&batch, sequence, &run);
        total += sequence.steps.len() as u64;
        done += recorded as u64;
        if recorded < sequence.steps.len() {
            todo.push(run);
        }
    }
    let timeout = Duration::from_secs(args.step_timeout_s);
    batch.work(&todo, (total, done), |planned| {
        let sequence = by_name
            .get(planned.unit.as_str())
            .with_context(|| format!("sequence {} is not loaded", planned.unit))?;
        run_sequence(&batch, sequence, planned, timeout)
    })
}

fn step_key(sequence: &Sequence, index: usize, planned: &PlannedRun) -> RunKey {
    RunKey {
        task: sequence.steps[index].id.clone(),
        sequence: Some(sequence.name.clone()),
        step: Some(index as u32 + 1),
        condition: planned.condition.clone(),
        rep: planned.rep,
    }
}

/// How many leading steps stay as recorded: those before the first step that
/// has no record or is retried (a sequence is recorded in order, and every step
/// after a rerun one builds on a new start, so it runs again too).
fn settled_steps(batch: &BatchFolder, sequence: &Sequence, planned: &PlannedRun) -> usize {
    (0..sequence.steps.len())
        .take_while(|&i| !batch.needs_run(&step_key(sequence, i, planned)))
        .count()
}

fn step_parts(sequence: &Sequence, index: usize, planned: &PlannedRun) -> Vec<String> {
    vec![
        sequence.name.clone(),
        planned.condition.clone(),
        planned.rep.to_string(),
        format!("{:02}-{}", index + 1, sequence.steps[index].id),
    ]
}

fn run_sequence(
    batch: &BatchFolder,
    sequence: &Sequence,
    planned: &PlannedRun,
    timeout: Duration,
) -> anyhow::Result<()> {
    let recorded = settled_steps(batch, sequence, planned);
    let first_key = step_key(sequence, recorded, planned);
    let first_dir = batch.run_dir(&step_parts(sequence, recorded, planned), &first_key)?;
    let Some(prepared) = batch.prepare(
        &first_key,
        &first_dir,
        || Workspace::for_sequence_start(sequence),
        &sequence.commands,
        timeout,
    )?
    else {
        return Ok(());
    };
    let root = &prepared.workspace.root;
    let mut state = prepared.workspace.baseline;
    let mut passed_before = true;
    for index in 0..recorded {
        let dir = batch.run_path(&step_parts(sequence, index, planned))?;
        let previous = replay(root, &dir, index + 1)?;
        passed_before = previous.project_pass.unwrap_or(passed_before);
        state = commit_step(root, state, &prepared.workspace.excluded, index + 1)?;
    }
    for index in recorded..sequence.steps.len() {
        // The first step was let start by the batch.
        if index > recorded && !batch.may_start() {
            return Ok(());
        }
        let step = &sequence.steps[index];
        let key = step_key(sequence, index, planned);
        let dir = if index == recorded {
            first_dir.clone()
        } else {
            batch.run_dir(&step_parts(sequence, index, planned), &key)?
        };
        let input = Attempt {
            root,
            baseline: state,
            excluded: &prepared.workspace.excluded,
            env: &prepared.workspace.env,
            sandbox: prepared.sandbox.as_ref(),
            dir: &dir,
            prompt: &step.prompt,
            timeout,
            reference: &step.reference,
            commands: &sequence.commands,
            hidden: &step.hidden,
            task_dir: &sequence.dir,
            size: Size::Globs(&sequence.size),
            probes: Some((&sequence.probes, &sequence.size)),
            condition: &planned.condition,
            passed_before,
        };
        let Some(record) = batch.attempt(&prepared, &input, &key)? else {
            return Ok(());
        };
        if let Some(pass) = record.project_pass {
            passed_before = pass;
        }
        state = commit_step(root, state, &prepared.workspace.excluded, index + 1)?;
    }
    Ok(())
}

/// Applies a recorded step's change again; returns its record.
fn replay(root: &Path, dir: &Path, step: usize) -> anyhow::Result<RunRecord> {
    let record_path = dir.join("record.json");
    let text = std::fs::read_to_string(&record_path).with_context(|| {
        format!(
            "step {step} is recorded in runs.jsonl but {} is missing: it is needed to resume this sequence",
            record_path.display()
        )
    })?;
    let record: RunRecord = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run record", record_path.display()))?;
    let patch = dir.join("diff.patch");
    let empty = std::fs::metadata(&patch)
        .map(|m| m.len() == 0)
        .unwrap_or(false);
    if !empty {
        apply_patch(root, &patch).with_context(|| format!("cannot replay step {step}"))?;
    }
    Ok(record)
}

/// Commits the copy as the agent left it (as its step's diff saw it, from
/// `state`): the state the next step starts from.
fn commit_step(
    root: &Path,
    state: git2::Oid,
    excluded: &[String],
    step: usize,
) -> anyhow::Result<git2::Oid> {
    commit_state(root, state, excluded, &format!("after step {step}"))
        .with_context(|| format!("cannot commit the state after step {step}"))
}
