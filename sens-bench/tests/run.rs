//! `sens-bench run` and `sequence run` end to end through the binary and the
//! pinned Claude Code CLI, against the scripted model server (no network): the
//! oracle on a tiny Python task of our own, resume after SIGINT and SIGKILL, the
//! failure classes, integrity flags, and a three-step sequence.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sens_bench::record::{RunRecord, RunStatus, read_records};
use serde_json::Value;

use common::files::fixture;

/// The record's binding field names (docs/contract.md, "The run record").
const BINDING: [&str; 28] = [
    "batch",
    "task",
    "sequence",
    "step",
    "condition",
    "rep",
    "status",
    "hidden_pass",
    "project_pass",
    "regression",
    "flaky",
    "loc_added",
    "loc_removed",
    "loc_total",
    "functions_added",
    "function_lines_median",
    "dup_lines_engine",
    "dup_lines_jscpd",
    "probes",
    "tokens",
    "cost_usd",
    "turns",
    "duration_s",
    "hooks",
    "integrity",
    "agent",
    "started_at",
    "engine_rev",
];

fn fixtures() -> PathBuf {
    fixture("run")
}

fn conditions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/conditions.toml")
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sens-bench"));
    command
        .args(args)
        .arg("--conditions")
        .arg(conditions())
        .env_remove("ANTHROPIC_API_KEY");
    command
}

fn task_args<'a>(out: &'a str, task: &'a str, conditions: &'a str, reps: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--tasks",
        FIXTURE_TASKS.get_or_init(|| fixtures().join("tasks").display().to_string()),
        "--task",
        task,
        "--condition",
        conditions,
        "--reps",
        reps,
        "--out",
        out,
    ]
}

static FIXTURE_TASKS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn run(args: &[&str]) -> Output {
    let output = command(args).output().expect("sens-bench starts");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn records(out: &Path) -> Vec<RunRecord> {
    read_records(&out.join("runs.jsonl")).expect("runs.jsonl reads as records")
}

fn lines(out: &Path) -> usize {
    std::fs::read_to_string(out.join("runs.jsonl"))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

#[test]
fn the_oracle_under_c0_and_c2_twice_records_every_field_and_a_rerun_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let mut args = task_args(path_str(&out), "tiny-mul", "C0,C2", "2");
    args.extend(["--agent", "oracle", "--jobs", "2", "--timings"]);
    let cache = dir.path().join("cache");
    let first = command(&args)
        .env("SENS_BENCH_CACHE", &cache)
        .output()
        .expect("sens-bench starts");
    assert!(first.status.success(), "{first:?}");
    // C2's engine filled the shared index cache.
    let entries = walkdir_files(&cache.join("engine-index"));
    assert!(
        entries > 0,
        "no index cache entries under {}",
        cache.display()
    );
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("harness overhead per run"),
        "--timings prints the overhead"
    );

    let text = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        for field in BINDING {
            assert!(value.get(field).is_some(), "{field} missing in {line}");
        }
    }
    let all = records(&out);
    assert_eq!(all.len(), 4);
    for record in &all {
        assert_eq!(record.status, RunStatus::Ok, "{record:?}");
        assert_eq!(record.hidden_pass, Some(true));
        assert_eq!(record.project_pass, Some(true));
        assert_eq!(record.regression, Some(false));
        assert_eq!(record.functions_added, Some(1), "mul was added");
        assert_eq!(record.loc_added, Some(2));
        assert_eq!(record.loc_total, Some(5));
        assert_eq!(record.agent.name, "oracle");
        assert!(record.tokens.is_some_and(|t| t.output > 0));
        assert!(!record.integrity.any());
        let run_dir = out
            .join("runs/tiny-mul")
            .join(&record.condition)
            .join(record.rep.to_string());
        for file in [
            "transcript.jsonl",
            "hooks.jsonl",
            "diff.patch",
            "record.json",
            "prompt.md",
        ] {
            assert!(
                run_dir.join(file).is_file(),
                "{file} in {}",
                run_dir.display()
            );
        }
        let ledger = std::fs::read_to_string(run_dir.join("hooks.jsonl")).unwrap();
        assert_eq!(
            ledger.is_empty(),
            record.condition == "C0",
            "only C2 has an engine ledger"
        );
        let diff = std::fs::read_to_string(run_dir.join("diff.patch")).unwrap();
        assert!(diff.contains("+def mul(a, b):"), "{diff}");
        let timings: Value =
            serde_json::from_str(&std::fs::read_to_string(run_dir.join("timings.json")).unwrap())
                .unwrap();
        let engine_start = timings["engine_start"].as_f64().unwrap();
        assert_eq!(
            engine_start > 0.0,
            record.condition == "C2",
            "only C2 starts an engine: {timings}"
        );
    }
    let mut keys: Vec<(String, u32)> = all.iter().map(|r| (r.condition.clone(), r.rep)).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("C0".into(), 1),
            ("C0".into(), 2),
            ("C2".into(), 1),
            ("C2".into(), 2)
        ]
    );

    let again = run(&args);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(
        std::fs::read_to_string(out.join("runs.jsonl")).unwrap(),
        text
    );

    let mut other_seed = args.clone();
    other_seed.extend(["--seed", "7"]);
    let refused = run(&other_seed);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("seed"));
}

/// Files under `dir`, at any depth.
fn walkdir_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|entry| {
                let path = entry.path();
                if path.is_dir() {
                    walkdir_files(&path)
                } else {
                    1
                }
            })
            .sum()
    })
}

fn spawn(args: &[&str]) -> Child {
    command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sens-bench starts")
}

/// Waits until runs.jsonl holds more than `count` lines, or the batch ends.
fn wait_for_lines(out: &Path, count: usize, child: &mut Child) {
    while lines(out) <= count {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch ended before it was interrupted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sigint_and_sigkill_midway_then_a_rerun_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let mut args = task_args(path_str(&out), "tiny-mul", "C0,C1", "3");
    args.extend(["--agent", "oracle"]);

    let mut child = spawn(&args);
    wait_for_lines(&out, 0, &mut child);
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let interrupted = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&interrupted.stderr);
    assert_eq!(interrupted.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("Rerun the same command"), "{stderr}");
    let after_sigint = lines(&out);
    assert!((1..6).contains(&after_sigint), "{after_sigint} records");
    assert_eq!(records(&out).len(), after_sigint);

    let mut child = spawn(&args);
    wait_for_lines(&out, after_sigint, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    let after_sigkill = records(&out).len();
    assert!(after_sigkill > after_sigint);

    let done = run(&args);
    assert!(done.status.success(), "{done:?}");
    let all = records(&out);
    assert_eq!(
        all.len(),
        6,
        "every run once: read_records refuses duplicates"
    );
    assert!(all.iter().all(|r| r.status == RunStatus::Ok));
}

#[test]
fn a_failing_setup_is_an_infrastructure_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let mut args = task_args(path_str(&out), "tiny-broken-setup", "C0", "1");
    args.extend(["--agent", "oracle"]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let all = records(&out);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].status, RunStatus::InfraError);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("set-up") && error.contains("exit code 3"),
        "{error}"
    );
    assert!(out.join("runs/tiny-broken-setup/C0/1/setup.log").is_file());
    assert!(all[0].tokens.is_none() && all[0].hidden_pass.is_none());
}

