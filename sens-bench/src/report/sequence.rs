//! `sens-bench sequence report BATCH` (docs/contract.md, "Horizonte sequences" and
//! "Reports"): per sequence (condition x rep) the size after every step and at the end,
//! growth curves, the Horizonte decision, functions, duplicate lines, probes and tokens.
//!
//! Sizes are state measures: a step that ended in a timeout or an agent error still
//! leaves a project the next step builds on, so its measured `loc_total` counts;
//! failed steps are counted per sequence and listed. A sequence enters the decision
//! when it has a record for every step up to the batch's last one and its last step
//! was measured.

//!
//! As the batch report does, the analysis (`analysis`) is a plain value that each
//! format renders behind [`Exporter`]: `json` and `markdown`; `growth` names and
//! draws each sequence's growth curves. This root holds the command.

use std::path::PathBuf;
use std::process::ExitCode;

use super::analysis::analyse;
use super::html;
use super::plots::growth_plot;
use super::{Exporter, PLOTS_DIR, RUNS_FILE, emit, load_batch, write_file};
use crate::stats::Bootstrap;

mod analysis;
mod growth;
mod json;
mod markdown;

pub use analysis::{
    AcrossReport, DecisionReport, SequenceAnalysis, SequenceBatch, SequenceRun, analyse_sequences,
};
pub use json::SequenceJson;
pub use markdown::SequenceMarkdown;

use growth::{growth_curves, growth_stem};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SequenceFormat {
    /// Markdown report and the growth plot, written to the output folder.
    Md,
    /// Sequences and the decision as JSON.
    Json,
}

/// `sens-bench sequence report` options.
#[derive(Debug, Clone, clap::Args)]
pub struct SequenceOptions {
    /// The batch folder `sequence run` wrote.
    pub batch: PathBuf,
    /// md writes sequence-report.md and plots/growth.*; json prints sequences and
    /// the decision.
    #[arg(long, value_enum, default_value = "md")]
    pub format: SequenceFormat,
    /// Where files go; the batch folder by default. JSON prints to standard output
    /// unless this is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The condition the decision compares against.
    #[arg(long, default_value = "C0")]
    pub baseline: String,
    /// The condition the decision is about.
    #[arg(long, default_value = "C2")]
    pub condition: String,
}

/// `sens-bench sequence report BATCH`.
pub fn sequence_report(options: &SequenceOptions) -> anyhow::Result<ExitCode> {
    let batch = load_batch(&options.batch)?;
    let analyses = analyse_sequences(
        &batch.name,
        &batch.records,
        batch.manifest,
        &options.condition,
        &options.baseline,
    )
    .map_err(|e| e.context(format!("{}", options.batch.join(RUNS_FILE).display())))?;
    for a in &analyses.sequences {
        if let Err(why) = &a.decision {
            eprintln!("note: {}: {why}", a.sequence);
        }
    }
    if let Some(Err(why)) = &analyses.across {
        eprintln!("note: {why}");
    }
    match options.format {
        SequenceFormat::Md => {
            let out = options.out.as_deref().unwrap_or(&options.batch);
            let mut written = vec![write_file(
                out,
                "sequence-report.md",
                &SequenceMarkdown.render(&analyses)?,
            )?];
            let several = analyses.sequences.len() > 1;
            let mut growth = Vec::new();
            for a in &analyses.sequences {
                let stem = growth_stem(a, several);
                written.extend(growth_plot(
                    &a.sequence,
                    &a.conditions,
                    &growth_curves(a),
                    &out.join(PLOTS_DIR),
                    &stem,
                )?);
                let label = if several {
                    format!("growth: {}", a.sequence)
                } else {
                    "growth".to_string()
                };
                growth.push((label, out.join(PLOTS_DIR).join(format!("{stem}.svg"))));
            }
            let manifest = analyses.sequences.first().and_then(|a| a.manifest.clone());
            let steps = analyse(
                &batch.name,
                batch.records,
                manifest,
                &options.baseline,
                Bootstrap::default(),
            )?;
            written.push(html::write_viewer(&steps, &options.batch, out, &growth)?);
            for path in written {
                println!("{}", path.display());
            }
        }
        SequenceFormat::Json => emit(
            options.out.as_deref(),
            "sequence-report.json",
            &SequenceJson.render(&analyses)?,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
