//! Rules as data and the regression gate
//! (docs/contract.md, "Rules as data, the gate and calibration"): which rules each
//! condition judges with, and `sens-bench gate BATCH [--rules FILE] [--against FILE]`,
//! which replays every recorded engine decision of a batch with the current engine and
//! the given rules and lists what changed, in the manner of ruff's ecosystem check: a
//! summary line, a table by rule, then each change.
//!
//! - Old side: the verdict the ledger recorded, or with `--against` the replay
//!   with that rules file. New side: the replay with `--rules` (default: the
//!   default rules). What a replay holds as recorded is in `sens_engine::replay`.
//! - A change is a decision whose verdict differs, `paused` counting as `block`
//!   and a recorded `error` as the deny or block it answered.
//! - A decision that cannot be replayed (its pack or tree is missing, its line is
//!   malformed) is listed as `unreplayable`, and the gate exits 2.
//! - Exit 1 when a decision labelled `unjust` still denies or blocks, or one
//!   labelled `just` no longer does; otherwise 0.

mod output;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use rayon::prelude::*;
use sens_engine::config::RuleConfig;
use sens_engine::finding::Finding;
use sens_engine::replay::{Material, ParseCache, Replay, Replayed};
use sens_engine::session::ledger::Verdict;
use serde_json::Value;

use crate::batch::labels::{self as label, Judgement, ledger_dirs};
use crate::measure::ledger::{ledger_lines, normalized, objects};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The batch folder.
    pub batch: PathBuf,
    /// The rules to replay with (default: the default rules).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Compare with a replay under these rules instead of the recorded verdicts.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
}

/// One replayed decision: the old and the new side.
#[derive(Debug, Clone)]
pub struct Decision {
    pub run: String,
    pub seq: u64,
    pub event: String,
    pub old: Verdict,
    pub new: Verdict,
    pub old_findings: Vec<Finding>,
    pub new_findings: Vec<Finding>,
}

impl Decision {
    pub fn changed(&self) -> bool {
        normalized(&self.event, self.old) != normalized(&self.event, self.new)
    }
}

/// A decision (or a whole run, without `seq`) that could not be replayed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Unreplayable {
    pub run: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    pub error: String,
}

/// Everything one gate computed.
#[derive(Debug, Default)]
pub struct GateResult {
    pub runs: usize,
    pub decisions: Vec<Decision>,
    pub unreplayable: Vec<Unreplayable>,
    pub rules: String,
    pub against: String,
}

pub fn gate(args: &GateArgs) -> anyhow::Result<ExitCode> {
    let new = RuleConfig::load(args.rules.as_deref())?;
    let against = args
        .against
        .as_deref()
        .map(RuleConfig::from_file)
        .transpose()?;
    let labels = label::load(&args.batch)?;
    let result = replay_batch(&args.batch, &new, against.as_ref())?;
    let text = match args.format {
        Format::Md => output::markdown(&args.batch, &result, &labels),
        Format::Json => output::json(&result, &labels)?,
    };
    print!("{text}");
    if !result.unreplayable.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(if worse(&result.decisions, &labels).is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Labelled decisions whose new verdict contradicts the label.
pub fn worse<'a>(
    decisions: &'a [Decision],
    labels: &BTreeMap<(String, u64), label::Label>,
) -> Vec<&'a Decision> {
    decisions
        .iter()
        .filter(|d| {
            labels.get(&(d.run.clone(), d.seq)).is_some_and(|l| {
                let objects = objects(&d.event, d.new);
                match l.label {
                    Judgement::Unjust => objects,
                    Judgement::Just => !objects,
                }
            })
        })
        .collect()
}

/// Replays every run of the batch that has a non-empty ledger.
pub fn replay_batch(
    batch: &Path,
    new: &RuleConfig,
    against: Option<&RuleConfig>,
) -> anyhow::Result<GateResult> {
    let runs = ledger_dirs(batch)?;
    let new_cache = ParseCache::new(new.clone())?;
    let old_cache = against
        .map(|cfg| ParseCache::new(cfg.clone()))
        .transpose()?;
    let runs_root = batch.join("runs");
    let per_run: Vec<(Vec<Decision>, Vec<Unreplayable>)> = runs
        .par_iter()
        .map(|dir| {
            let name = dir
                .strip_prefix(&runs_root)
                .unwrap_or(dir)
                .to_string_lossy()
                .into_owned();
            replay_run(&name, dir, &new_cache, old_cache.as_ref()).unwrap_or_else(|err| {
                let lost = Unreplayable {
                    run: name,
                    seq: None,
                    error: format!("{err:#}"),
                };
                (Vec::new(), vec![lost])
            })
        })
        .collect();
    let mut result = GateResult {
        runs: runs.len(),
        rules: new.digest(),
        against: against.map_or_else(|| "recorded".into(), RuleConfig::digest),
        ..GateResult::default()
    };
    for (decisions, unreplayable) in per_run {
        result.decisions.extend(decisions);
        result.unreplayable.extend(unreplayable);
    }
    Ok(result)
}

