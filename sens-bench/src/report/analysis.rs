//! From a batch's records to everything a report shows: cells per task and
//! condition, comparisons against the baseline, Fisher tests, hook sums, integrity
//! flags and failed runs. Pure: the records come in, a plain [`Analysis`] goes out,
//! and every exporter renders that same value.

use std::collections::{BTreeMap, BTreeSet};

use crate::record::{HookCounts, OutcomeCounts, RunRecord, RunStatus};
use crate::stats::{
    self, Alternative, Bootstrap, Cells, Counts, Statistic, StatsError, fisher_exact,
    permutation_test, stratified_permutation_test,
};

/// A quantity compared between conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    LocAdded,
    HiddenPass,
    Tokens,
    CostUsd,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::LocAdded,
        Metric::HiddenPass,
        Metric::Tokens,
        Metric::CostUsd,
    ];

    /// The name in JSON output and file names.
    pub fn name(self) -> &'static str {
        match self {
            Metric::LocAdded => "loc_added",
            Metric::HiddenPass => "hidden_pass",
            Metric::Tokens => "tokens",
            Metric::CostUsd => "cost_usd",
        }
    }

    /// The name a reader sees.
    pub fn label(self) -> &'static str {
        match self {
            Metric::LocAdded => "lines added",
            Metric::HiddenPass => "hidden tests pass (1 = pass)",
            Metric::Tokens => "tokens (input + output + cache)",
            Metric::CostUsd => "cost (USD)",
        }
    }

    /// The run's value; `None` when it was not measured (only for failed runs: the
    /// record reader rejects a graded run without it).
    pub fn value(self, record: &RunRecord) -> Option<f64> {
        match self {
            Metric::LocAdded => record.loc_added.map(|v| v as f64),
            Metric::HiddenPass => record.hidden_pass.map(|pass| f64::from(u8::from(pass))),
            Metric::Tokens => record.tokens.map(|t| t.total() as f64),
            Metric::CostUsd => record.cost_usd,
        }
    }
}

/// Where a comparison applies: one task, or all tasks together.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Task(String),
    All,
}

impl Scope {
    pub fn name(&self) -> &str {
        match self {
            Scope::Task(task) => task,
            Scope::All => "all",
        }
    }
}

/// One condition against the baseline on one metric, in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub scope: Scope,
    pub metric: Metric,
    pub condition: String,
    pub baseline: String,
    pub n: usize,
    pub n_baseline: usize,
    pub median_diff: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Two-sided exact permutation p on the difference of means; `None` when the
    /// enumeration was refused (see `p_refused`).
    pub p_exact: Option<f64>,
    pub p_refused: Option<String>,
}

/// One task x condition cell: every record counted, `ok` ones summarized.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSummary {
    pub task: String,
    pub condition: String,
    pub runs: usize,
    pub ok: usize,
    pub hidden_passed: usize,
    pub loc_added_median: Option<f64>,
    pub tokens_median: Option<f64>,
    pub cost_median: Option<f64>,
}

/// Hidden-test successes of a condition against the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct FisherRow {
    pub scope: Scope,
    pub condition: String,
    pub passed: Counts,
    pub baseline_passed: Counts,
    pub p_two_sided: f64,
}

/// Hook counts summed per condition over every run.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRow {
    pub condition: String,
    pub runs: usize,
    pub counts: HookCounts,
    /// What the agent did after the condition's denials and blocks.
    pub outcomes: OutcomeCounts,
    /// What the agent did after the condition's re-implementation notes.
    pub note_outcomes: OutcomeCounts,
    /// Calls of the engine's query tools, per tool (see `RunRecord::tool_calls`).
    pub tool_calls: BTreeMap<String, u64>,
}

/// Everything a report shows. Records are in a canonical order (task, condition,
/// rep, sequence, step), so the same records in any order give the same report.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub batch: String,
    pub baseline: String,
    pub bootstrap: Bootstrap,
    pub records: Vec<RunRecord>,
    pub conditions: Vec<String>,
    pub tasks: Vec<String>,
    pub status_counts: BTreeMap<RunStatus, usize>,
    pub cells: Vec<CellSummary>,
    pub comparisons: Vec<Comparison>,
    pub fisher: Vec<FisherRow>,
    pub hooks: Vec<HookRow>,
    /// Why some comparisons could not be made (no baseline runs, a condition
    /// missing for a task...).
    pub notes: Vec<String>,
    /// The batch's `manifest.toml`, verbatim, when present.
    pub manifest: Option<String>,
}