fn script(dir: &Path, turns: Value) -> String {
    let path = dir.join("script.json");
    std::fs::write(&path, serde_json::json!({ "main": turns }).to_string()).unwrap();
    format!("script:{}", path.display())
}

/// `run` of every task in the folder `tasks` under C0 by `agent`, into `out`.
fn c0_run_args<'a>(tasks: &'a Path, out: &'a Path, agent: &'a str) -> [&'a str; 9] {
    [
        "run",
        "--tasks",
        path_str(tasks),
        "--condition",
        "C0",
        "--agent",
        agent,
        "--out",
        path_str(out),
    ]
}

/// Waits until no live process is left in process group `pgid` (zombies have
/// ended), however long that takes.
fn wait_until_group_ended(pgid: i32) {
    while group_running(pgid) {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The parent of a live process, from its `/proc` stat line.
fn parent_pid(pid: libc::pid_t) -> libc::pid_t {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command name: state, parent pid.
    let (_, rest) = stat.rsplit_once(") ").unwrap();
    rest.split(' ').nth(1).unwrap().parse().unwrap()
}

fn group_running(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            // After the command name: state, parent pid, process group.
            stat.rsplit_once(") ").is_some_and(|(_, rest)| {
                let mut fields = rest.split(' ');
                let state = fields.next().unwrap_or("Z");
                let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
                !state.starts_with('Z') && group == Some(pgid)
            })
        })
    })
}

/// A scripted agent whose one tool call runs `command` in Bash.
fn bash_agent(dir: &Path, command: &str) -> String {
    script(
        dir,
        serde_json::json!([tool("Bash", serde_json::json!({ "command": command }))]),
    )
}

/// Starts `args` in the background and waits until its agent has left `mark`;
/// fails if the run ends first.
fn spawn_until_marked(args: &[&str], mark: &Path) -> Child {
    let mut child = spawn(args);
    while !mark.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its agent left {}",
            mark.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

fn tool(name: &str, input: Value) -> Value {
    serde_json::json!({"blocks": [{"type": "tool_use", "name": name, "input": input}]})
}

/// Plays `tools`, then a closing "Done." and the turns `after` (answers to hook
/// blocks), on tiny-mul under `conditions` (one repetition); the batch folder and
/// its records.
fn play_on_tiny_mul(
    dir: &Path,
    tools: Vec<Value>,
    conditions: &str,
    after: impl IntoIterator<Item = Value>,
) -> (PathBuf, Vec<RunRecord>) {
    let out = dir.join("batch");
    let mut turns = tools;
    turns.push(serde_json::json!({"blocks": [{"type": "text", "text": "Done."}]}));
    turns.extend(after);
    let agent = script(dir, Value::Array(turns));
    let mut args = task_args(path_str(&out), "tiny-mul", conditions, "1");
    args.extend(["--agent", &agent]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let all = records(&out);
    (out, all)
}

#[test]
fn a_hung_agent_is_stopped_at_the_task_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    // `finished` appears only if the command ends on its own instead of being killed.
    let (pid, finished) = (dir.path().join("hang.pid"), dir.path().join("finished"));
    let command = format!(
        "echo $$ > {}; sleep 300; touch {}",
        pid.display(),
        finished.display()
    );
    let agent = bash_agent(dir.path(), &command);
    let mut args = task_args(path_str(&out), "tiny-hang", "C0", "1");
    // The pid file lies outside what the sandbox shows (and a sandboxed `$$` is
    // the pid namespace's): this checks the kill of an unsandboxed agent.
    args.extend(["--agent", &agent, "--no-sandbox"]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let all = records(&out);
    assert_eq!(all[0].status, RunStatus::Timeout, "{:?}", all[0]);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("within 6s: interrupted, then killed"),
        "{error}"
    );
    common::processes::wait_until_ended(&std::fs::read_to_string(&pid).unwrap());
    assert!(
        !finished.exists(),
        "the agent's command outlived the timeout"
    );
}

#[test]
fn reading_the_hidden_folder_and_editing_the_tests_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let hidden = fixtures().join("tasks/tiny-mul/hidden/hidden_tests/test_mul.py");
    let agent = script(
        dir.path(),
        serde_json::json!([
            tool(
                "Bash",
                serde_json::json!({"command": format!("cat {}", hidden.display())})
            ),
            tool("Read", serde_json::json!({"file_path": "tests/test_calc.py"})),
            tool(
                "Write",
                serde_json::json!({"file_path": "tests/test_calc.py", "content": "def test_nothing():\n    pass\n"})
            ),
            {"blocks": [{"type": "text", "text": "Done."}]},
        ]),
    );
    let mut args = task_args(path_str(&out), "tiny-mul", "C0", "1");
    args.extend(["--agent", &agent]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let record = &records(&out)[0];
    assert_eq!(record.status, RunStatus::Ok);
    assert!(record.integrity.touched_task_files, "{record:?}");
    assert!(record.integrity.edited_tests, "{record:?}");
    assert_eq!(record.hidden_pass, Some(false), "mul was never written");
    let evidence = std::fs::read_to_string(out.join("runs/tiny-mul/C0/1/integrity.txt")).unwrap();
    assert!(evidence.contains("tiny-mul") && evidence.contains("edited test: tests/test_calc.py"));
}

#[test]
fn the_sandboxed_agent_cannot_read_the_reference_by_any_path_and_still_reaches_its_model() {
    let dir = tempfile::tempdir().unwrap();
    let reference = fixtures().join("tasks/tiny-mul/reference.patch");
    let reference = reference.canonicalize().unwrap();
    // From the copy's folder, however deep it lies: `..` stops at the root.
    let relative = format!(
        "{}{}",
        "../".repeat(32),
        path_str(&reference).trim_start_matches('/')
    );
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let command = format!(
        "cat {} > leak_abs.txt 2>&1; cat {relative} > leak_rel.txt 2>&1; ls -A {} > repo.txt 2>&1",
        reference.display(),
        repository.display()
    );
    let bash = tool("Bash", serde_json::json!({ "command": command }));
    let (out, all) = play_on_tiny_mul(dir.path(), vec![bash], "C0", []);
    let record = &all[0];
    // The second turn came from the scripted server on loopback.
    assert_eq!(record.status, RunStatus::Ok, "{record:?}");
    let diff = std::fs::read_to_string(out.join("runs/tiny-mul/C0/1/diff.patch")).unwrap();
    let added = |file: &str| -> Vec<String> {
        let section = diff
            .split("diff --git ")
            .find(|s| s.starts_with(&format!("a/{file} ")))
            .unwrap_or_else(|| panic!("{file} was not written: {diff}"));
        section
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| l[1..].to_string())
            .collect()
    };
    for (file, path) in [
        ("leak_abs.txt", path_str(&reference)),
        ("leak_rel.txt", &relative),
    ] {
        assert_eq!(
            added(file),
            [format!("cat: {path}: No such file or directory")],
            "{diff}"
        );
    }
    // The repository shows at most the CLI's install (a fresh clone's `.tools`).
    let listing = added("repo.txt");
    assert!(
        listing
            .iter()
            .all(|l| l == ".tools" || l.ends_with("No such file or directory")),
        "{listing:?}"
    );
}

