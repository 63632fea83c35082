//! `sens-bench review rules|run|test|dismiss`
//! (docs/contract.md, "Guards, review and Sens in a person's project"): review rules next
//! to the code they judge (`spec::review_rules`), answered by a decision model
//! (`agent::decider`) as one probability per rule.
//!
//! - Every score reads "the change follows the rule": a mistake's probability is
//!   flipped (1 - p). Under `HINT_BELOW` (0.80) a score is a hint.
//! - `run` never blocks on a flaky provider: a failed call prints "review did not
//!   run" and exits 0.
//! - `test` scores each case alone; margin = lowest compliant score minus highest
//!   violating score; a rule passes at [`PASSING_MARGIN`] or more.
//! - The last run and the dismissals are kept in the repository's git folder
//!   (`.git/sens-review/`): local to the clone, never part of a reviewed diff.

mod output;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::agent::decider::{self, Decider, DecisionRequest};
use crate::agent::review::{HINT_BELOW, Score, applying, change_request, scores};
use crate::jsonl;
use crate::spec::review_rules::{Rule, RuleBook, Tested, write_tested};
use crate::workspace::diff::collect_changes;
use crate::workspace::git::resolve_commit;

use crate::gate::Format;

/// A rule's cases must be this far apart.
pub const PASSING_MARGIN: f64 = 0.50;
pub const DEFAULT_BUDGET: u64 = 5_000_000;
const STATE_DIR: &str = "sens-review";
const LAST_RUN: &str = "last-run.json";
const DISMISSALS: &str = "dismissals.jsonl";

#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub command: ReviewCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ReviewCommand {
    /// The rules applying to files: what to avoid or do, the fix, the reference
    /// and the rules file. No model call.
    Rules {
        /// The project root.
        dir: PathBuf,
        /// Project-relative files.
        #[arg(long, num_args = 1.., required = true)]
        files: Vec<String>,
    },
    /// Ask the decision model once about the change since `--base`.
    Run {
        dir: PathBuf,
        #[arg(long, default_value = "HEAD")]
        base: String,
        /// A summary of the change, given to the model with the diff.
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "md")]
        format: Format,
        /// The largest request, in tokens (4 bytes each).
        #[arg(long, default_value_t = DEFAULT_BUDGET)]
        budget: u64,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Score every rule's labelled cases; write passing results back.
    Test {
        dir: PathBuf,
        #[arg(long)]
        rule: Option<String>,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Dismiss a rule's hint of the last run, for the same files, with a reason.
    Dismiss {
        dir: PathBuf,
        rule: String,
        reason: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// The Messages API model (the decisions endpoint, `SENS_DECISIONS_URL`, names its own).
    #[arg(long, default_value = decider::DEFAULT_MODEL)]
    pub model: String,
    /// Seconds one decision call may take.
    #[arg(long, default_value_t = decider::DEFAULT_TIMEOUT.as_secs())]
    pub timeout_s: u64,
}

impl ModelArgs {
    fn decider(&self) -> Result<Box<dyn Decider>, decider::DecideError> {
        decider::from_env(&self.model, Duration::from_secs(self.timeout_s))
    }
}

pub fn review(args: &ReviewArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        ReviewCommand::Rules { dir, files } => rules(dir, files),
        ReviewCommand::Run {
            dir,
            base,
            summary,
            format,
            budget,
            model,
        } => run(dir, base, summary.as_deref(), *format, *budget, model),
        ReviewCommand::Test { dir, rule, model } => test(dir, rule.as_deref(), model),
        ReviewCommand::Dismiss { dir, rule, reason } => dismiss(dir, rule, reason),
    }
}

