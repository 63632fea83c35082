//! `sens-bench run` (SPEC 3.5): a batch of task runs, every task x condition x
//! repetition, with `--jobs` workers, resumable, and failures kept in their classes.
//!
//! The machinery here is shared with `sequence run` (`sequence_run.rs`): the batch
//! folder (manifest, run log), the workers and Ctrl-C, the progress bar, and
//! [`attempt`], one agent session on a prepared copy, graded and measured.
//!
//! Decisions where the SPEC is silent:
//! - After set-up, the project's own tests run once more (twice when they fail)
//!   before the agent starts: a copy whose tests fail before the agent touched it
//!   is an `infra_error`, never a result, and `regression` then means tests that
//!   passed at the start of this very run fail twice after it.
//! - What set-up creates (virtual environments, `node_modules`, egg-info) and the
//!   caches test runs leave (`__pycache__`, `.pytest_cache`) are listed in the
//!   copy's `.git/info/exclude`: they are not part of the agent's change and do not
//!   show in `git status`.
//! - `duration_s` is the agent's wall-clock time (CLI start to exit): what a
//!   condition costs in time. Set-up and grading times are in `timings.json`.
//! - `tokens` are the main loop's `usage`; `cost_usd` is `total_cost_usd`, which
//!   includes subagents. The transcript keeps the CLI's `modelUsage` as well.
//! - Test commands get the task's `timeout_s` each.
//! - The default agent is `oracle` unless ANTHROPIC_API_KEY is set (SPEC 3.3).

use std::collections::{BTreeMap, VecDeque};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use git2::Oid;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::agent::claude::{AgentError, ApiEndpoint, ClaudeOptions, TurnResult, pinned_claude_bin};
use crate::agent::model_server::ModelServer;
use crate::agent::oracle::oracle_script;
use crate::agent::script::Script;
use crate::agent::{AgentKind, HookHandler};
use crate::conditions::{Condition, Conditions};
use crate::exec::{self, CommandLine};
use crate::grade::{self, ChangeSet};
use crate::integrity;
use crate::manifest::{Manifest, digest_dir, digest_value};
use crate::measure::{self, Inputs, Size};
use crate::plan::{DEFAULT_SEED, PlannedRun, plan};
use crate::record::{AgentInfo, HookCounts, Integrity, RunRecord, RunStatus, Tokens};
use crate::runlog::{RunKey, RunLog};
use crate::task::{Commands, Task, load_tasks};
use crate::workspace::{Cache, Workspace, copy_hidden};

/// Files left by test runs in any project; never part of an agent's change.
const TEST_LEFTOVERS: [&str; 4] = ["__pycache__/", "*.pyc", ".pytest_cache/", ".ruff_cache/"];

/// The options every batch command shares.
#[derive(clap::Args, Debug, Clone)]
pub struct BatchArgs {
    /// Conditions to compare, comma-separated (defined in --conditions).
    #[arg(long, value_delimiter = ',', required = true)]
    pub condition: Vec<String>,
    /// Repetitions of every unit under every condition.
    #[arg(long, default_value_t = 1)]
    pub reps: u32,
    /// Runs at a time.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// `claude`, `oracle` or `script:FILE`; default `oracle` unless
    /// ANTHROPIC_API_KEY is set.
    #[arg(long)]
    pub agent: Option<AgentKind>,
    /// The model (`--model` of the CLI).
    #[arg(long)]
    pub model: Option<String>,
    /// The effort level (`--effort` of the CLI).
    #[arg(long)]
    pub effort: Option<String>,
    /// The Claude Code CLI; default SENS_CLAUDE_BIN, else the pinned one in .tools.
    #[arg(long)]
    pub claude_bin: Option<PathBuf>,
    #[arg(long, default_value = "bench/conditions.toml")]
    pub conditions: PathBuf,
    /// The seed of the plan's order.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// The batch folder (`results/<batch>`).
    #[arg(long)]
    pub out: PathBuf,
    /// Print the harness's own time per run (everything but the agent and tests).
    #[arg(long)]
    pub timings: bool,
}