#[test]
fn without_bubblewrap_a_run_refuses_unless_no_sandbox_which_the_manifest_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let args = task_args(path_str(&out), "tiny-mul", "C0", "1");
    let output = command(&args)
        .env("PATH", dir.path())
        .output()
        .expect("sens-bench starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("sandbox cannot start") && stderr.contains("--no-sandbox"),
        "{stderr}"
    );
    assert!(!out.join("manifest.toml").exists());

    let mut unsandboxed = args.clone();
    unsandboxed.push("--no-sandbox");
    assert!(run(&unsandboxed).status.success());
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(manifest.contains("no_sandbox = true"), "{manifest}");
    let output = run(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("agent.no_sandbox"),
        "{stderr}"
    );
}

#[test]
fn a_faked_unittest_module_passes_no_tests_and_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let write = tool(
        "Write",
        serde_json::json!({"file_path": "unittest.py", "content": "import sys\nsys.exit(0)\n"}),
    );
    let (out, all) = play_on_tiny_mul(dir.path(), vec![write], "C0", []);
    let record = &all[0];
    assert_eq!(record.status, RunStatus::Ok, "{record:?}");
    assert_eq!(record.project_pass, Some(false), "{record:?}");
    assert_eq!(record.hidden_pass, Some(false), "{record:?}");
    assert!(record.integrity.shadowed_runner, "{record:?}");
    let run_dir = out.join("runs/tiny-mul/C0/1");
    let evidence = std::fs::read_to_string(run_dir.join("integrity.txt")).unwrap();
    assert!(
        evidence.contains("shadowed runner: unittest.py"),
        "{evidence}"
    );
    let log = std::fs::read_to_string(run_dir.join("hidden-tests.2.log")).unwrap();
    assert!(log.contains("not a pass"), "{log}");
}

