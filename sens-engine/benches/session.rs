//! The hook session's own latency on a large project, with a judge that finds
//! nothing but a marked copy (so the numbers are the session's: snapshots, shell
//! analysis, ledger). Every timed answer is checked after its clock stops: a call
//! that should pass must carry no objection, a marked copy must be denied, and a
//! wrong answer fails the run.
//!
//! `cargo bench -p sens-engine --bench session [-- FILES]` (default 10000 files,
//! beside a `node_modules/` of a fifth as many that the baseline ignores).
//! Prints p50/p99/max per callback kind, and a snapshot beside `git status` on
//! the same tree with their ratio.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, ensure};
use git2::{IndexAddOption, Repository, Signature};
use sens_engine::finding::{Finding, NewUnit, Suggestion};
use sens_engine::judge::{FileChange, Judge};
use sens_engine::session::checkpoint::Checkpoints;
use sens_engine::session::{Session, SessionOptions};
use serde_json::{Value, json};

/// What a write must contain for the judge to call it a copy.
const COPY_MARKER: &str = "BENCH_COPY";

/// Finds nothing, except a blocking copy in a write holding [`COPY_MARKER`].
struct MarkerOnlyJudge;

impl Judge for MarkerOnlyJudge {
    fn check_write(&mut self, path: &Path, content: &str) -> anyhow::Result<Vec<Finding>> {
        if !content.contains(COPY_MARKER) {
            return Ok(Vec::new());
        }
        Ok(vec![Finding {
            rule: "copy.exact".into(),
            blocks: true,
            similarity: 1.0,
            message: "Call the existing function instead.".into(),
            new: NewUnit {
                file: path.to_string_lossy().into_owned(),
                line: 1,
                name: "copy".into(),
            },
            existing: None,
        }])
    }
    fn rescan(&mut self) -> anyhow::Result<Vec<Finding>> {
        Ok(Vec::new())
    }
    fn audit(&mut self, _: &[FileChange]) -> anyhow::Result<Vec<Finding>> {
        Ok(Vec::new())
    }
    fn suggest(&self, _: &str) -> anyhow::Result<Vec<Suggestion>> {
        Ok(Vec::new())
    }
}

fn make_project(root: &Path, files: usize) -> anyhow::Result<()> {
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&dir)?;
        let body: String = (0..30)
            .map(|l| format!("    let v{l} = x + {l} * {i};\n"))
            .collect();
        std::fs::write(
            dir.join(format!("f{i:05}.rs")),
            format!("pub fn f{i}(x: i64) -> i64 {{\n{body}    x\n}}\n"),
        )?;
    }
    // Installed packages: a folder the baseline ignores, never read.
    for i in 0..files / 5 {
        let dir = root.join(format!("node_modules/p{:03}", i / 100));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("i{i:05}.js")),
            format!("module.exports = {i};\n"),
        )?;
    }
    std::fs::write(root.join(".gitignore"), "node_modules/\n")?;
    let repo = Repository::init(root)?;
    let mut index = repo.index()?;
    index.add_all(["*"], IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = Signature::now("bench", "bench@localhost")?;
    repo.commit(Some("HEAD"), &signature, &signature, "baseline", &tree, &[])?;
    Ok(())
}

fn input(root: &Path, event: &str, extra: Value) -> Value {
    let mut value = json!({
        "session_id": "s", "transcript_path": "/t.jsonl", "cwd": root.to_string_lossy(),
        "prompt_id": "p", "permission_mode": "acceptEdits", "hook_event_name": event,
    });
    if let (Some(map), Value::Object(extra)) = (value.as_object_mut(), extra) {
        map.extend(extra);
    }
    value
}

/// The answer a timed call must give.
#[derive(Clone, Copy)]
enum Expect {
    /// No objection: the empty output (allow, quiet or a passing audit).
    Nothing,
    /// A PreToolUse deny.
    Deny,
}

impl Expect {
    fn check(self, output: &Value) -> anyhow::Result<()> {
        match self {
            Expect::Nothing => ensure!(*output == json!({}), "expected no objection, got {output}"),
            Expect::Deny => ensure!(
                output.pointer("/hookSpecificOutput/permissionDecision") == Some(&json!("deny")),
                "expected a deny, got {output}"
            ),
        }
        Ok(())
    }
}

/// Runs `call` `n` times, checks each answer against `expect` (outside the
/// timing), prints latency percentiles in milliseconds and returns the p50.
fn measure(
    label: &str,
    n: usize,
    expect: Expect,
    mut call: impl FnMut(usize) -> Value,
) -> anyhow::Result<f64> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        let output = call(i);
        times.push(started.elapsed().as_secs_f64() * 1e3);
        expect
            .check(&output)
            .with_context(|| format!("{label}: call {i} of {n}"))?;
    }
    times.sort_by(f64::total_cmp);
    let pick = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{label:<44} n={n:<4} p50 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms",
        pick(0.5),
        pick(0.99),
        pick(1.0)
    );
    Ok(pick(0.5))
}

