//! jscpd's count of duplicated lines (docs/contract.md, "Measurement"), measured the way
//! the published study measured: jscpd 5.3.2 with its defaults over the project's size
//! files.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::Deserialize;

/// The pinned jscpd: `.tools/node_modules/.bin/jscpd` of the workspace when the
/// set-up script installed it, else `jscpd` on PATH; `None` when neither exists.
pub fn find() -> Option<PathBuf> {
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/node_modules/.bin/jscpd");
    if pinned.is_file() {
        return Some(pinned);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("jscpd"))
            .find(|candidate| candidate.is_file())
    })
}

#[derive(Deserialize)]
struct Report {
    statistics: Statistics,
}

#[derive(Deserialize)]
struct Statistics {
    total: Total,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Total {
    duplicated_lines: u64,
}

/// Runs jscpd over `files` (paths relative to `root`) and returns its
/// `statistics.total.duplicatedLines`. No files means no duplicated lines.
pub fn duplicated_lines(jscpd: &Path, root: &Path, files: &[String]) -> anyhow::Result<u64> {
    if files.is_empty() {
        return Ok(0);
    }
    let out = tempfile::tempdir().context("cannot make a folder for jscpd's report")?;
    let output = Command::new(jscpd)
        .current_dir(root)
        .args(["--silent", "--reporters", "json", "--output"])
        .arg(out.path())
        .args(files)
        .output()
        .with_context(|| format!("cannot start {}", jscpd.display()))?;
    if !output.status.success() {
        bail!(
            "{} failed ({}): {}",
            jscpd.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let report_path = out.path().join("jscpd-report.json");
    let text = std::fs::read_to_string(&report_path)
        .with_context(|| format!("jscpd wrote no report at {}", report_path.display()))?;
    let report: Report = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: statistics.total.duplicatedLines missing",
            report_path.display()
        )
    })?;
    Ok(report.statistics.total.duplicated_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str) -> String {
        let body: String = (0..12)
            .map(|i| format!("    total += values[{i}] * {i} + offset - {i};\n"))
            .collect();
        format!(
            "export function {name}(values: number[], offset: number): number {{\n    let total = 0;\n{body}    return total;\n}}\n"
        )
    }

    #[test]
    fn counts_a_copied_function_and_nothing_in_distinct_code() {
        let jscpd = find().expect("jscpd is installed by scripts/setup.sh");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.ts"), function("first")).unwrap();
        std::fs::write(dir.path().join("b.ts"), function("second")).unwrap();
        std::fs::write(dir.path().join("c.ts"), "export const answer = 42;\n").unwrap();
        let all = ["a.ts".to_string(), "b.ts".to_string(), "c.ts".to_string()];
        let copied = duplicated_lines(&jscpd, dir.path(), &all).unwrap();
        assert!(copied >= 12, "the copied body is counted: {copied}");
        let alone = duplicated_lines(&jscpd, dir.path(), &all[..1]).unwrap();
        assert_eq!(alone, 0);
        assert_eq!(duplicated_lines(&jscpd, dir.path(), &[]).unwrap(), 0);
    }
}