#[test]
fn non_utf8_names_and_bytes_are_recorded_and_measured_under_c0_and_c2() {
    let dir = tempfile::tempdir().unwrap();
    let command = r"printf 'x = 1\n' > $'caf\xe9.py'; printf 'y = \xff\n' > bytes.py";
    let bash = tool("Bash", serde_json::json!({ "command": command }));
    let (out, all) = play_on_tiny_mul(dir.path(), vec![bash], "C0,C2", []);
    for record in all {
        assert_eq!(record.status, RunStatus::Ok, "{record:?}");
        assert_eq!(record.loc_added, Some(2), "{record:?}");
        let run_dir = format!("runs/tiny-mul/{}/1/diff.patch", record.condition);
        let patch = std::fs::read(out.join(run_dir)).unwrap();
        let has = |needle: &[u8]| patch.windows(needle.len()).any(|w| w == needle);
        assert!(
            has(br#"b/caf\351.py"#) && has(b"+y = \xff\n"),
            "{}",
            String::from_utf8_lossy(&patch)
        );
    }
}

#[test]
fn a_file_the_agent_hides_in_git_info_exclude_is_judged_diffed_and_measured() {
    let dir = tempfile::tempdir().unwrap();
    let body = |name: &str| {
        format!(
            "def {name}(values):\n    total = 0\n    for v in values:\n        if v > 10:\n            total += v * 2 - 1\n        else:\n            total -= v // 3 + 7\n    result = [total, len(values), max(values), min(values)]\n    scaled = [r * 5 - total for r in result if r % 2 == 0]\n    extra = {{k: v + 1 for k, v in enumerate(scaled)}}\n    if extra and total > 100:\n        total += sum(extra.values()) - len(extra)\n    return sum(result) * 3 + total - 11\n"
        )
    };
    let write = tool(
        "Write",
        serde_json::json!({"file_path": "stats.py", "content": body("first")}),
    );
    // A renamed copy through the shell, in a file git is told to ignore: only the
    // engine's own look at the files (rescan, Stop audit) can see it.
    let command = format!(
        "echo hidden.py >> .git/info/exclude && cat > hidden.py <<'EOF'\n{}EOF",
        body("second")
    );
    let bash = tool("Bash", serde_json::json!({ "command": command }));
    let after_a_block = serde_json::json!({"blocks": [{"type": "text", "text": "Done anyway."}]});
    let (out, all) = play_on_tiny_mul(dir.path(), vec![write, bash], "C0,C2", [after_a_block]);
    for record in &all {
        let at = &record.condition;
        assert_eq!(record.status, RunStatus::Ok, "{record:?}");
        assert_eq!(record.functions_added, Some(2), "{at}");
        assert_eq!(record.loc_added, Some(26), "{at}");
        assert_eq!(record.dup_lines_engine, Some(13), "{at}");
        let run_dir = out.join(format!("runs/tiny-mul/{at}/1"));
        let patch = std::fs::read_to_string(run_dir.join("diff.patch")).unwrap();
        assert!(patch.contains("+++ b/hidden.py"), "{at}: {patch}");
    }
    let blocks: Vec<(&str, u64)> = all
        .iter()
        .map(|r| (r.condition.as_str(), r.hooks.blocks))
        .collect();
    assert_eq!(blocks, [("C0", 0), ("C2", 2)]);
    let ledger = std::fs::read_to_string(out.join("runs/tiny-mul/C2/1/hooks.jsonl")).unwrap();
    let stop = ledger
        .lines()
        .find(|line| line.contains(r#""event":"Stop""#))
        .unwrap();
    assert!(
        stop.contains(r#""new":{"file":"hidden.py""#),
        "the Stop audit names the hidden copy: {stop}"
    );
}

/// Step id, step, size after it, the probe's count, hidden tests passed.
type StepSummary = (String, Option<u32>, Option<u64>, u64, Option<bool>);

#[test]
fn a_three_step_sequence_records_each_step_and_resumes_by_replaying() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let sequence = fixtures().join("sequences/tiny-seq");
    let args = [
        "sequence",
        "run",
        path_str(&sequence),
        "--condition",
        "C0",
        "--reps",
        "1",
        "--agent",
        "oracle",
        "--out",
        path_str(&out),
    ];
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let summary = |all: &[RunRecord]| -> Vec<StepSummary> {
        all.iter()
            .map(|r| {
                (
                    r.task.clone(),
                    r.step,
                    r.loc_total,
                    r.probes["division"],
                    r.hidden_pass,
                )
            })
            .collect()
    };
    // Each step's hidden test takes the shared hidden folder's `operands` fixture:
    // graded without it, it would fail; left behind, the sizes would grow.
    let expected = vec![
        ("mul".to_string(), Some(1), Some(5), 0, Some(true)),
        ("sub".to_string(), Some(2), Some(7), 0, Some(true)),
        ("div".to_string(), Some(3), Some(9), 1, Some(true)),
    ];
    let all = records(&out);
    assert_eq!(summary(&all), expected);
    assert!(
        all.iter()
            .all(|r| r.sequence.as_deref() == Some("tiny-seq") && r.loc_added == Some(2))
    );

    // As if the batch died after step 2: step 3 runs again on the replayed steps.
    let text = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    let first_two: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(out.join("runs.jsonl"), first_two).unwrap();
    let resumed = run(&args);
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(summary(&records(&out)), expected);

    let again = run(&args);
    assert!(again.status.success());
    assert_eq!(records(&out).len(), 3);
}

/// The shard tests' batch: the oracle on tiny-mul under C0 and C2, twice (two
/// (task, rep) blocks), one run at a time; `--out` left to the caller.
fn shard_plan() -> Vec<String> {
    let tasks = fixtures().join("tasks");
    [
        "run",
        "--tasks",
        path_str(&tasks),
        "--task",
        "tiny-mul",
        "--condition",
        "C0,C2",
        "--reps",
        "2",
        "--agent",
        "oracle",
        "--conditions",
        path_str(&conditions()),
    ]
    .map(str::to_string)
    .to_vec()
}

/// [`shard_plan`] into `out`, with `extra` options.
fn run_shard_plan(out: &Path, extra: &[&str]) -> Output {
    let plan = shard_plan();
    let mut args: Vec<&str> = plan.iter().map(String::as_str).collect();
    args.extend(["--out", path_str(out)]);
    args.extend(extra);
    plain(&args)
}

/// Runs the batch unsharded into `out` and reports it: what a merge of its shards
/// must reproduce. The merged folder has the same name, since the report's title
/// names the folder.
fn unsharded_report(out: &Path) -> String {
    let ran = run_shard_plan(out, &[]);
    assert!(ran.status.success(), "{ran:?}");
    report_md(out)
}

fn report_md(batch: &Path) -> String {
    let reported = plain(&["report", path_str(batch)]);
    assert!(reported.status.success(), "{reported:?}");
    std::fs::read_to_string(batch.join("report.md")).expect("report.md is written")
}

/// sens-bench without the batch options `command` adds.
fn plain(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .args(args)
        .output()
        .expect("sens-bench starts");
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn merge(args: &[&str]) -> Output {
    plain(&[&["merge"], args].concat())
}

/// Every file under `dir` with its bytes: a folder's whole state.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn two_shards_merged_give_every_record_once_and_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    let expected = unsharded_report(&dir.path().join("one/batch"));
    let shard = |k: &str| dir.path().join(format!("shard-{k}"));
    for k in ["1", "2"] {
        let spec = format!("{k}/2");
        let ran = run_shard_plan(&shard(k), &["--shard", &spec]);
        assert!(ran.status.success(), "{ran:?}");
        let manifest = std::fs::read_to_string(shard(k).join("manifest.toml")).unwrap();
        assert!(
            manifest.contains(&format!("[shard]\nindex = {k}\ncount = 2")),
            "{manifest}"
        );
        assert_eq!(
            records(&shard(k)).len(),
            2,
            "one (task, rep) block of two runs"
        );
    }
    let merged = dir.path().join("merged/batch");
    let (one, two) = (shard("1"), shard("2"));

    let partial = merge(&[path_str(&merged), path_str(&one), "--partial"]);
    assert!(partial.status.success(), "{partial:?}");
    let manifest = std::fs::read_to_string(merged.join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("[partial]\ncount = 2\nmerged = [1]"),
        "{manifest}"
    );

    let joined = merge(&[
        "--report",
        path_str(&merged),
        path_str(&one),
        path_str(&two),
    ]);
    assert!(joined.status.success(), "{joined:?}");
    let all = records(&merged);
    let keys: std::collections::HashSet<_> = all.iter().map(RunRecord::key).collect();
    assert_eq!((all.len(), keys.len()), (4, 4), "every record once");
    for record in &all {
        let run_dir = merged
            .join("runs/tiny-mul")
            .join(&record.condition)
            .join(record.rep.to_string());
        assert!(
            run_dir.join("record.json").is_file(),
            "{}",
            run_dir.display()
        );
    }
    let report = std::fs::read_to_string(merged.join("report.md")).expect("--report wrote it");
    assert_eq!(report, expected);

    let before = snapshot(&merged);
    let again = merge(&[path_str(&merged), path_str(&two), path_str(&one)]);
    assert!(again.status.success(), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 records"));
    assert_eq!(snapshot(&merged), before, "merging again adds nothing");
}

#[test]
fn merge_refuses_another_seed_a_missing_shard_and_a_duplicated_record_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("shard-1");
    let ran = run_shard_plan(&one, &["--shard", "1/2"]);
    assert!(ran.status.success(), "{ran:?}");
    let manifest = std::fs::read_to_string(one.join("manifest.toml")).unwrap();
    let second = |name: &str, manifest: &str, runs: &str| -> PathBuf {
        let path = dir.path().join(name);
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("manifest.toml"), manifest).unwrap();
        std::fs::write(path.join("runs.jsonl"), runs).unwrap();
        path
    };
    let as_two = manifest.replace("index = 1", "index = 2");
    let seed_line = manifest.lines().find(|l| l.starts_with("seed = ")).unwrap();
    let other_seed = second("seed", &as_two.replace(seed_line, "seed = 7"), "");
    let copied = second(
        "copy",
        &as_two,
        &std::fs::read_to_string(one.join("runs.jsonl")).unwrap(),
    );
    let out = dir.path().join("merged");
    let cases = [
        (
            vec![path_str(&one), path_str(&other_seed)],
            vec!["seed/manifest.toml", "seed: "],
        ),
        (vec![path_str(&one)], vec!["shard 2/2 missing", "--partial"]),
        (
            vec![path_str(&one), path_str(&copied)],
            vec!["duplicated record", "task tiny-mul", "copy/runs.jsonl"],
        ),
    ];
    for (shards, named) in cases {
        let mut args = vec![path_str(&out)];
        args.extend(shards);
        let refused = merge(&args);
        assert_eq!(refused.status.code(), Some(2), "{refused:?}");
        let err = String::from_utf8_lossy(&refused.stderr);
        for name in named {
            assert!(err.contains(name), "`{name}` in {err}");
        }
        assert!(!out.exists(), "nothing is written on refusal");
    }
}

/// Stops the local Slurm cluster when dropped: when the test ends, passed or not.
struct LocalCluster {
    script: PathBuf,
    dir: PathBuf,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        let down = Command::new(&self.script)
            .arg("down")
            .env("SENS_SLURM_DIR", &self.dir)
            .status();
        eprintln!("local cluster down: {down:?}");
    }
}

#[test]
#[ignore = "needs root and Debian's slurm-wlm and munge; .ci/run installs them and runs it"]
fn a_slurm_array_of_two_oracle_shards_and_its_merge_job_give_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    let expected = unsharded_report(&dir.path().join("one/merged"));
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/slurm");
    // .ci/run names the cluster's folder, to tear it down should this process die.
    let cluster = LocalCluster {
        script: scripts.join("local-cluster.sh"),
        dir: std::env::var_os("SENS_SLURM_DIR")
            .map_or_else(|| dir.path().join("slurm"), PathBuf::from),
    };
    let up = Command::new(&cluster.script)
        .arg("up")
        .env("SENS_SLURM_DIR", &cluster.dir)
        .output()
        .expect("local-cluster.sh starts");
    assert!(up.status.success(), "the local cluster starts: {up:?}");

    let root = dir.path().join("batch");
    let started = Instant::now();
    let submitted = Command::new(scripts.join("submit.sh"))
        .args(["--wait", "2", path_str(&root)])
        .args(shard_plan())
        .env("SLURM_CONF", cluster.dir.join("slurm.conf"))
        .env("SENS_BENCH", env!("CARGO_BIN_EXE_sens-bench"))
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("submit.sh starts");
    let wall = started.elapsed();
    let logs: Vec<String> = ["slurm-shard-1.out", "slurm-shard-2.out", "slurm-merge.out"]
        .iter()
        .map(|log| std::fs::read_to_string(root.join(log)).unwrap_or_default())
        .collect();
    assert!(
        submitted.status.success(),
        "{submitted:?}\n{}",
        logs.join("\n")
    );
    println!(
        "slurm: 2 oracle shards and the merge job in {:.1} s",
        wall.as_secs_f64()
    );

    let merged = root.join("merged");
    let all = records(&merged);
    let keys: std::collections::HashSet<_> = all.iter().map(RunRecord::key).collect();
    assert_eq!((all.len(), keys.len()), (4, 4), "every record once");
    for index in ["1", "2"] {
        let manifest =
            std::fs::read_to_string(root.join(format!("shard-{index}/manifest.toml"))).unwrap();
        assert!(
            manifest.contains(&format!("index = {index}\ncount = 2")),
            "{manifest}"
        );
    }
    let report = std::fs::read_to_string(merged.join("report.md")).expect("the merge job reported");
    assert_eq!(report, expected);
}

