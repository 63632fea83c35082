//! What the review commands print. Rule texts and file names come from the
//! project, not from an agent, but a hint shown in Markdown is still one line:
//! newlines in them are folded.

use serde_json::json;

use super::{Outcome, TestResult};
use crate::agent::review::HINT_BELOW;
use crate::gate::Format;
use crate::spec::review_rules::{Kind, Rule, TestStatus};

fn line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn status(status: TestStatus) -> String {
    match status {
        TestStatus::Untested => "untested".into(),
        TestStatus::Stale => "stale (edited since its test)".into(),
        TestStatus::Tested { margin } => format!("tested, margin {margin:.2}"),
    }
}

/// `review rules` for one file.
pub fn applicable(file: &str, rules: &[&Rule]) -> String {
    let mut out = format!("{file}: {} rules\n", rules.len());
    for rule in rules {
        let what = match rule.kind {
            Kind::Mistake => "avoid",
            Kind::Statement => "do",
        };
        out.push_str(&format!(
            "- {} ({}): {what}: {}\n  fix: {}\n  reference: {}\n  from: {}\n",
            rule.text.id,
            status(rule.status()),
            line(rule.wording()),
            line(&rule.text.fix),
            rule.reference(),
            rule.source,
        ));
    }
    out
}

/// `review run`'s report.
pub fn outcome(outcome: &Outcome, format: Format) -> anyhow::Result<String> {
    let (passing, total) = outcome.compliance();
    if format == Format::Json {
        let value = json!({
            "scores": outcome.scores,
            "hints": outcome.hints,
            "dismissed": outcome.dismissed.iter().map(|(score, dismissal)| {
                json!({"score": score, "dismissal": dismissal})
            }).collect::<Vec<_>>(),
            "compliance": {"passing": passing, "rules": total},
            "tokens": outcome.tokens,
        });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&value)?));
    }
    let mut out = String::new();
    if !outcome.hints.is_empty() {
        out.push_str(&format!(
            "hints (scores under {:.0}%, worst first):\n",
            HINT_BELOW * 100.0
        ));
    }
    for hint in &outcome.hints {
        out.push_str(&format!(
            "- {:.2} {} in {}: {}\n  fix: {}\n  reference: {}\n",
            hint.score,
            hint.rule,
            hint.files.join(", "),
            line(&hint.wording),
            line(&hint.fix),
            hint.reference,
        ));
    }
    for (score, dismissal) in &outcome.dismissed {
        out.push_str(&format!(
            "dismissed: {:.2} {} in {}: {} ({})\n",
            score.score,
            score.rule,
            score.files.join(", "),
            line(&dismissal.reason),
            dismissal.time,
        ));
    }
    out.push_str(&format!(
        "compliance {passing}/{total} rules at {:.0}% or above\n",
        HINT_BELOW * 100.0
    ));
    Ok(out)
}

/// `review test`'s line for one rule.
pub fn test_line(rule: &Rule, was: TestStatus, result: &TestResult) -> String {
    let verdict = if result.passes() { "pass" } else { "FAIL" };
    let scores = |values: &[f64]| {
        values
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "{verdict} {}: margin {:.2} (violating {}; compliant {}); was {}\n",
        rule.text.id,
        result.margin(),
        scores(&result.violating),
        scores(&result.compliant),
        status(was),
    )
}
