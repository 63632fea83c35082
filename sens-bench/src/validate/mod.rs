//! `sens-bench validate` (docs/contract.md, "Validation"; [`task`]) and `sens-bench
//! sequence validate` (docs/contract.md, "Horizonte sequences"; [`sequence`]): every task
//! and step is checked in fresh copies, and a check that does not give the expected
//! result counts only when a second run agrees (otherwise it is a flake, reported with
//! the log of the run that went wrong).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::exec::{self, CommandLine, Confirmed, Outcome, Status};
use crate::spec::hidden::Hidden;
use crate::workspace::Workspace;
use crate::workspace::cache::Cache;
use crate::workspace::hidden::copy_hidden;

pub mod fairness;
pub mod sequence;
pub mod task;

/// The result of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckOutcome {
    Ok,
    /// Went wrong once, then as expected: does not count as a failure.
    Flaky,
    /// The bench could not perform the check (source, patch, command start).
    Error,
    /// Went wrong twice.
    Failed,
}

impl CheckOutcome {
    pub(crate) fn word(self) -> &'static str {
        match self {
            CheckOutcome::Ok => "ok",
            CheckOutcome::Flaky => "flaky",
            CheckOutcome::Error => "ERROR",
            CheckOutcome::Failed => "FAILED",
        }
    }

    pub(crate) fn counts_against(self) -> bool {
        matches!(self, CheckOutcome::Error | CheckOutcome::Failed)
    }
}

/// One check in one attempt.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub name: String,
    pub verdict: CheckOutcome,
    /// Time of the first run (or of the action).
    pub seconds: f64,
    /// Command runs made and how many of them went wrong.
    pub runs: usize,
    pub unexpected: usize,
    /// What went wrong and where its log is; empty when ok.
    pub note: String,
}

