//! Grade, the third stage of an attempt (docs/contract.md, "Runs"): the agent's change,
//! the integrity evidence, the hook counts, the measures, and the project's and the
//! hidden tests under the retry rule (a failure counts only when it repeats).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

use super::stage::{Attempt, Stop, Timings, timed};
use crate::agent::claude::{AgentError, TurnResult};
use crate::exec::reach::Reach;
use crate::exec::{self, CommandLine, Status};
use crate::jsonl;
use crate::measure::integrity;
use crate::measure::ledger::{HookCounts, count_acceptance, hook_counts, read_ledger, tool_calls};
use crate::measure::outcomes::{OutcomeCounts, classify};
use crate::measure::{self, Inputs};
use crate::record::{Integrity, RunRecord};
use crate::sandbox::View;
use crate::spec::conditions::Condition;
use crate::workspace::diff::{ChangeSet, collect_changes};
use crate::workspace::hidden::{Overwritten, copy_hidden};

/// A test command's verdict after the retry rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestVerdict {
    pub pass: bool,
    /// It failed once, then passed.
    pub flaky: bool,
    /// Evidence that a run of it tried to reach outside its sandbox, a line each.
    pub reached_out: Vec<String>,
}

/// A test command under the retry rule, in `root`; logs `<dir>/<name>.1.log`
/// (and `.2.log`). A command of a runner whose summary sens-bench reads
/// ([`Runner`]) passes only when that summary counts at least one executed test:
/// a faked runner that exits 0 having run nothing is a failure, noted in the log.
pub(super) fn test_verdict(
    root: &Path,
    env: &[(String, String)],
    sandbox: Option<&View>,
    line: &str,
    timeout: Duration,
    dir: &Path,
    name: &str,
) -> anyhow::Result<TestVerdict> {
    let mut reached_out = Vec::new();
    let confirmed = exec::confirm(
        |attempt| {
            let name = format!("{name}.{attempt}.log");
            let log = dir.join(&name);
            let outcome = exec::run(&CommandLine {
                line,
                dir: root,
                env,
                timeout,
                log: &log,
                sandbox,
            })?;
            let ended = !matches!(outcome.status, Status::TimedOut);
            match outcome.reach {
                Some(Reach::Tried(packets)) => reached_out.push(format!(
                    "{name}: {packets} packet(s) had no route out of the sandbox"
                )),
                // A timeout ends the wrapper too: only a command can end it early.
                Some(Reach::Unreported) if ended => reached_out.push(format!(
                    "{name}: the command ended the sandbox's network report before it was written"
                )),
                _ => {}
            }
            match outcome.status {
                Status::CouldNotStart(why) => bail!("cannot run `{line}`: {why}"),
                Status::Passed => passed_with_tests(line, &log),
                status => Ok(status),
            }
        },
        Status::passed,
        |_| true,
    )?;
    Ok(TestVerdict {
        pass: confirmed.expected(),
        flaky: confirmed.flaky(),
        reached_out,
    })
}

/// A passed run of `line` whose log is `log`: still a pass unless its runner's
/// summary counts no executed test (or is missing), which the log then says.
fn passed_with_tests(line: &str, log: &Path) -> anyhow::Result<Status> {
    let Some(runner) = Runner::of(line) else {
        return Ok(Status::Passed);
    };
    let bytes = std::fs::read(log).with_context(|| format!("cannot read {}", log.display()))?;
    let executed = runner.executed(&String::from_utf8_lossy(&bytes));
    if executed.is_some_and(|n| n > 0) {
        return Ok(Status::Passed);
    }
    let why = match executed {
        Some(_) => "0 tests executed",
        None => "no test summary in the output",
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    std::io::Write::write_all(
        &mut file,
        format!("\nsens-bench: {why} ({runner:?}): not a pass\n").as_bytes(),
    )
    .with_context(|| format!("cannot write {}", log.display()))?;
    Ok(Status::Failed {
        code: None,
        signal: None,
    })
}

/// A test runner whose summary line tells how many tests ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// `pytest` (`python3 -m pytest`): `3 passed, 1 failed in 0.1s`, `no tests ran`.
    Pytest,
    /// `node --test`, and `npm test` (the cuentas projects' script): `# tests 3`
    /// (TAP) or `ℹ tests 3` (spec reporter).
    NodeTest,
    /// `cargo test`: one `test result: ok. 3 passed; 0 failed; ...` per test binary.
    Cargo,
}