/// `sens-bench run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The folder of task folders.
    #[arg(long)]
    pub tasks: PathBuf,
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
    let batch = Batch::open(&args.batch, units)?;
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let planned = plan(
        &ids,
        &batch.condition_names(),
        args.batch.reps,
        args.batch.seed,
    );
    let todo: Vec<PlannedRun> = planned
        .into_iter()
        .filter(|run| !batch.log.contains(&task_key(&run.unit, run)))
        .collect();
    let total = ids.len() * batch.conditions.len() * args.batch.reps as usize;
    batch
        .progress
        .start(total as u64, (total - todo.len()) as u64);
    let by_id: BTreeMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    batch.work(todo, |planned| {
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

fn task_key(task: &str, planned: &PlannedRun) -> RunKey {
    RunKey {
        task: Some(task.to_string()),
        sequence: None,
        step: None,
        condition: planned.condition.clone(),
        rep: planned.rep,
    }
}

fn run_task(batch: &Batch, task: &Task, planned: &PlannedRun) -> anyhow::Result<()> {
    let dir = batch.run_dir(&[&task.id, &planned.condition, &planned.rep.to_string()])?;
    let key = RecordKey {
        task: task.id.clone(),
        sequence: None,
        step: None,
        condition: planned.condition.clone(),
        rep: planned.rep,
    };
    let started = Started::now();
    let mut timings = Timings::default();
    let prepared = prepare(
        || Workspace::for_task(task, &batch.cache),
        &task.commands,
        task.timeout,
        &dir,
        &mut timings,
    );
    let workspace = match prepared {
        Ok(workspace) => workspace,
        Err(stop) => return batch.finish_early(&key, &dir, started, stop, &timings),
    };
    let attempt_input = Attempt {
        root: &workspace.root,
        baseline: workspace.baseline,
        env: &workspace.env,
        dir: &dir,
        prompt: read_prompt(&task.prompt)?,
        timeout: task.timeout,
        reference: &task.reference,
        commands: &task.commands,
        hidden: &task.hidden,
        task_dir: &task.dir,
        size: Size::Source,
        probes: None,
        condition: batch.condition(&planned.condition)?,
        passed_before: true,
    };
    attempt(batch, &attempt_input, &key, started, timings).map(|_| ())
}

pub(crate) fn read_prompt(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the prompt {}", path.display()))
}

/// Why a run stopped before it was graded.
pub(crate) enum Stop {
    /// Ctrl-C: no record.
    Interrupted,
    /// A failure recorded with its class.
    Failed(RunStatus, String),
}

impl Stop {
    /// A harness failure is an `infra_error`, unless it came from Ctrl-C.
    pub(crate) fn infra(err: anyhow::Error) -> Stop {
        if exec::interrupted() {
            Stop::Interrupted
        } else {
            Stop::Failed(RunStatus::InfraError, format!("{err:#}"))
        }
    }
}

/// The key fields of a record.
#[derive(Debug, Clone)]
pub(crate) struct RecordKey {
    pub task: String,
    pub sequence: Option<String>,
    pub step: Option<u32>,
    pub condition: String,
    pub rep: u32,
}

/// When a run started (the record's `started_at`).
#[derive(Clone, Copy)]
pub(crate) struct Started {
    at: DateTime<Utc>,
}

impl Started {
    pub(crate) fn now() -> Started {
        Started { at: Utc::now() }
    }
}

/// The harness's own time in one run, in seconds (`timings.json`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Timings {
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
    pub(crate) fn overhead(&self) -> f64 {
        self.materialize + self.diff + self.measure + self.record
    }
}

fn timed<T>(slot: &mut f64, work: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = work();
    *slot += start.elapsed().as_secs_f64();
    out
}

/// Materializes a copy, runs its set-up and checks its tests pass before the
/// agent starts. Logs go to `dir`.
pub(crate) fn prepare(
    materialize: impl FnOnce() -> anyhow::Result<Workspace>,
    commands: &Commands,
    timeout: Duration,
    dir: &Path,
    timings: &mut Timings,
) -> Result<Workspace, Stop> {
    let workspace = timed(&mut timings.materialize, || {
        let workspace = materialize()?;
        exclude(
            &workspace.root,
            TEST_LEFTOVERS.iter().map(|s| s.to_string()),
        )?;
        Ok(workspace)
    })
    .map_err(Stop::infra)?;
    if let Some(setup) = commands.setup() {
        let outcome = timed(&mut timings.setup, || {
            run_command(&workspace, setup, timeout, &dir.join("setup.log"))
        })
        .map_err(Stop::infra)?;
        if !outcome.status.passed() {
            return Err(Stop::Failed(
                RunStatus::InfraError,
                format!(
                    "set-up `{setup}` {}; see {}",
                    outcome.status,
                    outcome.log.display()
                ),
            ));
        }
        let products = untracked(&workspace.root).map_err(Stop::infra)?;
        exclude(&workspace.root, products).map_err(Stop::infra)?;
    }
    let verdict = timed(&mut timings.baseline_tests, || {
        test_verdict(
            &workspace.root,
            &workspace.env,
            &commands.test,
            timeout,
            dir,
            "baseline-tests",
        )
    })
    .map_err(Stop::infra)?;
    if !verdict.pass {
        return Err(Stop::Failed(
            RunStatus::InfraError,
            format!(
                "the project's tests fail before the agent started (twice); see {}",
                dir.join("baseline-tests.2.log").display()
            ),
        ));
    }
    Ok(workspace)
}

fn run_command(
    workspace: &Workspace,
    line: &str,
    timeout: Duration,
    log: &Path,
) -> anyhow::Result<exec::Outcome> {
    exec::run(&CommandLine {
        line,
        dir: &workspace.root,
        env: &workspace.env,
        timeout,
        log,
    })
}

/// A test command under the retry rule, in `root`; logs `<dir>/<name>.1.log`
/// (and `.2.log`).
fn test_verdict(
    root: &Path,
    env: &[(String, String)],
    line: &str,
    timeout: Duration,
    dir: &Path,
    name: &str,
) -> anyhow::Result<grade::Verdict> {
    grade::confirm(|attempt| {
        let log = dir.join(format!("{name}.{attempt}.log"));
        let outcome = exec::run(&CommandLine {
            line,
            dir: root,
            env,
            timeout,
            log: &log,
        })?;
        match outcome.status {
            exec::Status::CouldNotStart(why) => bail!("cannot run `{line}`: {why}"),
            status => Ok(status.passed()),
        }
    })
}

/// Paths git sees as new (not ignored) in the copy: what set-up created.
fn untracked(root: &Path) -> anyhow::Result<Vec<String>> {
    let repo = git2::Repository::open(root)
        .with_context(|| format!("cannot open the repository at {}", root.display()))?;
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false);
    let statuses = repo
        .statuses(Some(&mut options))
        .with_context(|| format!("cannot read the status of {}", root.display()))?;
    Ok(statuses
        .iter()
        .filter(|entry| entry.status().contains(git2::Status::WT_NEW))
        .filter_map(|entry| entry.path().ok().map(|p| format!("/{p}")))
        .collect())
}

