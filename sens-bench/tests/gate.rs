//! Rules as data, the regression gate, labels and the fairness check, end to end
//! through the binary and the pinned Claude Code CLI against the scripted model
//! server: a script that gets denied and blocked under C2, replayed after its
//! copy is gone with the default rules and with a floor above every unit.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use common::binary::sens_bench;
use common::files::fixture;

fn fixtures() -> PathBuf {
    fixture("gate")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {}", stdout(output)))
}

/// A renamed copy of the project's `describe` (well above the floor).
fn renamed_copy(name: &str) -> String {
    let source = std::fs::read_to_string(fixtures().join("projects/stats/stats.py")).unwrap();
    let body: String = source
        .lines()
        .skip_while(|line| !line.starts_with("def describe"))
        .map(|line| format!("{line}\n"))
        .collect();
    body.replace("def describe(rows)", &format!("def {name}(values)"))
        .replace("rows", "values")
}

/// Denied Write of a copy; the same copy through the shell (found by the
/// rescan); a Stop the audit blocks; the copy removed; a Stop that passes.
fn scenario(dir: &Path) -> String {
    let tool = |name: &str, input: Value| json!({"blocks": [{"type": "tool_use", "name": name, "input": input}]});
    let done = json!({"blocks": [{"type": "text", "text": "Done."}]});
    let shell = format!("cat > extra2.py <<'EOF'\n{}EOF", renamed_copy("tally"));
    let turns = json!([
        tool(
            "Write",
            json!({"file_path": "extra.py", "content": renamed_copy("summarize_rows")})
        ),
        tool("Bash", json!({"command": shell})),
        done,
        tool("Bash", json!({"command": "rm extra2.py"})),
        done,
    ]);
    let path = dir.join("script.json");
    std::fs::write(&path, json!({ "main": turns }).to_string()).unwrap();
    format!("script:{}", path.display())
}

