//! The Markdown report of a batch.

use std::fmt::Write;

use super::analysis::{Analysis, Comparison, Metric};
use super::{Exporter, fmt_num, fmt_opt, fmt_p, plots};
use crate::record::{HookCounts, Outcome, RunStatus};
use crate::stats::MAX_RELABELLINGS;

pub struct Markdown;

impl Exporter<Analysis> for Markdown {
    fn render(&self, a: &Analysis) -> anyhow::Result<String> {
        let mut out = String::new();
        header(&mut out, a)?;
        cells(&mut out, a)?;
        differences(&mut out, a)?;
        fisher(&mut out, a)?;
        hooks(&mut out, a)?;
        tool_calls(&mut out, a)?;
        integrity(&mut out, a)?;
        failed(&mut out, a)?;
        manifest(&mut out, a)?;
        plot_links(&mut out, a)?;
        Ok(out)
    }
}

/// A Markdown table: a header row and rows of cells, every cell plain text
/// ([`escape`]d), since cells carry what records, ledgers and labels hold.
pub fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) -> std::fmt::Result {
    let line =
        |cells: &mut dyn Iterator<Item = &str>| cells.map(escape).collect::<Vec<_>>().join(" | ");
    writeln!(out, "| {} |", line(&mut head.iter().copied()))?;
    writeln!(out, "|{}", " --- |".repeat(head.len()))?;
    for row in rows {
        writeln!(out, "| {} |", line(&mut row.iter().map(String::as_str)))?;
    }
    writeln!(out)
}