/// The snapshot alone, one more file changed before each, and `git status` of
/// the same tree (the git CLI: what a snapshot must know, and no tree written).
fn snapshot_beside_git_status(root: &Path, files: usize) -> anyhow::Result<()> {
    let mut checkpoints = Checkpoints::open(root)?;
    checkpoints.snapshot()?;
    let mut last = None;
    let snapshot = measure(
        "snapshot, one more file changed",
        50,
        Expect::Nothing,
        |i| {
            let path = root.join(format!("src/m000/f{:05}.rs", i % files.min(100)));
            let _ = std::fs::write(&path, format!("pub fn snapped{i}() {{}}\n"));
            match checkpoints.snapshot() {
                Ok(tree) if Some(tree) != last => {
                    last = Some(tree);
                    json!({})
                }
                other => {
                    json!({"error": format!("no new tree after {}: {other:?}", path.display())})
                }
            }
        },
    )?;
    let status = measure(
        "git status --porcelain (git CLI)",
        50,
        Expect::Nothing,
        |_| {
            let out = Command::new("git")
                .args(["status", "--porcelain"])
                .current_dir(root)
                .output();
            match out {
                Ok(out) if out.status.success() => json!({}),
                other => json!({"error": format!("{other:?}")}),
            }
        },
    )?;
    println!("snapshot / git status (p50) = {:.2}", snapshot / status);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary
    // without it, and then a small project is enough to check that it still works.
    let measuring = std::env::args().any(|a| a == "--bench");
    let files: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.parse().context("the argument is the number of files"))
        .transpose()?
        .unwrap_or(if measuring { 10_000 } else { 50 });
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("proj");
    std::fs::create_dir_all(&root)?;
    make_project(&root, files)?;
    let options = SessionOptions::new(dir.path().join("hooks.jsonl"));
    let mut session = Session::new(&root, Box::new(MarkerOnlyJudge), options)?;
    println!("session latency on {files} files (judge finds nothing but marked copies)");

    let prompt = input(
        &root,
        "UserPromptSubmit",
        json!({"prompt": "add a feature"}),
    );
    measure(
        "UserPromptSubmit (first: cold snapshot)",
        1,
        Expect::Nothing,
        |_| session.handle("sens_UserPromptSubmit", &prompt),
    )?;
    let target = root.join("src/m000/f00000.rs");
    measure("PreToolUse Write, no copy", 300, Expect::Nothing, |i| {
        let tool_input =
            json!({"file_path": target.to_string_lossy(), "content": format!("fn n{i}() {{}}\n")});
        let pre = input(
            &root,
            "PreToolUse",
            json!({"tool_name": "Write", "tool_input": tool_input, "tool_use_id": "t"}),
        );
        session.handle("sens_PreToolUse", &pre)
    })?;
    measure(
        "PreToolUse Write, a copy (denied)",
        300,
        Expect::Deny,
        |i| {
            let content = format!("fn n{i}() {{ /* {COPY_MARKER} */ }}\n");
            let tool_input = json!({"file_path": target.to_string_lossy(), "content": content});
            let pre = input(
                &root,
                "PreToolUse",
                json!({"tool_name": "Write", "tool_input": tool_input, "tool_use_id": "t"}),
            );
            session.handle("sens_PreToolUse", &pre)
        },
    )?;
    measure("PreToolUse Edit", 300, Expect::Nothing, |_| {
        let tool_input = json!({"file_path": target.to_string_lossy(), "old_string": "x + 1", "new_string": "x + 2"});
        let pre = input(
            &root,
            "PreToolUse",
            json!({"tool_name": "Edit", "tool_input": tool_input, "tool_use_id": "t"}),
        );
        session.handle("sens_PreToolUse", &pre)
    })?;
    let bash = input(
        &root,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "t",
        "tool_input": {"command": "cd src && cargo test -q 2>&1 | tail -n 20; echo done > /tmp/out"}}),
    );
    measure("PreToolUse Bash (no commit)", 300, Expect::Nothing, |_| {
        session.handle("sens_PreToolUse", &bash)
    })?;
    let post = input(
        &root,
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": "t",
        "tool_input": {"file_path": "x"}, "tool_response": {}, "duration_ms": 1}),
    );
    measure("PostToolUse, nothing changed", 50, Expect::Nothing, |_| {
        session.handle("sens_PostToolUse", &post)
    })?;
    measure("PostToolUse, one file changed", 50, Expect::Nothing, |i| {
        let path = root.join(format!("src/m001/f{:05}.rs", 100 + i));
        let _ = std::fs::write(&path, format!("pub fn changed{i}() {{}}\n"));
        session.handle("sens_PostToolUse", &post)
    })?;
    let commit = input(
        &root,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_use_id": "t",
        "tool_input": {"command": "git add -A && git commit -m x"}}),
    );
    snapshot_beside_git_status(&root, files)?;
    measure(
        "PreToolUse Bash git commit (audit, 50 changed)",
        20,
        Expect::Nothing,
        |_| session.handle("sens_PreToolUse", &commit),
    )?;
    let stop = input(
        &root,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "",
        "background_tasks": [], "session_crons": []}),
    );
    measure(
        "Stop (audit, approved point unchanged)",
        20,
        Expect::Nothing,
        |_| session.handle("sens_Stop", &stop),
    )?;
    Ok(())
}
