//! `sens-bench validate` and `sens-bench sequence validate` through the real
//! binary, on small fixtures of our own (shell projects under tests/fixtures).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::files::fixture;

fn fixtures() -> PathBuf {
    fixture("")
}

/// A scratch folder for the fixtures' state and the run's cache and logs.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sens-bench"))
            .args(args)
            .arg("--logs")
            .arg(self.path().join("logs"))
            .env("SENS_BENCH_CACHE", self.path().join("cache"))
            .env("SENS_FIXTURE_STATE", self.path())
            .output()
            .expect("sens-bench runs")
    }

    /// The text of the one log under `logs/` whose name ends with `suffix`.
    fn log_of(&self, suffix: &str) -> String {
        let walk = ignore::WalkBuilder::new(self.path().join("logs")).build();
        let found: Vec<PathBuf> = walk
            .filter_map(Result::ok)
            .map(|entry| entry.into_path())
            .filter(|path| path.to_string_lossy().ends_with(suffix))
            .collect();
        assert_eq!(found.len(), 1, "one log ending with {suffix}: {found:?}");
        std::fs::read_to_string(&found[0]).expect("the log reads")
    }

    fn validate(&self, task: &str, extra: &[&str]) -> (Option<i32>, String) {
        let tasks = fixtures().join("tasks");
        let tasks = tasks.to_str().expect("UTF-8 path");
        let mut args = vec!["validate", "--tasks", tasks, "--task", task];
        args.extend_from_slice(extra);
        let output = self.run(&args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        (
            output.status.code(),
            format!("{stdout}\n--- stderr\n{stderr}"),
        )
    }
}

/// True while process `pid` runs: not gone, and not a zombie waiting for its new
/// parent to reap it.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the command name in parentheses.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// The result word of `check` in the table of `task`.
fn result_of<'a>(output: &'a str, subject: &str, check: &str) -> &'a str {
    output
        .lines()
        .find_map(|line| {
            let rest = line
                .strip_prefix(subject)?
                .trim_start()
                .strip_prefix(check)?;
            rest.split_whitespace().next()
        })
        .unwrap_or_else(|| panic!("no row `{subject}` / `{check}` in:\n{output}"))
}

#[test]
fn a_valid_task_passes_every_check() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("valid", &["--repeat", "2", "--jobs", "2"]);
    assert_eq!(code, Some(0), "{out}");
    for check in [
        "start: tests pass",
        "start: hidden tests fail",
        "reference: patch applies",
        "reference: fair under the engine",
        "reference: tests pass",
        "reference: hidden tests pass",
    ] {
        assert_eq!(result_of(&out, "valid", check), "ok", "{check}:\n{out}");
    }
    // Two attempts, one run each, none unexpected.
    assert!(out.contains("flake rate"), "{out}");
    let row = out
        .lines()
        .find(|line| line.contains("start: tests pass"))
        .expect("row");
    assert!(row.contains("0/2"), "{row}");
}

#[test]
fn hidden_tests_that_already_pass_make_the_task_invalid() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("hidden-passes", &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        result_of(&out, "hidden-passes", "start: hidden tests fail"),
        "FAILED",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "hidden-passes", "reference: tests pass"),
        "ok",
        "{out}"
    );
    assert!(out.contains("invalid: hidden-passes"), "{out}");
}

#[test]
fn a_reference_that_does_not_apply_is_an_error() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("bad-reference", &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        result_of(&out, "bad-reference", "reference: patch applies"),
        "ERROR",
        "{out}"
    );
    assert!(out.contains("does not apply"), "{out}");
    assert_eq!(
        result_of(&out, "bad-reference", "start: tests pass"),
        "ok",
        "{out}"
    );
}

#[test]
fn a_start_whose_tests_fail_is_invalid() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("start-fails", &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        result_of(&out, "start-fails", "start: tests pass"),
        "FAILED",
        "{out}"
    );
    assert!(out.contains("failed (exit code 1) twice; log "), "{out}");
}

