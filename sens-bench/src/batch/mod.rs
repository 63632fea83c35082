//! The batch (docs/contract.md, "Runs"): every unit (task or sequence) x condition x
//! repetition, with `--jobs` workers, resumable, and failures kept in their
//! classes. `run` and `sequence run` are two thin commands over it.
//!
//! - [`plan`]: the order of the runs and the split into shards (the `merge` command
//!   joins them); [`manifest`] and [`runlog`]: the batch
//!   folder's `manifest.toml` and `runs.jsonl`; [`pool`]: the workers;
//!   [`progress`]: the progress bar.
//! - [`attempt`]: one attempt on a copy, prepare -> play -> grade -> save
//!   (`prepare.rs`, `play.rs`, `grade.rs`; saving is [`BatchFolder`]'s).
//!
//! Decisions where the contract (docs/contract.md) is silent:
//! - After set-up, the project's own tests run once more (twice when they fail)
//!   before the agent starts: a copy whose tests fail before the agent touched it
//!   is an `infra_error`, never a result, and `regression` then means tests that
//!   passed at the start of this very run fail twice after it.
//! - What set-up creates (virtual environments, `node_modules`, egg-info) and the caches
//!   test runs leave (`__pycache__`, `.pytest_cache`) are the harness's exclusions
//!   (`Workspace::excluded`): not part of the agent's change. They are also listed in the
//!   copy's `.git/info/exclude` so they do not show in `git status`; that file itself
//!   hides nothing (docs/integrity.md, "Ignore rules that count").
//! - `duration_s` is the agent's wall-clock time (CLI start to exit): what a
//!   condition costs in time. Set-up and grading times are in `timings.json`.
//! - `tokens` are the main loop's `usage`; `cost_usd` is `total_cost_usd`, which
//!   includes subagents. The transcript keeps the CLI's `modelUsage` as well.
//! - Test commands get the task's `timeout_s` each.
//! - The default agent is `oracle` unless ANTHROPIC_API_KEY is set
//!   (docs/contract.md, "Agents").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::agent::AgentKind;
use crate::agent::budget::RunLimits;
use crate::agent::claude::pinned_claude_bin;
use crate::agent::script::Script;
use crate::exec;
use crate::measure::jscpd;
use crate::record::{AgentInfo, HookCounts, Integrity, RunKey, RunRecord, RunStatus};
use crate::spec::conditions::{Condition, Conditions};
use crate::sync::lock;
use crate::workspace::cache::Cache;
use leftovers::Leftovers;
use lock::BatchLock;
use manifest::{Budgets, Inputs, Manifest, ShardPart, digest_value, file_input};
use plan::{DEFAULT_SEED, PlannedRun, Shard, ShardBlocks};
use progress::Progress;
use runlog::RunLog;
use stage::{Started, Timings};

mod attempt;
pub mod dry_run;
mod grade;
pub mod labels;
pub mod leftovers;
pub mod lock;
pub mod manifest;
pub mod plan;
mod play;
pub mod pool;
mod prepare;
pub mod progress;
pub mod runlog;
pub mod stage;

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
    /// Run only part K of N of the plan (1-based, e.g. 2/4): whole (unit, rep)
    /// blocks, the same split on every machine; join the parts with `merge`.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Balance shards by these unit weights: a TOML file of `id = weight`.
    #[arg(long, requires = "shard")]
    pub weights: Option<PathBuf>,
    /// Print the harness's own time per run (everything but the agent and tests).
    #[arg(long)]
    pub timings: bool,
    /// Run the agent and the task's commands without their bubblewrap sandbox
    /// (recorded in the manifest).
    #[arg(long)]
    pub no_sandbox: bool,
    /// Run again the recorded runs of these failure classes (comma-separated:
    /// infra_error, timeout, agent_error, budget); their records stay, superseded.
    #[arg(long, value_delimiter = ',', value_parser = parse_retry_class)]
    pub retry: Vec<RunStatus>,
    /// End a run (or step) whose tokens, subagents included, pass N; it is
    /// classed `budget`.
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// End a run (or step) whose cost passes this many dollars; it is classed
    /// `budget`.
    #[arg(long, value_parser = parse_dollars)]
    pub max_cost_usd: Option<f64>,
    /// Start no new run once the batch's records (all attempts) cost this many
    /// dollars; a rerun with a higher limit continues.
    #[arg(long, value_parser = parse_dollars)]
    pub batch_max_cost_usd: Option<f64>,
}