/// Adds patterns to the copy's `.git/info/exclude`.
fn exclude(root: &Path, patterns: impl IntoIterator<Item = String>) -> anyhow::Result<()> {
    use std::io::Write;
    let path = root.join(".git/info/exclude");
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    for pattern in patterns {
        writeln!(file, "{pattern}").with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// One agent session's input: a prepared copy and what to grade it with.
pub(crate) struct Attempt<'a> {
    pub root: &'a Path,
    /// The state the agent starts from; its change is measured against it.
    pub baseline: Oid,
    pub env: &'a [(String, String)],
    /// The run folder (empty but for set-up logs).
    pub dir: &'a Path,
    pub prompt: String,
    pub timeout: Duration,
    /// The reference patch (the oracle plays it).
    pub reference: &'a Path,
    pub commands: &'a Commands,
    pub hidden: &'a Path,
    /// The task's (or sequence's) folder: the agent must not reach it.
    pub task_dir: &'a Path,
    pub size: Size<'a>,
    pub probes: Option<(&'a [crate::loc::Probe], &'a crate::loc::FileSet)>,
    pub condition: &'a Condition,
    /// The project's tests passed before this session.
    pub passed_before: bool,
}

/// Runs the agent on the copy, grades and measures the result, writes
/// `record.json` and appends the record. `None` when Ctrl-C stopped it (no record).
pub(crate) fn attempt(
    batch: &Batch,
    input: &Attempt<'_>,
    key: &RecordKey,
    started: Started,
    mut timings: Timings,
) -> anyhow::Result<Option<RunRecord>> {
    let ledger = input.dir.join("hooks.jsonl");
    std::fs::write(&ledger, "")
        .with_context(|| format!("cannot create the hook ledger {}", ledger.display()))?;
    let agent_start = Instant::now();
    let played = batch.play(input, &ledger);
    timings.agent = agent_start.elapsed().as_secs_f64();
    let result = match played {
        None => return Ok(None),
        Some(result) => result,
    };
    let mut record = batch.blank_record(key, started);
    record.duration_s = timings.agent;
    let graded = grade_run(batch, input, &ledger, &result, &mut record, &mut timings);
    match (result, graded) {
        (_, Err(Stop::Interrupted)) => return Ok(None),
        (_, Err(Stop::Failed(status, error))) => {
            record.status = status;
            record.error = Some(error);
        }
        (Ok(turn), Ok(())) => {
            record.tokens = Some(tokens(&turn));
            record.cost_usd = Some(turn.total_cost_usd);
            record.turns = Some(u32::try_from(turn.num_turns).unwrap_or(u32::MAX));
        }
        (Err(err), Ok(())) => {
            record.status = status_of(&err);
            record.error = Some(one_line(&format!("{err:#}")));
            if let AgentError::ApiError { result } = &err {
                record.tokens = Some(tokens(result));
                record.cost_usd = Some(result.total_cost_usd);
                record.turns = Some(u32::try_from(result.num_turns).unwrap_or(u32::MAX));
            }
        }
    }
    batch.save(&record, input.dir, &mut timings)?;
    Ok(Some(record))
}

fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn tokens(turn: &TurnResult) -> Tokens {
    Tokens {
        input: turn.usage.input,
        output: turn.usage.output,
        cache_read: turn.usage.cache_read,
        cache_creation: turn.usage.cache_creation,
    }
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

/// The diff, integrity evidence and hook counts of every run that got past the
/// agent; tests and measures only when the agent finished its turn.
fn grade_run(
    batch: &Batch,
    input: &Attempt<'_>,
    ledger: &Path,
    result: &Result<TurnResult, AgentError>,
    record: &mut RunRecord,
    timings: &mut Timings,
) -> Result<(), Stop> {
    let changes = timed(&mut timings.diff, || {
        let changes = grade::collect_changes(input.root, input.baseline)?;
        let path = input.dir.join("diff.patch");
        std::fs::write(&path, &changes.patch)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(changes)
    })
    .map_err(Stop::infra)?;
    record.integrity = integrity_of(input, &changes).map_err(Stop::infra)?;
    record.hooks = if input.condition.engine {
        sens_engine::replay::save_material(input.root, input.dir).map_err(Stop::infra)?;
        measure::hook_counts(ledger).map_err(Stop::infra)?
    } else {
        HookCounts::default()
    };
    if result.is_err() {
        return Ok(());
    }
    let inputs = Inputs {
        root: input.root,
        baseline: input.baseline,
        size: input.size,
        probes: input.probes,
        jscpd: batch.jscpd.as_deref(),
    };
    let mut jscpd = 0.0;
    let measures = timed(&mut timings.measure, || {
        measure::measure(&inputs, &changes, &mut jscpd)
    })
    .map_err(Stop::infra)?;
    timings.measure -= jscpd;
    timings.jscpd = jscpd;
    record.loc_added = Some(measures.loc_added);
    record.loc_removed = Some(measures.loc_removed);
    record.loc_total = Some(measures.loc_total);
    record.functions_added = Some(measures.functions_added);
    record.function_lines_median = measures.function_lines_median;
    record.dup_lines_engine = Some(measures.dup_lines_engine);
    record.dup_lines_jscpd = measures.dup_lines_jscpd;
    record.probes = measures.probes;
    let (project, hidden) = timed(&mut timings.tests, || run_tests(input)).map_err(Stop::infra)?;
    record.project_pass = Some(project.pass);
    record.hidden_pass = Some(hidden.pass);
    record.flaky = Some(project.flaky || hidden.flaky);
    record.regression = Some(input.passed_before && !project.pass);
    Ok(())
}

/// Copies the hidden files in, runs the project's and the hidden tests, and puts
/// the agent's files back as they were (a sequence continues on them).
fn run_tests(input: &Attempt<'_>) -> anyhow::Result<(grade::Verdict, grade::Verdict)> {
    let saved = save_overwritten(input.hidden, input.root)?;
    copy_hidden(input.hidden, input.root)?;
    let run = |line: &str, name: &str| {
        test_verdict(input.root, input.env, line, input.timeout, input.dir, name)
    };
    let project = run(&input.commands.test, "project-tests");
    let hidden = project
        .as_ref()
        .ok()
        .map(|_| run(&input.commands.hidden, "hidden-tests"));
    restore(input.root, saved)?;
    Ok((
        project?,
        hidden.context("the project tests could not run")??,
    ))
}

/// The hidden folder's files as project-relative paths, with the agent's own
/// content where the copy would overwrite one (`None`: the file is new).
fn save_overwritten(hidden: &Path, root: &Path) -> anyhow::Result<Vec<(PathBuf, Option<Vec<u8>>)>> {
    let mut saved = Vec::new();
    for relative in hidden_files(hidden)? {
        let target = root.join(&relative);
        let before = match std::fs::read(&target) {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", target.display()));
            }
        };
        saved.push((relative, before));
    }
    Ok(saved)
}

/// The files of a hidden folder, relative to it (as they land in the project).
fn hidden_files(hidden: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(hidden).hidden(false).build() {
        let entry = entry.with_context(|| format!("cannot list {}", hidden.display()))?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(hidden).with_context(|| {
            format!("{} is outside {}", entry.path().display(), hidden.display())
        })?;
        files.push(relative.to_path_buf());
    }
    Ok(files)
}

fn restore(root: &Path, saved: Vec<(PathBuf, Option<Vec<u8>>)>) -> anyhow::Result<()> {
    for (relative, before) in saved {
        let target = root.join(&relative);
        match before {
            Some(bytes) => std::fs::write(&target, bytes),
            None => std::fs::remove_file(&target),
        }
        .with_context(|| format!("cannot restore {}", target.display()))?;
        // Folders the hidden files brought in go too, once empty.
        let mut parent = relative.parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            if std::fs::remove_dir(root.join(dir)).is_err() {
                break;
            }
            parent = dir.parent();
        }
    }
    Ok(())
}

