//! Grade, the third stage of an attempt (SPEC 3.5): the agent's change, the
//! integrity evidence, the hook counts, the measures, and the project's and the
//! hidden tests under the retry rule (a failure counts only when it repeats).

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};

use super::stage::{Attempt, Stop, Timings, timed};
use crate::agent::claude::{AgentError, TurnResult};
use crate::exec::{self, CommandLine, Status};
use crate::jsonl;
use crate::measure::integrity;
use crate::measure::ledger::{HookCounts, count_acceptance, hook_counts, read_ledger, tool_calls};
use crate::measure::outcomes::{OutcomeCounts, classify};
use crate::measure::{self, Inputs};
use crate::record::{Integrity, RunRecord};
use crate::spec::conditions::Condition;
use crate::workspace::diff::{ChangeSet, collect_changes};
use crate::workspace::hidden::{Overwritten, copy_hidden, hidden_files};

/// A test command's verdict after the retry rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TestVerdict {
    pub pass: bool,
    /// It failed once, then passed.
    pub flaky: bool,
}

/// A test command under the retry rule, in `root`; logs `<dir>/<name>.1.log`
/// (and `.2.log`).
pub(super) fn test_verdict(
    root: &Path,
    env: &[(String, String)],
    line: &str,
    timeout: Duration,
    dir: &Path,
    name: &str,
) -> anyhow::Result<TestVerdict> {
    let confirmed = exec::confirm(
        |attempt| {
            let log = dir.join(format!("{name}.{attempt}.log"));
            let outcome = exec::run(&CommandLine {
                line,
                dir: root,
                env,
                timeout,
                log: &log,
            })?;
            match outcome.status {
                Status::CouldNotStart(why) => bail!("cannot run `{line}`: {why}"),
                status => Ok(status),
            }
        },
        Status::passed,
        |_| true,
    )?;
    Ok(TestVerdict {
        pass: confirmed.expected(),
        flaky: confirmed.flaky(),
    })
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
        let changes = collect_changes(input.root, input.baseline)?;
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
        record.outcomes = OutcomeCounts::of(&classify(&lines));
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
    record.project_pass = Some(project.pass);
    record.hidden_pass = Some(hidden.pass);
    record.flaky = Some(project.flaky || hidden.flaky);
    record.regression = Some(input.passed_before && !project.pass);
    Ok(())
}

/// Copies the hidden files in, runs the project's and the hidden tests, and puts
/// the agent's files back as they were (a sequence continues on them).
fn run_tests(input: &Attempt<'_>) -> anyhow::Result<(TestVerdict, TestVerdict)> {
    let saved = Overwritten::save(input.hidden, input.root)?;
    copy_hidden(input.hidden, input.root)?;
    let run = |line: &str, name: &str| {
        test_verdict(input.root, input.env, line, input.timeout, input.dir, name)
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

/// Integrity flags, with the evidence written to `integrity.txt` when there is any.
fn integrity_of(input: &Attempt<'_>, changes: &ChangeSet) -> anyhow::Result<Integrity> {
    let mut task_paths = vec![input.task_dir.to_string_lossy().into_owned()];
    if let Ok(canonical) = input.task_dir.canonicalize() {
        task_paths.push(canonical.to_string_lossy().into_owned());
    }
    let hidden: Vec<String> = hidden_files(input.hidden)?
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
    if !touched.is_empty() || !edited.is_empty() {
        let mut text = String::new();
        for line in &touched {
            text.push_str(&format!("touched task files: {line}\n"));
        }
        for path in &edited {
            text.push_str(&format!("edited test: {path}\n"));
        }
        let path = input.dir.join("integrity.txt");
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Integrity {
        touched_task_files: !touched.is_empty(),
        edited_tests: !edited.is_empty(),
    })
}