#[test]
fn sequence_run_takes_a_shard_and_an_empty_shard_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("shard-2");
    let sequence = fixtures().join("sequences/tiny-seq");
    // One sequence, one rep: a single block, which shard 1 of 2 gets.
    let output = run(&[
        "sequence",
        "run",
        path_str(&sequence),
        "--condition",
        "C0,C2",
        "--agent",
        "oracle",
        "--shard",
        "2/2",
        "--out",
        path_str(&out),
    ]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(lines(&out), 0);
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("[shard]\nindex = 2\ncount = 2"),
        "{manifest}"
    );
}

#[test]
fn a_second_run_on_a_live_batch_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let started = dir.path().join("started");
    let command = format!("touch {}; sleep 300", started.display());
    let agent = bash_agent(dir.path(), &command);
    let mut args = task_args(path_str(&out), "tiny-hang", "C0", "1");
    // The agent leaves its mark outside its copy, which the sandbox would hide.
    args.extend(["--agent", &agent, "--no-sandbox"]);
    let first = spawn_until_marked(&args, &started);
    let second = run(&args);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("in use by pid {}", first.id())) && stderr.contains("host "),
        "{stderr}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    assert_eq!(records(&out).len(), 1, "one record for one run");
}

#[test]
fn a_condition_named_as_a_path_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a/b/batch");
    let conditions = dir.path().join("conditions.toml");
    std::fs::write(
        &conditions,
        "[\"../../../victim\"]\ndescription = \"x\"\ncanon = false\nengine = false\n",
    )
    .unwrap();
    let mut args = task_args(path_str(&out), "tiny-mul", "../../../victim", "1");
    args.extend(["--agent", "oracle", "--conditions", path_str(&conditions)]);
    let output = plain(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("conditions.toml") && stderr.contains("field `condition name`"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("victim").exists(),
        "nothing outside the batch"
    );
    assert!(!out.exists(), "nothing was created");
}

/// Copies every file under `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A copy of fixture task `id` and the `tiny` project it is made from under
/// `root` (the same layout: `tasks/<id>`, `projects/tiny`), its `task.toml`
/// passed through `edit`; returns the tasks folder.
fn task_copy(root: &Path, id: &str, edit: impl Fn(String) -> String) -> PathBuf {
    copy_tree(
        &fixtures().join("projects/tiny"),
        &root.join("projects/tiny"),
    );
    let task = root.join("tasks").join(id);
    copy_tree(&fixtures().join("tasks").join(id), &task);
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    std::fs::write(task.join("task.toml"), edit(toml)).unwrap();
    root.join("tasks")
}

