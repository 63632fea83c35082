//! Reports on a batch folder (docs/contract.md, "Reports"): `sens-bench report` and
//! `sens-bench sequence report`. Records are read once, analysed into a plain value
//! ([`analysis::Analysis`], [`sequence::SequenceAnalysis`]), and each output format
//! is one small module rendering that value behind [`Exporter`].

pub mod analysis;
pub mod csv;
pub mod html;
pub mod json;
pub mod labels;
pub mod markdown;
pub mod plots;
pub mod sequence;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::record::{RunRecord, read_records};
use crate::stats::Bootstrap;

/// The records file of a batch folder.
pub const RUNS_FILE: &str = "runs.jsonl";
/// The manifest of a batch folder (shown when present).
pub const MANIFEST_FILE: &str = "manifest.toml";
/// The plots folder inside the output folder.
pub const PLOTS_DIR: &str = "plots";

/// Renders an analysed report in one format.
pub trait Exporter<A> {
    fn render(&self, analysis: &A) -> anyhow::Result<String>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Markdown report, CSV of the records, plots and the HTML viewer (report.html,
    /// view/), written to the output folder.
    Md,
    /// The comparisons as JSON.
    Json,
    /// The records as CSV.
    Csv,
}

/// `sens-bench report` options.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportOptions {
    /// The batch folder (holds runs.jsonl, and manifest.toml when present).
    pub batch: PathBuf,
    /// md writes report.md, runs.csv and plots/; json prints the comparisons; csv
    /// prints the records.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Where files go; the batch folder by default. JSON and CSV print to standard
    /// output unless this is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The condition every other one is compared against.
    #[arg(long, default_value = "C0")]
    pub baseline: String,
}

/// A batch folder's contents.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The folder's name.
    pub name: String,
    pub records: Vec<RunRecord>,
    /// `manifest.toml`, verbatim.
    pub manifest: Option<String>,
}

/// Reads a batch folder: `runs.jsonl` (required, at least one record) and
/// `manifest.toml` (when present).
pub fn load_batch(dir: &Path) -> anyhow::Result<Batch> {
    if !dir.is_dir() {
        bail!(
            "{} is not a folder: give the batch folder that `sens-bench run` wrote",
            dir.display()
        );
    }
    let runs = dir.join(RUNS_FILE);
    let records = read_records(&runs)?;
    if records.is_empty() {
        bail!(
            "{} holds no records: nothing to report (has the batch run yet?)",
            runs.display()
        );
    }
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = if manifest_path.exists() {
        Some(
            fs::read_to_string(&manifest_path)
                .with_context(|| format!("cannot read {}", manifest_path.display()))?,
        )
    } else {
        None
    };
    let name = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(Batch {
        name,
        records,
        manifest,
    })
}

/// `sens-bench report BATCH`.
pub fn report(options: &ReportOptions) -> anyhow::Result<ExitCode> {
    let batch = load_batch(&options.batch)?;
    if batch.records.iter().all(|r| r.sequence.is_some()) {
        bail!(
            "{} holds only sequence steps: use `sens-bench sequence report {}`",
            options.batch.join(RUNS_FILE).display(),
            options.batch.display()
        );
    }
    let analysis = analysis::analyse(
        &batch.name,
        batch.records,
        batch.manifest,
        &options.baseline,
        Bootstrap::default(),
    )?;
    for note in &analysis.notes {
        eprintln!("note: {note}");
    }
    match options.format {
        Format::Md => {
            let out = options.out.as_deref().unwrap_or(&options.batch);
            let mut written = vec![
                write_file(
                    out,
                    "report.md",
                    &(markdown::Markdown.render(&analysis)?
                        + &labels::report_section(&options.batch)?),
                )?,
                write_file(out, "runs.csv", &csv::Csv.render(&analysis)?)?,
            ];
            let drawn = plots::report_plots(&analysis, &out.join(PLOTS_DIR))?;
            let svgs: Vec<(String, PathBuf)> = plots::report_plot_names(&analysis)
                .into_iter()
                .map(|(stem, title)| (title, out.join(PLOTS_DIR).join(format!("{stem}.svg"))))
                .collect();
            written.extend(drawn);
            written.push(html::write_viewer(&analysis, &options.batch, out, &svgs)?);
            for path in written {
                println!("{}", path.display());
            }
        }
        Format::Json => emit(
            options.out.as_deref(),
            "report.json",
            &json::Json.render(&analysis)?,
        )?,
        Format::Csv => emit(
            options.out.as_deref(),
            "runs.csv",
            &csv::Csv.render(&analysis)?,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints `text`, or writes it to `out/name` when an output folder is given.
pub(crate) fn emit(out: Option<&Path>, name: &str, text: &str) -> anyhow::Result<()> {
    match out {
        Some(dir) => println!("{}", write_file(dir, name, text)?.display()),
        None => print!("{text}"),
    }
    Ok(())
}

/// Writes `dir/name`, creating `dir`; returns the path written.
pub fn write_file(dir: &Path, name: &str, text: &str) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(name);
    fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// A number for a reader: integers without decimals, others with three (one from
/// 100 up), trailing zeros dropped, never "-0".
pub fn fmt_num(value: f64) -> String {
    let value = value + 0.0;
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let text = if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    };
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

/// `fmt_num` of an optional value; a dash when absent.
pub fn fmt_opt(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), fmt_num)
}

/// A p-value with four decimals.
pub fn fmt_p(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |p| format!("{p:.4}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well_and_never_show_negative_zero() {
        assert_eq!(fmt_num(12.0), "12");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(1234.56), "1234.6");
        assert_eq!(fmt_num(-0.0001), "0");
        assert_eq!(fmt_num(2.0 / 3.0), "0.667");
        assert_eq!(fmt_opt(None), "–");
        assert_eq!(fmt_p(Some(0.05)), "0.0500");
    }
}