/// Integrity flags, with the evidence written to `integrity.txt` when there is any.
fn integrity_of(input: &Attempt<'_>, changes: &ChangeSet) -> anyhow::Result<Integrity> {
    let mut task_paths = vec![input.task_dir.to_string_lossy().into_owned()];
    if let Ok(canonical) = input.task_dir.canonicalize() {
        task_paths.push(canonical.to_string_lossy().into_owned());
    }
    let hidden: Vec<String> = hidden_files(input.hidden)?
        .into_iter()
        .map(|relative| relative.to_string_lossy().replace('\\', "/"))
        .collect();
    let needles = integrity::task_needles(&task_paths, &hidden);
    let transcript_path = input.dir.join("transcript.jsonl");
    let transcript: Vec<serde_json::Value> = match std::fs::read_to_string(&transcript_path) {
        // Lines that are not JSON hold no tool calls.
        Ok(text) => text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read {}", transcript_path.display()));
        }
    };
    let touched = integrity::touched_task_files(&transcript, &needles);
    let edited = integrity::edited_tests(&changes.changes());
    if !touched.is_empty() || !edited.is_empty() {
        let mut text = String::new();
        for line in &touched {
            text.push_str(&format!("touched task files: {line}\n"));
        }
        for path in &edited {
            text.push_str(&format!("edited test: {path}\n"));
        }
        let path = input.dir.join("integrity.txt");
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Integrity {
        touched_task_files: !touched.is_empty(),
        edited_tests: !edited.is_empty(),
    })
}

