//! The index page: the batch (manifest, conditions, comparisons, plots), decision
//! outcomes per condition and the matrix of runs.

use std::collections::BTreeMap;

use maud::{Markup, html};

use super::{page, run_page_path, svg_element};
use crate::record::{Outcome, RunStatus};
use crate::report::analysis::{Analysis, HookRow, hook_sums};
use crate::report::markdown::status_summary;
use crate::report::{fmt_num, fmt_opt, fmt_p};

/// The matrix's sorting and filtering (`matrix.js`).
const MATRIX_SCRIPT: &str = include_str!("matrix.js");

/// The index page; `plots` are (title, SVG).
pub fn render(a: &Analysis, plots: &[(String, String)]) -> String {
    // Over every record, sequence steps included (the analysis's sums are over task
    // runs only).
    let mut statuses = BTreeMap::new();
    for record in &a.records {
        *statuses.entry(record.status).or_insert(0) += 1;
    }
    let rows = hook_sums(a.records.iter());
    let body = html! {
        h1 { "Batch " (a.batch) }
        p { (a.records.len()) " runs (" (status_summary(&statuses)) "). Baseline: " b { (a.baseline) } "." }
        p {
            a href="#conditions" { "conditions" } " · " a href="#differences" { "differences" }
            " · " a href="#plots" { "plots" } " · " a href="#runs" { "runs" }
            " · " a href="#manifest" { "manifest" }
        }
        (conditions(&rows))
        (comparisons(a))
        h2 #plots { "Plots" }
        // Folded: the plots are long and the matrix below is what a reader looks for.
        details {
            summary { (plots.len()) " plots" }
            @for (title, svg) in plots {
                figure { figcaption { (title) } (svg_element(svg)) }
            }
        }
        (matrix(a, &rows))
        h2 #manifest { "Manifest" }
        @match &a.manifest {
            Some(text) => pre { (text) },
            None => p { "The batch folder has no manifest.toml." },
        }
    };
    page(&format!("Batch {}", a.batch), body, Some(MATRIX_SCRIPT))
}

fn conditions(rows: &[HookRow]) -> Markup {
    html! {
        h2 #conditions { "Conditions, engine decisions and what the agent did next" }
        table {
            thead { tr {
                th { "condition" } th { "runs" } th { "denials" } th { "blocks" }
                th { "pauses" } th { "suggestions" }
                @for outcome in Outcome::ALL { th { (outcome.as_str()) } }
            } }
            tbody {
                @for row in rows {
                    tr {
                        td { (row.condition) } td { (row.runs) }
                        td { (row.counts.denials) } td { (row.counts.blocks) }
                        td { (row.counts.pauses) } td { (row.counts.suggestions) }
                        @for outcome in Outcome::ALL { td { (row.outcomes.get(outcome)) } }
                    }
                }
            }
        }
    }
}

fn comparisons(a: &Analysis) -> Markup {
    html! {
        h2 #differences { "Differences vs " (a.baseline) }
        @for note in &a.notes { p { (note) } }
        table {
            thead { tr {
                th { "metric" } th { "scope" } th { "condition" } th { "n" }
                th { "n " (a.baseline) } th { "median diff" } th { "95% CI" } th { "p exact" }
            } }
            tbody {
                @for c in &a.comparisons {
                    tr {
                        td { (c.metric.label()) } td { (c.scope.name()) } td { (c.condition) }
                        td { (c.n) } td { (c.n_baseline) } td { (fmt_num(c.median_diff)) }
                        td { "[" (fmt_num(c.ci_low)) ", " (fmt_num(c.ci_high)) "]" }
                        td title=[c.p_refused.as_deref()] { (fmt_p(c.p_exact)) }
                    }
                }
            }
        }
    }
}

fn matrix(a: &Analysis, conditions: &[HookRow]) -> Markup {
    let flag = |v: Option<bool>| v.map_or("–", |p| if p { "yes" } else { "no" });
    html! {
        h2 #runs { "Runs" }
        p {
            label { "status " select #f-status {
                option value="" { "all" }
                @for s in RunStatus::ALL { option value=(s.as_str()) { (s.as_str()) } }
            } }
            " "
            label { "condition " select #f-condition {
                option value="" { "all" }
                @for c in conditions { option value=(c.condition) { (c.condition) } }
            } }
            " "
            label { "task " input #f-task type="search"; }
        }
        table #matrix {
            thead { tr {
                th { "task" } th data-num="1" { "step" } th { "condition" } th data-num="1" { "rep" }
                th { "status" } th { "hidden pass" } th data-num="1" { "lines added" }
                th data-num="1" { "tokens" } th data-num="1" { "cost USD" }
                th data-num="1" { "decisions" } th { "outcomes" }
            } }
            tbody {
                @for record in &a.records {
                    @let task = record.sequence.as_ref().map_or_else(
                        || record.task.clone(),
                        |s| format!("{s}/{}", record.task),
                    );
                    @let href = run_page_path(record).to_string_lossy().replace('\\', "/");
                    @let count = record.hooks.denials + record.hooks.blocks + record.hooks.pauses;
                    @let tokens = record.tokens.map(|t| t.total() as f64);
                    @let outcomes = Outcome::ALL
                        .iter()
                        .filter(|o| record.outcomes.get(**o) > 0)
                        .map(|o| format!("{} {}", o.as_str(), record.outcomes.get(*o)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    tr data-status=(record.status.as_str()) data-condition=(record.condition) data-task=(task) {
                        td data-v=(task) { a href=(href) { (task) } }
                        td data-v=[record.step] { (record.step.map_or_else(|| "–".to_string(), |s| s.to_string())) }
                        td data-v=(record.condition) { (record.condition) }
                        td data-v=(record.rep) { (record.rep) }
                        td data-v=(record.status.as_str()) { (record.status.as_str()) }
                        td data-v=(flag(record.hidden_pass)) { (flag(record.hidden_pass)) }
                        td data-v=[record.loc_added] { (fmt_opt(record.loc_added.map(|v| v as f64))) }
                        td data-v=[tokens] { (fmt_opt(tokens)) }
                        td data-v=[record.cost_usd] { (fmt_opt(record.cost_usd)) }
                        td data-v=(count) title="denials / blocks / pauses" {
                            (record.hooks.denials) " / " (record.hooks.blocks) " / " (record.hooks.pauses)
                        }
                        td data-v=(outcomes) { (outcomes) }
                    }
                }
            }
        }
    }
}
