//! `sens-bench run` (SPEC 3.5): a batch of task runs, each one attempt on its
//! own copy (see `batch` for the batch and the attempt).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;

use crate::batch::manifest::digest_dir;
use crate::batch::plan::PlannedRun;
use crate::batch::stage::Attempt;
use crate::batch::{BatchArgs, BatchFolder};
use crate::measure::Size;
use crate::record::RunKey;
use crate::spec::task::{Task, load_tasks};
use crate::workspace::Workspace;

/// `sens-bench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The folder of task folders.
    #[arg(long)]
    pub tasks: std::path::PathBuf,
    /// Run only these tasks (repeatable); default every task in --tasks.
    #[arg(long = "task")]
    pub only: Vec<String>,
    #[command(flatten)]
    pub batch: BatchArgs,
}

/// Runs a batch of tasks; see the module documentation.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let tasks = select_tasks(&args.tasks, &args.only)?;
    let mut units = BTreeMap::new();
    for task in &tasks {
        units.insert(task.id.clone(), digest_dir(&task.dir)?);
    }
    let batch = BatchFolder::open(&args.batch, units)?;
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let planned = batch.plan(&ids, |_| 1);
    let total = planned.len();
    let todo: Vec<PlannedRun> = planned
        .into_iter()
        .filter(|run| !batch.is_recorded(&task_key(run)))
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
    let dir = batch.run_dir(&[
        task.id.clone(),
        planned.condition.clone(),
        planned.rep.to_string(),
    ])?;
    let key = task_key(planned);
    let Some(prepared) = batch.prepare(
        &key,
        &dir,
        || Workspace::for_task(task, &batch.cache),
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
