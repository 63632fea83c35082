//! `sens-bench sequence report BATCH` (docs/contract.md, "Horizonte sequences" and
//! "Reports"): per sequence (condition x rep) the size after every step and at the end,
//! growth curves, the Horizonte decision, functions, duplicate lines, probes and tokens.
//!
//! Sizes are state measures: a step that ended in a timeout or an agent error still
//! leaves a project the next step builds on, so its measured `loc_total` counts;
//! failed steps are counted per sequence and listed. A sequence enters the decision
//! when it has a record for every step up to the batch's last one and its last step
//! was measured.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;

use super::analysis::analyse;
use super::html;
use super::markdown::{escape, status_summary, table};
use super::plots::{GROWTH_STEM, GrowthCurve, growth_plot};
use super::{
    Exporter, PLOTS_DIR, RUNS_FILE, emit, fmt_num, fmt_opt, fmt_p, load_batch, write_file,
};
use crate::record::{RunRecord, RunStatus};
use crate::stats::{
    self, Alternative, Bootstrap, Cells, Decision, Sample, horizonte_decision,
    stratified_permutation_test,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SequenceFormat {
    /// Markdown report and the growth plot, written to the output folder.
    Md,
    /// Sequences and the decision as JSON.
    Json,
}

/// `sens-bench sequence report` options.
#[derive(Debug, Clone, clap::Args)]
pub struct SequenceOptions {
    /// The batch folder `sequence run` wrote.
    pub batch: PathBuf,
    /// md writes sequence-report.md and plots/growth.*; json prints sequences and
    /// the decision.
    #[arg(long, value_enum, default_value = "md")]
    pub format: SequenceFormat,
    /// Where files go; the batch folder by default. JSON prints to standard output
    /// unless this is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The condition the decision compares against.
    #[arg(long, default_value = "C0")]
    pub baseline: String,
    /// The condition the decision is about.
    #[arg(long, default_value = "C2")]
    pub condition: String,
}

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
    super::analysis::sort_records(&mut failed);
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

/// The JSON of docs/contract.md, "Reports" (field names binding).
pub struct SequenceJson;

#[derive(Serialize)]
struct JsonOut<'a> {
    sequences: Vec<JsonSequence<'a>>,
    decision: Option<JsonDecision<'a>>,
}

#[derive(Serialize)]
struct JsonSequence<'a> {
    sequence: &'a str,
    condition: &'a str,
    rep: u32,
    final_size: Option<u64>,
    sizes: &'a [Option<u64>],
}

#[derive(Serialize)]
struct JsonDecision<'a> {
    metric: &'static str,
    condition: &'a str,
    baseline: &'a str,
    all_below: bool,
    p_exact: f64,
}

#[derive(Serialize)]
struct JsonAcross<'a> {
    sequences: Vec<JsonSequence<'a>>,
    decisions: Vec<JsonSequenceDecision<'a>>,
    stratified: Option<JsonStratified<'a>>,
}

#[derive(Serialize)]
struct JsonSequenceDecision<'a> {
    sequence: &'a str,
    #[serde(flatten)]
    decision: JsonDecision<'a>,
}

#[derive(Serialize)]
struct JsonStratified<'a> {
    metric: &'static str,
    condition: &'a str,
    baseline: &'a str,
    sequences: &'a [String],
    p_exact: f64,
}

fn json_sequences(a: &SequenceAnalysis) -> impl Iterator<Item = JsonSequence<'_>> {
    a.runs.iter().map(|r| JsonSequence {
        sequence: &a.sequence,
        condition: &r.condition,
        rep: r.rep,
        final_size: r.final_size,
        sizes: &r.sizes,
    })
}

fn json_decision(a: &SequenceAnalysis) -> Option<JsonDecision<'_>> {
    a.decision.as_ref().ok().map(|d| JsonDecision {
        metric: "final_size",
        condition: &d.condition,
        baseline: &d.baseline,
        all_below: d.decision.all_below,
        p_exact: d.decision.p_exact,
    })
}