impl Analysis {
    /// Task runs (sequence steps belong to `sequence report`).
    pub fn task_runs(&self) -> impl Iterator<Item = &RunRecord> {
        self.records.iter().filter(|r| r.sequence.is_none())
    }

    pub fn failed(&self) -> impl Iterator<Item = &RunRecord> {
        self.task_runs().filter(|r| r.status != RunStatus::Ok)
    }

    pub fn flagged(&self) -> impl Iterator<Item = &RunRecord> {
        self.task_runs().filter(|r| r.integrity.any())
    }

    /// `ok` task runs of one cell.
    pub fn ok_runs<'a>(
        &'a self,
        task: &'a str,
        condition: &'a str,
    ) -> impl Iterator<Item = &'a RunRecord> + 'a {
        self.records.iter().filter(move |r| {
            r.status == RunStatus::Ok
                && r.sequence.is_none()
                && r.task == task
                && r.condition == condition
        })
    }
}

/// Sorts records into the canonical order every report uses.
pub fn sort_records(records: &mut [RunRecord]) {
    records.sort_by(|a, b| {
        (&a.sequence, &a.task, &a.condition, a.rep, a.step).cmp(&(
            &b.sequence,
            &b.task,
            &b.condition,
            b.rep,
            b.step,
        ))
    });
}

/// Analyses a batch's task runs against `baseline`. Fails only on values the
/// statistics cannot take (a bootstrap of zero resamples).
pub fn analyse(
    batch: &str,
    mut records: Vec<RunRecord>,
    manifest: Option<String>,
    baseline: &str,
    bootstrap: Bootstrap,
) -> Result<Analysis, StatsError> {
    sort_records(&mut records);
    let task_runs = || records.iter().filter(|r| r.sequence.is_none());
    let conditions: Vec<String> = distinct(task_runs().map(|r| r.condition.clone()));
    let tasks: Vec<String> = distinct(task_runs().map(|r| r.task.clone()));
    let mut status_counts = BTreeMap::new();
    for record in task_runs() {
        *status_counts.entry(record.status).or_insert(0) += 1;
    }
    let steps = records.len() - task_runs().count();
    let mut notes = Vec::new();
    if steps > 0 {
        notes.push(format!(
            "{steps} sequence step records are left out here (see `sens-bench sequence report`); runs.csv holds them."
        ));
    }
    let mut analysis = Analysis {
        batch: batch.to_string(),
        baseline: baseline.to_string(),
        bootstrap,
        conditions,
        tasks,
        status_counts,
        cells: Vec::new(),
        comparisons: Vec::new(),
        fisher: Vec::new(),
        hooks: Vec::new(),
        notes,
        manifest,
        records,
    };
    analysis.cells = cell_summaries(&analysis);
    analysis.hooks = hook_rows(&analysis);
    compare_all(&mut analysis)?;
    Ok(analysis)
}

fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    values.collect::<BTreeSet<_>>().into_iter().collect()
}

fn cell_summaries(analysis: &Analysis) -> Vec<CellSummary> {
    let mut cells = Vec::new();
    for task in &analysis.tasks {
        for condition in &analysis.conditions {
            let runs = analysis
                .records
                .iter()
                .filter(|r| r.sequence.is_none() && &r.task == task && &r.condition == condition)
                .count();
            if runs == 0 {
                continue;
            }
            let ok: Vec<&RunRecord> = analysis.ok_runs(task, condition).collect();
            let median_of = |metric: Metric| {
                let values: Vec<f64> = ok.iter().filter_map(|r| metric.value(r)).collect();
                stats::median(&values)
            };
            cells.push(CellSummary {
                task: task.clone(),
                condition: condition.clone(),
                runs,
                ok: ok.len(),
                hidden_passed: ok.iter().filter(|r| r.hidden_pass == Some(true)).count(),
                loc_added_median: median_of(Metric::LocAdded),
                tokens_median: median_of(Metric::Tokens),
                cost_median: median_of(Metric::CostUsd),
            });
        }
    }
    cells
}

fn hook_rows(analysis: &Analysis) -> Vec<HookRow> {
    hook_sums(analysis.task_runs())
}

/// Hook counts and decision outcomes summed per condition (in name order) over
/// `records`.
pub fn hook_sums<'a>(records: impl Iterator<Item = &'a RunRecord>) -> Vec<HookRow> {
    let mut rows: BTreeMap<&str, HookRow> = BTreeMap::new();
    for run in records {
        let row = rows.entry(&run.condition).or_insert_with(|| HookRow {
            condition: run.condition.clone(),
            runs: 0,
            counts: HookCounts::default(),
            outcomes: OutcomeCounts::default(),
            note_outcomes: OutcomeCounts::default(),
            tool_calls: BTreeMap::new(),
        });
        row.runs += 1;
        row.counts.add(&run.hooks);
        row.outcomes.merge(&run.outcomes);
        row.note_outcomes.merge(&run.note_outcomes);
        for (tool, n) in &run.tool_calls {
            *row.tool_calls.entry(tool.clone()).or_default() += n;
        }
    }
    rows.into_values().collect()
}

