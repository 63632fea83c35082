//! `sens-bench engine scale CORPUS`: how the engine's cost grows with a project. The
//! corpus (a folder of projects, as `scripts/vendor-corpus.sh` writes this workspace's
//! dependencies) is indexed at 1/8, 1/4, 1/2 and all of its projects, each part a spread
//! of them, and beside each the same part by jscpd: files, units, each phase's time, peak
//! memory, the cache's cost and gain, in one table with the ratios the targets are stated
//! in (docs/performance.md, "Targets"). Each index runs in a process of its own, so its
//! peak memory is its own. Numbers are printed, never asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::exec::measured::{Measured, measured};

/// One part of the corpus, measured.
struct Row {
    share: u32,
    projects: usize,
    files: u64,
    units: u64,
    cold: Measured,
    phases: Phases,
    filled: Duration,
    warm: Duration,
    jscpd: Option<Measured>,
    /// What the index holds, by what for (`engine index --json`'s `memory`).
    memory: Vec<(String, u64)>,
}

/// An index's seconds per phase, as `engine index --json` reports them.
struct Phases {
    parse: f64,
    fingerprint: f64,
    insert: f64,
}

/// `sens-bench engine scale`.
pub fn scale(corpus: &Path, shares: &[u32], jscpd: bool) -> Result<ExitCode> {
    let mut projects: Vec<PathBuf> = std::fs::read_dir(corpus)
        .with_context(|| format!("cannot list the corpus {}", corpus.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot list the corpus {}", corpus.display()))?;
    projects.retain(|p| p.is_dir());
    projects.sort();
    if projects.is_empty() {
        bail!("the corpus {} holds no project folder", corpus.display());
    }
    let jscpd = match jscpd {
        true => Some(crate::measure::jscpd::find().context(
            "jscpd is not installed (scripts/setup.sh puts it in .tools/); or pass --no-jscpd",
        )?),
        false => None,
    };
    let scratch = tempfile::Builder::new()
        .prefix(".sens-scale-")
        .tempdir_in(corpus.parent().unwrap_or(corpus))
        .context("cannot create a scratch folder beside the corpus")?;
    let mut rows = Vec::new();
    for &share in shares {
        let part = scratch.path().join(format!("part-{share}"));
        let chosen = linked_part(&projects, share, &part)?;
        let row = measure_part(&part, share, chosen, jscpd.as_deref(), scratch.path())?;
        print_row(&row, rows.is_empty());
        rows.push(row);
        std::fs::remove_dir_all(&part)
            .with_context(|| format!("cannot remove {}", part.display()))?;
    }
    print_memory(&rows);
    Ok(ExitCode::SUCCESS)
}

/// Every `share`-th project of `projects`, hard-linked into `into` (no copy of
/// the bytes); returns how many.
fn linked_part(projects: &[PathBuf], share: u32, into: &Path) -> Result<usize> {
    let step = usize::try_from(share.max(1)).unwrap_or(1);
    let chosen: Vec<&PathBuf> = projects.iter().step_by(step).collect();
    for project in &chosen {
        let name = project
            .file_name()
            .context("a project folder without a name")?;
        for entry in walkdir(project)? {
            let relative = entry.strip_prefix(project).unwrap_or(&entry);
            let target = into.join(name).join(relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            std::fs::hard_link(&entry, &target).with_context(|| {
                format!("cannot link {} to {}", entry.display(), target.display())
            })?;
        }
    }
    Ok(chosen.len())
}

/// The regular files under `dir` (links and other kinds left out).
fn walkdir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder)
            .with_context(|| format!("cannot list {}", folder.display()))?
        {
            let entry = entry.with_context(|| format!("cannot list {}", folder.display()))?;
            let kind = entry
                .file_type()
                .with_context(|| format!("cannot read {}", entry.path().display()))?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                files.push(entry.path());
            }
        }
    }
    Ok(files)
}