/// One sequence: `sequences` and its `decision` (docs/contract.md, "Reports"). Several:
/// every sequence's runs, `decisions` per sequence and the `stratified` test across them.
impl Exporter<SequenceBatch> for SequenceJson {
    fn render(&self, b: &SequenceBatch) -> anyhow::Result<String> {
        let sequences = b.sequences.iter().flat_map(json_sequences).collect();
        let mut text = match (&b.across, b.sequences.as_slice()) {
            (None, [one]) => serde_json::to_string_pretty(&JsonOut {
                sequences,
                decision: json_decision(one),
            })?,
            (across, _) => serde_json::to_string_pretty(&JsonAcross {
                sequences,
                decisions: b
                    .sequences
                    .iter()
                    .filter_map(|a| {
                        json_decision(a).map(|decision| JsonSequenceDecision {
                            sequence: &a.sequence,
                            decision,
                        })
                    })
                    .collect(),
                stratified: across
                    .as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .map(|r| JsonStratified {
                        metric: "final_size",
                        condition: &r.condition,
                        baseline: &r.baseline,
                        sequences: &r.sequences,
                        p_exact: r.p_exact,
                    }),
            })?,
        };
        text.push('\n');
        Ok(text)
    }
}

/// The Markdown sequence report.
pub struct SequenceMarkdown;

impl Exporter<SequenceBatch> for SequenceMarkdown {
    fn render(&self, b: &SequenceBatch) -> anyhow::Result<String> {
        let mut out = String::new();
        match (&b.across, b.sequences.as_slice()) {
            (None, [one]) => write_markdown(&mut out, one, 1)?,
            (across, _) => {
                write_across(&mut out, b, across.as_ref())?;
                for a in &b.sequences {
                    write_markdown(&mut out, a, 2)?;
                }
            }
        }
        Ok(out)
    }
}

/// The decisions of several sequences, and the stratified test across them.
fn write_across(
    out: &mut String,
    b: &SequenceBatch,
    across: Option<&Result<AcrossReport, String>>,
) -> std::fmt::Result {
    let names: Vec<String> = b.sequences.iter().map(|a| escape(&a.sequence)).collect();
    let batch = b.sequences.first().map_or("", |a| a.batch.as_str());
    writeln!(
        out,
        "# Sequence report: batch {batch} ({})\n",
        names.join(", ")
    )?;
    writeln!(out, "## Decision per sequence and across sequences\n")?;
    let rows: Vec<Vec<String>> = b
        .sequences
        .iter()
        .map(|a| match &a.decision {
            Ok(d) => vec![
                a.sequence.clone(),
                format!("{} vs {}", d.condition, d.baseline),
                if d.decision.all_below { "yes" } else { "no" }.to_string(),
                format!("{} vs {}", d.n, d.n_baseline),
                fmt_p(Some(d.decision.p_exact)),
            ],
            Err(why) => vec![
                a.sequence.clone(),
                why.clone(),
                String::new(),
                String::new(),
                String::new(),
            ],
        })
        .collect();
    table(
        out,
        &[
            "sequence",
            "compared",
            "every final size below",
            "complete sequences",
            "p (one-sided)",
        ],
        &rows,
    )?;
    match across {
        Some(Ok(r)) => writeln!(
            out,
            "Across sequences ({}): p = {} (exact permutation test stratified by sequence: \
             runs are relabelled between {c} and {b} only within each sequence; the \
             statistic is the sum over sequences of the {c} minus {b} mean final size; \
             one-sided: {c} smaller).\n",
            r.sequences
                .iter()
                .map(|n| escape(n))
                .collect::<Vec<_>>()
                .join(", "),
            fmt_p(Some(r.p_exact)),
            c = r.condition,
            b = r.baseline,
        ),
        Some(Err(why)) => writeln!(out, "{}.\n", escape(why)),
        None => Ok(()),
    }
}

/// The growth plot's file stem: `growth` for a batch of one sequence, else
/// `growth-<sequence>` with anything but letters, digits, `.`, `_` and `-` replaced.
fn growth_stem(a: &SequenceAnalysis, several: bool) -> String {
    if !several {
        return GROWTH_STEM.to_string();
    }
    let safe: String = a
        .sequence
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{GROWTH_STEM}-{safe}")
}

fn sequence_label(run: &SequenceRun) -> String {
    format!("{} rep {}", run.condition, run.rep)
}

