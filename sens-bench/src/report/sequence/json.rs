//! The sequence report as JSON (docs/contract.md, "Reports"; field names binding).

use serde::Serialize;

use super::analysis::{SequenceAnalysis, SequenceBatch};
use crate::report::Exporter;

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