#[test]
fn retry_reruns_only_the_failed_class_and_keeps_the_superseded_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let marker = dir.path().join("cause-fixed");
    // A passing cause of an infrastructure error: set-up fails until `marker` exists.
    let tasks = task_copy(dir.path(), "tiny-broken-setup", |toml| {
        toml.replace(
            "echo installing; exit 3",
            &format!("test -e {} || exit 3", marker.display()),
        )
    });
    // The marker lies outside what a sandboxed set-up sees.
    let args = [&c0_run_args(&tasks, &out, "oracle")[..], &["--no-sandbox"]].concat();
    assert!(run(&args).status.success());
    assert_eq!(records(&out)[0].status, RunStatus::InfraError);
    std::fs::write(&marker, "").unwrap();

    let timeouts_only = run(&[&args[..], &["--retry", "timeout"]].concat());
    assert!(timeouts_only.status.success());
    assert_eq!(lines(&out), 1, "an infra_error is not a timeout");

    let retried = run(&[&args[..], &["--retry", "infra_error"]].concat());
    assert!(retried.status.success(), "{retried:?}");
    assert_eq!(lines(&out), 2, "the old record stays");
    let all = records(&out);
    assert_eq!(all.len(), 1, "reports see the latest attempt");
    assert_eq!((all[0].status, all[0].attempt), (RunStatus::Ok, 2));
    assert!(
        out.join("superseded/tiny-broken-setup/C0/1/attempt-1/setup.log")
            .is_file(),
        "the first attempt's folder is kept"
    );
    assert!(out.join("runs/tiny-broken-setup/C0/1/diff.patch").is_file());

    let again = run(&[&args[..], &["--retry", "infra_error"]].concat());
    assert!(again.status.success());
    assert_eq!(lines(&out), 2, "an ok run is never retried");
    let refused = run(&[&args[..], &["--retry", "ok"]].concat());
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a failure class"));
}

#[test]
fn a_rerun_after_the_source_tree_or_the_script_changed_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let tasks = task_copy(dir.path(), "tiny-mul", |toml| toml);
    let say = |text: &str| serde_json::json!([{"blocks": [{"type": "text", "text": text}]}]);
    let agent = script(dir.path(), say("done"));
    let args = c0_run_args(&tasks, &out, &agent);
    assert!(run(&args).status.success());
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("[inputs.\"source of task tiny-mul\"]"),
        "{manifest}"
    );

    let calc = dir.path().join("projects/tiny/calc.py");
    let original = std::fs::read_to_string(&calc).unwrap();
    std::fs::write(&calc, format!("{original}\n# edited\n")).unwrap();
    let refused = run(&args);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("source of task tiny-mul: file calc.py"),
        "{stderr}"
    );
    std::fs::write(&calc, original).unwrap();

    script(dir.path(), say("done, differently"));
    let refused = run(&args);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("script: file script.json"), "{stderr}");
    assert_eq!(lines(&out), 1, "nothing ran twice");
}

/// A stand-in for the CLI: answers `--version` as the pinned one does, and
/// otherwise runs `body`. Written by a shell of its own: a file this (threaded)
/// test process wrote could still be open in a sibling test's fork when it is
/// executed, which fails with ETXTBSY.
fn fake_cli(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("fake-claude");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.197 (Claude Code)'; exit 0; fi\n{body}\n"
    );
    let written = Command::new("sh")
        .args([
            "-c",
            "printf '%s' \"$1\" > \"$2\" && chmod 755 \"$2\"",
            "sh",
        ])
        .arg(script)
        .arg(&path)
        .status()
        .unwrap();
    assert!(written.success());
    path
}

#[test]
fn a_crashed_cli_leaves_its_whole_stderr_in_the_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let cli = fake_cli(dir.path(), "echo 'first line of the crash' >&2\nexit 1");
    let mut args = task_args(path_str(&out), "tiny-mul", "C0", "1");
    args.extend(["--agent", "oracle", "--claude-bin", path_str(&cli)]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let all = records(&out);
    assert_eq!(all[0].status, RunStatus::InfraError, "{:?}", all[0]);
    let log = std::fs::read_to_string(out.join("runs/tiny-mul/C0/1/agent.stderr.log"))
        .expect("the stderr log is kept");
    assert!(log.contains("first line of the crash"), "{log}");
}

#[test]
fn the_start_up_handshake_waits_at_most_the_tasks_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    // tiny-hang's limit is 6 s, below the 60 s the handshake may take at most.
    let cli = fake_cli(dir.path(), "exec sleep 300");
    let mut args = task_args(path_str(&out), "tiny-hang", "C0", "1");
    args.extend(["--agent", "oracle", "--claude-bin", path_str(&cli)]);
    assert!(run(&args).status.success());
    let all = records(&out);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("did not answer initialize within 6s"),
        "{error}"
    );
}

#[test]
fn a_reference_that_does_not_apply_is_an_infra_error_before_any_set_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let marker = dir.path().join("setup-ran");
    let tasks = task_copy(dir.path(), "tiny-mul", |toml| {
        toml.replace(
            "[commands]\n",
            &format!("[commands]\nsetup = \"touch {}\"\n", marker.display()),
        )
    });
    std::fs::write(
        tasks.join("tiny-mul/reference.patch"),
        "--- a/none.py\n+++ b/none.py\n@@ -1 +1 @@\n-absent\n+line\n",
    )
    .unwrap();
    let args = c0_run_args(&tasks, &out, "oracle");
    assert!(run(&args).status.success());
    let all = records(&out);
    assert_eq!(all[0].status, RunStatus::InfraError, "{:?}", all[0]);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("reference") && error.contains("does not apply"),
        "{error}"
    );
    assert!(!marker.exists(), "the set-up never ran");
}

#[test]
fn a_sigkilled_runs_copy_and_home_are_removed_by_the_next_run_of_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let pid = dir.path().join("agent.pid");
    let command = format!("echo $$ > {}.tmp; mv {0}.tmp {0}; sleep 300", pid.display());
    let agent = bash_agent(dir.path(), &command);
    let mut args = task_args(path_str(&out), "tiny-hang", "C0", "1");
    // The agent leaves its mark outside its copy, which the sandbox would hide.
    args.extend(["--agent", &agent, "--no-sandbox"]);
    let mut first = spawn_until_marked(&args, &pid);
    first.kill().unwrap();
    first.wait().unwrap();
    // The harness is gone; end the agent it left as a cluster scheduler would.
    let agent_pid: libc::pid_t = std::fs::read_to_string(&pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The Bash tool may run in a group of its own: end the CLI's group (its
    // parent's) too, or the orphaned CLI goes on writing into its HOME and copy.
    let cli_pid = parent_pid(agent_pid);
    // SAFETY: getpgid and kill only read and signal the process groups we started.
    let groups = unsafe { [libc::getpgid(agent_pid), libc::getpgid(cli_pid)] };
    for group in groups {
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    // A killed process may still be writing into the folders until it has ended.
    for group in groups {
        wait_until_group_ended(group);
    }
    let listed = std::fs::read_to_string(out.join("temporary.list")).unwrap();
    let left: Vec<PathBuf> = listed.lines().map(PathBuf::from).collect();
    assert_eq!(left.len(), 2, "the copy and the HOME: {listed}");
    assert!(left.iter().all(|dir| dir.is_dir()), "SIGKILL left them");

    let second = run(&args);
    assert!(second.status.success(), "{second:?}");
    assert!(String::from_utf8_lossy(&second.stderr).contains("removed 2 temporary folders"));
    assert!(left.iter().all(|dir| !dir.exists()), "{left:?}");
}

#[test]
fn a_dry_run_prints_the_plan_and_its_cost_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let mut args = task_args(path_str(&out), "tiny-mul", "C0,C2", "2");
    args.extend([
        "--dry-run",
        "--tokens-per-run",
        "100000",
        "--model",
        "sonnet",
    ]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("1 units x 2 conditions x 2 reps = 4 runs")
            && stdout.contains("C2: 2")
            && stdout.contains("$1.20 to $6.00"),
        "{stdout}"
    );
    assert!(!out.exists(), "a dry run creates nothing");
}