#[test]
fn a_reference_that_breaks_the_project_tests_is_invalid() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("reference-breaks-tests", &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        result_of(&out, "reference-breaks-tests", "reference: tests pass"),
        "FAILED",
        "{out}"
    );
    assert_eq!(
        result_of(
            &out,
            "reference-breaks-tests",
            "reference: hidden tests pass"
        ),
        "ok",
        "{out}"
    );
}

#[test]
fn a_flaky_test_command_is_reported_as_a_flake_with_its_log() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("flaky", &[]);
    // A failure that does not repeat does not count against the task.
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        result_of(&out, "flaky", "start: tests pass"),
        "flaky",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "flaky", "reference: tests pass"),
        "flaky",
        "{out}"
    );
    let row = out
        .lines()
        .find(|line| line.contains("start: tests pass"))
        .expect("row");
    assert!(row.contains("failed (exit code 1) then passed"), "{row}");
    let log = row.split("; log ").nth(1).expect("a log path in the note");
    assert!(Path::new(log).is_file(), "{log}");
    // The counter outside the copies saw both runs of both copies.
    let runs = std::fs::read_to_string(scratch.path().join("runs")).expect("counter");
    assert_eq!(runs.trim(), "4");
}

#[test]
fn a_hung_command_is_killed_at_its_timeout_with_its_grandchildren() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("hung", &["--timeout", "1"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        result_of(&out, "hung", "start: tests pass"),
        "FAILED",
        "{out}"
    );
    assert!(out.contains("timed out"), "{out}");
    let pids = std::fs::read_to_string(scratch.path().join("pids")).expect("pids written");
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 4, "two runs in each of two copies");
    for pid in pids {
        assert!(!alive(pid), "grandchild {pid} survived the timeout");
    }
}

#[test]
fn a_snapshot_task_starts_from_the_sequence_state() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("snapshot-pow", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        result_of(&out, "snapshot-pow", "reference: hidden tests pass"),
        "ok",
        "{out}"
    );
}

#[test]
fn bad_task_files_stop_validation_before_anything_runs() {
    let scratch = Scratch::new();
    let tasks = scratch.path().join("tasks");
    std::fs::create_dir_all(tasks.join("broken")).expect("mkdir");
    std::fs::write(
        tasks.join("broken/task.toml"),
        "id = \"broken\"\nlanguage = \"python\"\n",
    )
    .expect("write");
    let output = scratch.run(&["validate", "--tasks", tasks.to_str().expect("UTF-8")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("broken/task.toml") && stderr.contains("missing field"),
        "{stderr}"
    );
    assert!(!scratch.path().join("logs").exists(), "nothing ran");
}

#[test]
fn a_two_step_sequence_validates_and_reports_sizes_and_probes() {
    let scratch = Scratch::new();
    let dir = fixtures().join("sequences/tiny");
    let output = scratch.run(&["sequence", "validate", dir.to_str().expect("UTF-8")]);
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(result_of(&out, "start", "materialize"), "ok", "{out}");
    assert_eq!(result_of(&out, "start", "tests pass"), "ok", "{out}");
    assert_eq!(
        result_of(&out, "01-mul", "hidden tests fail before"),
        "ok",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "02-pow", "hidden tests pass (this and earlier steps)"),
        "ok",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "02-pow", "every probe reads 1"),
        "ok",
        "{out}"
    );
    // Sizes: state, lines, then the probes in file order (multiplication, addition).
    let sizes: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|line| {
            !line
                .split_whitespace()
                .eq(["state", "lines", "multiplication", "addition"])
        })
        .skip(1)
        .take(3)
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        sizes,
        vec![
            vec!["start", "1", "0", "1"],
            vec!["01-mul", "2", "1", "1"],
            vec!["02-pow", "7", "1", "1"],
        ],
        "{out}"
    );
    // The hidden command lists the hidden files it finds: on state 1 step 2's
    // check finds only step 2's with the shared helper (step 1's are removed),
    // and on state 2 every step's.
    let listed = |check: &str| {
        let found: Vec<String> = scratch
            .log_of(&format!("{check}.log"))
            .split_whitespace()
            .filter(|word| word.ends_with(".sh"))
            .map(str::to_string)
            .collect();
        found
    };
    assert_eq!(
        listed("02-pow-hidden-tests-fail-before"),
        ["step02.sh", "expect.sh"]
    );
    assert_eq!(
        listed("02-pow-hidden-tests-pass-this-and-earlier-steps"),
        ["step01.sh", "step02.sh", "expect.sh"]
    );
}

