//! Running a task's command lines: `bash -c` in a folder, inside the run's
//! sandbox ([`crate::sandbox`]) when it has one, with the pinned environment, a
//! time limit, its own process group (ended whole on timeout, on exit and on
//! Ctrl-C, through [`group`]), and stdout + stderr in one capped log file per
//! command ([`capped`]). [`confirm`] is the retry rule grading and validation share: a result
//! that went wrong counts only when a second run agrees.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::sandbox::View;
use crate::sync::lock;
use capped::Capture;
use group::{exit_status_without_reaping, kill_group};
use reach::{Reach, Watch};

pub mod capped;
pub mod group;
pub use sens::bench::measured;
pub mod reach;

/// How long a command's output may stay open after the command and its
/// process group have ended (only a process that left both can hold it).
const OUTPUT_GRACE: Duration = Duration::from_secs(5);

/// The environment every task command runs with, on top of the inherited one, so
/// that grading does not depend on the machine's locale, time zone or hash seed.
pub const PINNED_ENV: [(&str, &str); 5] = [
    ("TZ", "UTC"),
    ("LANG", "C.UTF-8"),
    ("LC_ALL", "C.UTF-8"),
    ("PYTHONHASHSEED", "0"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
];

/// One command line to run.
#[derive(Debug, Clone)]
pub struct CommandLine<'a> {
    /// Passed to `bash -c` unchanged.
    pub line: &'a str,
    /// The working folder.
    pub dir: &'a Path,
    /// Extra variables (after the pinned ones, so they may override them).
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    /// Where stdout and stderr go, together; created or truncated.
    pub log: &'a Path,
    /// The sandbox it runs in (`dir` must be one of its writable folders);
    /// `None` runs it on the host.
    pub sandbox: Option<&'a View>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Passed,
    /// Non-zero exit; `code` is `None` when a signal ended the shell.
    Failed {
        code: Option<i32>,
        signal: Option<i32>,
    },
    TimedOut,
    CouldNotStart(String),
}

impl Status {
    pub fn passed(&self) -> bool {
        matches!(self, Status::Passed)
    }

    /// A completed test run that reported failure (not a timeout, not a start error).
    pub fn failed(&self) -> bool {
        matches!(self, Status::Failed { .. })
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Passed => write!(f, "passed"),
            Status::Failed {
                code: Some(code), ..
            } => write!(f, "failed (exit code {code})"),
            Status::Failed {
                signal: Some(sig), ..
            } => write!(f, "failed (signal {sig})"),
            Status::Failed { .. } => write!(f, "failed"),
            Status::TimedOut => write!(f, "timed out"),
            Status::CouldNotStart(why) => write!(f, "could not start: {why}"),
        }
    }
}

/// What happened when a command ran.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Status,
    pub duration: Duration,
    pub log: PathBuf,
    /// What it did with the network, when it ran in a sandbox without one.
    pub reach: Option<Reach>,
}

/// Process groups of commands still running, so Ctrl-C can end them.
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static GUARD: OnceLock<Result<(), String>> = OnceLock::new();

/// True once Ctrl-C (or SIGTERM/SIGHUP) arrived after [`install_interrupt_guard`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Makes Ctrl-C, SIGTERM and SIGHUP end every live command's process group.
/// Children lead their own groups, so the terminal's SIGINT never reaches them; this
/// handler does it. The first signal stops new commands and lets the caller unwind
/// (temporary folders are removed); a second one exits at once. Idempotent.
pub fn install_interrupt_guard() -> Result<()> {
    let installed = GUARD.get_or_init(|| {
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP]).map_err(|err| err.to_string())?;
        // Signals are read on this thread, not in signal context, so ending the
        // groups may take the lock on them.
        std::thread::Builder::new()
            .name("interrupt-guard".into())
            .spawn(move || {
                for _ in signals.forever() {
                    let again = INTERRUPTED.swap(true, Ordering::SeqCst);
                    kill_live_groups();
                    if again {
                        std::process::exit(130);
                    }
                }
            })
            .map(drop)
            .map_err(|err| err.to_string())
    });
    match installed {
        Ok(()) => Ok(()),
        Err(err) => bail!("could not install the Ctrl-C handler: {err}"),
    }
}

fn live_groups() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    lock(&LIVE_GROUPS)
}

/// Ends every process group a running command leads.
pub fn kill_live_groups() {
    for pid in live_groups().iter() {
        // Best effort: a group that cannot be signalled has ended or is not ours.
        let _ = kill_group(*pid);
    }
}