fn measure_part(
    part: &Path,
    share: u32,
    projects: usize,
    jscpd: Option<&Path>,
    scratch: &Path,
) -> Result<Row> {
    let bin = std::env::current_exe().context("cannot find the sens-bench binary")?;
    let index = |cache: Option<&Path>| {
        let mut command = Command::new(&bin);
        command.args(["engine", "index", "--json"]).arg(part);
        if let Some(cache) = cache {
            command.arg("--cache").arg(cache);
        }
        command
    };
    let cold = measured(&mut index(None), "the engine's index")?;
    let report: Value =
        serde_json::from_str(&cold.stdout).context("`engine index --json` printed no JSON")?;
    let number = |path: &[&str]| {
        path.iter()
            .try_fold(&report, |v, key| v.get(key))
            .and_then(Value::as_f64)
            .with_context(|| format!("`engine index --json` has no `{}`", path.join(".")))
    };
    let phases = Phases {
        parse: number(&["seconds", "parse"])?,
        fingerprint: number(&["seconds", "fingerprint"])?,
        insert: number(&["seconds", "insert"])?,
    };
    let memory = report
        .get("memory")
        .and_then(Value::as_object)
        .context("`engine index --json` has no `memory`")?
        .iter()
        .map(|(what, bytes)| (what.clone(), bytes.as_u64().unwrap_or(0)))
        .collect();
    let cache = scratch.join(format!("cache-{share}"));
    let filled = measured(
        &mut index(Some(&cache)),
        "the engine's index filling its cache",
    )?
    .wall;
    let warm = measured(
        &mut index(Some(&cache)),
        "the engine's index from its cache",
    )?
    .wall;
    std::fs::remove_dir_all(&cache)
        .with_context(|| format!("cannot remove {}", cache.display()))?;
    let jscpd = jscpd
        .map(|jscpd| sens::bench::run_jscpd(jscpd, part))
        .transpose()?;
    Ok(Row {
        share,
        projects,
        files: number(&["files"])? as u64,
        units: number(&["units"])? as u64,
        cold,
        phases,
        filled,
        warm,
        jscpd,
        memory,
    })
}

fn print_row(row: &Row, header: bool) {
    if header {
        println!(
            "| part | projects | files | units | index wall s | parse s | fingerprint s | insert s | peak MB | bytes/unit | fill / cold | warm / cold | jscpd wall s | jscpd peak MB | index / jscpd wall | index / jscpd peak |"
        );
        println!("|{}", " --- |".repeat(16));
    }
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let cold = row.cold.wall.as_secs_f64();
    let (jscpd_wall, jscpd_peak, wall_ratio, peak_ratio) = match &row.jscpd {
        Some(j) => (
            format!("{:.2}", j.wall.as_secs_f64()),
            format!("{:.0}", mb(j.peak_bytes)),
            format!("{:.2}", cold / j.wall.as_secs_f64()),
            format!("{:.3}", row.cold.peak_bytes as f64 / j.peak_bytes as f64),
        ),
        None => ("-".into(), "-".into(), "-".into(), "-".into()),
    };
    println!(
        "| 1/{} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {:.2} | {:.3} | {jscpd_wall} | {jscpd_peak} | {wall_ratio} | {peak_ratio} |",
        row.share,
        row.projects,
        row.files,
        row.units,
        cold,
        row.phases.parse,
        row.phases.fingerprint,
        row.phases.insert,
        mb(row.cold.peak_bytes),
        row.cold.peak_bytes as f64 / row.units.max(1) as f64,
        row.filled.as_secs_f64() / cold,
        row.warm.as_secs_f64() / cold,
    );
}

/// Bytes per unit the index holds by what for, beside the process's peak
/// (the rest: the allocator, the grammars, what the build held for a while).
fn print_memory(rows: &[Row]) {
    let Some(first) = rows.first() else {
        return;
    };
    let names: Vec<&str> = first.memory.iter().map(|(what, _)| what.as_str()).collect();
    println!(
        "\nbytes per unit the index holds, by what for:\n\n| part | {} | counted | peak |",
        names.join(" | ")
    );
    println!("|{}", " --- |".repeat(names.len() + 3));
    for row in rows {
        let per_unit = |bytes: u64| bytes as f64 / row.units.max(1) as f64;
        let parts: Vec<String> = row
            .memory
            .iter()
            .map(|(_, bytes)| format!("{:.0}", per_unit(*bytes)))
            .collect();
        let counted: u64 = row.memory.iter().map(|(_, bytes)| bytes).sum();
        println!(
            "| 1/{} | {} | {:.0} | {:.0} |",
            row.share,
            parts.join(" | "),
            per_unit(counted),
            per_unit(row.cold.peak_bytes)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_takes_every_nth_project_as_links() {
        let dir = tempfile::tempdir().unwrap();
        let projects: Vec<PathBuf> = (0..5).map(|i| dir.path().join(format!("p{i}"))).collect();
        for p in &projects {
            std::fs::create_dir_all(p.join("src")).unwrap();
            std::fs::write(p.join("src/lib.rs"), "fn f() {}\n").unwrap();
        }
        let part = dir.path().join("part");
        assert_eq!(linked_part(&projects, 2, &part).unwrap(), 3);
        for name in ["p0", "p2", "p4"] {
            assert!(part.join(name).join("src/lib.rs").is_file());
        }
        assert!(!part.join("p1").exists());
    }
}