#[test]
fn ctrl_c_ends_the_running_commands_and_their_grandchildren() {
    let scratch = Scratch::new();
    let tasks = fixtures().join("tasks");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .args(["validate", "--task", "hung", "--timeout", "120", "--tasks"])
        .arg(&tasks)
        .arg("--logs")
        .arg(scratch.path().join("logs"))
        .env("SENS_BENCH_CACHE", scratch.path().join("cache"))
        .env("SENS_FIXTURE_STATE", scratch.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sens-bench runs");
    let pids = scratch.path().join("pids");
    while !std::fs::read_to_string(&pids).is_ok_and(|text| text.ends_with('\n')) {
        assert!(
            child
                .try_wait()
                .expect("sens-bench can be waited on")
                .is_none(),
            "sens-bench ended before the hung command started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill only sends a signal to the process we spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let output = child.wait_with_output().expect("sens-bench ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let grandchild = std::fs::read_to_string(&pids).expect("pids");
    let grandchild = grandchild.trim();
    assert!(
        !alive(grandchild),
        "grandchild {grandchild} survived Ctrl-C"
    );
}

#[test]
fn a_self_task_checks_out_a_commit_of_this_repository() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("self-skeleton", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        result_of(&out, "self-skeleton", "start: tests pass"),
        "ok",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "self-skeleton", "reference: hidden tests pass"),
        "ok",
        "{out}"
    );
}

/// A copy of the tiny sequence in the scratch folder whose step 2 hidden test is
/// `test` (a shell script).
fn tiny_with_step02_hidden(scratch: &Scratch, test: &str) -> PathBuf {
    let dir = scratch.path().join("tiny");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(fixtures().join("sequences/tiny"))
        .arg(&dir)
        .status()
        .expect("cp runs");
    assert!(copied.success());
    std::fs::write(dir.join("steps/02/hidden/hidden_tests/step02.sh"), test).expect("write");
    dir
}

#[test]
fn a_sequence_step_whose_hidden_tests_already_pass_and_a_probe_off_one_are_caught() {
    let scratch = Scratch::new();
    // Step 2's hidden test now checks what step 1 already delivers.
    let dir = tiny_with_step02_hidden(&scratch, "set -e\n. ./calc.sh\n[ \"$(mul 3 3)\" = 9 ]\n");
    let mut probes = std::fs::read_to_string(dir.join("probes.toml")).expect("probes");
    probes.push_str("\n[[probe]]\nconcept = \"functions\"\npattern = '\\(\\) \\{'\n");
    std::fs::write(dir.join("probes.toml"), probes).expect("write");
    let output = scratch.run(&["sequence", "validate", dir.to_str().expect("UTF-8")]);
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert_eq!(
        result_of(&out, "01-mul", "hidden tests fail before"),
        "ok",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "02-pow", "hidden tests fail before"),
        "FAILED",
        "{out}"
    );
    assert_eq!(
        result_of(&out, "02-pow", "every probe reads 1"),
        "FAILED",
        "{out}"
    );
    assert!(out.contains("functions = 3"), "{out}");
    assert!(out.contains("sequence `tiny` is invalid"), "{out}");
}

/// The rows of a validation table without what differs between runs (seconds,
/// log paths): state, check, result and what went wrong.
fn rows_without_times(output: &str) -> Vec<Vec<String>> {
    output
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| {
            let cells: Vec<&str> = line
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            let mut row: Vec<String> = cells.iter().take(3).map(|c| c.to_string()).collect();
            if let Some(note) = cells.get(4) {
                row.push(note.split("; log ").next().unwrap_or(note).to_string());
            }
            row
        })
        .collect()
}