/// A dollar amount: a finite number, not negative.
fn parse_dollars(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(dollars) if dollars.is_finite() && dollars >= 0.0 => Ok(dollars),
        _ => Err(format!("`{text}` is not an amount of dollars (e.g. 2.50)")),
    }
}

/// A failure class `--retry` accepts.
fn parse_retry_class(text: &str) -> Result<RunStatus, String> {
    match serde_json::from_value(serde_json::Value::String(text.to_string())) {
        Ok(RunStatus::Ok) | Err(_) => Err(format!(
            "`{text}` is not a failure class: expected infra_error, timeout, agent_error or budget"
        )),
        Ok(status) => Ok(status),
    }
}

/// A batch folder being worked on (manifest, run log, run folders), and what
/// every run of it shares (agent, CLI, conditions, workers).
pub struct BatchFolder {
    name: String,
    out: PathBuf,
    agent: AgentKind,
    agent_info: AgentInfo,
    claude_bin: PathBuf,
    model: Option<String>,
    effort: Option<String>,
    conditions: Vec<(String, Condition)>,
    reps: u32,
    seed: u64,
    shard: Option<ShardPart>,
    log: RunLog,
    engine_rev: String,
    jscpd: Option<PathBuf>,
    /// Where copies get their downloads and build folders.
    pub cache: Cache,
    jobs: usize,
    show_timings: bool,
    /// The agent and the task's commands run under bubblewrap (see
    /// [`crate::sandbox`]).
    sandbox: bool,
    runtime: tokio::runtime::Runtime,
    progress: Progress,
    timings: Mutex<Vec<Timings>>,
    retry: Vec<RunStatus>,
    budgets: Budgets,
    /// Said once: the batch's cost limit stopped it.
    over_budget: std::sync::Once,
    /// The temporary folders runs make, for the next command to remove if left.
    pub(super) leftovers: Leftovers,
    /// Held for the life of the folder: one writer per batch.
    _lock: BatchLock,
}

