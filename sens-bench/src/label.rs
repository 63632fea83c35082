//! Labels (SPEC 3.11): a person's judgement that one engine decision was just or
//! unjust. `sens-bench label BATCH RUN SEQ just|unjust --why "..."` appends one
//! line to the batch's `labels.jsonl`; the latest label of a decision wins. The
//! gate fails when a labelled decision gets worse; the report lists the labels
//! and the unjust-block rate.
//!
//! The unjust-block rate is the share of labelled denials and blocks (as
//! recorded) that are labelled `unjust`; unlabelled decisions are unknown, so
//! the report also says how many of all denials and blocks are labelled.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use sens_engine::session::ledger::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The batch file the labels are appended to.
pub const LABELS_FILE: &str = "labels.jsonl";
/// A run folder's hook ledger.
pub const LEDGER_FILE: &str = "hooks.jsonl";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Judgement {
    /// The engine was right to deny or block (or to let it pass).
    Just,
    /// The engine denied or blocked correct work.
    Unjust,
}

/// One line of `labels.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Label {
    /// The run folder relative to `runs/` (a sequence step's folder for a step).
    pub run: String,
    /// The ledger line's `seq`.
    pub seq: u64,
    pub label: Judgement,
    pub reason: String,
    pub time: DateTime<Utc>,
}

#[derive(Debug, clap::Args)]
pub struct LabelArgs {
    /// The batch folder.
    pub batch: PathBuf,
    /// The run folder relative to the batch's `runs/` (e.g. py-ledger/C2/1).
    pub run: String,
    /// The ledger line's `seq`.
    pub seq: u64,
    pub label: Judgement,
    /// Why the decision was just or unjust.
    #[arg(long)]
    pub why: String,
}

/// `sens-bench label`: checks that the run and the ledger line exist, then appends.
pub fn label(args: &LabelArgs) -> anyhow::Result<ExitCode> {
    let lines = ledger_lines(&run_dir(&args.batch, &args.run)?)?;
    if !lines
        .iter()
        .any(|l| l.get("seq").and_then(Value::as_u64) == Some(args.seq))
    {
        bail!(
            "run {} has no ledger line with seq {} ({} lines in its {LEDGER_FILE})",
            args.run,
            args.seq,
            lines.len()
        );
    }
    if args.why.trim().is_empty() {
        bail!("--why must say why the decision was {:?}", args.label);
    }
    let label = Label {
        run: args.run.clone(),
        seq: args.seq,
        label: args.label,
        reason: args.why.clone(),
        time: Utc::now(),
    };
    let path = args.batch.join(LABELS_FILE);
    let mut line = serde_json::to_string(&label).context("encoding a label")?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .with_context(|| format!("cannot append to {}", path.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The folder of `run` under the batch's `runs/`; it must hold a ledger.
pub fn run_dir(batch: &Path, run: &str) -> anyhow::Result<PathBuf> {
    let relative = Path::new(run);
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        bail!("RUN {run} must be a folder relative to runs/ (e.g. py-ledger/C2/1)");
    }
    let dir = batch.join("runs").join(relative);
    if !dir.join(LEDGER_FILE).is_file() {
        bail!(
            "{} has no run {run}: {} does not exist",
            batch.display(),
            dir.join(LEDGER_FILE).display()
        );
    }
    Ok(dir)
}

/// The lines of a run folder's ledger as JSON; an error names the file and line.
pub fn ledger_lines(dir: &Path) -> anyhow::Result<Vec<Value>> {
    let path = dir.join(LEDGER_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .with_context(|| format!("{} line {} is not JSON", path.display(), i + 1))
        })
        .collect()
}

/// The latest label of each decision, by (run, seq); none without a file.
pub fn load(batch: &Path) -> anyhow::Result<BTreeMap<(String, u64), Label>> {
    let path = batch.join(LABELS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut labels = BTreeMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let label: Label = serde_json::from_str(line)
            .with_context(|| format!("{} line {}", path.display(), i + 1))?;
        labels.insert((label.run.clone(), label.seq), label);
    }
    Ok(labels)
}

/// The report's section on labels: each labelled decision and the unjust-block
/// rate. Empty when the batch has no labels.
pub fn report_section(batch: &Path) -> anyhow::Result<String> {
    let labels = load(batch)?;
    if labels.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from("\n## Labelled decisions\n\n");
    let mut rows = Vec::new();
    let (mut objecting, mut unjust) = (0usize, 0usize);
    for ((run, seq), label) in &labels {
        let line = run_dir(batch, run)
            .and_then(|dir| ledger_lines(&dir))?
            .into_iter()
            .find(|l| l.get("seq").and_then(Value::as_u64) == Some(*seq));
        let verdict = line.as_ref().and_then(line_verdict);
        let event = line
            .as_ref()
            .and_then(|l| l["event"].as_str().map(str::to_string))
            .unwrap_or_default();
        if verdict.is_some_and(|v| crate::gate::objects(&event, v)) {
            objecting += 1;
            unjust += usize::from(label.label == Judgement::Unjust);
        }
        rows.push(vec![
            run.clone(),
            seq.to_string(),
            event,
            verdict.map_or("?".into(), |v| format!("{v:?}").to_lowercase()),
            format!("{:?}", label.label).to_lowercase(),
            label.reason.replace('|', "\\|"),
        ]);
    }
    crate::report::markdown::table(
        &mut out,
        &["run", "seq", "event", "verdict", "label", "why"],
        &rows,
    )?;
    let all = all_objecting(batch)?;
    if objecting == 0 {
        writeln!(out, "\nNo labelled decision denies or blocks.")?;
    } else {
        writeln!(
            out,
            "\nUnjust-block rate: {unjust} of {objecting} labelled denials and blocks ({:.1}%; \
             target under 5%); {objecting} of the batch's {all} denials and blocks are labelled.",
            100.0 * unjust as f64 / objecting as f64
        )?;
    }
    Ok(out)
}

/// Every denial and block recorded in the batch's ledgers.
fn all_objecting(batch: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for dir in crate::gate::ledger_dirs(batch)? {
        count += ledger_lines(&dir)?
            .iter()
            .filter(|l| {
                let event = l["event"].as_str().unwrap_or_default();
                line_verdict(l).is_some_and(|v| crate::gate::objects(event, v))
            })
            .count();
    }
    Ok(count)
}

fn line_verdict(line: &Value) -> Option<Verdict> {
    serde_json::from_value(line["verdict"].clone()).ok()
}