#[test]
fn the_parallel_sequence_walk_finds_the_failures_of_the_serial_one_and_names_the_step() {
    let scratch = Scratch::new();
    // Step 2's reference no longer satisfies its hidden test: 2^3 is not 9.
    let dir = tiny_with_step02_hidden(&scratch, "set -e\n. ./calc.sh\n[ \"$(pow 2 3)\" = 9 ]\n");
    let dir = dir.to_str().expect("UTF-8");
    let serial = scratch.run(&["sequence", "validate", dir, "--jobs", "1"]);
    let parallel = scratch.run(&["sequence", "validate", dir, "--jobs", "2"]);
    let serial_out = String::from_utf8_lossy(&serial.stdout).into_owned();
    let parallel_out = String::from_utf8_lossy(&parallel.stdout).into_owned();
    for out in [&serial_out, &parallel_out] {
        assert_eq!(
            result_of(out, "02-pow", "hidden tests pass (this and earlier steps)"),
            "FAILED",
            "{out}"
        );
        assert_eq!(
            result_of(out, "01-mul", "hidden tests pass (this and earlier steps)"),
            "ok",
            "{out}"
        );
        assert_eq!(
            result_of(out, "02-pow", "hidden tests fail before"),
            "ok",
            "{out}"
        );
        assert!(out.contains("sequence `tiny` is invalid"), "{out}");
    }
    assert_eq!(serial.status.code(), Some(1), "{serial_out}");
    assert_eq!(parallel.status.code(), Some(1), "{parallel_out}");
    assert_eq!(
        rows_without_times(&serial_out),
        rows_without_times(&parallel_out),
        "serial:\n{serial_out}\nparallel:\n{parallel_out}"
    );
    // The second stretch walked step 2 on a copy of its own, rebuilt from the start.
    assert!(
        scratch.path().join("logs/from-01-mul").is_dir(),
        "{parallel_out}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn a_reference_patch_without_index_lines_validates_as_git_apply_reads_it() {
    let scratch = Scratch::new();
    let start = scratch.path().join("start");
    copy_dir(&fixtures().join("sequences/tiny/start"), &start);
    let task = scratch.path().join("tasks/valid");
    copy_dir(&fixtures().join("tasks/valid"), &task);
    let toml = std::fs::read_to_string(task.join("task.toml")).expect("task.toml");
    let toml = toml.replace("../../sequences/tiny/start", start.to_str().expect("UTF-8"));
    std::fs::write(task.join("task.toml"), toml).expect("write");
    let patch = std::fs::read_to_string(task.join("reference.patch")).expect("patch");
    let bare: String = patch
        .lines()
        .filter(|line| !line.starts_with("index "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(bare, patch);
    std::fs::write(task.join("reference.patch"), bare).expect("write");
    let check = Command::new("git")
        .args(["apply", "--check"])
        .arg(task.join("reference.patch"))
        .current_dir(&start)
        .status()
        .expect("git runs");
    assert!(check.success(), "git apply accepts the patch");

    let tasks = scratch.path().join("tasks");
    let output = scratch.run(&["validate", "--tasks", tasks.to_str().expect("UTF-8")]);
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{out}");
    for check in [
        "reference: patch applies",
        "reference: fair under the engine",
        "reference: tests pass",
        "reference: hidden tests pass",
    ] {
        assert_eq!(result_of(&out, "valid", check), "ok", "{check}:\n{out}");
    }
}

#[test]
fn a_repeat_count_past_the_limit_is_refused_before_anything_runs() {
    let scratch = Scratch::new();
    let (code, out) = scratch.validate("valid", &["--repeat", "18446744073709551615"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("--repeat must be from 1 to 1000, not 18446744073709551615"),
        "{out}"
    );
    assert!(!scratch.path().join("logs").exists(), "nothing ran");
}