impl CheckResult {
    pub(crate) fn action(name: &str, started: Instant, result: Result<()>) -> CheckResult {
        let (verdict, note) = match result {
            Ok(()) => (CheckOutcome::Ok, String::new()),
            Err(err) => (CheckOutcome::Error, format!("{err:#}")),
        };
        CheckResult {
            name: name.to_string(),
            verdict,
            seconds: started.elapsed().as_secs_f64(),
            runs: 0,
            unexpected: 0,
            note,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Expect {
    Pass,
    Fail,
}

impl Expect {
    fn met_by(self, status: &Status) -> bool {
        match self {
            Expect::Pass => status.passed(),
            Expect::Fail => status.failed(),
        }
    }
}

/// A materialized copy whose commands are logged into one folder.
pub(crate) struct CheckedCopy {
    workspace: Workspace,
    logs: PathBuf,
    timeout: Duration,
    runs: usize,
    /// The sequence state being checked, named in log files.
    state: String,
}

impl CheckedCopy {
    fn new(workspace: Workspace, logs: PathBuf, timeout: Duration) -> Result<CheckedCopy> {
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create the log folder {}", logs.display()))?;
        Ok(CheckedCopy {
            workspace,
            logs,
            timeout,
            runs: 0,
            state: String::new(),
        })
    }

    fn run(&mut self, name: &str, line: &str) -> Result<Outcome> {
        self.runs += 1;
        let stem = slug(&format!("{} {name}", self.state));
        let log = self.logs.join(format!("{:02}-{stem}.log", self.runs));
        exec::run(&CommandLine {
            line,
            dir: &self.workspace.root,
            env: &self.workspace.env,
            timeout: self.timeout,
            log: &log,
            sandbox: None,
        })
    }

    /// Runs `line` expecting `expect`; when it goes wrong and `again` is set, a
    /// second run decides between a failure and a flake.
    pub(crate) fn check(
        &mut self,
        name: &str,
        line: &str,
        expect: Expect,
        again: bool,
    ) -> Result<CheckResult> {
        let confirmed = exec::confirm(
            |attempt| match attempt {
                1 => self.run(name, line),
                _ => self.run(&format!("{name} again"), line),
            },
            |outcome| expect.met_by(&outcome.status),
            // A command that cannot start is an error, not a result to confirm.
            |outcome| again && !matches!(outcome.status, Status::CouldNotStart(_)),
        )?;
        let (first, verdict, runs, unexpected, note) = match &confirmed {
            Confirmed::Expected(first) => (first, CheckOutcome::Ok, 1, 0, String::new()),
            Confirmed::Flaky { first, second } => (
                first,
                CheckOutcome::Flaky,
                2,
                1,
                with_log(&format!("{} then {}", first.status, second.status), first),
            ),
            Confirmed::Unexpected {
                first,
                second: Some(second),
            } => (
                first,
                CheckOutcome::Failed,
                2,
                2,
                with_log(&format!("{} twice", second.status), second),
            ),
            Confirmed::Unexpected {
                first,
                second: None,
            } => {
                let verdict = if matches!(first.status, Status::CouldNotStart(_)) {
                    CheckOutcome::Error
                } else {
                    CheckOutcome::Failed
                };
                (
                    first,
                    verdict,
                    1,
                    1,
                    with_log(&first.status.to_string(), first),
                )
            }
        };
        Ok(CheckResult {
            name: name.to_string(),
            verdict,
            seconds: first.duration.as_secs_f64(),
            runs,
            unexpected,
            note,
        })
    }

    /// Copies hidden files in, then checks the hidden command.
    pub(crate) fn check_hidden(
        &mut self,
        name: &str,
        hidden: &Hidden,
        line: &str,
        expect: Expect,
    ) -> Result<CheckResult> {
        let started = Instant::now();
        match copy_hidden(hidden, &self.workspace.root) {
            Ok(()) => self.check(name, line, expect, true),
            Err(err) => Ok(CheckResult::action(name, started, Err(err))),
        }
    }
}

/// A note ends with the log of the run it describes, so it can be opened as is.
fn with_log(what: &str, outcome: &Outcome) -> String {
    format!("{what}; log {}", outcome.log.display())
}

fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    slug.split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Materializes a copy (one row), then runs its set-up (one row when present);
/// row names start with `prefix`. `None` when the copy is not usable.
pub(crate) fn open_copy(
    prefix: &str,
    materialize: impl FnOnce() -> Result<Workspace>,
    setup: Option<&str>,
    logs: PathBuf,
    timeout: Duration,
    rows: &mut Vec<CheckResult>,
) -> Result<Option<CheckedCopy>> {
    let started = Instant::now();
    let (workspace, materialized) = match materialize() {
        Ok(workspace) => (Some(workspace), Ok(())),
        Err(err) => (None, Err(err)),
    };
    rows.push(CheckResult::action(
        &format!("{prefix}materialize"),
        started,
        materialized,
    ));
    let Some(workspace) = workspace else {
        return Ok(None);
    };
    let mut copy = CheckedCopy::new(workspace, logs, timeout)?;
    if let Some(line) = setup {
        // Set-up is not a test: it runs once per copy and is not retried.
        let row = copy.check(&format!("{prefix}setup"), line, Expect::Pass, false)?;
        let usable = row.verdict == CheckOutcome::Ok;
        rows.push(row);
        if !usable {
            return Ok(None);
        }
    }
    Ok(Some(copy))
}

pub(crate) fn logs_folder(given: Option<&Path>, cache: &Cache, what: &str) -> Result<PathBuf> {
    let dir = match given {
        Some(dir) => dir.to_path_buf(),
        None => cache.root.join("logs").join(format!(
            "{what}-{}-{}",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
            std::process::id()
        )),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the log folder {}", dir.display()))?;
    Ok(dir)
}

/// The result table: subject, check, result, seconds[, flake rate], note.
pub(crate) struct Table {
    lines: Vec<Vec<String>>,
    flake_rate: bool,
}

impl Table {
    pub(crate) fn new(subject: &str, flake_rate: bool) -> Table {
        let mut header = vec![
            subject.to_string(),
            "check".into(),
            "result".into(),
            "seconds".into(),
        ];
        if flake_rate {
            header.push("flake rate".into());
        }
        header.push("note".into());
        Table {
            lines: vec![header],
            flake_rate,
        }
    }

    pub(crate) fn push(&mut self, subject: &str, row: &CheckResult) {
        let mut line = vec![
            subject.to_string(),
            row.name.clone(),
            row.verdict.word().to_string(),
            format!("{:.1}", row.seconds),
        ];
        if self.flake_rate {
            line.push(if row.runs == 0 {
                String::new()
            } else {
                format!("{}/{}", row.unexpected, row.runs)
            });
        }
        line.push(row.note.clone());
        self.lines.push(line);
    }

    pub(crate) fn render(&self) -> String {
        align(&self.lines)
    }
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub(crate) fn align(lines: &[Vec<String>]) -> String {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .filter_map(|l| l.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        let mut text = String::new();
        for (c, cell) in line.iter().enumerate() {
            if c + 1 == line.len() {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<width$}  ", width = widths[c]);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flake_is_not_a_failure() {
        assert!(!CheckOutcome::Flaky.counts_against());
        assert!(CheckOutcome::Failed.counts_against());
        assert!(CheckOutcome::Error.counts_against());
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("start: hidden tests fail"), "start-hidden-tests-fail");
    }

    #[test]
    fn columns_align() {
        let text = align(&[
            vec!["a".into(), "bb".into(), "c".into()],
            vec!["aaa".into(), "b".into(), "".into()],
        ]);
        assert_eq!(text, "a    bb  c\naaa  b\n");
    }
}
