//! The reviewer in the Stop audit (docs/contract.md, "The reviewer"): after the change
//! rules pass, and only when code changed since the approved point, a [`Reviewer`] reads
//! the diff with the index's candidates. The engine makes no model call itself: the
//! reviewer is passed in through [`ReviewOptions`].
//!
//! Whatever the reviewer answers, the engine keeps the rule of evidence: a
//! finding that quotes (`quote: Some`) must quote the diff verbatim (an added,
//! removed or context line's text, or a run of them) or it is dropped. Findings
//! at or above `block_at` block the Stop; the rest are hints.

use std::fmt;
use std::sync::Arc;

use git2::Oid;
use serde_json::{Value, json};

use super::ledger::Verdict;
pub use super::ledger::{ReviewFinding, ReviewRecord};
use super::{Event, Outcome, Session, agent_key, specific_output};
use crate::finding::Finding;

/// The confidence at which a review finding blocks, unless configured.
pub const DEFAULT_BLOCK_AT: f64 = 0.9;

/// What a reviewer reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewInput {
    /// `git diff` text of the change since the approved point.
    pub patch: String,
    /// Project-relative paths the change touches.
    pub files: Vec<String>,
    /// The audit's findings that name an existing unit (the candidates each new
    /// unit resembles; none of them blocking, or the reviewer is not asked), then
    /// the re-implementation finder's first candidates for each unit the change
    /// adds (rule `reuse.candidate`).
    pub candidates: Vec<Finding>,
}

/// What a reviewer answered and what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewAnswer {
    pub findings: Vec<ReviewFinding>,
    /// Findings the reviewer itself dropped (e.g. a model finding without a quote).
    pub dropped: Vec<ReviewFinding>,
    pub calls: u32,
    pub tokens: u64,
}

pub trait Reviewer: Send + Sync + fmt::Debug {
    fn review(&self, input: &ReviewInput) -> anyhow::Result<ReviewAnswer>;
}

#[derive(Debug, Clone)]
pub struct ReviewOptions {
    pub reviewer: Arc<dyn Reviewer>,
    pub block_at: f64,
}

impl Session {
    /// The review of a Stop whose change rules passed: `None` when no reviewer is
    /// configured or no file changed since the approved point. Otherwise the
    /// Stop's outcome: blocked by findings at or above `block_at` (a failing round,
    /// as for every audit), else passed and approved, with hints as
    /// `additionalContext`. A reviewer that fails fails the audit: nothing is
    /// approved on an error.
    pub(super) fn review_at_stop(
        &mut self,
        event: Event,
        input: &Value,
        tree: Oid,
        findings: &[Finding],
    ) -> anyhow::Result<Option<Outcome>> {
        let (Some(options), Some(approved)) = (self.options.review.clone(), self.approved) else {
            return Ok(None);
        };
        let patch = self.checkpoints.patch(approved.tree, tree)?;
        if patch.is_empty() {
            return Ok(None);
        }
        let mut candidates: Vec<Finding> = findings
            .iter()
            .filter(|f| f.existing.is_some())
            .cloned()
            .collect();
        if let Some(judge) = &self.judge {
            let changes = self.checkpoints.changes(approved.tree, tree)?;
            candidates.extend(judge.reuse_candidates(&changes)?);
        }
        let review_input = ReviewInput {
            files: self.checkpoints.changed_paths(approved.tree, tree)?,
            candidates,
            patch,
        };
        let answer = options.reviewer.review(&review_input)?;
        let record = sort_findings(answer, &review_input.patch, options.block_at);
        let mut outcome = if record.blocking.is_empty() {
            self.approve(tree)?;
            self.stop_rounds.remove(&agent_key(input));
            let output = if record.hints.is_empty() {
                json!({})
            } else {
                let context = format!(
                    "Sens review of the change (hints, not blocking):\n{}",
                    describe(&record.hints)
                );
                specific_output(event.name(), "additionalContext", &context)
            };
            Outcome::new(Verdict::Pass, output, Some(tree))
        } else {
            let reason = format!(
                "Sens review of the change since the last approved state:\n{}\n\
                 Fix these (each quotes the change), then finish.",
                describe(&record.blocking)
            );
            let (verdict, output) = self.failed_round(event, input, reason);
            Outcome::new(verdict, output, Some(tree))
        };
        outcome.review = Some(record);
        Ok(Some(outcome))
    }
}

/// Sorts an answer's findings: a quote not verbatim in the patch drops the
/// finding; the rest block at `block_at` or above, or are hints.
pub fn sort_findings(answer: ReviewAnswer, patch: &str, block_at: f64) -> ReviewRecord {
    let text = diff_text(patch);
    let mut record = ReviewRecord {
        calls: answer.calls,
        tokens: answer.tokens,
        dropped: answer.dropped,
        ..ReviewRecord::default()
    };
    for finding in answer.findings {
        let quoted = finding
            .quote
            .as_deref()
            .is_none_or(|quote| !quote.trim().is_empty() && text.contains(quote.trim()));
        if !quoted {
            record.dropped.push(finding);
        } else if finding.confidence >= block_at {
            record.blocking.push(finding);
        } else {
            record.hints.push(finding);
        }
    }
    record
}

/// The patch's lines without their `+`/`-`/` ` marks (headers left out), so a
/// quote of several lines matches as the code reads.
fn diff_text(patch: &str) -> String {
    patch
        .lines()
        .filter(|line| !line.starts_with("+++ ") && !line.starts_with("--- "))
        .filter_map(|line| {
            line.strip_prefix('+')
                .or_else(|| line.strip_prefix('-'))
                .or_else(|| line.strip_prefix(' '))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The findings as the agent reads them, one per line.
pub fn describe(findings: &[ReviewFinding]) -> String {
    findings
        .iter()
        .map(|f| {
            let quote = f
                .quote
                .as_deref()
                .map(|q| format!(" (quoting {q:?})"))
                .unwrap_or_default();
            format!("- [{} {:.2}] {}{quote}", f.rule, f.confidence, f.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(quote: Option<&str>, confidence: f64) -> ReviewFinding {
        ReviewFinding {
            rule: "reviewer".into(),
            message: "m".into(),
            quote: quote.map(str::to_string),
            confidence,
        }
    }

    const PATCH: &str = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,4 @@\n \
                         def f(raw):\n+    try:\n+        return int(raw)\n+    except ValueError:\n+        return None\n";

    #[test]
    fn quotes_must_be_verbatim_and_confidence_decides_blocking() {
        let answer = ReviewAnswer {
            findings: vec![
                finding(Some("except ValueError:\n        return None"), 0.95),
                finding(Some("return nil"), 0.99),
                finding(Some("  "), 0.99),
                finding(Some("return None"), 0.6),
                finding(None, 0.95),
            ],
            dropped: vec![finding(None, 0.1)],
            calls: 2,
            tokens: 7,
        };
        let record = sort_findings(answer, PATCH, 0.9);
        assert_eq!(record.blocking.len(), 2, "{record:?}");
        assert_eq!(record.hints, vec![finding(Some("return None"), 0.6)]);
        assert_eq!(record.dropped.len(), 3);
        assert_eq!(record.dropped[1].quote.as_deref(), Some("return nil"));
        assert_eq!((record.calls, record.tokens), (2, 7));
        assert!(!diff_text(PATCH).contains("b/x.py"), "headers are no code");
    }
}
