//! `sens-bench validate` (docs/contract.md, "Validation"): each task in a start copy and
//! a reference copy, `--repeat` times, `--jobs` tasks at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{CheckOutcome, CheckResult, Expect, Table, logs_folder, open_copy};
use crate::batch::pool;
use crate::exec;
use crate::spec::task::{Task, load_tasks};
use crate::workspace::cache::Cache;
use crate::workspace::git::apply_patch;
use crate::workspace::{Workspace, build_pool};

/// Options of `sens-bench validate`.
#[derive(Debug, Clone)]
pub struct TaskOptions {
    pub tasks: PathBuf,
    pub task: Option<String>,
    /// How many times the whole check runs.
    pub repeat: usize,
    /// Tasks validated at once.
    pub jobs: usize,
    /// Limit for each set-up and test command.
    pub timeout: Duration,
    /// Where command logs go; default: a new folder under the cache.
    pub logs: Option<PathBuf>,
}

/// The three checks of docs/contract.md, "Validation", on one task, once: a start copy
/// (tests pass, hidden tests fail) and a reference copy (tests and hidden tests pass).
fn validate_task_once(
    task: &Task,
    cache: &Cache,
    logs: &Path,
    timeout: Duration,
) -> Result<Vec<CheckResult>> {
    let mut rows = Vec::new();
    let setup = task.commands.setup();
    let materialize = || Workspace::for_task(task, cache);
    if let Some(mut copy) = open_copy(
        "start: ",
        materialize,
        setup,
        logs.join("start"),
        timeout,
        &mut rows,
    )? {
        rows.push(copy.check("start: tests pass", &task.commands.test, Expect::Pass, true)?);
        rows.push(copy.check_hidden(
            "start: hidden tests fail",
            &task.hidden,
            &task.commands.hidden,
            Expect::Fail,
        )?);
    }
    if let Some(mut copy) = open_copy(
        "reference: ",
        materialize,
        setup,
        logs.join("reference"),
        timeout,
        &mut rows,
    )? {
        let started = Instant::now();
        let fair = super::fairness::FairPlay::for_task(&copy.workspace.root, task);
        let applied = apply_patch(&copy.workspace.root, &task.reference);
        let usable = applied.is_ok();
        rows.push(CheckResult::action(
            "reference: patch applies",
            started,
            applied,
        ));
        if usable {
            let fair = fair.and_then(super::fairness::FairPlay::finish);
            rows.push(CheckResult::action(
                "reference: fair under the engine",
                started,
                fair,
            ));
            rows.push(copy.check_hidden(
                "reference: hidden tests pass",
                &task.hidden,
                &task.commands.hidden,
                Expect::Pass,
            )?);
            rows.push(copy.check(
                "reference: tests pass",
                &task.commands.test,
                Expect::Pass,
                true,
            )?);
        }
    }
    Ok(rows)
}

/// The most attempts `--repeat` asks for: a flake rate needs tens, and the
/// attempts are planned before any runs.
pub const MAX_REPEAT: usize = 1000;

/// `sens-bench validate`: exit 0 only if every task is valid.
pub fn validate_tasks(options: &TaskOptions) -> Result<ExitCode> {
    anyhow::ensure!(
        (1..=MAX_REPEAT).contains(&options.repeat),
        "--repeat must be from 1 to {MAX_REPEAT}, not {}",
        options.repeat
    );
    anyhow::ensure!(options.jobs >= 1, "--jobs must be at least 1");
    let tasks = load_tasks(&options.tasks, options.task.as_deref())?;
    exec::install_interrupt_guard()?;
    let cache = Cache::from_env()?;
    let logs = logs_folder(options.logs.as_deref(), &cache, "validate")?;
    let work: Vec<(usize, usize)> = (0..options.repeat)
        .flat_map(|attempt| (0..tasks.len()).map(move |task| (task, attempt)))
        .collect();
    let validate_once = |&(index, attempt): &(usize, usize)| {
        let task = &tasks[index];
        let folder = logs.join(&task.id).join(format!("attempt-{}", attempt + 1));
        let rows = validate_task_once(task, &cache, &folder, options.timeout);
        if let Ok(rows) = &rows {
            let worst = rows
                .iter()
                .map(|row| row.verdict)
                .max()
                .unwrap_or(CheckOutcome::Ok);
            eprintln!("{} (attempt {}): {}", task.id, attempt + 1, worst.word());
        }
        rows
    };
    let pools = tasks.iter().map(build_pool).collect::<Result<Vec<_>>>()?;
    let groups = one_job_per_pool(&work, |task| pools[task].as_deref());
    let validate_group = |group: &Vec<usize>| {
        group
            .iter()
            .map(|&item| (item, validate_once(&work[item])))
            .collect::<Vec<_>>()
    };
    let pooled = pool::run(options.jobs, &groups, validate_group, |_| false);
    let mut per_task: Vec<Vec<Vec<CheckResult>>> = vec![Vec::new(); tasks.len()];
    let mut done: Vec<_> = pooled.done.into_iter().flat_map(|(_, rows)| rows).collect();
    done.sort_by_key(|&(item, _)| item);
    for (item, rows) in done {
        per_task[work[item].0].push(rows?);
    }
    if exec::interrupted() {
        anyhow::bail!("interrupted; logs so far are in {}", logs.display());
    }
    let mut table = Table::new("task", options.repeat > 1);
    let mut invalid = Vec::new();
    for (task, attempts) in tasks.iter().zip(&per_task) {
        let rows = merge_attempts(attempts);
        if rows.iter().any(|row| row.verdict.counts_against()) {
            invalid.push(task.id.as_str());
        }
        for row in &rows {
            table.push(&task.id, row);
        }
    }
    print!("{}", table.render());
    println!("logs: {}", logs.display());
    if invalid.is_empty() {
        println!("{} task(s) valid", tasks.len());
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "{} of {} task(s) invalid: {}",
            invalid.len(),
            tasks.len(),
            invalid.join(", ")
        );
        Ok(ExitCode::from(1))
    }
}

