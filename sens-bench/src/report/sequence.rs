//! `sens-bench sequence report BATCH` (SPEC 3.7, 3.10): per sequence (condition x
//! rep) the size after every step and at the end, growth curves, the Horizonte
//! decision, functions, duplicate lines, probes and tokens.
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
use super::markdown::{status_summary, table};
use super::plots::{GROWTH_STEM, GrowthCurve, growth_plot};
use super::{
    Exporter, PLOTS_DIR, RUNS_FILE, emit, fmt_num, fmt_opt, fmt_p, load_batch, write_file,
};
use crate::record::{RunRecord, RunStatus};
use crate::stats::{self, Bootstrap, Decision, Sample, horizonte_decision};

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

/// Analyses the sequence steps of a batch. The batch must hold steps of exactly one
/// sequence.
pub fn analyse_sequences(
    batch: &str,
    records: &[RunRecord],
    manifest: Option<String>,
    condition: &str,
    baseline: &str,
) -> anyhow::Result<SequenceAnalysis> {
    let steps: Vec<&RunRecord> = records.iter().filter(|r| r.sequence.is_some()).collect();
    let names: BTreeSet<&str> = steps.iter().filter_map(|r| r.sequence.as_deref()).collect();
    let sequence = match names.len() {
        0 => bail!(
            "the batch holds no sequence steps (records with `sequence` and `step`): use `sens-bench report` for task runs"
        ),
        1 => names.into_iter().collect::<String>(),
        _ => bail!(
            "the batch holds steps of several sequences ({}); a sequence batch holds one",
            names.into_iter().collect::<Vec<_>>().join(", ")
        ),
    };
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
    Ok(SequenceAnalysis {
        batch: batch.to_string(),
        sequence,
        last_step,
        conditions,
        runs,
        status_counts,
        failed,
        decision,
        manifest,
    })
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

/// The JSON of SPEC 3.10 (field names binding).
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

impl Exporter<SequenceAnalysis> for SequenceJson {
    fn render(&self, a: &SequenceAnalysis) -> anyhow::Result<String> {
        let out = JsonOut {
            sequences: a
                .runs
                .iter()
                .map(|r| JsonSequence {
                    sequence: &a.sequence,
                    condition: &r.condition,
                    rep: r.rep,
                    final_size: r.final_size,
                    sizes: &r.sizes,
                })
                .collect(),
            decision: a.decision.as_ref().ok().map(|d| JsonDecision {
                metric: "final_size",
                condition: &d.condition,
                baseline: &d.baseline,
                all_below: d.decision.all_below,
                p_exact: d.decision.p_exact,
            }),
        };
        let mut text = serde_json::to_string_pretty(&out)?;
        text.push('\n');
        Ok(text)
    }
}

/// The Markdown sequence report.
pub struct SequenceMarkdown;

impl Exporter<SequenceAnalysis> for SequenceMarkdown {
    fn render(&self, a: &SequenceAnalysis) -> anyhow::Result<String> {
        let mut out = String::new();
        write_markdown(&mut out, a)?;
        Ok(out)
    }
}

fn sequence_label(run: &SequenceRun) -> String {
    format!("{} rep {}", run.condition, run.rep)
}

fn write_markdown(out: &mut String, a: &SequenceAnalysis) -> std::fmt::Result {
    writeln!(
        out,
        "# Sequence report: batch {} ({})\n",
        a.batch, a.sequence
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
    writeln!(out, "## Decision\n")?;
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
    writeln!(out, "## Sequences\n")?;
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

    writeln!(out, "## Size after each step\n")?;
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
        "## Probes (implementations of each concept at the end)\n"
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

    writeln!(out, "## Tokens per condition\n")?;
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

    writeln!(out, "## Failed steps\n")?;
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
                    r.error.as_deref().unwrap_or("").replace('|', "\\|"),
                ]
            })
            .collect();
        table(
            out,
            &["condition", "rep", "step", "id", "status", "error"],
            &rows,
        )?;
    }

    writeln!(out, "## Manifest\n")?;
    match &a.manifest {
        Some(text) => writeln!(out, "```toml\n{}\n```\n", text.trim_end())?,
        None => writeln!(out, "The batch folder has no `manifest.toml`.\n")?,
    }
    writeln!(out, "## Plots\n")?;
    writeln!(
        out,
        "- growth curves: [SVG]({PLOTS_DIR}/{GROWTH_STEM}.svg), [PNG]({PLOTS_DIR}/{GROWTH_STEM}.png)"
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
    let analysis = analyse_sequences(
        &batch.name,
        &batch.records,
        batch.manifest,
        &options.condition,
        &options.baseline,
    )
    .map_err(|e| e.context(format!("{}", options.batch.join(RUNS_FILE).display())))?;
    if let Err(why) = &analysis.decision {
        eprintln!("note: {why}");
    }
    match options.format {
        SequenceFormat::Md => {
            let out = options.out.as_deref().unwrap_or(&options.batch);
            let mut written = vec![write_file(
                out,
                "sequence-report.md",
                &SequenceMarkdown.render(&analysis)?,
            )?];
            written.extend(growth_plot(
                &analysis.sequence,
                &analysis.conditions,
                &growth_curves(&analysis),
                &out.join(PLOTS_DIR),
            )?);
            let steps = analyse(
                &batch.name,
                batch.records,
                analysis.manifest.clone(),
                &options.baseline,
                Bootstrap::default(),
            )?;
            let growth = (
                "growth".to_string(),
                out.join(PLOTS_DIR).join(format!("{GROWTH_STEM}.svg")),
            );
            written.push(html::write_viewer(&steps, &options.batch, out, &[growth])?);
            for path in written {
                println!("{}", path.display());
            }
        }
        SequenceFormat::Json => emit(
            options.out.as_deref(),
            "sequence-report.json",
            &SequenceJson.render(&analysis)?,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