fn rules(dir: &Path, files: &[String]) -> anyhow::Result<ExitCode> {
    let book = RuleBook::load(dir)?;
    let mut out = String::new();
    for file in files {
        let rules = book.applicable(file)?;
        out.push_str(&output::applicable(file, &rules));
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dismissal {
    pub rule: String,
    pub files: Vec<String>,
    pub reason: String,
    pub time: String,
}

/// What a run found: every score, the hints (worst first) and the dismissed hints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub scores: Vec<Score>,
    pub hints: Vec<Score>,
    pub dismissed: Vec<(Score, Dismissal)>,
    pub tokens: u64,
}

impl Outcome {
    /// Rules at or above [`HINT_BELOW`], and rules asked.
    pub fn compliance(&self) -> (usize, usize) {
        let passing = self.scores.iter().filter(|s| s.score >= HINT_BELOW).count();
        (passing, self.scores.len())
    }
}

/// Sorts scores into hints (worst first, then by rule) and dismissed hints.
pub fn outcome(scores: Vec<Score>, dismissals: &[Dismissal], tokens: u64) -> Outcome {
    let mut hints: Vec<Score> = scores
        .iter()
        .filter(|s| s.score < HINT_BELOW)
        .cloned()
        .collect();
    hints.sort_by(|a, b| {
        a.score
            .total_cmp(&b.score)
            .then_with(|| a.rule.cmp(&b.rule))
    });
    let mut dismissed = Vec::new();
    hints.retain(|hint| {
        let found = dismissals
            .iter()
            .rev()
            .find(|d| d.rule == hint.rule && d.files == hint.files);
        if let Some(dismissal) = found {
            dismissed.push((hint.clone(), dismissal.clone()));
        }
        found.is_none()
    });
    Outcome {
        scores,
        hints,
        dismissed,
        tokens,
    }
}

fn state_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let repo = git2::Repository::open(dir)
        .with_context(|| format!("{} is not the root of a git repository", dir.display()))?;
    Ok(repo.path().join(STATE_DIR))
}

fn run(
    dir: &Path,
    base: &str,
    summary: Option<&Path>,
    format: Format,
    budget: u64,
    model: &ModelArgs,
) -> anyhow::Result<ExitCode> {
    let book = RuleBook::load(dir)?;
    let repo = git2::Repository::open(dir)
        .with_context(|| format!("{} is not the root of a git repository", dir.display()))?;
    let base = resolve_commit(&repo, base)?;
    let change = collect_changes(dir, base, &[])?;
    let files: Vec<String> = change.files.iter().map(|f| f.path.clone()).collect();
    let rules = applying(&book, &files)?;
    let summary = summary
        .map(|path| {
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the summary {}", path.display()))
        })
        .transpose()?;
    let outcome = if rules.is_empty() {
        Outcome::default()
    } else {
        let patch = String::from_utf8_lossy(&change.patch);
        let request = change_request(dir, &rules, &patch, summary.as_deref())?;
        let tokens = request.estimated_tokens();
        if tokens > budget {
            bail!(
                "the review request is about {tokens} tokens, over the budget of {budget}: \
                 narrow it with a nearer --base (fewer changed files) or raise --budget"
            );
        }
        let answer = model.decider().and_then(|decider| decider.decide(&request));
        match answer {
            Ok(decisions) => {
                let dismissals = read_dismissals(&state_dir(dir)?)?;
                outcome(
                    scores(&rules, &decisions.probabilities),
                    &dismissals,
                    decisions.usage.total(),
                )
            }
            Err(err) => {
                println!("review did not run: {err}");
                return Ok(ExitCode::SUCCESS);
            }
        }
    };
    save_last_run(&state_dir(dir)?, &outcome)?;
    print!("{}", output::outcome(&outcome, format)?);
    Ok(ExitCode::SUCCESS)
}