/// Registers a child's group while it runs; ends the group when dropped, so an
/// early return or a panic never leaves a command running.
struct LiveGroup(u32);

impl LiveGroup {
    fn new(pid: u32) -> Self {
        live_groups().insert(pid);
        LiveGroup(pid)
    }
}

impl Drop for LiveGroup {
    fn drop(&mut self) {
        let _ = kill_group(self.0);
        live_groups().remove(&self.0);
    }
}

/// Runs `bash -c LINE`. `Err` only for problems of the bench itself (the log
/// cannot be written, the wait failed, Ctrl-C); everything about the command is in
/// the returned [`Outcome`].
pub fn run(cmd: &CommandLine<'_>) -> Result<Outcome> {
    if interrupted() {
        bail!("interrupted");
    }
    let mut log = File::create(cmd.log)
        .with_context(|| format!("cannot create the log file {}", cmd.log.display()))?;
    writeln!(log, "$ {}\n# in {}", cmd.line, cmd.dir.display())
        .with_context(|| format!("cannot write the log file {}", cmd.log.display()))?;
    let started = Instant::now();
    let could_not_start = |why: String| Outcome {
        status: Status::CouldNotStart(why),
        duration: started.elapsed(),
        log: cmd.log.to_path_buf(),
        reach: None,
    };
    let mut command = match cmd.sandbox.map(|view| view.wrapper(cmd.dir)) {
        None => std::process::Command::new("bash"),
        Some(Ok(mut wrapper)) => {
            wrapper.arg("bash");
            wrapper
        }
        Some(Err(err)) => return Ok(could_not_start(format!("{err:#}"))),
    };
    let (output, writer) = std::io::pipe().context("cannot make a pipe for a command's output")?;
    let stderr = writer
        .try_clone()
        .context("cannot share a command's output pipe")?;
    let (watch, report) = match cmd.sandbox {
        Some(view) if !view.network => {
            let (watch, report) = Watch::start(&mut command, cmd.line)
                .context("cannot make a pipe for a command's network report")?;
            (Some(watch), Some(report))
        }
        _ => {
            command.arg("-c").arg(cmd.line);
            (None, None)
        }
    };
    command
        .current_dir(cmd.dir)
        .envs(PINNED_ENV)
        .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr)
        .process_group(0);
    let spawned = command.spawn();
    // The pipes' write ends now live only in the child: its output ends when
    // the last process holding them does.
    drop(command);
    drop(report);
    let capture = Capture::start(output, log)
        .with_context(|| format!("cannot start logging into {}", cmd.log.display()))?;
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            return Ok(could_not_start(format!(
                "bash in {}: {err}",
                cmd.dir.display()
            )));
        }
    };
    let group = LiveGroup::new(child.id());
    let status = wait_or_kill(&child, cmd.timeout, started)?;
    // Whatever the shell left behind in its group (background jobs, servers) ends
    // with it. Killing before reaping keeps the group id from being reused.
    drop(group);
    child
        .wait()
        .with_context(|| format!("cannot reap `{}`", cmd.line))?;
    capture
        .finish(OUTPUT_GRACE)
        .with_context(|| format!("cannot write the log file {}", cmd.log.display()))?;
    if interrupted() {
        bail!("interrupted");
    }
    // Every process of the sandbox has ended with it: the report is whole.
    let reach = watch
        .map(Watch::reach)
        .transpose()
        .context("cannot read a command's network report")?;
    let status = status.map_or(Status::TimedOut, status_of);
    Ok(Outcome {
        status,
        duration: started.elapsed(),
        log: cmd.log.to_path_buf(),
        reach,
    })
}

fn status_of(exit: ExitStatus) -> Status {
    use std::os::unix::process::ExitStatusExt;
    if exit.success() {
        Status::Passed
    } else {
        Status::Failed {
            code: exit.code(),
            signal: exit.signal(),
        }
    }
}

