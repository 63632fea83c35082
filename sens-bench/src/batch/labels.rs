//! Labels of engine decisions (`labels.jsonl`): a person's word that a denial or
//! block was just or unjust, by run folder and ledger `seq`; the latest label of a
//! decision wins. The gate and the report read them; `sens-bench label` writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::measure::ledger::LEDGER_FILE;

/// The batch file the labels are appended to.
pub const LABELS_FILE: &str = "labels.jsonl";

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

/// Run folders under `runs/` whose ledger has lines (engine runs), sorted.
pub fn ledger_dirs(batch: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let root = batch.join("runs");
    if !root.is_dir() {
        bail!("{} is not a batch: it has no runs/ folder", batch.display());
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(dir) = todo.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let path = entry
                .with_context(|| format!("cannot list {}", dir.display()))?
                .path();
            if path.is_dir() {
                todo.push(path);
            } else if path.file_name().is_some_and(|n| n == LEDGER_FILE)
                && path.metadata().is_ok_and(|m| m.len() > 0)
                && let Some(parent) = path.parent()
            {
                found.push(parent.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
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
