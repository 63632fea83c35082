//! `sens-bench engine ...`: the engine on the command line (SPEC 2.10). Each
//! command builds the index of a folder and prints a small table, or the binding
//! JSON with `--json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use sens_engine::dupes;
use sens_engine::index::{BuildReport, Index};
use sens_engine::rules::RuleConfig;
use sens_engine::walk::WalkOptions;
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum EngineCommand {
    /// Index a project: files, units by kind and language, parse errors, time per phase.
    Index {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Every duplicate group the rules would see (exact, renamed, near).
    Dupes {
        dir: PathBuf,
        #[arg(long)]
        json: bool,
        /// Smallest unit reported, in normalized tokens (default: the rules' floor).
        #[arg(long)]
        min_tokens: Option<usize>,
    },
}

pub fn run(command: EngineCommand) -> Result<ExitCode> {
    match command {
        EngineCommand::Index { dir, json } => index(&dir, json),
        EngineCommand::Dupes {
            dir,
            json,
            min_tokens,
        } => dupes(&dir, json, min_tokens),
    }
}

fn build(dir: &Path) -> Result<(Index, BuildReport)> {
    Index::build(dir, RuleConfig::default(), WalkOptions::default())
}

fn index(dir: &Path, json: bool) -> Result<ExitCode> {
    let (_, report) = build(dir)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", index_table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn index_table(r: &BuildReport) -> String {
    let mut out = String::new();
    let mut row = |k: &str, v: String| out.push_str(&format!("{k:<14}{v:>10}\n"));
    row("files", r.files.to_string());
    row("units", r.units.to_string());
    row("  functions", r.functions.to_string());
    row("  classes", r.classes.to_string());
    row("  windows", r.windows.to_string());
    row("parse errors", r.parse_errors.to_string());
    for (lang, n) in &r.languages {
        row(&format!("  {lang}"), format!("{n} files"));
    }
    for (reason, n) in &r.skipped {
        row(&format!("skipped {reason}"), n.to_string());
    }
    let s = &r.seconds;
    for (phase, secs) in [
        ("walk", s.walk),
        ("read", s.read),
        ("parse", s.parse),
        ("fingerprint", s.fingerprint),
        ("insert", s.insert),
        ("total", s.total),
    ] {
        row(&format!("seconds {phase}"), format!("{secs:.3}"));
    }
    out
}

#[derive(Serialize)]
struct DupesJson {
    groups: Vec<GroupJson>,
}

#[derive(Serialize)]
struct GroupJson {
    rule: &'static str,
    similarity: f64,
    units: Vec<UnitJson>,
}

#[derive(Serialize)]
struct UnitJson {
    file: String,
    line: u32,
    end_line: u32,
    name: String,
}

fn dupes(dir: &Path, json: bool, min_tokens: Option<usize>) -> Result<ExitCode> {
    let (index, _) = build(dir)?;
    let min_tokens = min_tokens.unwrap_or(index.config().floor);
    let groups = dupes::groups(&index, min_tokens)
        .into_iter()
        .map(|g| GroupJson {
            rule: g.kind.rule(),
            similarity: g.similarity,
            units: g
                .units
                .iter()
                .filter_map(|&id| index.unit(id))
                .map(|u| UnitJson {
                    file: u.file.to_string(),
                    line: u.data.start_line,
                    end_line: u.data.end_line,
                    name: u.data.name.clone(),
                })
                .collect(),
        })
        .collect();
    let out = DupesJson { groups };
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", dupes_table(&out));
    }
    Ok(ExitCode::SUCCESS)
}

fn dupes_table(d: &DupesJson) -> String {
    let mut out = String::new();
    for g in &d.groups {
        out.push_str(&format!("{} (similarity {:.2})\n", g.rule, g.similarity));
        for u in &g.units {
            out.push_str(&format!(
                "  {}:{}-{}  {}\n",
                u.file, u.line, u.end_line, u.name
            ));
        }
    }
    out.push_str(&format!("{} duplicate groups\n", d.groups.len()));
    out
}