/// A task whose condition and baseline cells both hold `ok` runs, with one metric's
/// values.
struct Paired {
    task: String,
    condition: Vec<f64>,
    baseline: Vec<f64>,
}

fn compare_all(analysis: &mut Analysis) -> Result<(), StatsError> {
    let baseline = analysis.baseline.clone();
    let baseline_ok = analysis
        .tasks
        .iter()
        .any(|task| analysis.ok_runs(task, &baseline).next().is_some());
    if !baseline_ok {
        let present = analysis.conditions.join(", ");
        analysis.notes.push(format!(
            "No comparisons: the baseline {baseline} has no ok runs (conditions in the batch: {present}). \
             Choose another with --baseline."
        ));
        return Ok(());
    }
    let others: Vec<String> = analysis
        .conditions
        .iter()
        .filter(|c| **c != baseline)
        .cloned()
        .collect();
    if others.is_empty() {
        analysis.notes.push(format!(
            "No comparisons: the batch holds only the baseline {baseline}."
        ));
    }
    for condition in &others {
        let mut skipped = Vec::new();
        for metric in Metric::ALL {
            let paired = paired_tasks(analysis, condition, metric, &mut skipped);
            let comparisons = compare(analysis, condition, metric, &paired)?;
            analysis.comparisons.extend(comparisons);
        }
        skipped.sort();
        skipped.dedup();
        if !skipped.is_empty() {
            analysis.notes.push(format!(
                "{condition} vs {baseline}: no comparison for {} (one of the two has no ok runs there).",
                skipped.join(", ")
            ));
        }
        analysis.fisher.extend(fisher_rows(analysis, condition));
    }
    Ok(())
}

fn paired_tasks(
    analysis: &Analysis,
    condition: &str,
    metric: Metric,
    skipped: &mut Vec<String>,
) -> Vec<Paired> {
    let values = |task: &str, cond: &str| -> Vec<f64> {
        analysis
            .ok_runs(task, cond)
            .filter_map(|r| metric.value(r))
            .collect()
    };
    let mut paired = Vec::new();
    for task in &analysis.tasks {
        let condition_values = values(task, condition);
        let baseline_values = values(task, &analysis.baseline);
        if condition_values.is_empty() || baseline_values.is_empty() {
            skipped.push(task.clone());
            continue;
        }
        paired.push(Paired {
            task: task.clone(),
            condition: condition_values,
            baseline: baseline_values,
        });
    }
    paired
}

fn compare(
    analysis: &Analysis,
    condition: &str,
    metric: Metric,
    paired: &[Paired],
) -> Result<Vec<Comparison>, StatsError> {
    if paired.is_empty() {
        return Ok(Vec::new());
    }
    let cells = paired
        .iter()
        .map(|p| Cells::new(&p.condition, &p.baseline))
        .collect::<Result<Vec<_>, _>>()?;
    let diffs = analysis.bootstrap.median_diffs(&cells)?;
    let comparison = |scope: Scope,
                      n: usize,
                      n_baseline: usize,
                      estimate: &stats::Estimate,
                      p: Result<f64, StatsError>| {
        Comparison {
            scope,
            metric,
            condition: condition.to_string(),
            baseline: analysis.baseline.clone(),
            n,
            n_baseline,
            median_diff: estimate.value,
            ci_low: estimate.ci.low,
            ci_high: estimate.ci.high,
            p_exact: p.as_ref().ok().copied(),
            p_refused: p.err().map(|e| e.to_string()),
        }
    };
    let mut out: Vec<Comparison> = paired
        .iter()
        .zip(&cells)
        .zip(&diffs.per_task)
        .map(|((p, task), estimate)| {
            let p_exact = permutation_test(
                task.condition,
                task.baseline,
                Statistic::MeanDiff,
                Alternative::TwoSided,
            );
            comparison(
                Scope::Task(p.task.clone()),
                p.condition.len(),
                p.baseline.len(),
                estimate,
                p_exact,
            )
        })
        .collect();
    out.push(comparison(
        Scope::All,
        paired.iter().map(|p| p.condition.len()).sum(),
        paired.iter().map(|p| p.baseline.len()).sum(),
        &diffs.across,
        stratified_permutation_test(&cells, Alternative::TwoSided),
    ));
    Ok(out)
}