impl Runner {
    fn of(line: &str) -> Option<Runner> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let pair = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
        if words
            .iter()
            .any(|w| *w == "pytest" || w.ends_with("/pytest"))
        {
            Some(Runner::Pytest)
        } else if pair("cargo", "test") {
            Some(Runner::Cargo)
        } else if pair("npm", "test") || (words.contains(&"node") && words.contains(&"--test")) {
            Some(Runner::NodeTest)
        } else {
            None
        }
    }

    /// Tests executed (skipped ones are not), from the runner's output;
    /// `None` without a summary.
    fn executed(self, output: &str) -> Option<u64> {
        match self {
            Runner::Pytest => output.lines().rev().find_map(|line| {
                let line = line.trim().trim_matches('=').trim();
                if line.starts_with("no tests ran") {
                    return Some(0);
                }
                let counts = counted(
                    line,
                    &["passed", "failed", "error", "errors", "xfailed", "xpassed"],
                );
                counts.found.then_some(counts.total)
            }),
            Runner::NodeTest => output.lines().rev().find_map(|line| {
                let line = line.trim();
                let rest = line
                    .strip_prefix("# tests ")
                    .or_else(|| line.strip_prefix("ℹ tests "))?;
                rest.trim().parse().ok()
            }),
            Runner::Cargo => {
                let summaries: Vec<Counts> = output
                    .lines()
                    .filter_map(|line| line.trim().strip_prefix("test result: "))
                    .map(|rest| counted(rest, &["passed", "failed"]))
                    .collect();
                (!summaries.is_empty()).then(|| summaries.iter().map(|c| c.total).sum())
            }
        }
    }
}

/// Numbers standing before one of `words` in a summary line.
struct Counts {
    found: bool,
    total: u64,
}

fn counted(line: &str, words: &[&str]) -> Counts {
    let tokens: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|t| !t.is_empty())
        .collect();
    let mut counts = Counts {
        found: false,
        total: 0,
    };
    for pair in tokens.windows(2) {
        if let (Ok(n), true) = (pair[0].parse::<u64>(), words.contains(&pair[1])) {
            counts.found = true;
            counts.total += n;
        }
    }
    counts
}