/// `bash` Bash turns and a closing text on tiny-mul under C0 with `limits`; the
/// batch folder, the command's output and the records.
fn play_within(dir: &Path, bash: usize, limits: &[&str]) -> (PathBuf, Output, Vec<RunRecord>) {
    let out = dir.join("batch");
    let mut turns = vec![tool("Bash", serde_json::json!({"command": "true"})); bash];
    turns.push(serde_json::json!({"blocks": [{"type": "text", "text": "Done."}]}));
    let agent = script(dir, Value::Array(turns));
    let mut args = task_args(path_str(&out), "tiny-mul", "C0", "1");
    args.extend(["--agent", &agent]);
    args.extend(limits);
    let output = run(&args);
    let all = records(&out);
    (out, output, all)
}

/// The run was ended mid-turn: classed `budget`, its record and diff kept, and
/// the CLI never wrote the turn's `result`.
fn assert_ended_by_budget(out: &Path, output: &Output, all: &[RunRecord], limit: &str) {
    assert!(output.status.success(), "{output:?}");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].status, RunStatus::Budget, "{:?}", all[0]);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains(&format!("passed {limit}")) && error.contains("the agent was killed"),
        "{error}"
    );
    assert!(all[0].tokens.is_some_and(|t| t.total() > 0));
    assert!(out.join("runs/tiny-mul/C0/1/diff.patch").is_file());
    let transcript = std::fs::read_to_string(out.join("runs/tiny-mul/C0/1/transcript.jsonl"))
        .expect("the transcript is kept");
    assert!(
        transcript.contains(r#""type":"assistant""#) && !transcript.contains(r#""type":"result""#),
        "the turn was not ended before its result"
    );
}

#[test]
fn a_run_past_max_tokens_is_ended_and_classed_budget() {
    let dir = tempfile::tempdir().unwrap();
    // The scripted server's usage rule gives the first call 170 tokens (120
    // input for the CLI's two messages, 20 cache writes, 30 cache reads) and
    // each later call more.
    let (out, output, all) = play_within(dir.path(), 3, &["--max-tokens", "300"]);
    assert_ended_by_budget(&out, &output, &all, "--max-tokens 300");
    let tokens = all[0].tokens.unwrap().total();
    assert!(tokens > 300, "{tokens}");
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(manifest.contains("max_tokens = 300"), "{manifest}");
}

#[test]
fn a_run_past_max_cost_usd_is_ended_and_classed_budget() {
    let dir = tempfile::tempdir().unwrap();
    // Sonnet's price: the first call costs $0.000444, two about $0.00095.
    let limits = ["--model", "claude-sonnet-4-5", "--max-cost-usd", "0.0006"];
    let (out, output, all) = play_within(dir.path(), 3, &limits);
    assert_ended_by_budget(&out, &output, &all, "--max-cost-usd 0.0006");
    let cost = all[0].cost_usd.unwrap();
    assert!(cost > 0.0006 && cost < 0.01, "{cost}");
}

#[test]
fn a_turn_that_finishes_past_a_limit_is_classed_budget_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    // One call: 170 tokens seen mid-turn (output is not known before the
    // result), 173 in the result with its 3 output tokens.
    let (out, output, all) = play_within(dir.path(), 0, &["--max-tokens", "171"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(all[0].status, RunStatus::Budget, "{:?}", all[0]);
    let error = all[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("173 tokens passed --max-tokens 171") && !error.contains("killed"),
        "{error}"
    );
    assert!(all[0].turns.is_some(), "the result's figures are kept");
    let transcript =
        std::fs::read_to_string(out.join("runs/tiny-mul/C0/1/transcript.jsonl")).unwrap();
    assert!(transcript.contains(r#""type":"result""#));
}

#[test]
fn the_batch_cost_limit_stops_new_runs_and_a_higher_limit_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let args = task_args(path_str(&out), "tiny-mul", "C0", "2");
    let with_limit = |limit: &str| {
        let extra = ["--agent", "oracle", "--batch-max-cost-usd", limit];
        run(&[&args[..], &extra[..]].concat())
    };
    let stopped = with_limit("0.000001");
    assert_eq!(stopped.status.code(), Some(3), "{stopped:?}");
    let said = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(
        said.matches("past --batch-max-cost-usd 0.000001: no new run starts")
            .count(),
        1,
        "{said}"
    );
    let first = records(&out);
    assert_eq!(
        first.len(),
        1,
        "the first run is recorded, no second starts"
    );
    assert!(first[0].cost_usd.is_some_and(|c| c > 0.000001));

    let still = with_limit("0.000001");
    assert_eq!(still.status.code(), Some(3));
    assert_eq!(lines(&out), 1, "a resume past the limit starts nothing");

    let resumed = with_limit("100");
    assert!(resumed.status.success(), "{resumed:?}");
    let all = records(&out);
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|r| r.status == RunStatus::Ok), "{all:?}");
    let manifest = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    assert!(
        manifest.contains("batch_max_cost_usd = 100.0"),
        "{manifest}"
    );
}

#[test]
fn a_sequence_goes_on_after_a_budget_step_and_stops_between_steps_at_the_batch_limit() {
    let dir = tempfile::tempdir().unwrap();
    let sequence = fixtures().join("sequences/tiny-seq");
    let sequence_run = |out: &Path, limits: &[&str]| {
        let args = ["sequence", "run", path_str(&sequence), "--condition", "C0"];
        let out = ["--agent", "oracle", "--out", path_str(out)];
        run(&[&args[..], &out[..], limits].concat())
    };
    let statuses =
        |out: &Path| -> Vec<RunStatus> { records(out).iter().map(|r| r.status).collect() };

    // Step 1's first call (170 tokens) passes the limit: it is ended and
    // recorded, and the next steps still start from what it left (there the
    // oracle's reference patches no longer apply: an infra_error, as after any
    // failed oracle step).
    let tight = dir.path().join("tight");
    let output = sequence_run(&tight, &["--max-tokens", "100"]);
    assert!(output.status.success(), "{output:?}");
    let steps = |out: &Path| -> Vec<Option<u32>> { records(out).iter().map(|r| r.step).collect() };
    assert_eq!(steps(&tight), vec![Some(1), Some(2), Some(3)]);
    assert_eq!(statuses(&tight)[0], RunStatus::Budget);

    let out = dir.path().join("batch");
    let stopped = sequence_run(&out, &["--batch-max-cost-usd", "0.000001"]);
    assert_eq!(stopped.status.code(), Some(3), "{stopped:?}");
    assert!(String::from_utf8_lossy(&stopped.stderr).contains("no new run starts"));
    assert_eq!(
        statuses(&out),
        vec![RunStatus::Ok],
        "no step after the first"
    );
    let resumed = sequence_run(&out, &["--batch-max-cost-usd", "100"]);
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(steps(&out), vec![Some(1), Some(2), Some(3)]);
    assert_eq!(statuses(&out), vec![RunStatus::Ok; 3]);
}

