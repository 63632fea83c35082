//! The comparisons as JSON (docs/contract.md, "Reports"; field names binding):
//! `{"comparisons": [{"scope", "metric", "condition", "baseline", "n",
//! "n_baseline", "median_diff", "ci_low", "ci_high", "p_exact"}, ...]}`.
//! `p_exact` is `null` when the exact enumeration was refused (too large).

use serde::Serialize;

use super::Exporter;
use super::analysis::Analysis;

pub struct Json;

#[derive(Serialize)]
struct Output<'a> {
    comparisons: Vec<ComparisonOut<'a>>,
}

#[derive(Serialize)]
struct ComparisonOut<'a> {
    scope: &'a str,
    metric: &'a str,
    condition: &'a str,
    baseline: &'a str,
    n: usize,
    n_baseline: usize,
    median_diff: f64,
    ci_low: f64,
    ci_high: f64,
    p_exact: Option<f64>,
}

impl Exporter<Analysis> for Json {
    fn render(&self, a: &Analysis) -> anyhow::Result<String> {
        let comparisons = a
            .comparisons
            .iter()
            .map(|c| ComparisonOut {
                scope: c.scope.name(),
                metric: c.metric.name(),
                condition: &c.condition,
                baseline: &c.baseline,
                n: c.n,
                n_baseline: c.n_baseline,
                median_diff: c.median_diff,
                ci_low: c.ci_low,
                ci_high: c.ci_high,
                p_exact: c.p_exact,
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&Output { comparisons })?;
        text.push('\n');
        Ok(text)
    }
}