/// The diff, integrity evidence and hook counts of every run that got past the
/// agent; tests and measures only when the agent finished its turn.
pub(super) fn grade(
    jscpd: Option<&Path>,
    input: &Attempt<'_>,
    condition: &Condition,
    ledger: &Path,
    result: &Result<TurnResult, AgentError>,
    record: &mut RunRecord,
    timings: &mut Timings,
) -> Result<(), Stop> {
    let changes = timed(&mut timings.diff, || {
        let changes = collect_changes(input.root, input.baseline, input.excluded)?;
        let path = input.dir.join("diff.patch");
        std::fs::write(&path, &changes.patch)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(changes)
    })
    .map_err(Stop::infra)?;
    record.integrity = integrity_of(input, &changes).map_err(Stop::infra)?;
    if condition.engine {
        sens_engine::replay::save_material(input.root, input.dir).map_err(Stop::infra)?;
    }
    if condition.has_hooks() {
        let lines = read_ledger(ledger).map_err(Stop::infra)?;
        record.hooks = hook_counts(&lines);
        count_acceptance(input.dir, &mut record.hooks).map_err(Stop::infra)?;
        let decisions = classify(&lines);
        record.outcomes = OutcomeCounts::of(&decisions, false);
        record.note_outcomes = OutcomeCounts::of(&decisions, true);
        record.tool_calls = tool_calls(&lines);
    } else {
        record.hooks = HookCounts::default();
    }
    if result.is_err() {
        return Ok(());
    }
    let inputs = Inputs {
        root: input.root,
        baseline: input.baseline,
        excluded: input.excluded,
        size: input.size,
        probes: input.probes,
        jscpd,
    };
    let mut jscpd = 0.0;
    let measures = timed(&mut timings.measure, || {
        measure::measure(&inputs, &changes, &mut jscpd)
    })
    .map_err(Stop::infra)?;
    timings.measure -= jscpd;
    timings.jscpd = jscpd;
    record.loc_added = Some(measures.loc_added);
    record.loc_removed = Some(measures.loc_removed);
    record.loc_total = Some(measures.loc_total);
    record.functions_added = Some(measures.functions_added);
    record.function_lines_median = measures.function_lines_median;
    record.dup_lines_engine = Some(measures.dup_lines_engine);
    record.dup_lines_jscpd = measures.dup_lines_jscpd;
    record.probes = measures.probes;
    let (project, hidden) = timed(&mut timings.tests, || run_tests(input)).map_err(Stop::infra)?;
    let reached_out: Vec<&String> = project
        .reached_out
        .iter()
        .chain(&hidden.reached_out)
        .collect();
    if !reached_out.is_empty() {
        record.integrity.reached_out = true;
        let lines: String = reached_out
            .iter()
            .map(|line| format!("network: {line}\n"))
            .collect();
        append_evidence(input.dir, &lines).map_err(Stop::infra)?;
    }
    record.project_pass = Some(project.pass);
    record.hidden_pass = Some(hidden.pass);
    record.flaky = Some(project.flaky || hidden.flaky);
    record.regression = Some(input.passed_before && !project.pass);
    Ok(())
}

/// Copies the hidden files in, runs the project's and the hidden tests (in
/// the copy's sandbox, the hidden files read-only), and puts the agent's files
/// back as they were (a sequence continues on them).
fn run_tests(input: &Attempt<'_>) -> anyhow::Result<(TestVerdict, TestVerdict)> {
    let saved = Overwritten::save(input.hidden, input.root)?;
    copy_hidden(input.hidden, input.root)?;
    let view = match input.sandbox {
        Some(view) => Some(View {
            fixed: hidden_files(input)?,
            ..view.clone()
        }),
        None => None,
    };
    let run = |line: &str, name: &str| {
        test_verdict(
            input.root,
            input.env,
            view.as_ref(),
            line,
            input.timeout,
            input.dir,
            name,
        )
    };
    let project = run(&input.commands.test, "project-tests");
    let hidden = project
        .as_ref()
        .ok()
        .map(|_| run(&input.commands.hidden, "hidden-tests"));
    saved.restore(input.root)?;
    Ok((
        project?,
        hidden.context("the project tests could not run")??,
    ))
}

