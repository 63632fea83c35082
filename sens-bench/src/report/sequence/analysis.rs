//! The sequence analysis: per sequence (condition x rep) the size after every
//! step, the Horizonte decision, and with several sequences the stratified test
//! across them.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;

use crate::record::{RunRecord, RunStatus};
use crate::stats::{
    self, Alternative, Cells, Decision, Sample, horizonte_decision, stratified_permutation_test,
};

/// One sequence: a condition x rep playing every step in order.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceRun {
    pub condition: String,
    pub rep: u32,
    /// Size after each step 1..=last step of the batch; `None` where no record or
    /// no measurement exists.
    pub sizes: Vec<Option<u64>>,
    /// Size after the sequence's last recorded step.
    pub final_size: Option<u64>,
    /// Every step up to the batch's last has a record.
    pub complete: bool,
    pub steps: usize,
    pub failed_steps: usize,
    pub hidden_passed: usize,
    /// Functions added over all steps.
    pub functions_added: u64,
    /// The median over steps that added functions of their median function length.
    pub function_lines_median: Option<f64>,
    /// State measures after the last recorded step.
    pub dup_lines_engine: Option<u64>,
    pub dup_lines_jscpd: Option<u64>,
    pub probes: BTreeMap<String, u64>,
    /// Tokens over all steps.
    pub tokens: u64,
}

/// The decision with what it compared.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionReport {
    pub condition: String,
    pub baseline: String,
    pub n: usize,
    pub n_baseline: usize,
    pub decision: Decision,
}

#[derive(Debug, Clone)]
pub struct SequenceAnalysis {
    pub batch: String,
    pub sequence: String,
    pub last_step: u32,
    pub conditions: Vec<String>,
    pub runs: Vec<SequenceRun>,
    pub status_counts: BTreeMap<RunStatus, usize>,
    pub failed: Vec<RunRecord>,
    pub decision: Result<DecisionReport, String>,
    pub manifest: Option<String>,
}

/// The sequences of a batch, each analysed on its own, and with two or more the
/// test across them.
#[derive(Debug, Clone)]
pub struct SequenceBatch {
    /// By sequence name.
    pub sequences: Vec<SequenceAnalysis>,
    /// `None` with one sequence.
    pub across: Option<Result<AcrossReport, String>>,
}

/// The exact permutation test stratified by sequence: runs are relabelled between
/// the two conditions only within each sequence, and the statistic is the sum over
/// sequences of the condition's minus the baseline's mean final size (one-sided:
/// the condition smaller). Sequences without a decision of their own stay out.
#[derive(Debug, Clone, PartialEq)]
pub struct AcrossReport {
    pub condition: String,
    pub baseline: String,
    /// The sequences in the test.
    pub sequences: Vec<String>,
    pub p_exact: f64,
}

/// Analyses the sequence steps of a batch, per sequence.
pub fn analyse_sequences(
    batch: &str,
    records: &[RunRecord],
    manifest: Option<String>,
    condition: &str,
    baseline: &str,
) -> anyhow::Result<SequenceBatch> {
    let mut by_sequence: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for record in records {
        if let Some(name) = record.sequence.as_deref() {
            by_sequence.entry(name).or_default().push(record);
        }
    }
    if by_sequence.is_empty() {
        bail!(
            "the batch holds no sequence steps (records with `sequence` and `step`): use `sens-bench report` for task runs"
        );
    }
    let sequences: Vec<SequenceAnalysis> = by_sequence
        .into_iter()
        .map(|(name, steps)| analyse_one(batch, name, steps, manifest.clone(), condition, baseline))
        .collect();
    let across = (sequences.len() > 1).then(|| decide_across(&sequences, condition, baseline));
    Ok(SequenceBatch { sequences, across })
}

/// The stratified test over the sequences that have a decision of their own.
fn decide_across(
    sequences: &[SequenceAnalysis],
    condition: &str,
    baseline: &str,
) -> Result<AcrossReport, String> {
    let decided: Vec<&SequenceAnalysis> = sequences.iter().filter(|a| a.decision.is_ok()).collect();
    if decided.len() < 2 {
        return Err(format!(
            "no test across sequences: {} of {} sequences have a decision of their own, it needs two",
            decided.len(),
            sequences.len()
        ));
    }
    let finals: Vec<(Vec<f64>, Vec<f64>)> = decided
        .iter()
        .map(|a| (finals(&a.runs, condition), finals(&a.runs, baseline)))
        .collect();
    let strata = finals
        .iter()
        .map(|(ours, theirs)| Cells::new(ours, theirs))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("no test across sequences: {e}"))?;
    let p_exact = stratified_permutation_test(&strata, Alternative::Less)
        .map_err(|e| format!("no test across sequences: {e}"))?;
    Ok(AcrossReport {
        condition: condition.to_string(),
        baseline: baseline.to_string(),
        sequences: decided.iter().map(|a| a.sequence.clone()).collect(),
        p_exact,
    })
}

