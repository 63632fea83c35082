//! The sequence report in Markdown: the decisions across sequences, and each
//! sequence's sizes, functions, duplicate lines, probes and tokens.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::analysis::{AcrossReport, SequenceAnalysis, SequenceBatch, SequenceRun};
use super::growth::growth_stem;
use crate::report::markdown::{escape, status_summary, table};
use crate::report::{Exporter, PLOTS_DIR, fmt_num, fmt_opt, fmt_p};
use crate::stats;

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
