//! The reuse note through the whole harness (issue 43): `sens-bench run` plays
//! `bench/scenarios/reimplement-then-reuse.json`, the scenario `scripts/main.sh`
//! plays, on `bench/scenarios/tasks/search-titles` through the pinned Claude Code
//! CLI with the real engine. The first write holds the project's `fold` again under
//! other names. Under C2 the engine's PostToolUse note must reach the model's next
//! request (the script's `on_context` branch plays only then) and the next write
//! calls `fold`; under C0 nothing is said and the re-implementation stays.
//!
//! The note speaks only with the suggestion model: the test hands the engine
//! `.tools/minilm` (the test binary is not under the checkout when the target
//! folder is elsewhere) and fails when it is missing rather than pass without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::measure::ledger::{LedgerLine, read_ledger};
use sens_bench::record::read_records;
use sens_engine::reuse::NOTE_RULE;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn notes(ledger: &[LedgerLine]) -> Vec<String> {
    ledger
        .iter()
        .flat_map(|line| &line.findings)
        .filter(|finding| finding.rule == NOTE_RULE)
        .map(|finding| serde_json::to_string(finding).expect("a finding serializes"))
        .collect()
}

#[test]
fn under_c2_the_note_arrives_and_the_next_write_calls_the_helper_under_c0_nothing_is_said() {
    let model = root().join(".tools/minilm");
    assert!(
        model.join("model.safetensors").is_file(),
        "the suggestion model is missing at {}: run scripts/setup.sh (the note needs it)",
        model.display()
    );
    let dir = tempfile::tempdir().expect("a temp folder");
    let out = dir.path().join("batch");
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("run")
        .arg("--tasks")
        .arg(root().join("bench/scenarios/tasks"))
        .args([
            "--task",
            "search-titles",
            "--condition",
            "C0,C2",
            "--reps",
            "1",
        ])
        .arg("--agent")
        .arg(format!(
            "script:{}",
            root()
                .join("bench/scenarios/reimplement-then-reuse.json")
                .display()
        ))
        .arg("--conditions")
        .arg(root().join("bench/conditions.toml"))
        .arg("--out")
        .arg(&out)
        .env("SENS_SUGGEST_MODEL", &model)
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("sens-bench runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = |condition: &str| out.join("runs/search-titles").join(condition).join("1");
    let diff = |condition: &str| {
        std::fs::read_to_string(run(condition).join("diff.patch")).expect("the run's diff")
    };

    let ledger = read_ledger::<LedgerLine>(&run("C2").join("hooks.jsonl")).expect("the C2 ledger");
    let noted = notes(&ledger);
    assert!(
        noted.iter().any(|note| note.contains("fold")),
        "the engine noted nothing naming `fold`: {noted:?}"
    );
    // The script's `on_context` branch wrote this: the note was in the request.
    let c2 = diff("C2");
    assert!(
        c2.contains("+from ledger.text import fold") && !c2.contains("normalize_for_search"),
        "the note did not reach the model, or its branch did not play:\n{c2}"
    );

    if let Ok(ledger) = read_ledger::<LedgerLine>(&run("C0").join("hooks.jsonl")) {
        assert_eq!(notes(&ledger), Vec::<String>::new());
    }
    let c0 = diff("C0");
    assert!(c0.contains("+def normalize_for_search(s):"), "{c0}");

    let records = read_records(&out.join("runs.jsonl")).expect("records");
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record.hidden_pass, Some(true), "{}", record.condition);
        // C2's agent called the helper after the note; C0 was told nothing.
        let complied = u64::from(record.condition == "C2");
        assert_eq!(
            record.note_outcomes.complied, complied,
            "{}",
            record.condition
        );
    }
}
