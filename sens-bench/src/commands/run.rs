//! `sens-bench run` (docs/contract.md, "Runs"): a batch of task runs, each one attempt on
//! its own copy (see `batch` for the batch and the attempt).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::batch::manifest::{Inputs, digest_dir, file_digests};
use crate::batch::plan::PlannedRun;
use crate::batch::plan::plan;
use crate::batch::stage::Attempt;
use crate::batch::{BatchArgs, BatchFolder, dry_run, needs_run, shard_part};
use crate::measure::Size;
use crate::record::RunKey;
use crate::record::{RunStatus, read_records};
use crate::spec::conditions::Conditions;
use crate::spec::task::{Source, Task, load_tasks};
use crate::workspace::Workspace;
use crate::workspace::git::check_patch;

/// `sens-bench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The folder of task folders.
    #[arg(long)]
    pub tasks: std::path::PathBuf,
    /// Run only these tasks (repeatable); default every task in --tasks.
    #[arg(long = "task")]
    pub only: Vec<String>,
    /// Print the plan and an estimated cost, then stop: nothing is created.
    #[arg(long)]
    pub dry_run: bool,
    /// Tokens one run is expected to use, for --dry-run's cost estimate.
    #[arg(long, requires = "dry_run")]
    pub tokens_per_run: Option<u64>,
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// Runs a batch of tasks; see the module documentation.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let tasks = select_tasks(&args.tasks, &args.only)?;
    if args.dry_run {
        return dry_run(args, &tasks);
    }
    let mut units = BTreeMap::new();
    let mut inputs = Inputs::new();
    for task in &tasks {
        units.insert(task.id.clone(), digest_dir(&task.dir)?);
        inputs.insert(format!("task {}", task.id), file_digests(&task.dir)?);
        let source = match &task.source {
            Source::Path(dir) => Some(dir),
            Source::Snapshot { sequence, .. } => Some(&sequence.dir),
            // Pinned by their version or commit.
            Source::Pypi { .. } | Source::Git { .. } | Source::SelfRepo { .. } => None,
        };
        if let Some(dir) = source {
            inputs.insert(format!("source of task {}", task.id), file_digests(dir)?);
        }
    }
    let batch = BatchFolder::open(&args.batch, units, inputs)?;
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let planned = batch.plan(&ids, |_| 1)?;
    let total = planned.len();
    let todo: Vec<PlannedRun> = planned
        .into_iter()
        .filter(|run| batch.needs_run(&task_key(run)))
        .collect();
    let by_id: BTreeMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let progress = (total as u64, (total - todo.len()) as u64);
    batch.work(&todo, progress, |planned| {
        let task = by_id
            .get(planned.unit.as_str())
            .with_context(|| format!("task {} is not loaded", planned.unit))?;
        run_task(&batch, task, planned)
    })
}

/// `--dry-run`: the plan and its cost, from the files alone (a batch folder's
/// `runs.jsonl` is read, never written).
fn dry_run(args: &RunArgs, tasks: &[Task]) -> anyhow::Result<ExitCode> {
    let batch = &args.batch;
    let conditions: Vec<String> = Conditions::load(&batch.conditions)?
        .select(&batch.condition)?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let planned = plan(&ids, &conditions, batch.reps, batch.seed)?;
    let part = shard_part(batch, &ids, planned.clone())?;
    let runs = batch.out.join("runs.jsonl");
    let recorded: HashMap<RunKey, RunStatus> = if runs.is_file() {
        read_records(&runs)?
            .into_iter()
            .map(|r| (r.key(), r.status))
            .collect()
    } else {
        HashMap::new()
    };
    let todo = planned.filter(|run| {
        part.as_ref().is_none_or(|blocks| blocks.contains(run))
            && needs_run(recorded.get(&task_key(run)).copied(), &batch.retry)
    });
    let model = batch.model.as_deref().unwrap_or("default");
    let cost = args.tokens_per_run.map(|tokens| (model, tokens));
    let shard = batch
        .shard
        .map(|s| format!("shard {}/{}", s.index, s.count));
    println!(
        "{}",
        dry_run::describe(ids.len(), &conditions, batch.reps, shard, todo, cost)
    );
    Ok(ExitCode::SUCCESS)
}

fn select_tasks(dir: &Path, only: &[String]) -> anyhow::Result<Vec<Task>> {
    if only.is_empty() {
        return load_tasks(dir, None);
    }
    let mut tasks = Vec::new();
    for id in only {
        tasks.extend(load_tasks(dir, Some(id))?);
    }
    Ok(tasks)
}

fn task_key(planned: &PlannedRun) -> RunKey {
    RunKey {
        task: planned.unit.clone(),
        sequence: None,
        step: None,
        condition: planned.condition.clone(),
        rep: planned.rep,
    }
}

fn run_task(batch: &BatchFolder, task: &Task, planned: &PlannedRun) -> anyhow::Result<()> {
    let key = task_key(planned);
    let dir = batch.run_dir(
        &[
            task.id.clone(),
            planned.condition.clone(),
            planned.rep.to_string(),
        ],
        &key,
    )?;
    let Some(prepared) = batch.prepare(
        &key,
        &dir,
        // A reference that cannot apply is found before any set-up runs.
        || {
            let workspace = Workspace::for_task(task, &batch.cache)?;
            check_patch(&workspace.root, &task.reference).context("the task's `reference`")?;
            Ok(workspace)
        },
        &task.commands,
        task.timeout,
    )?
    else {
        return Ok(());
    };
    let workspace = &prepared.workspace;
    let input = Attempt {
        root: &workspace.root,
        baseline: workspace.baseline,
        excluded: &workspace.excluded,
        env: &workspace.env,
        sandbox: prepared.sandbox.as_ref(),
        dir: &dir,
        prompt: &task.prompt,
        timeout: task.timeout,
        reference: &task.reference,
        commands: &task.commands,
        hidden: &task.hidden,
        task_dir: &task.dir,
        size: Size::Source,
        probes: None,
        condition: &planned.condition,
        passed_before: true,
    };
    batch.attempt(&prepared, &input, &key).map(|_| ())
}