/// Waits until the child exits (`Some`, the child left unreaped) or the time is up
/// or Ctrl-C came (`None`, its group killed).
fn wait_or_kill(child: &Child, timeout: Duration, started: Instant) -> Result<Option<ExitStatus>> {
    let pid = child.id();
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = exit_status_without_reaping(pid)
            .with_context(|| format!("cannot wait for process {pid}"))?
        {
            return Ok(Some(status));
        }
        let elapsed = started.elapsed();
        if elapsed >= timeout || interrupted() {
            kill_group(pid).with_context(|| format!("cannot kill process group {pid}"))?;
            return Ok(None);
        }
        std::thread::sleep(pause.min(timeout - elapsed));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// How a check came out under the retry rule: a command whose result is not the
/// one expected runs once more, and only a second unexpected result counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmed<T> {
    /// The first run gave the expected result.
    Expected(T),
    /// The first run went wrong, the second as expected: a flake.
    Flaky { first: T, second: T },
    /// Went wrong, and again (`second`), or was not run again (`None`).
    Unexpected { first: T, second: Option<T> },
}

impl<T> Confirmed<T> {
    /// The result counts as expected (a flake does).
    pub fn expected(&self) -> bool {
        !matches!(self, Confirmed::Unexpected { .. })
    }

    pub fn flaky(&self) -> bool {
        matches!(self, Confirmed::Flaky { .. })
    }
}

