//! `sens-bench validate` (SPEC 3.2) and `sens-bench sequence validate` (SPEC 3.7):
//! every task and step is checked in fresh copies, and a check that does not give
//! the expected result counts only when a second run agrees (otherwise it is a
//! flake, reported with the log of the run that went wrong).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::exec::{self, CommandLine, Outcome, Status};
use crate::loc;
use crate::sequence::{Sequence, load_sequence};
use crate::task::{Task, load_tasks};
use crate::workspace::{Cache, Workspace, apply_patch, copy_hidden, remove_hidden};

/// Options of `sens-bench validate`.
#[derive(Debug, Clone)]
pub struct TaskOptions {
    pub tasks: PathBuf,
    pub task: Option<String>,
    /// How many times the whole check runs.
    pub repeat: usize,
    /// Tasks validated at once.
    pub jobs: usize,
    /// Limit for each set-up and test command.
    pub timeout: Duration,
    /// Where command logs go; default: a new folder under the cache.
    pub logs: Option<PathBuf>,
}

/// Options of `sens-bench sequence validate`.
#[derive(Debug, Clone)]
pub struct SequenceOptions {
    pub sequence: PathBuf,
    pub timeout: Duration,
    pub logs: Option<PathBuf>,
}

/// The result of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Ok,
    /// Went wrong once, then as expected: does not count as a failure.
    Flaky,
    /// The bench could not perform the check (source, patch, command start).
    Error,
    /// Went wrong twice.
    Failed,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Flaky => "flaky",
            Verdict::Error => "ERROR",
            Verdict::Failed => "FAILED",
        }
    }

    fn counts_against(self) -> bool {
        matches!(self, Verdict::Error | Verdict::Failed)
    }
}

/// One check in one attempt.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub name: String,
    pub verdict: Verdict,
    /// Time of the first run (or of the action).
    pub seconds: f64,
    /// Command runs made and how many of them went wrong.
    pub runs: usize,
    pub unexpected: usize,
    /// What went wrong and where its log is; empty when ok.
    pub note: String,
}

