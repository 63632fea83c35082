//! Labels (docs/contract.md, "Rules as data, the gate and calibration"): a person's
//! judgement that one engine decision was just or unjust. `sens-bench label BATCH RUN SEQ
//! just|unjust --why "..."` appends one line to the batch's `labels.jsonl`; the latest
//! label of a decision wins. The gate fails when a labelled decision gets worse; the
//! report lists the labels and the unjust-block rate.
//!
//! The unjust-block rate is the share of labelled denials and blocks (as
//! recorded) that are labelled `unjust`; unlabelled decisions are unknown, so
//! the report also says how many of all denials and blocks are labelled.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::Utc;
use serde_json::Value;

use crate::batch::labels::{Judgement, LABELS_FILE, Label, run_dir};
use crate::batch::lock::BatchLock;
use crate::jsonl;
use crate::measure::ledger::{LEDGER_FILE, ledger_lines};

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
    let _lock = BatchLock::acquire(&args.batch)?;
    let path = args.batch.join(LABELS_FILE);
    let mut line = serde_json::to_string(&label).context("encoding a label")?;
    line.push('\n');
    let file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    jsonl::append_line(&file, line.as_bytes(), &path)?;
    Ok(ExitCode::SUCCESS)
}
