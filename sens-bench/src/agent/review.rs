//! The review rules and the reviewer model asked about a change: what
//! `sens-bench review run` asks, and the engine's [`Reviewer`] at the Stop audit
//! (condition option `review`).
//!
//! At a Stop, a rule scoring s (the change follows it) is a finding of
//! confidence 1 - s when s is under [`HINT_BELOW`]; the reviewer model's
//! findings carry their own confidence and a quote of the diff. The engine
//! drops a quote that is not verbatim and blocks at its `block_at`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use sens_engine::session::review::{ReviewAnswer, ReviewFinding, ReviewInput, Reviewer};
use serde::{Deserialize, Serialize};

use super::decider::{Decider, DecisionRequest};
use super::messages::MessagesClient;
use crate::spec::conditions::ReviewMode;
use crate::spec::review_rules::{Rule, RuleBook};

/// Scores under this are hints.
pub const HINT_BELOW: f64 = 0.80;
/// The `rule` of the reviewer model's findings.
pub const REVIEWER_RULE: &str = "reviewer";
const MAX_REVIEW_TOKENS: u32 = 2048;

const REVIEWER_SYSTEM: &str = "You review a code change for judgement mistakes that rules \
cannot see: an error swallowed into a default value, a special case for one product in shared \
code, a new function that redoes what an existing one does. Answer with exactly one JSON object \
and nothing else: {\"findings\": [{\"message\": what is wrong and what to do, \"quote\": the \
lines of the diff it is about, copied verbatim, \"confidence\": a number from 0 to 1}]}. \
An empty list when nothing is wrong.";
/// The start of the reviewer model's user message.
pub const REVIEWER_PROMPT: &str = "Review this change.";

/// One rule's score in a run, with the changed files it applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub rule: String,
    pub score: f64,
    pub files: Vec<String>,
    pub wording: String,
    pub fix: String,
    pub reference: String,
}

/// The rules applying to any of `files`, each with the files it applies to.
pub fn applying<'a>(
    book: &'a RuleBook,
    files: &[String],
) -> anyhow::Result<Vec<(&'a Rule, Vec<String>)>> {
    let mut by_rule: BTreeMap<&str, (&Rule, Vec<String>)> = BTreeMap::new();
    for file in files {
        for rule in book.applicable(file)? {
            by_rule
                .entry(&rule.text.id)
                .or_insert_with(|| (rule, Vec::new()))
                .1
                .push(file.clone());
        }
    }
    Ok(by_rule.into_values().collect())
}

/// The decision request of a change: summary, diff, reference files, one
/// question per rule.
pub fn change_request(
    root: &Path,
    rules: &[(&Rule, Vec<String>)],
    patch: &str,
    summary: Option<&str>,
) -> anyhow::Result<DecisionRequest> {
    let mut state = String::new();
    if let Some(summary) = summary {
        state.push_str(&format!("Summary of the change:\n{summary}\n\n"));
    }
    state.push_str(&format!("The change:\n```diff\n{patch}```\n"));
    let references: BTreeMap<String, &Rule> =
        rules.iter().map(|(r, _)| (r.reference(), *r)).collect();
    for (reference, rule) in references {
        let path = rule.reference_file(root)?;
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read the reference file {}", path.display()))?;
        state.push_str(&format!(
            "\nReference {reference} (the right pattern):\n```\n{text}```\n"
        ));
    }
    Ok(DecisionRequest {
        state,
        questions: rules
            .iter()
            .map(|(rule, _)| (rule.text.id.clone(), rule.question()))
            .collect(),
    })
}

/// The scores of an answer, in the order of `rules`.
pub fn scores(rules: &[(&Rule, Vec<String>)], probabilities: &BTreeMap<String, f64>) -> Vec<Score> {
    rules
        .iter()
        .filter_map(|(rule, files)| {
            let p = probabilities.get(&rule.text.id)?;
            Some(Score {
                rule: rule.text.id.clone(),
                score: rule.follows(*p),
                files: files.clone(),
                wording: rule.wording().to_string(),
                fix: rule.text.fix.clone(),
                reference: rule.reference(),
            })
        })
        .collect()
}

/// The bench's reviewer: the review rules of the project, the reviewer model,
/// or both, as the condition's `review` says.
pub struct BenchReviewer {
    mode: ReviewMode,
    root: PathBuf,
    book: RuleBook,
    decider: Box<dyn Decider>,
    client: MessagesClient,
}

impl fmt::Debug for BenchReviewer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BenchReviewer({:?}, {} rules)",
            self.mode,
            self.book.rules.len()
        )
    }
}

impl BenchReviewer {
    /// Reads the project's rules files now: a bad one fails the session's start.
    pub fn new(
        root: &Path,
        mode: ReviewMode,
        decider: Box<dyn Decider>,
        client: MessagesClient,
    ) -> anyhow::Result<Self> {
        let book = RuleBook::load(root)?;
        Ok(BenchReviewer {
            mode,
            root: root.to_path_buf(),
            book,
            decider,
            client,
        })
    }