impl CheckResult {
    fn action(name: &str, started: Instant, result: Result<()>) -> CheckResult {
        let (verdict, note) = match result {
            Ok(()) => (Verdict::Ok, String::new()),
            Err(err) => (Verdict::Error, format!("{err:#}")),
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
enum Expect {
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
struct Copy {
    workspace: Workspace,
    logs: PathBuf,
    timeout: Duration,
    runs: usize,
    /// The sequence state being checked, named in log files.
    state: String,
}

impl Copy {
    fn new(workspace: Workspace, logs: PathBuf, timeout: Duration) -> Result<Copy> {
        std::fs::create_dir_all(&logs)
            .with_context(|| format!("cannot create the log folder {}", logs.display()))?;
        Ok(Copy {
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
        })
    }

    /// Runs `line` expecting `expect`; when it goes wrong and `again` is set, a
    /// second run decides between a failure and a flake.
    fn check(
        &mut self,
        name: &str,
        line: &str,
        expect: Expect,
        again: bool,
    ) -> Result<CheckResult> {
        let first = self.run(name, line)?;
        let mut result = CheckResult {
            name: name.to_string(),
            verdict: Verdict::Ok,
            seconds: first.duration.as_secs_f64(),
            runs: 1,
            unexpected: 0,
            note: String::new(),
        };
        if expect.met_by(&first.status) {
            return Ok(result);
        }
        result.unexpected = 1;
        let could_not_start = matches!(first.status, Status::CouldNotStart(_));
        if could_not_start || !again {
            result.verdict = if could_not_start {
                Verdict::Error
            } else {
                Verdict::Failed
            };
            result.note = with_log(&first.status.to_string(), &first);
            return Ok(result);
        }
        let second = self.run(&format!("{name} again"), line)?;
        result.runs = 2;
        if expect.met_by(&second.status) {
            result.verdict = Verdict::Flaky;
            result.note = with_log(&format!("{} then {}", first.status, second.status), &first);
        } else {
            result.unexpected = 2;
            result.verdict = Verdict::Failed;
            result.note = with_log(&format!("{} twice", second.status), &second);
        }
        Ok(result)
    }

    /// Copies hidden files in, then checks the hidden command.
    fn check_hidden(
        &mut self,
        name: &str,
        hidden: &Path,
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
fn open_copy(
    prefix: &str,
    materialize: impl FnOnce() -> Result<Workspace>,
    setup: Option<&str>,
    logs: PathBuf,
    timeout: Duration,
    rows: &mut Vec<CheckResult>,
) -> Result<Option<Copy>> {
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
    let mut copy = Copy::new(workspace, logs, timeout)?;
    if let Some(line) = setup {
        // Set-up is not a test: it runs once per copy and is not retried.
        let row = copy.check(&format!("{prefix}setup"), line, Expect::Pass, false)?;
        let usable = row.verdict == Verdict::Ok;
        rows.push(row);
        if !usable {
            return Ok(None);
        }
    }
    Ok(Some(copy))
}

/// The three checks of SPEC 3.2 on one task, once: a start copy (tests pass,
/// hidden tests fail) and a reference copy (tests and hidden tests pass).
fn validate_task_once(
    task: &Task,
    cache: &Cache,
    logs: &Path,
    timeout: Duration,
) -> Result<Vec<CheckResult>> {
    let mut rows = Vec::new();
    let setup = task.commands.setup();
    let materialize = || Workspace::for_task(task, cache);
    if let Some(mut copy) = open_copy(
        "start: ",
        materialize,
        setup,
        logs.join("start"),
        timeout,
        &mut rows,
    )? {
        rows.push(copy.check("start: tests pass", &task.commands.test, Expect::Pass, true)?);
        rows.push(copy.check_hidden(
            "start: hidden tests fail",
            &task.hidden,
            &task.commands.hidden,
            Expect::Fail,
        )?);
    }
    if let Some(mut copy) = open_copy(
        "reference: ",
        materialize,
        setup,
        logs.join("reference"),
        timeout,
        &mut rows,
    )? {
        let started = Instant::now();
        let fair = crate::fairness::FairPlay::for_task(&copy.workspace.root, task);
        let applied = apply_patch(&copy.workspace.root, &task.reference);
        let usable = applied.is_ok();
        rows.push(CheckResult::action(
            "reference: patch applies",
            started,
            applied,
        ));
        if usable {
            let fair = fair.and_then(crate::fairness::FairPlay::finish);
            rows.push(CheckResult::action(
                "reference: fair under the engine",
                started,
                fair,
            ));
            rows.push(copy.check_hidden(
                "reference: hidden tests pass",
                &task.hidden,
                &task.commands.hidden,
                Expect::Pass,
            )?);
            rows.push(copy.check(
                "reference: tests pass",
                &task.commands.test,
                Expect::Pass,
                true,
            )?);
        }
    }
    Ok(rows)
}

fn logs_folder(given: Option<&Path>, cache: &Cache, what: &str) -> Result<PathBuf> {
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

/// The rows of one attempt at one task: (task index, attempt, rows).
type Attempt = (usize, usize, Result<Vec<CheckResult>>);

/// `sens-bench validate`: exit 0 only if every task is valid.
pub fn validate_tasks(options: &TaskOptions) -> Result<ExitCode> {
    anyhow::ensure!(options.repeat >= 1, "--repeat must be at least 1");
    anyhow::ensure!(options.jobs >= 1, "--jobs must be at least 1");
    let tasks = load_tasks(&options.tasks, options.task.as_deref())?;
    exec::install_interrupt_guard()?;
    let cache = Cache::from_env()?;
    let logs = logs_folder(options.logs.as_deref(), &cache, "validate")?;
    let work: Vec<(usize, usize)> = (0..options.repeat)
        .flat_map(|attempt| (0..tasks.len()).map(move |task| (task, attempt)))
        .collect();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Attempt>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.min(work.len()) {
            scope.spawn(|| {
                while let Some(&(index, attempt)) = work.get(next.fetch_add(1, Ordering::SeqCst)) {
                    if exec::interrupted() {
                        break;
                    }
                    let task = &tasks[index];
                    let folder = logs.join(&task.id).join(format!("attempt-{}", attempt + 1));
                    let rows = validate_task_once(task, &cache, &folder, options.timeout);
                    if let Ok(rows) = &rows {
                        let worst = rows
                            .iter()
                            .map(|row| row.verdict)
                            .max()
                            .unwrap_or(Verdict::Ok);
                        eprintln!("{} (attempt {}): {}", task.id, attempt + 1, worst.word());
                    }
                    done.lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push((index, attempt, rows));
                }
            });
        }
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    done.sort_by_key(|(index, attempt, _)| (*index, *attempt));
    let mut per_task: Vec<Vec<Vec<CheckResult>>> = vec![Vec::new(); tasks.len()];
    for (index, _, rows) in done {
        per_task[index].push(rows?);
    }
    if exec::interrupted() {
        anyhow::bail!("interrupted; logs so far are in {}", logs.display());
    }
    let mut table = Table::new("task", options.repeat > 1);
    let mut invalid = Vec::new();
    for (task, attempts) in tasks.iter().zip(&per_task) {
        let rows = merge_attempts(attempts);
        if rows.iter().any(|row| row.verdict.counts_against()) {
            invalid.push(task.id.as_str());
        }
        for row in &rows {
            table.push(&task.id, row);
        }
    }
    print!("{}", table.render());
    println!("logs: {}", logs.display());
    if invalid.is_empty() {
        println!("{} task(s) valid", tasks.len());
        Ok(ExitCode::SUCCESS)
    } else {
        println!(
            "{} of {} task(s) invalid: {}",
            invalid.len(),
            tasks.len(),
            invalid.join(", ")
        );
        Ok(ExitCode::from(1))
    }
}

/// One row per check over all attempts: the worst verdict (with its note), the
/// mean time, and every run counted for the flake rate.
fn merge_attempts(attempts: &[Vec<CheckResult>]) -> Vec<CheckResult> {
    let mut order: Vec<String> = Vec::new();
    let mut merged: BTreeMap<String, (CheckResult, usize)> = BTreeMap::new();
    for row in attempts.iter().flatten() {
        match merged.get_mut(&row.name) {
            None => {
                order.push(row.name.clone());
                merged.insert(row.name.clone(), (row.clone(), 1));
            }
            Some((into, count)) => {
                into.seconds += row.seconds;
                into.runs += row.runs;
                into.unexpected += row.unexpected;
                *count += 1;
                if row.verdict > into.verdict {
                    into.verdict = row.verdict;
                    into.note = row.note.clone();
                }
            }
        }
    }
    order
        .iter()
        .filter_map(|name| merged.remove(name))
        .map(|(mut row, count)| {
            row.seconds /= count as f64;
            row
        })
        .collect()
}

/// `sens-bench sequence validate DIR` (SPEC 3.7): exit 0 only if the start and
/// every step are valid and every probe reads 1 on the final reference state.
pub fn validate_sequence(options: &SequenceOptions) -> Result<ExitCode> {
    let sequence = load_sequence(&options.sequence)?;
    exec::install_interrupt_guard()?;
    let cache = Cache::from_env()?;
    let logs = logs_folder(
        options.logs.as_deref(),
        &cache,
        &format!("sequence-{}", sequence.name),
    )?;
    let mut walk = SequenceWalk {
        sequence: &sequence,
        rows: Vec::new(),
        sizes: Vec::new(),
    };
    walk.run(&logs, options.timeout)?;
    let mut table = Table::new("state", false);
    for (state, row) in &walk.rows {
        table.push(state, row);
    }
    print!("{}", table.render());
    print!("{}", render_sizes(&sequence, &walk.sizes));
    println!("logs: {}", logs.display());
    if walk
        .rows
        .iter()
        .any(|(_, row)| row.verdict.counts_against())
    {
        println!("sequence `{}` is invalid", sequence.name);
        Ok(ExitCode::from(1))
    } else {
        println!(
            "sequence `{}` is valid ({} steps)",
            sequence.name,
            sequence.steps.len()
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// Size and probe counts of one state.
struct Size {
    state: String,
    loc: u64,
    probes: BTreeMap<String, u64>,
}

struct SequenceWalk<'a> {
    sequence: &'a Sequence,
    rows: Vec<(String, CheckResult)>,
    sizes: Vec<Size>,
}

impl SequenceWalk<'_> {
    /// One copy walks from the start through every reference state; each step's
    /// hidden files join the earlier ones, so the hidden command runs them all.
    fn run(&mut self, logs: &Path, timeout: Duration) -> Result<()> {
        let sequence = self.sequence;
        let mut rows = Vec::new();
        let copy = open_copy(
            "",
            || Workspace::for_sequence_start(sequence),
            sequence.commands.setup(),
            logs.to_path_buf(),
            timeout,
            &mut rows,
        )?;
        self.add("start", rows);
        let Some(mut copy) = copy else { return Ok(()) };
        let test = &sequence.commands.test;
        let hidden = &sequence.commands.hidden;
        let row = copy.check("tests pass", test, Expect::Pass, true)?;
        self.add("start", vec![row]);
        if !self.measure("start", &copy) {
            return Ok(());
        }
        for (index, step) in sequence.steps.iter().enumerate() {
            copy.state.clone_from(&step.id);
            // On state k-1 only step k's hidden tests run: earlier steps' tests are
            // checked on every state after it, and running them here too would
            // double the walk's cost, which grows with the square of its length.
            let earlier = &sequence.steps[..index];
            let root = copy.workspace.root.clone();
            let before = match earlier
                .iter()
                .try_for_each(|e| remove_hidden(&e.hidden, &root))
            {
                Ok(()) => copy.check_hidden(
                    "hidden tests fail before",
                    &step.hidden,
                    hidden,
                    Expect::Fail,
                )?,
                Err(err) => {
                    CheckResult::action("hidden tests fail before", Instant::now(), Err(err))
                }
            };
            self.add(&step.id, vec![before]);
            let started = Instant::now();
            let restored = earlier
                .iter()
                .try_for_each(|e| copy_hidden(&e.hidden, &root));
            if restored.is_err() {
                self.add(
                    &step.id,
                    vec![CheckResult::action(
                        "earlier hidden tests restored",
                        started,
                        restored,
                    )],
                );
                return Ok(());
            }
            let started = Instant::now();
            let applied = apply_patch(&copy.workspace.root, &step.reference);
            let usable = applied.is_ok();
            self.add(
                &step.id,
                vec![CheckResult::action("reference applies", started, applied)],
            );
            if !usable {
                // Later states do not exist without this one.
                return Ok(());
            }
            let after = copy.check(
                "hidden tests pass (this and earlier steps)",
                hidden,
                Expect::Pass,
                true,
            )?;
            let tests = copy.check("tests pass", test, Expect::Pass, true)?;
            self.add(&step.id, vec![after, tests]);
            if !self.measure(&step.id, &copy) {
                return Ok(());
            }
            let worst = self
                .rows
                .iter()
                .filter(|(state, _)| *state == step.id)
                .map(|(_, row)| row.verdict)
                .max()
                .unwrap_or(Verdict::Ok);
            eprintln!("{}: {}", step.id, worst.word());
        }
        self.check_final_probes();
        Ok(())
    }

    fn add(&mut self, state: &str, rows: Vec<CheckResult>) {
        self.rows
            .extend(rows.into_iter().map(|row| (state.to_string(), row)));
    }

    /// Records the state's size; false (and an error row) when it cannot be measured.
    fn measure(&mut self, state: &str, copy: &Copy) -> bool {
        let started = Instant::now();
        let root = &copy.workspace.root;
        let measured = loc::lines_of_code(root, &self.sequence.size).and_then(|loc| {
            Ok(Size {
                state: state.to_string(),
                loc,
                probes: loc::count_probes(root, &self.sequence.probes, &self.sequence.size)?,
            })
        });
        match measured {
            Ok(size) => {
                self.sizes.push(size);
                true
            }
            Err(err) => {
                self.add(
                    state,
                    vec![CheckResult::action("size and probes", started, Err(err))],
                );
                false
            }
        }
    }

    fn check_final_probes(&mut self) {
        let Some(last) = self.sizes.last() else {
            return;
        };
        let off: Vec<String> = last
            .probes
            .iter()
            .filter(|(_, count)| **count != 1)
            .map(|(concept, count)| format!("{concept} = {count}"))
            .collect();
        let state = last.state.clone();
        let result = if off.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!("expected 1 each, found {}", off.join(", ")))
        };
        let mut row = CheckResult::action("every probe reads 1", Instant::now(), result);
        if row.verdict == Verdict::Error {
            row.verdict = Verdict::Failed;
        }
        self.add(&state, vec![row]);
    }
}

fn render_sizes(sequence: &Sequence, sizes: &[Size]) -> String {
    let mut header = vec!["state".to_string(), "lines".to_string()];
    header.extend(sequence.probes.iter().map(|probe| probe.concept.clone()));
    let mut lines = vec![header];
    for size in sizes {
        let mut line = vec![size.state.clone(), size.loc.to_string()];
        line.extend(sequence.probes.iter().map(|probe| {
            size.probes
                .get(&probe.concept)
                .map_or(String::new(), u64::to_string)
        }));
        lines.push(line);
    }
    format!("\n{}", align(&lines))
}

/// The result table: subject, check, result, seconds[, flake rate], note.
struct Table {
    lines: Vec<Vec<String>>,
    flake_rate: bool,
}

impl Table {
    fn new(subject: &str, flake_rate: bool) -> Table {
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

    fn push(&mut self, subject: &str, row: &CheckResult) {
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

    fn render(&self) -> String {
        align(&self.lines)
    }
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
fn align(lines: &[Vec<String>]) -> String {
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

    fn row(name: &str, verdict: Verdict, runs: usize, unexpected: usize) -> CheckResult {
        CheckResult {
            name: name.into(),
            verdict,
            seconds: 1.0,
            runs,
            unexpected,
            note: verdict.word().to_string(),
        }
    }

    #[test]
    fn attempts_merge_to_the_worst_verdict_and_count_every_run() {
        let merged = merge_attempts(&[
            vec![row("a", Verdict::Ok, 1, 0), row("b", Verdict::Flaky, 2, 1)],
            vec![
                row("a", Verdict::Flaky, 2, 1),
                row("b", Verdict::Failed, 2, 2),
            ],
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].name, "a");
        assert_eq!(
            (merged[0].verdict, merged[0].runs, merged[0].unexpected),
            (Verdict::Flaky, 3, 1)
        );
        assert_eq!(
            (merged[1].verdict, merged[1].note.as_str()),
            (Verdict::Failed, "FAILED")
        );
        assert!((merged[1].seconds - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_flake_is_not_a_failure() {
        assert!(!Verdict::Flaky.counts_against());
        assert!(Verdict::Failed.counts_against());
        assert!(Verdict::Error.counts_against());
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
