//! The session's guards (SPEC 7) through the whole harness: `sens-bench run`
//! plays `script:` scenarios on `bench/scenarios/tasks/amount-total` through the
//! pinned Claude Code CLI, under conditions written for each test (the guards
//! alone, `engine = false`, unless a test says otherwise). Each test reads the
//! guards' decisions from the ledger and their counts from the record.

use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::measure::ledger::{GuardCounts, LedgerLine, read_ledger};
use sens_bench::record::{RunRecord, read_records};
use sens_engine::session::guards::Kind;
use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The amount-total task's test command, as its `task.toml` gives it.
const TESTS: &str = "python3 -m pytest -q -p no:cacheprovider tests";

/// A played run: its ledger and record.
struct Played {
    ledger: Vec<LedgerLine>,
    record: RunRecord,
}

impl Played {
    /// Every decision of `guard` in the ledger, in order, with its event.
    fn decisions(&self, guard: &str) -> Vec<(String, Kind, String)> {
        self.ledger
            .iter()
            .flat_map(|line| {
                line.guards
                    .iter()
                    .filter(|d| d.guard == guard)
                    .map(|d| (line.event.clone(), d.decision, d.message.clone()))
            })
            .collect()
    }

    fn counts(&self, guard: &str) -> GuardCounts {
        self.record
            .hooks
            .guards
            .get(guard)
            .copied()
            .unwrap_or_default()
    }

    /// The verdicts of the Stop callbacks, in order.
    fn stops(&self) -> Vec<String> {
        self.ledger
            .iter()
            .filter(|l| l.event == "Stop")
            .map(|l| format!("{:?}", l.verdict))
            .collect()
    }
}

/// The conditions file: one condition `G` with `engine`, the `guards` and the
/// extra TOML `settings` (sub-tables `[G.guard.NAME]`).
fn condition(engine: bool, guards: &[&str], settings: &str) -> String {
    format!(
        "[G]\ndescription = \"guards under test\"\ncanon = false\nengine = {engine}\n\
         guards = {guards:?}\n{settings}"
    )
}

/// Runs the main-loop `turns` (each a list of blocks) under `conditions`'s `G`.
fn play(name: &str, conditions: &str, turns: Vec<Vec<Value>>) -> Played {
    let dir = tempfile::tempdir().expect("a temp folder");
    let script: Vec<Value> = turns.into_iter().map(|b| json!({"blocks": b})).collect();
    let script_path = dir.path().join(format!("{name}.json"));
    std::fs::write(&script_path, json!({"main": script}).to_string()).expect("the script");
    let conditions_path = dir.path().join("conditions.toml");
    std::fs::write(&conditions_path, conditions).expect("the conditions");
    let out = dir.path().join("batch");
    let output = run(&script_path, &conditions_path, &out);
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ledger = read_ledger(&out.join("runs/amount-total/G/1/hooks.jsonl")).expect("a ledger");
    let mut records = read_records(&out.join("runs.jsonl")).expect("records");
    Played {
        ledger,
        record: records.remove(0),
    }
}

fn run(script: &Path, conditions: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("run")
        .arg("--tasks")
        .arg(root().join("bench/scenarios/tasks"))
        .args(["--task", "amount-total", "--condition", "G", "--reps", "1"])
        .arg("--agent")
        .arg(format!("script:{}", script.display()))
        .arg("--conditions")
        .arg(conditions)
        .arg("--out")
        .arg(out)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("sens-bench runs")
}

/// Plays the scenarios side by side (each is a CLI session of some seconds).
fn play_all(scenarios: Vec<(&str, String, Vec<Vec<Value>>)>) -> Vec<Played> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = scenarios
            .into_iter()
            .map(|(name, conditions, turns)| scope.spawn(move || play(name, &conditions, turns)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a scenario thread"))
            .collect()
    })
}

fn write(file: &str, content: &str) -> Value {
    json!({"type": "tool_use", "name": "Write", "input": {"file_path": file, "content": content}})
}

fn bash(command: &str) -> Value {
    json!({"type": "tool_use", "name": "Bash", "input": {"command": command}})
}

fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A small, different module each time.
fn module(n: usize) -> String {
    format!("def total(items):\n    return sum(len(i) for i in items) + {n}\n")
}

#[test]
fn six_edits_of_one_file_get_one_loop_note_and_five_files_none() {
    let same_file = (0..6).map(|n| vec![write("src/report.py", &module(n))]);
    let five_files = (0..5).map(|n| vec![write(&format!("src/part{n}.py"), &module(n))]);
    let done = || vec![vec![text("Done.")]];
    let played = play_all(vec![
        (
            "loop-one-file",
            condition(false, &["loop"], ""),
            same_file.chain(done()).collect(),
        ),
        (
            "loop-five-files",
            condition(false, &["loop"], ""),
            five_files.chain(done()).collect(),
        ),
    ]);
    let notes = played[0].decisions("loop");
    assert_eq!(notes.len(), 1, "{notes:?}");
    let (event, kind, message) = &notes[0];
    assert_eq!((event.as_str(), *kind), ("PostToolUse", Kind::Note));
    for part in ["src/report.py", "5 times", "consider another approach"] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // The note reached the agent on the fifth edit's PostToolUse.
    let noted = played[0]
        .ledger
        .iter()
        .find(|l| !l.guards.is_empty())
        .expect("the noted line");
    let context = noted.output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("consider another approach"), "{context}");
    assert_eq!(played[0].counts("loop"), GuardCounts { notes: 1, blocks: 0 });
    assert!(played[1].decisions("loop").is_empty());
    assert_eq!(played[1].counts("loop"), GuardCounts::default());
}

#[test]
fn stop_evidence_blocks_an_untested_change_once_and_nothing_else() {
    let guard = || condition(false, &["stop-evidence"], "");
    let played = play_all(vec![
        (
            "untested",
            guard(),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![text("Done.")],
                vec![text("Done, without tests.")],
            ],
        ),
        (
            "tested",
            guard(),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![bash(TESTS)],
                vec![text("Done, the tests pass.")],
            ],
        ),
        ("nothing", guard(), vec![vec![text("Nothing to change.")]]),
    ]);
    let blocks = played[0].decisions("stop-evidence");
    assert_eq!(blocks.len(), 2, "a block, then a pass on the same state: {blocks:?}");
    assert_eq!((blocks[0].0.as_str(), blocks[0].1), ("Stop", Kind::Block));
    assert!(blocks[0].2.contains("src/report.py"), "{}", blocks[0].2);
    assert_eq!(blocks[1].1, Kind::Mark);
    assert_eq!(played[0].stops(), ["Block", "Pass"]);
    assert_eq!(
        played[0].counts("stop-evidence"),
        GuardCounts { notes: 0, blocks: 1 }
    );
    assert_eq!(played[0].record.hooks.blocks, 1);
    for (name, run) in [("tested", &played[1]), ("nothing", &played[2])] {
        assert!(run.decisions("stop-evidence").is_empty(), "{name}");
        assert_eq!(run.stops(), ["Pass"], "{name}");
    }
}
