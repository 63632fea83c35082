//! Decision outcomes through the whole harness: `sens-bench run` under C2 plays
//! scripted scenarios on `bench/scenarios/tasks/amount-total` through the pinned
//! Claude Code CLI with the real engine. Each
//! scenario's first write copies `parse_amount` into `src/report.py` and is denied;
//! what the script does next must be classified as its class, in the ledger's
//! classification and in the record's counts.
//!
//! `complied` is `bench/scenarios/copy-then-reuse.json` itself, the scenario
//! `scripts/main.sh` plays; the others replace what it does after the denial.

use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::measure::ledger::read_ledger;
use sens_bench::measure::outcomes::{Outcome, classify};
use sens_bench::record::read_records;
use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The main job's scenario.
fn copy_then_reuse() -> Value {
    let path = root().join("bench/scenarios/copy-then-reuse.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the scenario file"))
        .expect("the scenario is JSON")
}

/// The copy the scenario's first write holds.
fn copied_content(script: &Value) -> String {
    script["main"][0]["blocks"][1]["input"]["content"]
        .as_str()
        .expect("the first write's content")
        .to_string()
}

/// The scenario with `after` played once the first write is denied.
fn after_denial(after: Vec<Value>) -> Value {
    let mut script = copy_then_reuse();
    script["main"][1]["on_error"] = Value::Array(after);
    script
}

fn write(file: &str, content: &str) -> Value {
    json!({"type": "tool_use", "name": "Write", "input": {"file_path": file, "content": content}})
}

/// Runs `script` on the `amount-total` task under C2; returns the outcome of the
/// first decision and the record's count of `expected`.
fn play(name: &str, script: &Value, expected: Outcome) -> (Outcome, u64) {
    let dir = tempfile::tempdir().expect("a temp folder");
    let script_path = dir.path().join(format!("{name}.json"));
    std::fs::write(&script_path, script.to_string()).expect("the script is written");
    let out = dir.path().join("batch");
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("run")
        .arg("--tasks")
        .arg(root().join("bench/scenarios/tasks"))
        .args(["--task", "amount-total", "--condition", "C2", "--reps", "1"])
        .arg("--agent")
        .arg(format!("script:{}", script_path.display()))
        .arg("--conditions")
        .arg(root().join("bench/conditions.toml"))
        .arg("--out")
        .arg(&out)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("sens-bench runs");
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ledger = read_ledger(&out.join("runs/amount-total/C2/1/hooks.jsonl")).expect("a ledger");
    let decisions = classify(&ledger);
    let first = decisions
        .first()
        .unwrap_or_else(|| panic!("{name}: the engine made no decision: {ledger:?}"));
    let records = read_records(&out.join("runs.jsonl")).expect("records");
    (first.outcome, records[0].outcomes.get(expected))
}

#[test]
fn each_scripted_reaction_to_a_denial_is_classified_as_its_class() {
    let copy = copied_content(&copy_then_reuse());
    let bash = format!("cat > src/report.py <<'EOF'\n{copy}EOF\n");
    let scenarios = [
        ("complied", copy_then_reuse(), Outcome::Complied),
        (
            "retried-through-bash",
            after_denial(vec![json!({
                "type": "tool_use", "name": "Bash", "input": {"command": bash}
            })]),
            Outcome::Retried,
        ),
        (
            // A file named as generated code is outside what the engine judges:
            // the copy lands there.
            "worked-around-another-file",
            after_denial(vec![write("src/amounts_pb2.py", &copy)]),
            Outcome::WorkedAround,
        ),
        (
            "gave-up",
            after_denial(vec![json!({"type": "text", "text": "I cannot add it."})]),
            Outcome::GaveUp,
        ),
    ];
    let played: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = scenarios
            .iter()
            .map(|(name, script, expected)| {
                scope.spawn(move || (*name, *expected, play(name, script, *expected)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a scenario thread"))
            .collect()
    });
    for (name, expected, (first, counted)) in played {
        assert_eq!(first, expected, "{name}");
        assert!(counted >= 1, "{name}: the record counts no {expected:?}");
    }
}