/// Runs a check (`run(1)`), and once more (`run(2)`) only when its result is not
/// `expected` and `again` allows a second run. `Err` is a harness failure.
pub fn confirm<T>(
    mut run: impl FnMut(u32) -> Result<T>,
    expected: impl Fn(&T) -> bool,
    again: impl Fn(&T) -> bool,
) -> Result<Confirmed<T>> {
    let first = run(1)?;
    if expected(&first) {
        return Ok(Confirmed::Expected(first));
    }
    if !again(&first) {
        return Ok(Confirmed::Unexpected {
            first,
            second: None,
        });
    }
    let second = run(2)?;
    Ok(if expected(&second) {
        Confirmed::Flaky { first, second }
    } else {
        Confirmed::Unexpected {
            first,
            second: Some(second),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_line(line: &str, timeout: Duration) -> (Outcome, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("cmd.log");
        let outcome = run(&CommandLine {
            line,
            dir: dir.path(),
            env: &[("EXTRA".to_string(), "yes".to_string())],
            timeout,
            log: &log,
            sandbox: None,
        })
        .expect("runs");
        (outcome, dir)
    }

    fn log_text(outcome: &Outcome) -> String {
        std::fs::read_to_string(&outcome.log).expect("log readable")
    }

    #[test]
    fn a_passing_command_logs_both_streams_with_the_pinned_env() {
        let (outcome, _dir) = run_line(
            "echo out $TZ $LC_ALL $PYTHONHASHSEED $EXTRA; echo err >&2",
            Duration::from_secs(10),
        );
        assert_eq!(outcome.status, Status::Passed);
        let log = log_text(&outcome);
        assert!(log.contains("out UTC C.UTF-8 0 yes"), "{log}");
        assert!(log.contains("err"), "{log}");
    }

    #[test]
    fn output_past_the_cap_keeps_the_end_where_the_runners_summary_is() {
        let total = capped::HEAD + capped::TAIL + 1_000_000;
        let (outcome, _dir) = run_line(
            &format!("head -c {total} /dev/zero | tr '\\0' a; echo; echo '3 passed in 0.1s'"),
            Duration::from_secs(60),
        );
        assert_eq!(outcome.status, Status::Passed);
        let log = log_text(&outcome);
        assert!(
            log.len() < capped::HEAD + capped::TAIL + 1000,
            "{}",
            log.len()
        );
        assert!(log.contains("bytes of output cut here"));
        assert!(log.ends_with("3 passed in 0.1s\n"));
    }

    #[test]
    fn a_sandboxed_command_sees_only_its_folder_and_runs_under_the_limits() {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(dir.path().join("beside"), "host\n").unwrap();
        let log = dir.path().join("cmd.log");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let view = View::for_commands(vec![work.clone()], &path, false);
        let outcome = run(&CommandLine {
            line: "ulimit -d; ulimit -u; cat ../beside || echo hidden; echo made > mine",
            dir: &work,
            env: &[],
            timeout: Duration::from_secs(30),
            log: &log,
            sandbox: Some(&view),
        })
        .expect("runs");
        assert_eq!(outcome.status, Status::Passed, "{}", log_text(&outcome));
        let text = log_text(&outcome);
        let kib = crate::sandbox::limits::MEMORY_PER_PROCESS / 1024;
        assert!(
            text.contains(&format!("\n{kib}\n{}\n", crate::sandbox::limits::TASKS)),
            "{text}"
        );
        assert!(text.contains("hidden") && !text.contains("host"), "{text}");
        assert_eq!(
            std::fs::read_to_string(work.join("mine")).unwrap(),
            "made\n"
        );
        assert_eq!(outcome.reach, Some(Reach::Contained));
    }

    #[test]
    fn a_sandboxed_command_that_tries_to_reach_out_or_ends_its_wrapper_is_seen() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let view = View::for_commands(vec![dir.path().to_path_buf()], &path, false);
        let reach = |line: &str| {
            let log = dir.path().join("cmd.log");
            run(&CommandLine {
                line,
                dir: dir.path(),
                env: &[],
                timeout: Duration::from_secs(30),
                log: &log,
                sandbox: Some(&view),
            })
            .expect("runs")
            .reach
        };
        // A documentation address (TEST-NET-1): the sandbox has no route to it,
        // so nothing is sent anywhere.
        let tried = reach("exec 5<>/dev/tcp/192.0.2.1/80 || echo refused");
        assert!(matches!(tried, Some(Reach::Tried(n)) if n > 0), "{tried:?}");
        assert_eq!(reach("kill -9 $PPID"), Some(Reach::Unreported));
        assert_eq!(
            reach("exec 5<>/dev/tcp/127.0.0.1/9 || true"),
            Some(Reach::Contained)
        );
        // The line never holds the report's descriptor (else it would end here).
        assert_eq!(
            reach("test -e /proc/self/fd/3 && kill -9 $PPID; true"),
            Some(Reach::Contained)
        );
    }

    #[test]
    fn a_failing_command_reports_its_exit_code() {
        let (outcome, _dir) = run_line("exit 3", Duration::from_secs(10));
        assert_eq!(
            outcome.status,
            Status::Failed {
                code: Some(3),
                signal: None
            }
        );
        assert!(outcome.status.failed());
    }

    #[test]
    fn a_missing_folder_is_reported_as_could_not_start() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("cmd.log");
        let outcome = run(&CommandLine {
            line: "true",
            dir: &dir.path().join("absent"),
            env: &[],
            timeout: Duration::from_secs(5),
            log: &log,
            sandbox: None,
        })
        .expect("runs");
        assert!(matches!(outcome.status, Status::CouldNotStart(_)));
    }

    /// True while `pid` exists and is not a zombie.
    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the command name in parentheses.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| !rest.starts_with('Z')),
            Err(_) => false,
        }
    }

    fn wait_gone(pid: i32) -> bool {
        (0..100).any(|_| {
            if alive(pid) {
                std::thread::sleep(Duration::from_millis(20));
                false
            } else {
                true
            }
        })
    }

    #[test]
    fn a_hung_command_is_killed_with_its_grandchildren_at_the_timeout() {
        let (outcome, dir) = run_line(
            "sleep 300 & echo $! > grandchild.pid; wait",
            Duration::from_millis(500),
        );
        assert_eq!(outcome.status, Status::TimedOut);
        assert!(outcome.duration < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(dir.path().join("grandchild.pid"))
            .expect("pid written")
            .trim()
            .parse()
            .expect("a pid");
        assert!(wait_gone(pid), "grandchild {pid} still running");
    }

    #[test]
    fn background_jobs_end_when_the_command_exits() {
        let (outcome, dir) = run_line(
            "sleep 300 & echo $! > grandchild.pid; exit 0",
            Duration::from_secs(10),
        );
        assert_eq!(outcome.status, Status::Passed);
        let pid: i32 = std::fs::read_to_string(dir.path().join("grandchild.pid"))
            .expect("pid written")
            .trim()
            .parse()
            .expect("a pid");
        assert!(wait_gone(pid), "background job {pid} still running");
    }

    #[test]
    fn a_failure_counts_only_when_it_repeats() {
        let run = |outcomes: &'static [bool], again: bool| {
            let mut calls = 0;
            let confirmed = confirm(
                |n| {
                    calls += 1;
                    Ok(outcomes[n as usize - 1])
                },
                |pass| *pass,
                |_| again,
            )
            .unwrap();
            ((confirmed.expected(), confirmed.flaky()), calls)
        };
        assert_eq!(run(&[true], true), ((true, false), 1));
        assert_eq!(run(&[false, true], true), ((true, true), 2));
        assert_eq!(run(&[false, false], true), ((false, false), 2));
        assert_eq!(run(&[false, true], false), ((false, false), 1));
        assert!(confirm(|_| -> Result<bool> { bail!("no bash") }, |_| true, |_| true).is_err());
    }
}
