//! The batch viewer (docs/contract.md, "The viewer and decision outcomes"):
//! `report.html`, and one page per run under `view/`, all static files that open from
//! `file://` (no server, no network).
//!
//! - Templates are `maud`'s `html!`, checked when the crate compiles; every value
//!   written into a page goes through maud's escaping, so agent output (a
//!   transcript is untrusted) renders as text. Only the plots, which this crate
//!   drew, are embedded as raw SVG.
//! - Each page carries a Content-Security-Policy that allows no network at all and
//!   only the index's own script (by its sha256), so even an escaping mistake could
//!   not run a script.
//! - Run pages are separate files the matrix links to: the index holds one table
//!   row per run and stays small for large batches; a run page loads when opened.
//! - Determinism: pages hold only what the records and run folders hold, in the
//!   analysis's canonical order, so the same batch gives the same bytes.

mod index;
mod run;

use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest, Sha256};

use super::analysis::Analysis;
use super::write_file;
use crate::record::RunRecord;

/// The viewer's index page.
pub const INDEX_FILE: &str = "report.html";
/// The folder of the run pages, beside the index.
pub const VIEW_DIR: &str = "view";

/// Writes `report.html` and every run page into `out`; `batch_dir` holds the run
/// folders, `plots` the SVG files to embed (title, path). Returns the index's path
/// (the run pages are too many to list for a large batch).
pub fn write_viewer(
    a: &Analysis,
    batch_dir: &Path,
    out: &Path,
    plots: &[(String, PathBuf)],
) -> anyhow::Result<PathBuf> {
    let mut embedded = Vec::new();
    for (title, path) in plots {
        let svg = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the plot {}", path.display()))?;
        embedded.push((title.clone(), svg_element(&svg).0.to_string()));
    }
    for (i, record) in a.records.iter().enumerate() {
        let page = run::RunPage::load(&run_folder(batch_dir, record))?;
        let steps = run::StepLinks {
            previous: step_neighbour(a, i, -1),
            next: step_neighbour(a, i, 1),
        };
        let relative = run_page_path(record);
        let depth = relative.components().count() - 1;
        let text = page.render(record, &steps, &"../".repeat(depth));
        let path = out.join(&relative);
        let dir = path.parent().context("a run page has a folder")?;
        let name = path.file_name().context("a run page has a name")?;
        write_file(dir, &name.to_string_lossy(), &text)?;
    }
    write_file(out, INDEX_FILE, &index::render(a, &embedded))
}

/// The run folder of a record: `runs/<task>/<condition>/<rep>/`, or for a sequence
/// step `runs/<sequence>/<condition>/<rep>/<NN>-<step>/`, as the batch writes them.
fn run_folder(batch_dir: &Path, record: &RunRecord) -> PathBuf {
    let rep = record.rep.to_string();
    let dir = batch_dir.join("runs");
    match record.sequence_step() {
        Some((sequence, step)) => dir
            .join(sequence)
            .join(&record.condition)
            .join(rep)
            .join(format!("{step:02}-{}", record.task)),
        None => dir.join(&record.task).join(&record.condition).join(rep),
    }
}

/// Where a record's page goes, relative to the index: `view/` plus the run
/// folder's parts, each part kept to safe file-name characters.
pub fn run_page_path(record: &RunRecord) -> PathBuf {
    let folder = run_folder(Path::new(""), record);
    let parts: Vec<String> = folder
        .components()
        .skip(1)
        .map(|c| safe_name(&c.as_os_str().to_string_lossy()))
        .collect();
    let (last, dirs) = parts.split_last().expect("a run folder has parts");
    let mut path = PathBuf::from(VIEW_DIR);
    path.extend(dirs);
    path.push(format!("{last}.html"));
    path
}

/// `name` with every character outside `[A-Za-z0-9._-]` made `_`, and a name of
/// dots alone (`..`) made `_`: a page never lands outside `view/`.
fn safe_name(name: &str) -> String {
    if name.chars().all(|c| c == '.') {
        return "_".to_string();
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The page of the step before (`-1`) or after (`1`) record `i` in its sequence run.
fn step_neighbour(a: &Analysis, i: usize, offset: isize) -> Option<PathBuf> {
    let record = &a.records[i];
    let (sequence, step) = record.sequence_step()?;
    let wanted = step.checked_add_signed(i32::try_from(offset).ok()?)?;
    a.records
        .iter()
        .find(|r| {
            r.sequence_step() == Some((sequence, wanted))
                && r.condition == record.condition
                && r.rep == record.rep
        })
        .map(run_page_path)
}

/// The `<svg>` element of an SVG file (without an XML prolog).
fn svg_element(svg: &str) -> PreEscaped<&str> {
    PreEscaped(svg.find("<svg").map_or(svg, |start| &svg[start..]))
}

/// Every page's style (`style.css`).
const STYLE: &str = include_str!("style.css");

/// A whole page: head (style, policy) and body. `script` is the page's only
/// script, allowed by its hash.
fn page(title: &str, body: Markup, script: Option<&str>) -> String {
    let script_src = script.map_or_else(
        || "'none'".to_string(),
        |s| {
            let digest = Sha256::digest(s.as_bytes());
            format!("'sha256-{}'", BASE64.encode(digest))
        },
    );
    let policy = format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {script_src}"
    );
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(policy);
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                (body)
                @if let Some(script) = script {
                    script { (PreEscaped(script)) }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_keep_to_safe_characters() {
        assert_eq!(safe_name("a b/../<x>"), "a_b_..__x_");
        assert_eq!(safe_name(".."), "_");
    }
}