type RunReplay = (Vec<Decision>, Vec<Unreplayable>);

fn replay_run(
    name: &str,
    dir: &Path,
    new_cache: &ParseCache,
    old_cache: Option<&ParseCache>,
) -> anyhow::Result<RunReplay> {
    let lines = ledger_lines(dir)?;
    // Guards alone made no engine decision: there is nothing to replay.
    if lines.iter().any(|l| l["guards_only"] == Value::Bool(true)) {
        return Ok((Vec::new(), Vec::new()));
    }
    let material = Material::open(dir)?;
    let mut new = Replay::new(material.repo(), new_cache)?;
    let mut old = old_cache
        .map(|cache| Replay::new(material.repo(), cache))
        .transpose()?;
    let mut decisions = Vec::new();
    let mut unreplayable = Vec::new();
    for line in &lines {
        let seq = line.get("seq").and_then(Value::as_u64);
        let replayed = new.line(line).and_then(|replayed| {
            let recorded = match old.as_mut() {
                Some(old) => old.line(line)?,
                None => Some(recorded(line)?),
            };
            Ok(replayed.zip(recorded))
        });
        match (replayed, seq) {
            (Ok(Some((new, old))), Some(seq)) => decisions.push(Decision {
                run: name.to_string(),
                seq,
                event: line["event"].as_str().unwrap_or_default().to_string(),
                old: old.verdict,
                new: new.verdict,
                old_findings: old.findings,
                new_findings: new.findings,
            }),
            (Ok(None), _) => {}
            (Ok(Some(_)), None) => unreplayable.push(Unreplayable {
                run: name.to_string(),
                seq: None,
                error: "a ledger line has no `seq`".into(),
            }),
            (Err(err), seq) => unreplayable.push(Unreplayable {
                run: name.to_string(),
                seq,
                error: format!("{err:#}"),
            }),
        }
    }
    Ok((decisions, unreplayable))
}

/// The verdict and findings the ledger line recorded: the engine's own
/// verdict where guards changed the answer (`engine_verdict`).
fn recorded(line: &Value) -> anyhow::Result<Replayed> {
    let verdict = line
        .get("engine_verdict")
        .filter(|v| !v.is_null())
        .unwrap_or(&line["verdict"]);
    let verdict = serde_json::from_value(verdict.clone())
        .context("ledger field `verdict` is not a verdict")?;
    let findings = serde_json::from_value(line["findings"].clone())
        .context("ledger field `findings` is not a list of findings")?;
    Ok(Replayed { verdict, findings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(event: &str, old: Verdict, new: Verdict) -> Decision {
        Decision {
            run: "t/C2/1".into(),
            seq: 4,
            event: event.into(),
            old,
            new,
            old_findings: Vec::new(),
            new_findings: Vec::new(),
        }
    }

    #[test]
    fn paused_is_a_block_and_errors_are_what_they_answered() {
        assert!(!decision("Stop", Verdict::Paused, Verdict::Block).changed());
        assert!(!decision("PreToolUse", Verdict::Error, Verdict::Deny).changed());
        assert!(decision("Stop", Verdict::Block, Verdict::Pass).changed());
        assert!(objects("Stop", Verdict::Error));
        assert!(!objects("PostToolUse", Verdict::Error));
    }

    #[test]
    fn labels_decide_what_is_worse() {
        let label = |judgement| {
            BTreeMap::from([(
                ("t/C2/1".to_string(), 4),
                label::Label {
                    run: "t/C2/1".into(),
                    seq: 4,
                    label: judgement,
                    reason: "r".into(),
                    time: chrono::Utc::now(),
                },
            )])
        };
        let lifted = [decision("PreToolUse", Verdict::Deny, Verdict::Allow)];
        assert_eq!(worse(&lifted, &label(Judgement::Just)).len(), 1);
        assert!(worse(&lifted, &label(Judgement::Unjust)).is_empty());
        let kept = [decision("Stop", Verdict::Block, Verdict::Paused)];
        assert_eq!(worse(&kept, &label(Judgement::Unjust)).len(), 1);
        assert!(worse(&kept, &BTreeMap::new()).is_empty());
    }
}