/// One sequence's report; its title at heading `level` (1 alone, 2 in a batch of
/// several), its sections one below.
fn write_markdown(out: &mut String, a: &SequenceAnalysis, level: usize) -> std::fmt::Result {
    let title = "#".repeat(level);
    let section = "#".repeat(level + 1);
    let several = level > 1;
    writeln!(
        out,
        "{title} Sequence report: batch {} ({})\n",
        a.batch,
        escape(&a.sequence)
    )?;
    let total: usize = a.status_counts.values().sum();
    writeln!(
        out,
        "{total} step records ({}), {} sequences, {} steps. Sizes are lines of code after \
         each step; a failed step still leaves the project the next step builds on, so its \
         measured size counts, and failed steps are listed below.\n",
        status_summary(&a.status_counts),
        a.runs.len(),
        a.last_step
    )?;
    writeln!(out, "{section} Decision\n")?;
    match &a.decision {
        Ok(d) => writeln!(
            out,
            "Fixed before measuring: {c} makes the project smaller only if every {c} sequence \
             ends smaller than every {b} sequence.\n\n- every {c} final size below every {b} \
             one: **{}** ({} vs {} complete sequences)\n- p = {} (exact permutation test, \
             one-sided: {c} smaller; difference of means)\n",
            if d.decision.all_below { "yes" } else { "no" },
            d.n,
            d.n_baseline,
            fmt_p(Some(d.decision.p_exact)),
            c = d.condition,
            b = d.baseline,
        )?,
        Err(why) => writeln!(out, "{why}.\n")?,
    }
    writeln!(out, "{section} Sequences\n")?;
    let rows: Vec<Vec<String>> = a
        .runs
        .iter()
        .map(|r| {
            vec![
                r.condition.clone(),
                r.rep.to_string(),
                format!("{}/{}", r.steps, a.last_step),
                r.failed_steps.to_string(),
                format!("{}/{}", r.hidden_passed, r.steps),
                fmt_opt(r.final_size.map(|v| v as f64)),
                r.functions_added.to_string(),
                fmt_opt(r.function_lines_median),
                fmt_opt(r.dup_lines_engine.map(|v| v as f64)),
                fmt_opt(r.dup_lines_jscpd.map(|v| v as f64)),
                r.tokens.to_string(),
            ]
        })
        .collect();
    table(
        out,
        &[
            "condition",
            "rep",
            "steps",
            "failed steps",
            "hidden pass",
            "final size",
            "functions added",
            "median function length",
            "duplicate lines (engine)",
            "duplicate lines (jscpd)",
            "tokens",
        ],
        &rows,
    )?;
    writeln!(
        out,
        "Functions added are summed over steps; their median length is the median of the \
         per-step medians of steps that added functions. Duplicate lines and probes are \
         measured on the project after the last step.\n"
    )?;

    writeln!(out, "{section} Size after each step\n")?;
    let labels: Vec<String> = a.runs.iter().map(sequence_label).collect();
    let mut head: Vec<&str> = vec!["step"];
    head.extend(labels.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = (0..a.last_step as usize)
        .map(|i| {
            let mut row = vec![(i + 1).to_string()];
            row.extend(a.runs.iter().map(|r| fmt_opt(r.sizes[i].map(|v| v as f64))));
            row
        })
        .collect();
    table(out, &head, &rows)?;

    writeln!(
        out,
        "{section} Probes (implementations of each concept at the end)\n"
    )?;
    let concepts: BTreeSet<&str> = a
        .runs
        .iter()
        .flat_map(|r| r.probes.keys().map(String::as_str))
        .collect();
    if concepts.is_empty() {
        writeln!(out, "No probes were recorded.\n")?;
    } else {
        let mut head = vec!["condition", "rep"];
        head.extend(concepts.iter().copied());
        let rows: Vec<Vec<String>> = a
            .runs
            .iter()
            .map(|r| {
                let mut row = vec![r.condition.clone(), r.rep.to_string()];
                row.extend(
                    concepts
                        .iter()
                        .map(|c| fmt_opt(r.probes.get(*c).map(|v| *v as f64))),
                );
                row
            })
            .collect();
        table(out, &head, &rows)?;
    }

    writeln!(out, "{section} Tokens per condition\n")?;
    let rows: Vec<Vec<String>> = a
        .conditions
        .iter()
        .map(|condition| {
            let totals: Vec<f64> = a
                .runs
                .iter()
                .filter(|r| &r.condition == condition)
                .map(|r| r.tokens as f64)
                .collect();
            vec![
                condition.clone(),
                totals.len().to_string(),
                fmt_opt(stats::median(&totals)),
                fmt_num(totals.iter().sum()),
            ]
        })
        .collect();
    table(
        out,
        &[
            "condition",
            "sequences",
            "tokens per sequence (median)",
            "tokens (total)",
        ],
        &rows,
    )?;

    writeln!(out, "{section} Failed steps\n")?;
    if a.failed.is_empty() {
        writeln!(out, "None: every step ended `ok`.\n")?;
    } else {
        let rows: Vec<Vec<String>> = a
            .failed
            .iter()
            .map(|r| {
                vec![
                    r.condition.clone(),
                    r.rep.to_string(),
                    r.step.map(|s| s.to_string()).unwrap_or_default(),
                    r.task.clone(),
                    r.status.to_string(),
                    r.error.clone().unwrap_or_default(),
                ]
            })
            .collect();
        table(
            out,
            &["condition", "rep", "step", "id", "status", "error"],
            &rows,
        )?;
    }

    writeln!(out, "{section} Manifest\n")?;
    match &a.manifest {
        Some(text) => writeln!(out, "```toml\n{}\n```\n", text.trim_end())?,
        None => writeln!(out, "The batch folder has no `manifest.toml`.\n")?,
    }
    writeln!(out, "{section} Plots\n")?;
    let stem = growth_stem(a, several);
    writeln!(
        out,
        "- growth curves: [SVG]({PLOTS_DIR}/{stem}.svg), [PNG]({PLOTS_DIR}/{stem}.png)"
    )
}

fn growth_curves(a: &SequenceAnalysis) -> Vec<GrowthCurve> {
    a.runs
        .iter()
        .map(|r| GrowthCurve {
            condition: r.condition.clone(),
            points: r
                .sizes
                .iter()
                .enumerate()
                .filter_map(|(i, size)| Some((i as u32 + 1, (*size)? as f64)))
                .collect(),
        })
        .collect()
}

/// `sens-bench sequence report BATCH`.
pub fn sequence_report(options: &SequenceOptions) -> anyhow::Result<ExitCode> {
    let batch = load_batch(&options.batch)?;
    let analyses = analyse_sequences(
        &batch.name,
        &batch.records,
        batch.manifest,
        &options.condition,
        &options.baseline,
    )
    .map_err(|e| e.context(format!("{}", options.batch.join(RUNS_FILE).display())))?;
    for a in &analyses.sequences {
        if let Err(why) = &a.decision {
            eprintln!("note: {}: {why}", a.sequence);
        }
    }
    if let Some(Err(why)) = &analyses.across {
        eprintln!("note: {why}");
    }
    match options.format {
        SequenceFormat::Md => {
            let out = options.out.as_deref().unwrap_or(&options.batch);
            let mut written = vec![write_file(
                out,
                "sequence-report.md",
                &SequenceMarkdown.render(&analyses)?,
            )?];
            let several = analyses.sequences.len() > 1;
            let mut growth = Vec::new();
            for a in &analyses.sequences {
                let stem = growth_stem(a, several);
                written.extend(growth_plot(
                    &a.sequence,
                    &a.conditions,
                    &growth_curves(a),
                    &out.join(PLOTS_DIR),
                    &stem,
                )?);
                let label = if several {
                    format!("growth: {}", a.sequence)
                } else {
                    "growth".to_string()
                };
                growth.push((label, out.join(PLOTS_DIR).join(format!("{stem}.svg"))));
            }
            let manifest = analyses.sequences.first().and_then(|a| a.manifest.clone());
            let steps = analyse(
                &batch.name,
                batch.records,
                manifest,
                &options.baseline,
                Bootstrap::default(),
            )?;
            written.push(html::write_viewer(&steps, &options.batch, out, &growth)?);
            for path in written {
                println!("{}", path.display());
            }
        }
        SequenceFormat::Json => emit(
            options.out.as_deref(),
            "sequence-report.json",
            &SequenceJson.render(&analyses)?,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