fn fisher_rows(analysis: &Analysis, condition: &str) -> Vec<FisherRow> {
    let counts = |task: &str, cond: &str| {
        let runs: Vec<&RunRecord> = analysis.ok_runs(task, cond).collect();
        Counts {
            successes: runs.iter().filter(|r| r.hidden_pass == Some(true)).count() as u64,
            n: runs.len() as u64,
        }
    };
    let mut rows = Vec::new();
    let mut pooled = (Counts { successes: 0, n: 0 }, Counts { successes: 0, n: 0 });
    for task in &analysis.tasks {
        let (a, b) = (counts(task, condition), counts(task, &analysis.baseline));
        if let Ok(p) = fisher_exact(a, b, Alternative::TwoSided) {
            rows.push(FisherRow {
                scope: Scope::Task(task.clone()),
                condition: condition.to_string(),
                passed: a,
                baseline_passed: b,
                p_two_sided: p,
            });
            pooled.0.successes += a.successes;
            pooled.0.n += a.n;
            pooled.1.successes += b.successes;
            pooled.1.n += b.n;
        }
    }
    if let Ok(p) = fisher_exact(pooled.0, pooled.1, Alternative::TwoSided) {
        rows.push(FisherRow {
            scope: Scope::All,
            condition: condition.to_string(),
            passed: pooled.0,
            baseline_passed: pooled.1,
            p_two_sided: p,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::parse_records;
    use crate::record::tests::sample_json;
    use crate::report::Exporter;
    use crate::report::markdown::Markdown;

    /// Eight tasks, C0 and C2, three reps; token counts all distinct and the two
    /// conditions' interleaved, so the exact stratified test of tokens is too large
    /// to count.
    fn eight_task_batch() -> Vec<RunRecord> {
        let mut lines = String::new();
        for task in 0..8_u64 {
            for (c, condition) in ["C0", "C2"].iter().enumerate() {
                for rep in 1..=3_u64 {
                    let mut value = sample_json();
                    value["task"] = format!("task-{task}").into();
                    value["condition"] = (*condition).into();
                    value["rep"] = rep.into();
                    value["loc_added"] = (40 + task * 3 + rep - 20 * c as u64).into();
                    // Square roots of distinct integers: sums of them rarely coincide.
                    let slot = [[0, 3, 4], [1, 2, 5]][c][rep as usize - 1];
                    let index = (task * 6 + slot + 2) as f64;
                    value["tokens"]["cache_read"] = ((index.sqrt() * 1e6) as u64).into();
                    lines.push_str(&format!("{value}\n"));
                }
            }
        }
        parse_records(&lines, std::path::Path::new("runs.jsonl")).unwrap()
    }

    #[test]
    fn a_refused_exact_test_leaves_p_empty_and_says_why() {
        let analysis = analyse("b", eight_task_batch(), None, "C0", Bootstrap::default()).unwrap();
        let find = |metric: Metric| {
            analysis
                .comparisons
                .iter()
                .find(|c| c.scope == Scope::All && c.metric == metric)
                .unwrap()
        };
        let tokens = find(Metric::Tokens);
        assert_eq!(tokens.p_exact, None);
        assert!(
            tokens
                .p_refused
                .as_deref()
                .unwrap()
                .contains("too large to count")
        );
        // Lines added: integers, every task lower under C2 -> p = 2 / 20^8.
        let loc = find(Metric::LocAdded);
        assert_eq!(loc.p_exact, Some(2.0 / 20f64.powi(8)));
        assert_eq!((loc.n, loc.n_baseline), (24, 24));
        let md = Markdown.render(&analysis).unwrap();
        assert!(
            md.contains("- p not computed for all C2: the exact stratified"),
            "{md}"
        );
    }

    #[test]
    fn per_task_differences_are_condition_minus_baseline() {
        let analysis = analyse("b", eight_task_batch(), None, "C0", Bootstrap::default()).unwrap();
        let task0 = analysis
            .comparisons
            .iter()
            .find(|c| c.scope == Scope::Task("task-0".into()) && c.metric == Metric::LocAdded)
            .unwrap();
        assert_eq!(task0.median_diff, -20.0);
        assert_eq!((task0.ci_low, task0.ci_high), (-22.0, -18.0));
        assert_eq!(task0.p_exact, Some(0.1));
        assert_eq!(analysis.tasks.len(), 8);
        assert_eq!(analysis.conditions, ["C0", "C2"]);
    }
}