fn save_last_run(state: &Path, outcome: &Outcome) -> anyhow::Result<()> {
    std::fs::create_dir_all(state).with_context(|| format!("cannot create {}", state.display()))?;
    let path = state.join(LAST_RUN);
    let text = serde_json::to_string_pretty(outcome)?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn read_dismissals(state: &Path) -> anyhow::Result<Vec<Dismissal>> {
    let path = state.join(DISMISSALS);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    jsonl::lines(&text, &path, "a dismissal")
        .map(|line| line.map(|(_, dismissal)| dismissal))
        .collect()
}

fn append_dismissal(state: &Path, dismissal: &Dismissal) -> anyhow::Result<()> {
    use std::io::Write;
    let path = state.join(DISMISSALS);
    let mut line = serde_json::to_string(dismissal)?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .with_context(|| format!("cannot append to {}", path.display()))
}

fn dismiss(dir: &Path, rule: &str, reason: &str) -> anyhow::Result<ExitCode> {
    let state = state_dir(dir)?;
    let path = state.join(LAST_RUN);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read the last review run {}: run `sens-bench review run` first",
            path.display()
        )
    })?;
    let last: Outcome = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a review run", path.display()))?;
    let Some(hint) = last.hints.iter().find(|h| h.rule == rule) else {
        bail!("rule `{rule}` gave no hint in the last review run: nothing to dismiss");
    };
    let dismissal = Dismissal {
        rule: rule.to_string(),
        files: hint.files.clone(),
        reason: reason.to_string(),
        time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    append_dismissal(&state, &dismissal)?;
    println!(
        "dismissed `{rule}` for {}: {reason}",
        dismissal.files.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// One rule's test: each case's score and the margin.
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    pub violating: Vec<f64>,
    pub compliant: Vec<f64>,
}

impl TestResult {
    pub fn margin(&self) -> f64 {
        let lowest_compliant = self.compliant.iter().copied().fold(f64::INFINITY, f64::min);
        let highest_violating = self
            .violating
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        lowest_compliant - highest_violating
    }

    pub fn passes(&self) -> bool {
        self.margin() >= PASSING_MARGIN
    }
}

/// Scores each case of `rule` alone.
pub fn test_rule(rule: &Rule, decider: &dyn Decider) -> anyhow::Result<TestResult> {
    let score = |case: &crate::spec::review_rules::Case| -> anyhow::Result<f64> {
        let request = DecisionRequest {
            state: format!("The change to {}:\n```diff\n{}```\n", case.file, case.diff),
            questions: [(rule.text.id.clone(), rule.question())]
                .into_iter()
                .collect(),
        };
        let decisions = decider
            .decide(&request)
            .with_context(|| format!("scoring a case of rule `{}`", rule.text.id))?;
        Ok(rule.follows(decisions.probabilities[&rule.text.id]))
    };
    Ok(TestResult {
        violating: rule
            .text
            .cases
            .violating
            .iter()
            .map(score)
            .collect::<Result<_, _>>()?,
        compliant: rule
            .text
            .cases
            .compliant
            .iter()
            .map(score)
            .collect::<Result<_, _>>()?,
    })
}

fn test(dir: &Path, only: Option<&str>, model: &ModelArgs) -> anyhow::Result<ExitCode> {
    let book = RuleBook::load(dir)?;
    let rules: Vec<&Rule> =
        match only {
            Some(id) => vec![book.get(id).with_context(|| {
                format!("no rule `{id}` in the rules files of {}", dir.display())
            })?],
            None => book.rules.iter().collect(),
        };
    let decider = model.decider()?;
    let mut passed = BTreeMap::new();
    let mut failed = 0;
    let mut out = String::new();
    for rule in rules {
        let was = rule.status();
        let result = test_rule(rule, decider.as_ref())?;
        out.push_str(&output::test_line(rule, was, &result));
        if result.passes() {
            passed.insert(
                rule.text.id.clone(),
                Tested::new(result.margin(), rule.hash()),
            );
        } else {
            failed += 1;
        }
    }
    write_tested(dir, &passed, &book)?;
    print!("{out}");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(rule: &str, value: f64, files: &[&str]) -> Score {
        Score {
            rule: rule.into(),
            score: value,
            files: files.iter().map(|f| f.to_string()).collect(),
            wording: String::new(),
            fix: String::new(),
            reference: String::new(),
        }
    }

    #[test]
    fn hints_are_worst_first_and_dismissals_need_the_same_files() {
        let scores = vec![
            score("a", 0.5, &["x"]),
            score("b", 0.1, &["x"]),
            score("c", 0.9, &["x"]),
            score("d", 0.7, &["x", "y"]),
        ];
        let dismissal = |files: &[&str]| Dismissal {
            rule: "d".into(),
            files: files.iter().map(|f| f.to_string()).collect(),
            reason: "r".into(),
            time: "t".into(),
        };
        let got = outcome(scores.clone(), &[dismissal(&["x"])], 0);
        let order: Vec<&str> = got.hints.iter().map(|h| h.rule.as_str()).collect();
        assert_eq!(order, ["b", "a", "d"]);
        assert_eq!(got.compliance(), (1, 4));
        let got = outcome(scores, &[dismissal(&["x", "y"])], 0);
        assert_eq!(got.hints.len(), 2);
        assert_eq!(got.dismissed[0].0.rule, "d");
        assert_eq!(got.compliance(), (1, 4));
    }

    #[test]
    fn the_margin_is_lowest_compliant_minus_highest_violating() {
        let result = TestResult {
            violating: vec![0.1, 0.3],
            compliant: vec![0.9, 0.8],
        };
        assert!((result.margin() - 0.5).abs() < 1e-9);
        assert!(result.passes());
        let close = TestResult {
            violating: vec![0.4],
            compliant: vec![0.7],
        };
        assert!(!close.passes());
    }
}