/// The work items (task, attempt) in groups, each run one item after another
/// by one job: the items of tasks whose copies lease from the same build pool
/// together (a Rust task's pinned commit: run at once, each copy would build
/// the dependencies in a folder of its own; one after the other, the next finds
/// the last one's folder idle and built), every other item alone. Groups of a
/// pool come first, the largest first, as they take the longest.
fn one_job_per_pool<'a>(
    work: &[(usize, usize)],
    pool_of: impl Fn(usize) -> Option<&'a str>,
) -> Vec<Vec<usize>> {
    let mut pooled: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut alone = Vec::new();
    for (item, &(task, _)) in work.iter().enumerate() {
        match pool_of(task) {
            Some(pool) => pooled.entry(pool).or_default().push(item),
            None => alone.push(vec![item]),
        }
    }
    let mut groups: Vec<Vec<usize>> = pooled.into_values().collect();
    groups.sort_by_key(|group| std::cmp::Reverse(group.len()));
    groups.extend(alone);
    groups
}

/// One row per check over all attempts: the worst verdict (with its note), the
/// mean time, and every run counted for the flake rate.
fn merge_attempts(attempts: &[Vec<CheckResult>]) -> Vec<CheckResult> {
    let mut order: Vec<String> = Vec::new();
    let mut merged: BTreeMap<String, (CheckResult, usize)> = BTreeMap::new();
    for row in attempts.iter().flatten() {
        match merged.get_mut(&row.name) {
            None => {
                order.push(row.name.clone());
                merged.insert(row.name.clone(), (row.clone(), 1));
            }
            Some((into, count)) => {
                into.seconds += row.seconds;
                into.runs += row.runs;
                into.unexpected += row.unexpected;
                *count += 1;
                if row.verdict > into.verdict {
                    into.verdict = row.verdict;
                    into.note = row.note.clone();
                }
            }
        }
    }
    order
        .iter()
        .filter_map(|name| merged.remove(name))
        .map(|(mut row, count)| {
            row.seconds /= count as f64;
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_of_one_build_pool_share_a_job_and_the_rest_run_alone() {
        // Tasks 0 and 2 on one commit, 3 on another, 1 and 4 on none; two attempts.
        let pools = [Some("a"), None, Some("a"), Some("b"), None];
        let work: Vec<(usize, usize)> = (0..2)
            .flat_map(|attempt| (0..pools.len()).map(move |task| (task, attempt)))
            .collect();
        let groups = one_job_per_pool(&work, |task| pools[task]);
        assert_eq!(
            groups,
            [
                vec![0, 2, 5, 7],
                vec![3, 8],
                vec![1],
                vec![4],
                vec![6],
                vec![9]
            ]
        );
        let mut every: Vec<usize> = groups.concat();
        every.sort_unstable();
        assert_eq!(every, (0..work.len()).collect::<Vec<_>>());
    }

    fn row(name: &str, verdict: CheckOutcome, runs: usize, unexpected: usize) -> CheckResult {
        CheckResult {
            name: name.into(),
            verdict,
            seconds: 1.0,
            runs,
            unexpected,
            note: verdict.word().to_string(),
        }
    }

    #[test]
    fn attempts_merge_to_the_worst_verdict_and_count_every_run() {
        let merged = merge_attempts(&[
            vec![
                row("a", CheckOutcome::Ok, 1, 0),
                row("b", CheckOutcome::Flaky, 2, 1),
            ],
            vec![
                row("a", CheckOutcome::Flaky, 2, 1),
                row("b", CheckOutcome::Failed, 2, 2),
            ],
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].name, "a");
        assert_eq!(
            (merged[0].verdict, merged[0].runs, merged[0].unexpected),
            (CheckOutcome::Flaky, 3, 1)
        );
        assert_eq!(
            (merged[1].verdict, merged[1].note.as_str()),
            (CheckOutcome::Failed, "FAILED")
        );
        assert!((merged[1].seconds - 1.0).abs() < 1e-9);
    }
}