    fn ask_rules(&self, input: &ReviewInput, answer: &mut ReviewAnswer) -> anyhow::Result<()> {
        let rules = applying(&self.book, &input.files)?;
        if rules.is_empty() {
            return Ok(());
        }
        let request = change_request(&self.root, &rules, &input.patch, None)?;
        let decisions = self.decider.decide(&request)?;
        answer.calls += 1;
        answer.tokens += decisions.usage.total();
        for score in scores(&rules, &decisions.probabilities) {
            if score.score < HINT_BELOW {
                answer.findings.push(ReviewFinding {
                    rule: score.rule,
                    message: format!(
                        "{} Fix: {} (see {}, in {})",
                        score.wording,
                        score.fix,
                        score.reference,
                        score.files.join(", ")
                    ),
                    quote: None,
                    confidence: 1.0 - score.score,
                });
            }
        }
        Ok(())
    }

    fn ask_reviewer(&self, input: &ReviewInput, answer: &mut ReviewAnswer) -> anyhow::Result<()> {
        let reply = self
            .client
            .ask(REVIEWER_SYSTEM, &reviewer_prompt(input), MAX_REVIEW_TOKENS)?;
        answer.calls += 1;
        answer.tokens += reply.usage.total();
        let (kept, dropped) = reviewer_findings(&reply.text)?;
        answer.findings.extend(kept);
        answer.dropped.extend(dropped);
        Ok(())
    }
}

impl Reviewer for BenchReviewer {
    fn review(&self, input: &ReviewInput) -> anyhow::Result<ReviewAnswer> {
        let mut answer = ReviewAnswer::default();
        if matches!(self.mode, ReviewMode::Rules | ReviewMode::Both) {
            self.ask_rules(input, &mut answer)
                .context("asking the review rules")?;
        }
        if matches!(self.mode, ReviewMode::Reviewer | ReviewMode::Both) {
            self.ask_reviewer(input, &mut answer)
                .context("asking the reviewer model")?;
        }
        Ok(answer)
    }
}

/// The diff and, for each new unit the index finds similar to an existing one,
/// that candidate.
fn reviewer_prompt(input: &ReviewInput) -> String {
    let mut prompt = format!(
        "{REVIEWER_PROMPT}\n\nThe diff:\n```diff\n{}```\n",
        input.patch
    );
    if !input.candidates.is_empty() {
        prompt.push_str("\nExisting code most similar to the new code:\n");
    }
    for finding in &input.candidates {
        if let Some(existing) = &finding.existing {
            prompt.push_str(&format!(
                "- new {} ({}:{}) resembles {}:{} `{}` ({:.2})\n",
                finding.new.name,
                finding.new.file,
                finding.new.line,
                existing.file,
                existing.line,
                existing.signature,
                finding.similarity
            ));
        }
    }
    prompt
}

/// The reviewer model's answer, parsed strictly: one object with a `findings`
/// list of `{message, quote, confidence}`. A finding without a quote is dropped
/// (returned second); anything else malformed is an error.
pub fn reviewer_findings(text: &str) -> anyhow::Result<(Vec<ReviewFinding>, Vec<ReviewFinding>)> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer {
        findings: Vec<Raw>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        message: String,
        #[serde(default)]
        quote: Option<String>,
        confidence: f64,
    }
    let answer: Answer = serde_json::from_str(text.trim())
        .with_context(|| format!("the reviewer's answer is malformed: {text:?}"))?;
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for raw in answer.findings {
        anyhow::ensure!(
            (0.0..=1.0).contains(&raw.confidence),
            "the reviewer's answer is malformed: confidence {} is not from 0 to 1",
            raw.confidence
        );
        let finding = ReviewFinding {
            rule: REVIEWER_RULE.to_string(),
            message: raw.message,
            confidence: raw.confidence,
            quote: raw.quote.filter(|q| !q.trim().is_empty()),
        };
        if finding.quote.is_some() {
            kept.push(finding);
        } else {
            dropped.push(finding);
        }
    }
    Ok((kept, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reviewer_answers_are_strict_and_findings_need_a_quote() {
        let (kept, dropped) = reviewer_findings(
            r#"{"findings": [{"message": "m", "quote": "return None", "confidence": 0.95},
                             {"message": "n", "confidence": 0.99}]}"#,
        )
        .unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].quote.as_deref(), Some("return None"));
        assert_eq!(dropped[0].message, "n");
        for bad in [
            "findings: []",
            r#"{"findings": [], "extra": 1}"#,
            r#"{"findings": [{"message": "m", "quote": "q", "confidence": 2}]}"#,
            r#"{"findings": [{"message": "m", "quote": "q", "confidence": 0.5, "why": "w"}]}"#,
        ] {
            assert!(reviewer_findings(bad).is_err(), "{bad}");
        }
    }
}