/// Untrusted text (a label's reason, an error an agent's output ran into, a
/// name from a record) as inert Markdown on one line: line breaks and tabs
/// become spaces; `\`, `|` and backticks are escaped, so a table keeps its
/// cells and no code span opens; `<`, `>` and `&` become entities, so no HTML
/// gets through; other control characters show as `\u{..}`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '|' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// "3 ok, 1 timeout": the records per status, statuses with none left out.
pub fn status_summary(counts: &std::collections::BTreeMap<RunStatus, usize>) -> String {
    RunStatus::ALL
        .iter()
        .filter_map(|s| counts.get(s).map(|n| format!("{n} {s}")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn header(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "# Report: batch {}\n", a.batch)?;
    let total: usize = a.status_counts.values().sum();
    writeln!(
        out,
        "{total} task runs ({}). Only `ok` runs enter the statistics; runs that ended in an \
         agent error, a timeout, a budget limit or an infrastructure error are counted under \"Failed runs\" \
         and never mixed into results.\n",
        status_summary(&a.status_counts)
    )?;
    writeln!(
        out,
        "Baseline: **{}**. A difference is condition minus baseline: per task the difference \
         of the medians, for \"all\" the median of the per-task differences. Intervals: {}% \
         percentile bootstrap, {} resamples drawing runs within each (task, condition) cell, \
         ChaCha8 seed {}. p: exact permutation test enumerating every relabelling, two-sided, \
         difference of means; for \"all\" runs are relabelled within each task and the \
         statistic is the sum of the per-task mean differences.\n",
        a.baseline,
        fmt_num(a.bootstrap.confidence * 100.0),
        a.bootstrap.resamples,
        a.bootstrap.seed
    )
}

fn cells(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Per task and condition\n")?;
    let rows: Vec<Vec<String>> = a
        .cells
        .iter()
        .map(|c| {
            let rate = if c.ok == 0 {
                "–".to_string()
            } else {
                format!("{}/{}", c.hidden_passed, c.ok)
            };
            vec![
                c.task.clone(),
                c.condition.clone(),
                c.runs.to_string(),
                c.ok.to_string(),
                rate,
                fmt_opt(c.loc_added_median),
                fmt_opt(c.tokens_median),
                fmt_opt(c.cost_median),
            ]
        })
        .collect();
    table(
        out,
        &[
            "task",
            "condition",
            "runs",
            "n (ok)",
            "hidden pass",
            "lines added (median)",
            "tokens (median)",
            "cost USD (median)",
        ],
        &rows,
    )
}

fn differences(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Differences vs {}\n", a.baseline)?;
    for note in &a.notes {
        writeln!(out, "- {note}")?;
    }
    if !a.notes.is_empty() {
        writeln!(out)?;
    }
    for metric in Metric::ALL {
        let rows: Vec<&Comparison> = a
            .comparisons
            .iter()
            .filter(|c| c.metric == metric)
            .collect();
        if rows.is_empty() {
            continue;
        }
        writeln!(out, "### {} (`{}`)\n", metric.label(), metric.name())?;
        let n_base = format!("n {}", a.baseline);
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|c| {
                vec![
                    c.scope.name().to_string(),
                    c.condition.clone(),
                    c.n.to_string(),
                    c.n_baseline.to_string(),
                    fmt_num(c.median_diff),
                    format!("[{}, {}]", fmt_num(c.ci_low), fmt_num(c.ci_high)),
                    fmt_p(c.p_exact),
                ]
            })
            .collect();
        table(
            out,
            &[
                "scope",
                "condition",
                "n",
                &n_base,
                "median diff",
                "95% CI",
                "p exact",
            ],
            &cells,
        )?;
        for c in rows.iter().filter(|c| c.p_refused.is_some()) {
            writeln!(
                out,
                "- p not computed for {} {}: {}",
                c.scope.name(),
                c.condition,
                c.p_refused.as_deref().unwrap_or_default()
            )?;
        }
        if rows.iter().any(|c| c.p_refused.is_some()) {
            writeln!(
                out,
                "  (p is exact or absent, never estimated; a test per task enumerates at most \
                 {MAX_RELABELLINGS} relabellings.)\n"
            )?;
        }
    }
    Ok(())
}

fn fisher(out: &mut String, a: &Analysis) -> std::fmt::Result {
    if a.fisher.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Hidden tests passed (Fisher's exact test)\n")?;
    writeln!(
        out,
        "Successes of `ok` runs; \"all\" pools the tasks. p is two-sided.\n"
    )?;
    let base = format!("{} passed", a.baseline);
    let rows: Vec<Vec<String>> = a
        .fisher
        .iter()
        .map(|f| {
            vec![
                f.scope.name().to_string(),
                f.condition.clone(),
                format!("{}/{}", f.passed.successes, f.passed.n),
                format!("{}/{}", f.baseline_passed.successes, f.baseline_passed.n),
                fmt_p(Some(f.p_two_sided)),
            ]
        })
        .collect();
    table(out, &["scope", "condition", "passed", &base, "p"], &rows)
}

fn hooks(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Hooks\n")?;
    writeln!(
        out,
        "Engine hook counts summed over every run of a condition, and what the agent did \
         after each denial and block (classes defined in `record.rs`).\n"
    )?;
    // The guards' column only where a condition had guards, so reports of
    // batches without them stay as they were.
    let any_guards = a.hooks.iter().any(|h| !h.counts.guards.is_empty());
    let rows: Vec<Vec<String>> = a
        .hooks
        .iter()
        .map(|h| {
            vec![
                h.condition.clone(),
                h.runs.to_string(),
                h.counts.denials.to_string(),
                h.counts.blocks.to_string(),
                h.counts.pauses.to_string(),
                h.counts.suggestions.to_string(),
            ]
            .into_iter()
            .chain(Outcome::ALL.map(|o| h.outcomes.get(o).to_string()))
            .chain(any_guards.then(|| guard_counts(&h.counts)))
            .collect()
        })
        .collect();
    let mut head = vec![
        "condition",
        "runs",
        "denials",
        "blocks",
        "pauses",
        "suggestions",
    ];
    head.extend(Outcome::ALL.map(Outcome::as_str));
    if any_guards {
        head.push("guards (notes/blocks)");
    }
    table(out, &head, &rows)?;
    note_outcomes(out, a)
}

/// What the agent did after the re-implementation notes, per condition; only in
/// a batch where a note was given.
fn note_outcomes(out: &mut String, a: &Analysis) -> std::fmt::Result {
    if a.hooks.iter().all(|h| h.note_outcomes.is_zero()) {
        return Ok(());
    }
    writeln!(
        out,
        "\nAfter each re-implementation note (rule `reuse.note`), what the agent did:\n"
    )?;
    let rows: Vec<Vec<String>> = a
        .hooks
        .iter()
        .map(|h| {
            std::iter::once(h.condition.clone())
                .chain(Outcome::ALL.map(|o| h.note_outcomes.get(o).to_string()))
                .collect()
        })
        .collect();
    let mut head = vec!["condition"];
    head.extend(Outcome::ALL.map(Outcome::as_str));
    table(out, &head, &rows)
}

/// The query tools' calls per condition; only in a batch where an agent called one.
fn tool_calls(out: &mut String, a: &Analysis) -> std::fmt::Result {
    let mut tools: Vec<&str> = a
        .hooks
        .iter()
        .flat_map(|h| h.tool_calls.keys().map(String::as_str))
        .collect();
    tools.sort_unstable();
    tools.dedup();
    if tools.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Query tools\n")?;
    writeln!(
        out,
        "Calls of the engine's query tools that reached the engine, summed over every run of \
         a condition (conditions with `mcp_tools`; elsewhere the CLI has no such tool).\n"
    )?;
    let rows: Vec<Vec<String>> = a
        .hooks
        .iter()
        .map(|h| {
            let calls = tools
                .iter()
                .map(|t| h.tool_calls.get(*t).copied().unwrap_or(0));
            [h.condition.clone(), h.runs.to_string()]
                .into_iter()
                .chain(calls.map(|n| n.to_string()))
                .collect()
        })
        .collect();
    let mut head = vec!["condition", "runs"];
    head.extend(&tools);
    table(out, &head, &rows)
}

/// A condition's guard counts in one cell: `loop 1/0, acceptance 0/1 (proved
/// 1/2)`: notes/blocks, and the acceptance points a passing run proved.
fn guard_counts(counts: &HookCounts) -> String {
    counts
        .guards
        .iter()
        .map(|(name, c)| match c.points {
            0 => format!("{name} {}/{}", c.notes, c.blocks),
            points => format!(
                "{name} {}/{} (proved {}/{points})",
                c.notes, c.blocks, c.proved
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn integrity(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Integrity flags\n")?;
    let rows: Vec<Vec<String>> = a
        .flagged()
        .map(|r| {
            vec![
                r.task.clone(),
                r.condition.clone(),
                r.rep.to_string(),
                r.status.to_string(),
                yes_no(r.integrity.touched_task_files),
                yes_no(r.integrity.edited_tests),
            ]
        })
        .collect();
    if rows.is_empty() {
        return writeln!(
            out,
            "No run touched the task's files (hidden tests, reference) or edited the project's tests.\n"
        );
    }
    table(
        out,
        &[
            "task",
            "condition",
            "rep",
            "status",
            "touched task files",
            "edited tests",
        ],
        &rows,
    )
}

fn yes_no(flag: bool) -> String {
    if flag { "yes" } else { "no" }.to_string()
}

fn failed(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Failed runs\n")?;
    let rows: Vec<Vec<String>> = a
        .failed()
        .map(|r| {
            vec![
                r.task.clone(),
                r.condition.clone(),
                r.rep.to_string(),
                r.status.to_string(),
                r.error.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if rows.is_empty() {
        return writeln!(out, "None: every run ended `ok`.\n");
    }
    table(out, &["task", "condition", "rep", "status", "error"], &rows)
}

fn manifest(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Manifest\n")?;
    match &a.manifest {
        Some(text) => writeln!(out, "```toml\n{}\n```\n", text.trim_end()),
        None => writeln!(out, "The batch folder has no `manifest.toml`.\n"),
    }
}

fn plot_links(out: &mut String, a: &Analysis) -> std::fmt::Result {
    writeln!(out, "## Plots\n")?;
    for (stem, title) in plots::report_plot_names(a) {
        writeln!(
            out,
            "- {title}: [SVG](plots/{stem}.svg), [PNG](plots/{stem}.png)"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_stays_one_inert_line() {
        assert_eq!(
            escape("a\r\nb\t| `x` <i>&</i> \\ \u{7}\u{9b}"),
            "a  b \\| \\`x\\` &lt;i&gt;&amp;&lt;/i&gt; \\\\ \\u{7}\\u{9b}"
        );
        let mut out = String::new();
        table(&mut out, &["a|b"], &[vec!["x\ny".into()]]).unwrap();
        assert_eq!(out, "| a\\|b |\n| --- |\n| x y |\n\n");
    }
}