/// Runs `args` with standard output to a file; the output, the exit code and
/// the child's peak resident memory in KiB.
// `wait4` reaps the child: `Child::wait` cannot give its peak memory.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], dir: &Path) -> (String, String, Option<i32>, i64) {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let child = command(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("sens-bench starts");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child only, filling the two locals.
    let waited = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as i32);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    (read(&out), read(&err), code, usage.ru_maxrss)
}

#[test]
fn a_plan_too_large_is_refused_and_an_allowed_one_is_planned_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    for dry in [true, false] {
        let mut args = task_args(path_str(&out), "tiny-mul", "C0,C2", "4294967295");
        if dry {
            args.push("--dry-run");
        }
        let (_, err, code, _) = run_measured(&args, dir.path());
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("8589934590 runs") && err.contains("more than 1000000"),
            "{err}"
        );
        assert!(!out.exists(), "a refused plan creates nothing");
    }

    let mut args = task_args(path_str(&out), "tiny-mul", "C0", "1000000");
    args.push("--dry-run");
    let (stdout, err, code, peak_kib) = run_measured(&args, dir.path());
    assert_eq!(code, Some(0), "{err}");
    assert!(
        stdout.contains("= 1000000 runs") && stdout.contains("C0: 1000000"),
        "{stdout}"
    );
    assert!(peak_kib < 64 * 1024, "a dry run took {peak_kib} KiB");
    eprintln!("a dry run of a million runs peaked at {peak_kib} KiB");

    let weights = dir.path().join("weights.toml");
    std::fs::write(&weights, format!("tiny-mul = {}\n", i64::MAX)).unwrap();
    // Three blocks of two runs on two shards: the third lands on a full shard.
    let mut args = task_args(path_str(&out), "tiny-mul", "C0,C2", "3");
    args.extend([
        "--shard",
        "1/2",
        "--weights",
        path_str(&weights),
        "--dry-run",
    ]);
    let (_, err, code, _) = run_measured(&args, dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--weights") && err.contains("weights.toml") && err.contains("overflow"),
        "{err}"
    );
}

/// The agent's code runs at grading (a `conftest.py` the tests import) and
/// tries every way out it would have as the grader's user; its link in place of
/// the hidden folder tries to make the hidden copy write onto the host.
#[test]
fn the_agents_code_runs_at_grading_in_the_sandbox_and_its_links_redirect_no_copy() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("test_mul.py"), "host file\n").unwrap();
    std::fs::write(outside.join("keep"), "host file\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let reference = fixtures().join("tasks/tiny-mul/reference.patch");
    let payload = format!(
        r#"import os, socket
found = []
def escaped(what):
    found.append(what)
if os.path.exists({reference:?}):
    escaped("the task's reference")
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if {out:?}.encode() in open(f"/proc/{{pid}}/cmdline", "rb").read():
            escaped("the harness's command line")
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    escaped("the host's network")
except OSError:
    pass
try:
    # A documentation address (TEST-NET-1): nothing routes to it from the sandbox.
    socket.create_connection(("192.0.2.1", 80), timeout=2).close()
    escaped("the outside network")
except OSError:
    pass
try:
    os.remove({keep:?})
    escaped("a host file removed")
except OSError:
    pass
try:
    open(os.path.join({out:?}, "planted"), "w").write("x")
    escaped("the batch folder")
except OSError:
    pass
def pytest_terminal_summary(terminalreporter):
    for what in found:
        terminalreporter.write_line("ESCAPED: " + what)
    terminalreporter.write_line("payload ran")
"#,
        reference = reference.display().to_string(),
        out = out.display().to_string(),
        port = listener.local_addr().unwrap().port(),
        keep = outside.join("keep").display().to_string(),
    );
    let command = format!(
        "cat > tests/conftest.py <<'PY'\n{payload}PY\nln -s {} hidden_tests",
        outside.display()
    );
    let agent = bash_agent(dir.path(), &command);
    let mut args = task_args(path_str(&out), "tiny-mul", "C0", "1");
    args.extend(["--agent", &agent]);
    let output = run(&args);
    assert!(output.status.success(), "{output:?}");
    let record = &records(&out)[0];
    assert_eq!(record.status, RunStatus::Ok, "{record:?}");
    assert_eq!(
        record.hidden_pass,
        Some(false),
        "graded; mul was never written"
    );
    let run_dir = out.join("runs/tiny-mul/C0/1");
    let log = std::fs::read_to_string(run_dir.join("project-tests.1.log")).unwrap();
    assert!(log.contains("payload ran"), "{log}");
    assert!(!log.contains("ESCAPED"), "{log}");
    let host = |name: &str| std::fs::read_to_string(outside.join(name)).unwrap();
    assert_eq!(
        host("test_mul.py"),
        "host file\n",
        "the hidden copy followed the link"
    );
    assert_eq!(host("keep"), "host file\n");
    assert!(!out.join("planted").exists());
    assert_eq!(
        listener.accept().unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    assert!(record.integrity.reached_out, "{record:?}");
    let evidence = std::fs::read_to_string(run_dir.join("integrity.txt")).unwrap();
    assert!(
        evidence.contains("network: project-tests.1.log: ") && evidence.contains("no route out"),
        "{evidence}"
    );
}

#[test]
fn a_shard_count_far_above_the_blocks_plans_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("batch");
    for (shard, runs) in [("1/4294967295", "2"), ("4294967295/4294967295", "0")] {
        let mut args = task_args(path_str(&out), "tiny-mul", "C0,C2", "1");
        args.extend(["--shard", shard, "--dry-run"]);
        let (stdout, err, code, peak_kib) = run_measured(&args, dir.path());
        assert_eq!(code, Some(0), "{shard}: {err}");
        assert!(
            stdout.contains(&format!("to run now: {runs}\n")),
            "{stdout}"
        );
        assert!(peak_kib < 64 * 1024, "{shard}: {peak_kib} KiB");
    }
}