impl BatchFolder {
    /// Checks the set-up against the batch's manifest (or writes it), opens the
    /// run log, and prepares the workers' shared state. `inputs` are the units'
    /// files (see [`Manifest::inputs`]); the script and rules files are added here.
    pub fn open(
        args: &BatchArgs,
        units: BTreeMap<String, String>,
        mut inputs: Inputs,
    ) -> anyhow::Result<BatchFolder> {
        if args.reps == 0 || args.jobs == 0 {
            bail!("--reps and --jobs must be at least 1");
        }
        let conditions = Conditions::load(&args.conditions)?.select(&args.condition)?;
        plan::size(units.len(), conditions.len(), args.reps)?;
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
            inputs.insert("script".into(), file_input(file)?);
        }
        for (name, condition) in &conditions {
            if let Some(rules) = &condition.rules_path {
                inputs.insert(format!("rules of condition {name}"), file_input(rules)?);
            }
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
            no_sandbox: args.no_sandbox,
        };
        if !args.no_sandbox {
            crate::sandbox::check_available()?;
        }
        let engine_rev = engine_rev();
        let budgets = Budgets {
            run: RunLimits {
                max_tokens: args.max_tokens,
                max_cost_usd: args.max_cost_usd,
            },
            batch_max_cost_usd: args.batch_max_cost_usd,
        };
        let mut condition_digests = BTreeMap::new();
        for (name, condition) in &conditions {
            condition_digests.insert(name.clone(), digest_value(condition)?);
        }
        let shard = match args.shard {
            Some(Shard { index, count }) => {
                let ids: Vec<String> = units.keys().cloned().collect();
                let weights = match &args.weights {
                    Some(path) => plan::load_weights(path, &ids)?,
                    None => BTreeMap::new(),
                };
                Some(ShardPart {
                    index,
                    count,
                    weights,
                })
            }
            None => None,
        };
        std::fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create the batch folder {}", args.out.display()))?;
        let lock = BatchLock::acquire(&args.out)?;
        let (leftovers, removed) = Leftovers::clean(&args.out)?;
        if removed > 0 {
            eprintln!("removed {removed} temporary folders left by killed runs of this batch");
        }
        let wanted = Manifest {
            format: crate::record::format::FORMAT,
            sens_bench_version: env!("CARGO_PKG_VERSION").to_string(),
            engine_rev: engine_rev.clone(),
            seed: args.seed,
            agent: agent_info.clone(),
            conditions: condition_digests,
            rules: crate::spec::conditions::rule_digests(&conditions),
            units,
            inputs,
            shard: shard.clone(),
            budgets: budgets.clone(),
            partial: None,
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
        // A CLI that dies before it reads its stdin must be a write error, recorded
        // as its crash, not a SIGPIPE that ends the whole batch without a word
        // (`main` restores the default for `| head`).
        // SAFETY: setting a signal's disposition to ignored is safe at any time.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let name = args
            .out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .with_context(|| format!("--out {} names no folder", args.out.display()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        Ok(BatchFolder {
            name,
            out: args.out.clone(),
            agent,
            agent_info,
            claude_bin,
            model: args.model.clone(),
            effort: args.effort.clone(),
            conditions,
            reps: args.reps,
            seed: args.seed,
            shard,
            log,
            engine_rev,
            jscpd: jscpd::find(),
            cache: Cache::from_env()?,
            jobs: args.jobs,
            show_timings: args.timings,
            sandbox: !args.no_sandbox,
            runtime,
            progress: Progress::new(),
            timings: Mutex::new(Vec::new()),
            retry: args.retry.clone(),
            budgets,
            over_budget: std::sync::Once::new(),
            leftovers,
            _lock: lock,
        })
    }

    pub fn condition_names(&self) -> Vec<String> {
        self.conditions.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The runs of `units` this folder does: the whole plan, or its shard's part,
    /// where a unit weighs `default_weight` unless `--weights` says otherwise.
    pub fn plan(
        &self,
        units: &[String],
        default_weight: impl Fn(&str) -> u64,
    ) -> anyhow::Result<Vec<PlannedRun>> {
        let conditions = self.condition_names();
        let runs = plan::plan(units, &conditions, self.reps, self.seed)?;
        let Some(part) = &self.shard else {
            return Ok(runs.collect());
        };
        let shard = Shard {
            index: part.index,
            count: part.count,
        };
        let blocks = plan::select_shard(runs.clone(), shard, |unit| {
            part.weights
                .get(unit)
                .copied()
                .unwrap_or_else(|| default_weight(unit))
        })?;
        Ok(runs.filter(|run| blocks.contains(run)).collect())
    }

    pub(super) fn condition(&self, name: &str) -> anyhow::Result<&Condition> {
        self.conditions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .with_context(|| format!("condition {name} is not selected"))
    }

    /// True when `key` is to run: it has no record, or its latest attempt failed
    /// in a class `--retry` names.
    pub fn needs_run(&self, key: &RunKey) -> bool {
        needs_run(self.log.latest(key).map(|l| l.status), &self.retry)
    }

    /// `<out>/runs/<parts...>`: the folder of one run (or step), checked after
    /// joining to be inside the batch.
    pub fn run_path(&self, parts: &[String]) -> anyhow::Result<PathBuf> {
        join_inside(&self.out.join("runs"), parts)
    }

    /// [`Self::run_path`] for a new attempt at `key`, empty: a recorded attempt's
    /// folder is moved to `superseded/<parts...>/attempt-<n>/` (nothing is lost);
    /// what an interrupted attempt left is cleared.
    pub fn run_dir(&self, parts: &[String], key: &RunKey) -> anyhow::Result<PathBuf> {
        let dir = self.run_path(parts)?;
        let kept = match self.log.latest(key) {
            Some(latest) => {
                let mut kept = parts.to_vec();
                kept.push(format!("attempt-{}", latest.attempt));
                Some(join_inside(&self.out.join(SUPERSEDED_DIR), &kept)?)
            }
            None => None,
        };
        match kept {
            Some(kept) if dir.exists() && !kept.exists() => {
                if let Some(parent) = kept.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::rename(&dir, &kept).with_context(|| {
                    format!("cannot move {} to {}", dir.display(), kept.display())
                })?;
            }
            _ if dir.exists() => std::fs::remove_dir_all(&dir).with_context(|| {
                format!("cannot clear {} left by an interrupted run", dir.display())
            })?,
            _ => {}
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the run folder {}", dir.display()))?;
        Ok(dir)
    }

    fn blank_record(&self, key: &RunKey, started: Started) -> RunRecord {
        RunRecord {
            format: crate::record::format::FORMAT,
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
            outcomes: Default::default(),
            note_outcomes: Default::default(),
            tool_calls: BTreeMap::new(),
            integrity: Integrity::default(),
            agent: self.agent_info.clone(),
            started_at: started.at,
            engine_rev: self.engine_rev.clone(),
            error: None,
            attempt: self.log.latest(key).map_or(1, |latest| latest.attempt + 1),
        }
    }

    /// Writes `record.json` and `timings.json`, then appends the record.
    fn save(&self, record: &RunRecord, dir: &Path, timings: &mut Timings) -> anyhow::Result<()> {
        let start = Instant::now();
        let path = dir.join("record.json");
        let text = serde_json::to_string_pretty(record).context("cannot serialize a record")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        self.log.append(record)?;
        timings.record = start.elapsed().as_secs_f64();
        let path = dir.join("timings.json");
        let text = serde_json::to_string_pretty(timings).context("cannot serialize timings")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        lock(&self.timings).push(*timings);
        self.progress.record(record);
        Ok(())
    }

    /// Runs `todo` on `jobs` workers, each taking the next planned run; stops
    /// taking runs at Ctrl-C or at the first harness failure, and reports.
    /// `total` units of progress are planned (runs, or sequence steps), `done`
    /// of them already recorded.
    pub fn work(
        &self,
        todo: &[PlannedRun],
        (total, done): (u64, u64),
        job: impl Fn(&PlannedRun) -> anyhow::Result<()> + Sync,
    ) -> anyhow::Result<ExitCode> {
        self.progress.start(total, done);
        let pooled = pool::run(
            self.jobs,
            todo,
            |planned| {
                if !self.may_start() {
                    return Ok(());
                }
                job(planned).with_context(|| {
                    format!(
                        "run {} {} rep {}",
                        planned.unit, planned.condition, planned.rep
                    )
                })
            },
            Result::is_err,
        );
        self.progress.finish();
        if self.show_timings {
            self.print_timings();
        }
        let left = pooled.not_started;
        let failure = pooled.done.into_iter().find_map(|(_, result)| result.err());
        if exec::interrupted() {
            eprintln!(
                "interrupted: {} records in {}; {left} planned runs not started. \
                 Rerun the same command to resume (recorded runs are skipped).",
                self.log.len(),
                self.out.join("runs.jsonl").display()
            );
            return Ok(ExitCode::from(130));
        }
        if let Some(err) = failure {
            return Err(err.context(format!(
                "the batch stopped; {} records are kept in {}; fix the cause and rerun the same command to resume",
                self.log.len(),
                self.out.display()
            )));
        }
        if self.over_budget.is_completed() {
            println!("{}", self.progress.summary(&self.out));
            return Ok(ExitCode::from(BUDGET_EXIT));
        }
        println!("{}", self.progress.summary(&self.out));
        Ok(ExitCode::SUCCESS)
    }

    /// False once the batch's records cost `--batch-max-cost-usd` or more
    /// (saying so once): no new run or sequence step starts then.
    pub fn may_start(&self) -> bool {
        let Some(limit) = self.budgets.batch_max_cost_usd else {
            return true;
        };
        let spent = self.log.cost_usd();
        if spent < limit {
            return true;
        }
        self.over_budget.call_once(|| {
            eprintln!(
                "the batch's records cost ${spent:.6}, past --batch-max-cost-usd {limit}: \
                 no new run starts. Rerun with a higher limit to continue."
            );
        });
        false
    }

    fn print_timings(&self) {
        let all = lock(&self.timings).clone();
        if all.is_empty() {
            return;
        }
        let n = all.len() as f64;
        let mean = |f: fn(&Timings) -> f64| all.iter().map(f).sum::<f64>() / n;
        println!(
            "harness overhead per run (mean of {}): {:.3} s = materialize {:.3} + diff {:.3} + measure {:.3} + record {:.3}; \
             not counted: jscpd {:.3}, setup {:.3}, baseline tests {:.3}, agent {:.3} (of which the engine's start {:.3}), tests {:.3}",
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
            mean(|t| t.engine_start),
            mean(|t| t.tests),
        );
    }
}

/// Whether a run whose latest record has `status` (none: not recorded) is to run
/// under `--retry retry`.
pub fn needs_run(status: Option<RunStatus>, retry: &[RunStatus]) -> bool {
    status.is_none_or(|status| retry.contains(&status))
}

/// The blocks of `runs` (a plan) a batch would do: its shard's part (weighted
/// by `--weights` or 1 per unit), or none for the whole plan.
pub fn shard_part(
    args: &BatchArgs,
    units: &[String],
    runs: impl Iterator<Item = PlannedRun>,
) -> anyhow::Result<Option<ShardBlocks>> {
    let Some(shard) = args.shard else {
        return Ok(None);
    };
    let weights = match &args.weights {
        Some(path) => plan::load_weights(path, units)?,
        None => BTreeMap::new(),
    };
    let blocks = plan::select_shard(runs, shard, |unit| weights.get(unit).copied().unwrap_or(1));
    let blocks = match &args.weights {
        Some(path) => blocks.with_context(|| path.display().to_string())?,
        None => blocks?,
    };
    Ok(Some(blocks))
}

/// The exit code of a batch that stopped at `--batch-max-cost-usd` with runs
/// (or steps) left to do.
pub const BUDGET_EXIT: u8 = 3;

/// Where the folders of superseded attempts are kept, beside `runs/`.
pub const SUPERSEDED_DIR: &str = "superseded";

/// `base/<parts...>`, refused unless each part is one plain folder name, so the
/// result is inside `base` whatever the parts say (checked after joining).
fn join_inside(base: &Path, parts: &[String]) -> anyhow::Result<PathBuf> {
    let dir = parts
        .iter()
        .fold(base.to_path_buf(), |dir, part| dir.join(part));
    let inside = dir.strip_prefix(base).is_ok_and(|relative| {
        relative.components().count() == parts.len()
            && relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
    });
    if !inside {
        bail!(
            "run folder {} would not be inside the batch's {}: a name in it is a path",
            dir.display(),
            base.display()
        );
    }
    Ok(dir)
}

/// This repository's root (where `.tools` and `bench` live).
fn repository_root() -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_folder_is_inside_its_batch_or_refused() {
        let base = Path::new("/b/runs");
        let parts = |list: &[&str]| list.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            join_inside(base, &parts(&["t", "C0", "1"])).unwrap(),
            Path::new("/b/runs/t/C0/1")
        );
        for bad in [
            &["..", "C0"][..],
            &["t", "../../x"],
            &["/etc"],
            &["t", ""],
            &["a/b"],
        ] {
            let err = join_inside(base, &parts(bad)).unwrap_err().to_string();
            assert!(err.contains("would not be inside"), "{bad:?}: {err}");
        }
    }
}