/// A batch folder being worked on, and what every run of it shares.
pub(crate) struct Batch {
    pub name: String,
    pub out: PathBuf,
    pub agent: AgentKind,
    pub agent_info: AgentInfo,
    pub claude_bin: PathBuf,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub conditions: Vec<(String, Condition)>,
    pub log: RunLog,
    pub engine_rev: String,
    pub jscpd: Option<PathBuf>,
    pub cache: Cache,
    pub jobs: usize,
    pub show_timings: bool,
    runtime: tokio::runtime::Runtime,
    pub progress: Progress,
    timings: Mutex<Vec<Timings>>,
}

impl Batch {
    /// Checks the set-up against the batch's manifest (or writes it), opens the
    /// run log, and prepares the workers' shared state.
    pub(crate) fn open(args: &BatchArgs, units: BTreeMap<String, String>) -> anyhow::Result<Batch> {
        if args.reps == 0 || args.jobs == 0 {
            bail!("--reps and --jobs must be at least 1");
        }
        let conditions = Conditions::load(&args.conditions)?.select(&args.condition)?;
        let agent = match &args.agent {
            Some(agent) => agent.clone(),
            None if std::env::var_os("ANTHROPIC_API_KEY").is_some() => AgentKind::Claude,
            None => AgentKind::Oracle,
        };
        if agent == AgentKind::Claude && std::env::var_os("ANTHROPIC_API_KEY").is_none() {
            bail!("--agent claude needs ANTHROPIC_API_KEY; without it use --agent oracle");
        }
        if let AgentKind::Script(file) = &agent {
            Script::load(file)?;
        }
        let claude_bin = match &args.claude_bin {
            Some(path) => path.clone(),
            None => pinned_claude_bin(&repository_root())?,
        };
        let agent_info = AgentInfo {
            name: agent.to_string(),
            version: cli_version(&claude_bin)?,
            model: args.model.clone().unwrap_or_else(|| "default".into()),
            effort: args.effort.clone().unwrap_or_else(|| "default".into()),
        };
        let engine_rev = engine_rev();
        let mut condition_digests = BTreeMap::new();
        for (name, condition) in &conditions {
            condition_digests.insert(name.clone(), digest_value(condition)?);
        }
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create the batch folder {}", args.out.display()))?;
        let wanted = Manifest {
            sens_bench_version: env!("CARGO_PKG_VERSION").to_string(),
            engine_rev: engine_rev.clone(),
            seed: args.seed,
            agent: agent_info.clone(),
            conditions: condition_digests,
            rules: crate::gate::rule_digests(&conditions),
            units,
        };
        let manifest_path = args.out.join("manifest.toml");
        let manifest = match Manifest::load(&manifest_path)? {
            Some(existing) => existing.merge(&wanted)?,
            None => wanted,
        };
        manifest.save(&manifest_path)?;
        let log = RunLog::open(&args.out.join("runs.jsonl"))?;
        if log.repaired_bytes > 0 {
            eprintln!(
                "runs.jsonl: cut a torn last line ({} bytes) left by an interrupted write",
                log.repaired_bytes
            );
        }
        exec::install_interrupt_guard()?;
        let name = args
            .out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .with_context(|| format!("--out {} names no folder", args.out.display()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        Ok(Batch {
            name,
            out: args.out.clone(),
            agent,
            agent_info,
            claude_bin,
            model: args.model.clone(),
            effort: args.effort.clone(),
            conditions,
            log,
            engine_rev,
            jscpd: crate::jscpd::find(),
            cache: Cache::from_env()?,
            jobs: args.jobs,
            show_timings: args.timings,
            runtime,
            progress: Progress::new(),
            timings: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn condition_names(&self) -> Vec<String> {
        self.conditions.iter().map(|(n, _)| n.clone()).collect()
    }

    pub(crate) fn condition(&self, name: &str) -> anyhow::Result<&Condition> {
        self.conditions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .with_context(|| format!("condition {name} is not selected"))
    }

    /// `<out>/runs/<parts...>`, emptied: what an interrupted run left is redone.
    pub(crate) fn run_dir(&self, parts: &[&str]) -> anyhow::Result<PathBuf> {
        let dir = parts
            .iter()
            .fold(self.out.join("runs"), |dir, part| dir.join(part));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| {
                format!("cannot clear {} left by an interrupted run", dir.display())
            })?;
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the run folder {}", dir.display()))?;
        Ok(dir)
    }

    pub(crate) fn blank_record(&self, key: &RecordKey, started: Started) -> RunRecord {
        RunRecord {
            batch: self.name.clone(),
            task: key.task.clone(),
            sequence: key.sequence.clone(),
            step: key.step,
            condition: key.condition.clone(),
            rep: key.rep,
            status: RunStatus::Ok,
            hidden_pass: None,
            project_pass: None,
            regression: None,
            flaky: None,
            loc_added: None,
            loc_removed: None,
            loc_total: None,
            functions_added: None,
            function_lines_median: None,
            dup_lines_engine: None,
            dup_lines_jscpd: None,
            probes: BTreeMap::new(),
            tokens: None,
            cost_usd: None,
            turns: None,
            duration_s: 0.0,
            hooks: HookCounts::default(),
            integrity: Integrity::default(),
            agent: self.agent_info.clone(),
            started_at: started.at,
            engine_rev: self.engine_rev.clone(),
            error: None,
        }
    }

    /// Records a run that stopped before the agent ran (set-up failed); nothing
    /// for Ctrl-C.
    pub(crate) fn finish_early(
        &self,
        key: &RecordKey,
        dir: &Path,
        started: Started,
        stop: Stop,
        timings: &Timings,
    ) -> anyhow::Result<()> {
        let Stop::Failed(status, error) = stop else {
            return Ok(());
        };
        let mut record = self.blank_record(key, started);
        record.status = status;
        record.error = Some(error);
        let mut timings = *timings;
        self.save(&record, dir, &mut timings)
    }

    /// Writes `record.json` and `timings.json`, then appends the record.
    pub(crate) fn save(
        &self,
        record: &RunRecord,
        dir: &Path,
        timings: &mut Timings,
    ) -> anyhow::Result<()> {
        let start = Instant::now();
        let path = dir.join("record.json");
        let text = serde_json::to_string_pretty(record).context("cannot serialize a record")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        self.log.append(record)?;
        timings.record = start.elapsed().as_secs_f64();
        let path = dir.join("timings.json");
        let text = serde_json::to_string_pretty(timings).context("cannot serialize timings")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        if let Ok(mut all) = self.timings.lock() {
            all.push(*timings);
        }
        self.progress.record(record);
        Ok(())
    }

    /// Runs the agent on the copy; `None` when Ctrl-C came first (the CLI and
    /// everything it started are ended with the session).
    fn play(&self, input: &Attempt<'_>, ledger: &Path) -> Option<Result<TurnResult, AgentError>> {
        self.runtime.block_on(async {
            let session = self.session(input, ledger);
            tokio::select! {
                outcome = session => Some(outcome),
                () = interrupted() => None,
            }
        })
    }

    async fn session(&self, input: &Attempt<'_>, ledger: &Path) -> Result<TurnResult, AgentError> {
        let script = match &self.agent {
            AgentKind::Claude => None,
            AgentKind::Oracle => {
                let patch = std::fs::read_to_string(input.reference).with_context(|| {
                    format!("cannot read the reference {}", input.reference.display())
                })?;
                Some(oracle_script(input.root, &patch, &input.commands.test)?)
            }
            AgentKind::Script(file) => Some(Script::load(file)?),
        };
        let server = match script {
            Some(script) => Some(ModelServer::start(script, input.root).await?),
            None => None,
        };
        let home = tempfile::Builder::new()
            .prefix("sens-bench-home-")
            .tempdir()
            .context("cannot create a private HOME for the CLI")?;
        let options = ClaudeOptions {
            binary: self.claude_bin.clone(),
            workdir: input.root.to_path_buf(),
            home: home.path().to_path_buf(),
            model: self.model.clone(),
            effort: self.effort.clone(),
            timeout: input.timeout,
            api: server.as_ref().map(|server| ApiEndpoint {
                base_url: server.base_url(),
                api_key: "scripted".into(),
            }),
            append_system_prompt: input
                .condition
                .canon
                .then(|| sens_engine::CANON.to_string()),
            env: input.env.to_vec(),
            transcript: input.dir.join("transcript.jsonl"),
        };
        let handler: Option<Box<dyn HookHandler>> = if input.condition.engine {
            let session = crate::agent::engine::engine_handler(
                input.root,
                ledger,
                input.condition.rule_config.clone(),
            )?;
            Some(Box::new(session))
        } else {
            None
        };
        crate::agent::claude::run_once(&options, handler, &input.prompt).await
    }

    /// Runs `todo` on `jobs` workers, each taking the next planned run; stops
    /// taking runs at Ctrl-C or at the first harness failure, and reports.
    pub(crate) fn work(
        &self,
        todo: Vec<PlannedRun>,
        job: impl Fn(&PlannedRun) -> anyhow::Result<()> + Sync,
    ) -> anyhow::Result<ExitCode> {
        let queue = Mutex::new(VecDeque::from(todo));
        let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
        let next = || -> Option<PlannedRun> {
            if exec::interrupted() || failure.lock().map_or(true, |f| f.is_some()) {
                return None;
            }
            queue.lock().ok()?.pop_front()
        };
        std::thread::scope(|scope| {
            for _ in 0..self.jobs {
                scope.spawn(|| {
                    while let Some(planned) = next() {
                        if let Err(err) = job(&planned)
                            && let Ok(mut slot) = failure.lock()
                        {
                            slot.get_or_insert(err.context(format!(
                                "run {} {} rep {}",
                                planned.unit, planned.condition, planned.rep
                            )));
                        }
                    }
                });
            }
        });
        self.progress.finish();
        if self.show_timings {
            self.print_timings();
        }
        let left = queue.lock().map(|q| q.len()).unwrap_or(0);
        if exec::interrupted() {
            eprintln!(
                "interrupted: {} records in {}; {left} planned runs not started. \
                 Rerun the same command to resume (recorded runs are skipped).",
                self.log.len(),
                self.out.join("runs.jsonl").display()
            );
            return Ok(ExitCode::from(130));
        }
        if let Some(err) = failure.into_inner().ok().flatten() {
            return Err(err.context(format!(
                "the batch stopped; {} records are kept in {}; fix the cause and rerun the same command to resume",
                self.log.len(),
                self.out.display()
            )));
        }
        println!("{}", self.progress.summary(&self.out));
        Ok(ExitCode::SUCCESS)
    }

    fn print_timings(&self) {
        let all = self.timings.lock().map(|t| t.clone()).unwrap_or_default();
        if all.is_empty() {
            return;
        }
        let n = all.len() as f64;
        let mean = |f: fn(&Timings) -> f64| all.iter().map(f).sum::<f64>() / n;
        println!(
            "harness overhead per run (mean of {}): {:.3} s = materialize {:.3} + diff {:.3} + measure {:.3} + record {:.3}; \
             not counted: jscpd {:.3}, setup {:.3}, baseline tests {:.3}, agent {:.3}, tests {:.3}",
            all.len(),
            mean(Timings::overhead),
            mean(|t| t.materialize),
            mean(|t| t.diff),
            mean(|t| t.measure),
            mean(|t| t.record),
            mean(|t| t.jscpd),
            mean(|t| t.setup),
            mean(|t| t.baseline_tests),
            mean(|t| t.agent),
            mean(|t| t.tests),
        );
    }
}

/// Resolves once Ctrl-C (or SIGTERM) has been received.
async fn interrupted() {
    while !exec::interrupted() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// This repository's root (where `.tools` and `bench` live).
pub(crate) fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The CLI's version, from `--version` (`2.1.197 (Claude Code)`).
fn cli_version(binary: &Path) -> anyhow::Result<String> {
    let output = std::process::Command::new(binary)
        .arg("--version")
        .output()
        .with_context(|| {
            format!(
                "the Claude Code CLI cannot run at {}: run scripts/setup.sh or pass --claude-bin",
                binary.display()
            )
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    match text.split_whitespace().next() {
        Some(version) if output.status.success() => Ok(version.to_string()),
        _ => bail!(
            "{} --version failed ({}): {}",
            binary.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ),
    }
}

/// The commit of this repository the engine runs from, `-dirty` when the work
/// tree has changes; `unknown` outside a git checkout (an installed binary).
fn engine_rev() -> String {
    let Ok(repo) = git2::Repository::discover(repository_root()) else {
        return "unknown".into();
    };
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        return "unknown".into();
    };
    let mut options = git2::StatusOptions::new();
    options.include_untracked(false);
    let dirty = repo
        .statuses(Some(&mut options))
        .map(|s| !s.is_empty())
        .unwrap_or(true);
    format!("{}{}", head.id(), if dirty { "-dirty" } else { "" })
}

/// Running tallies shown on the progress bar.
#[derive(Debug, Default)]
struct Tallies {
    ok: u64,
    failed: u64,
    hidden_pass: u64,
}

/// The progress bar on stderr; hidden when stderr is not a terminal.
pub(crate) struct Progress {
    bar: ProgressBar,
    tallies: Mutex<Tallies>,
}

impl Progress {
    fn new() -> Progress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta}  {msg}")
        {
            bar.set_style(style);
        }
        Progress {
            bar,
            tallies: Mutex::new(Tallies::default()),
        }
    }

    /// `total` runs (or steps) planned, `done` of them already recorded.
    pub(crate) fn start(&self, total: u64, done: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        self.bar.reset_eta();
    }

    fn record(&self, record: &RunRecord) {
        if let Ok(mut tallies) = self.tallies.lock() {
            if record.status == RunStatus::Ok {
                tallies.ok += 1;
            } else {
                tallies.failed += 1;
            }
            tallies.hidden_pass += u64::from(record.hidden_pass == Some(true));
            self.bar.set_message(format!(
                "ok {} / failed {} / hidden pass {}",
                tallies.ok, tallies.failed, tallies.hidden_pass
            ));
        }
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn summary(&self, out: &Path) -> String {
        let tallies = self.tallies.lock().map(|t| (t.ok, t.failed, t.hidden_pass));
        let (ok, failed, hidden) = tallies.unwrap_or_default();
        format!(
            "{} runs recorded in {} this time: {ok} ok ({hidden} with hidden tests passing), {failed} failed",
            ok + failed,
            out.join("runs.jsonl").display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn hidden_files_go_in_for_grading_and_the_agents_files_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let (root, hidden) = (dir.path().join("project"), dir.path().join("hidden"));
        write(&root, "tests/test_a.py", "agent's version\n");
        write(&hidden, "tests/test_a.py", "hidden version\n");
        write(&hidden, "hidden_tests/deep/test_x.py", "hidden test\n");

        let saved = save_overwritten(&hidden, &root).unwrap();
        copy_hidden(&hidden, &root).unwrap();
        let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();
        assert_eq!(read("tests/test_a.py"), "hidden version\n");
        assert_eq!(read("hidden_tests/deep/test_x.py"), "hidden test\n");
        restore(&root, saved).unwrap();
        assert_eq!(read("tests/test_a.py"), "agent's version\n");
        assert!(
            !root.join("hidden_tests").exists(),
            "folders it brought go too"
        );
    }

    #[test]
    fn what_setup_creates_is_excluded_from_the_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.py", "x = 1\n");
        let repo = git2::Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let who = git2::Signature::now("t", "t@localhost").unwrap();
        let base = repo
            .commit(Some("HEAD"), &who, &who, "b", &tree, &[])
            .unwrap();
        exclude(root, TEST_LEFTOVERS.iter().map(|s| s.to_string())).unwrap();
        write(root, ".venv/lib/site.py", "installed\n");
        write(root, "pkg.egg-info/PKG-INFO", "x\n");
        write(root, "__pycache__/a.cpython.pyc", "bytes\n");
        let products = untracked(root).unwrap();
        assert_eq!(products, ["/.venv/", "/pkg.egg-info/"]);
        exclude(root, products).unwrap();
        write(root, "b.py", "y = 2\n");
        let changes = grade::collect_changes(root, base).unwrap();
        let paths: Vec<String> = changes.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(paths, ["b.py"]);
    }
}