/// One sequence's steps.
fn analyse_one(
    batch: &str,
    sequence: &str,
    steps: Vec<&RunRecord>,
    manifest: Option<String>,
    condition: &str,
    baseline: &str,
) -> SequenceAnalysis {
    let sequence = sequence.to_string();
    let last_step = steps.iter().filter_map(|r| r.step).max().unwrap_or(0);
    let mut grouped: BTreeMap<(String, u32), Vec<&RunRecord>> = BTreeMap::new();
    for record in &steps {
        grouped
            .entry((record.condition.clone(), record.rep))
            .or_default()
            .push(record);
    }
    let runs: Vec<SequenceRun> = grouped
        .into_iter()
        .map(|((condition, rep), mut steps)| {
            steps.sort_by_key(|r| r.step);
            summarize(condition, rep, &steps, last_step)
        })
        .collect();
    let conditions: Vec<String> = runs
        .iter()
        .map(|r| r.condition.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut status_counts = BTreeMap::new();
    for record in &steps {
        *status_counts.entry(record.status).or_insert(0) += 1;
    }
    let mut failed: Vec<RunRecord> = steps
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .map(|r| (*r).clone())
        .collect();
    crate::report::analysis::sort_records(&mut failed);
    let decision = decide(&runs, condition, baseline);
    SequenceAnalysis {
        batch: batch.to_string(),
        sequence,
        last_step,
        conditions,
        runs,
        status_counts,
        failed,
        decision,
        manifest,
    }
}

fn summarize(condition: String, rep: u32, steps: &[&RunRecord], last_step: u32) -> SequenceRun {
    let mut sizes = vec![None; last_step as usize];
    for record in steps {
        if let Some(step) = record.step {
            sizes[step as usize - 1] = record.loc_total;
        }
    }
    let recorded: BTreeSet<u32> = steps.iter().filter_map(|r| r.step).collect();
    let last = steps.last();
    let step_medians: Vec<f64> = steps
        .iter()
        .filter(|r| r.functions_added.unwrap_or(0) > 0)
        .filter_map(|r| r.function_lines_median)
        .collect();
    SequenceRun {
        condition,
        rep,
        sizes,
        final_size: last.and_then(|r| r.loc_total),
        complete: (1..=last_step).all(|s| recorded.contains(&s)),
        steps: steps.len(),
        failed_steps: steps.iter().filter(|r| r.status != RunStatus::Ok).count(),
        hidden_passed: steps.iter().filter(|r| r.hidden_pass == Some(true)).count(),
        functions_added: steps.iter().filter_map(|r| r.functions_added).sum(),
        function_lines_median: stats::median(&step_medians),
        dup_lines_engine: last.and_then(|r| r.dup_lines_engine),
        dup_lines_jscpd: last.and_then(|r| r.dup_lines_jscpd),
        probes: last.map(|r| r.probes.clone()).unwrap_or_default(),
        tokens: steps
            .iter()
            .filter_map(|r| r.tokens.map(|t| t.total()))
            .sum(),
    }
}

/// Final sizes of the complete, measured sequences of one condition.
fn finals(runs: &[SequenceRun], condition: &str) -> Vec<f64> {
    runs.iter()
        .filter(|r| r.condition == condition && r.complete)
        .filter_map(|r| r.final_size.map(|v| v as f64))
        .collect()
}

fn decide(runs: &[SequenceRun], condition: &str, baseline: &str) -> Result<DecisionReport, String> {
    let ours = finals(runs, condition);
    let theirs = finals(runs, baseline);
    for (name, values) in [(condition, &ours), (baseline, &theirs)] {
        if values.is_empty() {
            return Err(format!(
                "no decision: {name} has no complete sequence with a measured final size"
            ));
        }
    }
    let samples_decision = || horizonte_decision(Sample::new(&ours)?, Sample::new(&theirs)?);
    let decision = samples_decision().map_err(|e| format!("no decision: {e}"))?;
    Ok(DecisionReport {
        condition: condition.to_string(),
        baseline: baseline.to_string(),
        n: ours.len(),
        n_baseline: theirs.len(),
        decision,
    })
}