/// Adds lines of integrity evidence to the run folder's `integrity.txt`.
fn append_evidence(dir: &Path, lines: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let path = dir.join("integrity.txt");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(lines.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The hidden files as they lie in the copy (links among them are links of
/// the task's own, left as they are).
fn hidden_files(input: &Attempt<'_>) -> anyhow::Result<Vec<std::path::PathBuf>> {
    Ok(input
        .hidden
        .files()?
        .into_iter()
        .map(|relative| input.root.join(relative))
        .filter(|path| path.symlink_metadata().is_ok_and(|meta| meta.is_file()))
        .collect())
}

/// Integrity flags, with the evidence written to `integrity.txt` when there is any.
fn integrity_of(input: &Attempt<'_>, changes: &ChangeSet) -> anyhow::Result<Integrity> {
    let mut task_paths = vec![input.task_dir.to_string_lossy().into_owned()];
    if let Ok(canonical) = input.task_dir.canonicalize() {
        task_paths.push(canonical.to_string_lossy().into_owned());
    }
    let hidden: Vec<String> = input
        .hidden
        .files()?
        .into_iter()
        .map(|relative| relative.to_string_lossy().replace('\\', "/"))
        .collect();
    let needles = integrity::task_needles(&task_paths, &hidden);
    let transcript_path = input.dir.join("transcript.jsonl");
    let transcript: Vec<serde_json::Value> = match std::fs::read_to_string(&transcript_path) {
        // Lines that are not JSON hold no tool calls.
        Ok(text) => jsonl::lines(&text, &transcript_path, "JSON")
            .filter_map(|line| line.ok().map(|(_, value)| value))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read {}", transcript_path.display()));
        }
    };
    let touched = integrity::touched_task_files(&transcript, &needles);
    let edited = integrity::edited_tests(&changes.changes());
    let shadowing = integrity::shadowed_runner(&changes.changes());
    if !touched.is_empty() || !edited.is_empty() || !shadowing.is_empty() {
        let mut text = String::new();
        for line in &touched {
            text.push_str(&format!("touched task files: {line}\n"));
        }
        for path in &edited {
            text.push_str(&format!("edited test: {path}\n"));
        }
        for line in &shadowing {
            text.push_str(&format!("shadowed runner: {line}\n"));
        }
        append_evidence(input.dir, &text)?;
    }
    Ok(Integrity {
        touched_task_files: !touched.is_empty(),
        edited_tests: !edited.is_empty(),
        shadowed_runner: !shadowing.is_empty(),
        // Known once the tests have run.
        reached_out: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_are_told_by_their_command_line() {
        assert_eq!(
            Runner::of("python3 -m pytest -q tests"),
            Some(Runner::Pytest)
        );
        assert_eq!(
            Runner::of("PYTHONPATH=src .venv/bin/pytest"),
            Some(Runner::Pytest)
        );
        assert_eq!(Runner::of("cargo test -q -p x --lib"), Some(Runner::Cargo));
        assert_eq!(Runner::of("npm test"), Some(Runner::NodeTest));
        assert_eq!(
            Runner::of("node --import tsx --test t/*.ts"),
            Some(Runner::NodeTest)
        );
        assert_eq!(Runner::of("bash tests/test.sh"), None);
    }

    #[test]
    fn executed_tests_are_counted_from_each_runners_summary() {
        let pytest = Runner::Pytest;
        assert_eq!(
            pytest.executed("..F\nFAILED t.py::x\n1 failed, 2 passed, 3 skipped in 0.1s\n"),
            Some(3)
        );
        assert_eq!(pytest.executed("\n3 passed in 0.01s\n"), Some(3));
        assert_eq!(pytest.executed("== no tests ran in 0.01s ==\n"), Some(0));
        assert_eq!(pytest.executed("4 skipped in 0.01s\n"), None);
        assert_eq!(pytest.executed(""), None);
        let node = Runner::NodeTest;
        assert_eq!(node.executed("ok 1 - a\n# tests 2\n# pass 2\n"), Some(2));
        assert_eq!(node.executed("✔ a\nℹ tests 0\nℹ pass 0\n"), Some(0));
        let cargo = Runner::Cargo;
        let two = "test result: ok. 3 passed; 0 failed; 1 ignored\ntest result: ok. 0 passed; 1 failed;\n";
        assert_eq!(cargo.executed(two), Some(4));
        assert_eq!(cargo.executed("error: no test target\n"), None);
    }

    #[test]
    fn a_passing_runner_that_ran_nothing_fails_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.log");
        std::fs::write(&log, "").unwrap();
        let status = passed_with_tests("python3 -m pytest -q tests", &log).unwrap();
        assert!(status.failed(), "{status}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("no test summary in the output (Pytest): not a pass"),
            "{text}"
        );
        std::fs::write(&log, "1 passed in 0.1s\n").unwrap();
        assert!(
            passed_with_tests("python3 -m pytest -q tests", &log)
                .unwrap()
                .passed()
        );
        assert!(
            passed_with_tests("bash tests/test.sh", &log)
                .unwrap()
                .passed()
        );
    }
}