/// C2 and C2 with a rules file whose floor is above every unit.
fn conditions(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::write(dir.join("rules/high.toml"), "floor = 100000\n").unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/conditions.toml");
    let mut text = std::fs::read_to_string(shipped).unwrap();
    text.push_str(
        "\n[C2high]\ndescription = \"C2 with a floor above every unit\"\ncanon = true\n\
         engine = true\nrules = \"rules/high.toml\"\n",
    );
    let path = dir.join("conditions.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn ledger(batch: &Path, run: &str) -> Vec<Value> {
    std::fs::read_to_string(batch.join("runs").join(run).join("hooks.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn verdicts(lines: &[Value]) -> Vec<&str> {
    lines.iter().filter_map(|l| l["verdict"].as_str()).collect()
}

#[test]
fn a_denied_and_blocked_batch_replays_and_the_gate_follows_the_rules_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("batch");
    let agent = scenario(dir.path());
    let conditions = conditions(dir.path());
    let tasks = fixtures().join("tasks");
    let ran = sens_bench(&[
        "run",
        "--tasks",
        text(&tasks),
        "--task",
        "gate-copy",
        "--condition",
        "C2,C2high",
        "--reps",
        "1",
        "--agent",
        &agent,
        "--conditions",
        text(&conditions),
        "--out",
        text(&batch),
    ]);
    assert!(ran.status.success(), "{ran:?}");

    // C2 denies the Write and blocks the first Stop; the high floor does neither.
    let c2 = ledger(&batch, "gate-copy/C2/1");
    assert!(verdicts(&c2).contains(&"deny"), "{:?}", verdicts(&c2));
    assert!(verdicts(&c2).contains(&"block"), "{:?}", verdicts(&c2));
    let high = ledger(&batch, "gate-copy/C2high/1");
    assert!(
        !verdicts(&high)
            .iter()
            .any(|v| *v == "deny" || *v == "block"),
        "{:?}",
        verdicts(&high)
    );
    let high_digest = high[0]["rules_digest"].as_str().unwrap().to_string();
    assert_ne!(high_digest, c2[0]["rules_digest"].as_str().unwrap());
    let manifest = std::fs::read_to_string(batch.join("manifest.toml")).unwrap();
    assert!(manifest.contains(&high_digest), "{manifest}");
    // The gate below compares the default and the high rules with what C2 recorded.
    std::fs::remove_dir_all(batch.join("runs/gate-copy/C2high")).unwrap();

    // The copies the runs played on are gone; the replay reads the packs.
    let workspace = c2[0]["input"]["cwd"].as_str().unwrap();
    assert!(!Path::new(workspace).exists(), "{workspace} still exists");
    assert!(batch.join("runs/gate-copy/C2/1/sens-objects/pack").is_dir());

    let gate = |extra: &[&str]| {
        let mut args = vec!["gate", text(&batch), "--format", "json"];
        args.extend_from_slice(extra);
        sens_bench(&args)
    };
    let same = gate(&[]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    let report = json_of(&same);
    assert_eq!(report["changes"], json!([]), "{report:#}");
    assert!(
        report["summary"]["decisions"].as_u64().unwrap() >= 5,
        "{report:#}"
    );

    let rules = dir.path().join("rules/high.toml");
    let lifted = gate(&["--rules", text(&rules)]);
    assert_eq!(lifted.status.code(), Some(0), "no labels yet");
    let report = json_of(&lifted);
    let summary = &report["summary"];
    assert!(summary["minus_deny"].as_u64() >= Some(1), "{report:#}");
    assert!(summary["minus_block"].as_u64() >= Some(1), "{report:#}");
    assert_eq!(summary["plus_deny"], 0);
    let changes = report["changes"].as_array().unwrap();
    let denial = changes
        .iter()
        .find(|c| c["old"] == "deny" && c["new"] == "allow")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(denial["run"], "gate-copy/C2/1");
    assert!(
        denial["rule"].as_str().unwrap().starts_with("copy."),
        "{denial}"
    );
    assert!(
        changes.iter().all(|c| c["run"] == "gate-copy/C2/1"),
        "{report:#}"
    );
    // --against replays the old side too: the defaults written out equal the record.
    let defaults = dir.path().join("rules/defaults.toml");
    std::fs::write(&defaults, "floor = 80\n").unwrap();
    let against = json_of(&gate(&[
        "--rules",
        text(&rules),
        "--against",
        text(&defaults),
    ]));
    assert_eq!(against["changes"], report["changes"], "{against:#}");
    assert_eq!(against["summary"]["against"], c2[0]["rules_digest"]);
    let markdown = sens_bench(&["gate", text(&batch), "--rules", text(&rules)]);
    let markdown = stdout(&markdown);
    assert!(
        markdown.contains("-0 denials") || markdown.contains("denials"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| rule | +deny | -deny | +block | -block |"),
        "{markdown}"
    );

    // A label on the lifted denial decides the exit code; the latest label wins.
    let seq = denial["seq"].to_string();
    let label = |judgement: &str| {
        let out = sens_bench(&[
            "label",
            text(&batch),
            "gate-copy/C2/1",
            &seq,
            judgement,
            "--why",
            "a copy of describe",
        ]);
        assert!(out.status.success(), "{out:?}");
    };
    label("just");
    assert_eq!(gate(&["--rules", text(&rules)]).status.code(), Some(1));
    assert_eq!(
        gate(&[]).status.code(),
        Some(0),
        "the default rules still deny it"
    );
    label("unjust");
    assert_eq!(gate(&["--rules", text(&rules)]).status.code(), Some(0));
    assert_eq!(
        gate(&[]).status.code(),
        Some(1),
        "an unjust denial still denies"
    );
    let section = sens_bench::report::labels::report_section(&batch).unwrap();
    assert!(section.contains("Unjust-block rate: 1 of 1"), "{section}");
    let bad_seq = sens_bench(&[
        "label",
        text(&batch),
        "gate-copy/C2/1",
        "999",
        "just",
        "--why",
        "x",
    ]);
    assert_eq!(bad_seq.status.code(), Some(2));
    let bad_run = sens_bench(&[
        "label",
        text(&batch),
        "gate-copy/C9/1",
        &seq,
        "just",
        "--why",
        "x",
    ]);
    assert_eq!(bad_run.status.code(), Some(2));

    // Without its pack a run is unreplayable, named, and the gate exits 2.
    std::fs::remove_dir_all(batch.join("runs/gate-copy/C2/1/sens-objects")).unwrap();
    let lost = gate(&[]);
    assert_eq!(lost.status.code(), Some(2));
    let report = json_of(&lost);
    let unreplayable = report["unreplayable"].as_array().unwrap();
    assert_eq!(unreplayable.len(), 1, "{report:#}");
    assert_eq!(unreplayable[0]["run"], "gate-copy/C2/1");
    assert!(
        unreplayable[0]["error"]
            .as_str()
            .unwrap()
            .contains("replay pack is missing")
    );
}

#[test]
fn a_malformed_rules_file_names_file_and_field_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("bad-rules.toml");
    std::fs::write(&rules, "floor = 80\nbands = 7\n").unwrap();
    let project = fixtures().join("projects/stats");
    for args in [
        vec!["gate", text(dir.path()), "--rules", text(&rules)],
        vec!["engine", "--rules", text(&rules), "index", text(&project)],
        vec!["engine", "index", text(&project), "--rules", text(&rules)],
    ] {
        let out = sens_bench(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bad-rules.toml") && err.contains("`bands`"),
            "{err}"
        );
    }
    let out = sens_bench(&["engine", "--rules", text(&rules), "index", text(&project)]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("files"));
}

#[test]
fn the_fairness_check_fails_a_reference_the_engine_denies_naming_the_rule() {
    let tasks = fixtures().join("tasks");
    let unfair = sens_bench(&["validate", "--tasks", text(&tasks), "--task", "gate-unfair"]);
    assert_eq!(unfair.status.code(), Some(1), "{}", stdout(&unfair));
    let out = stdout(&unfair);
    let row = out
        .lines()
        .find(|l| l.contains("fair under the engine"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("copy."), "{row}");
    let fair = sens_bench(&["validate", "--tasks", text(&tasks), "--task", "gate-copy"]);
    assert_eq!(fair.status.code(), Some(0), "{}", stdout(&fair));
}
