//! The engine's query tools through the pinned Claude Code CLI: `sens-bench run`
//! plays one scripted scenario on `bench/scenarios/tasks/amount-total` under C3
//! (the tools served over the SDK MCP route) and C2 (no tools). The script asks
//! `already_exists` with a renamed copy of the project's `parse_amount`, then
//! `find_symbol` for it. Under C3 both answers name `src/util.py` at the
//! function's line and both calls are ledger lines and record counts; under C2
//! each call fails as an unknown tool and the run still ends `ok`. The report
//! shows the calls per condition.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::measure::ledger::{LedgerLine, read_ledger};
use sens_bench::record::{RunStatus, read_records};
use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `parse_amount` as the project has it, and the line of its `def`.
fn parse_amount() -> (String, u64) {
    let path = root().join("bench/scenarios/projects/amounts/src/util.py");
    let text = std::fs::read_to_string(path).expect("the scenario project's util.py");
    let start = text
        .lines()
        .position(|l| l.starts_with("def parse_amount("))
        .expect("util.py defines parse_amount");
    let body: Vec<&str> = text
        .lines()
        .skip(start + 1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect();
    let function = format!(
        "{}\n{}\n",
        text.lines().nth(start).unwrap_or_default(),
        body.join("\n")
    );
    (function.trim_end().to_string() + "\n", start as u64 + 1)
}

fn tool_use(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
}

fn script() -> Value {
    let (function, _) = parse_amount();
    let copy = function.replace("parse_amount", "to_cents");
    json!({"main": [
        {"blocks": [
            {"type": "text", "text": "Does the project convert amounts already?"},
            tool_use("mcp__sens__already_exists", json!({"code": copy})),
        ]},
        {"blocks": [tool_use("mcp__sens__find_symbol", json!({"name": "parse_amount"}))]},
        {"blocks": [{"type": "text", "text": "parse_amount already does it."}]},
    ]})
}

/// Each tool call of the transcript: its name, whether its result is an error,
/// and the result's text.
fn tool_results(transcript: &Path) -> Vec<(String, bool, String)> {
    let text = std::fs::read_to_string(transcript).expect("a transcript");
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let blocks = |kind: &'static str| {
        messages
            .iter()
            .filter(move |m| m["type"] == kind)
            .filter_map(|m| m["message"]["content"].as_array())
            .flatten()
    };
    let names: HashMap<&str, &str> = blocks("assistant")
        .filter(|b| b["type"] == "tool_use")
        .filter_map(|b| Some((b["id"].as_str()?, b["name"].as_str()?)))
        .collect();
    blocks("user")
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let name = b["tool_use_id"].as_str().and_then(|id| names.get(id));
            let content = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            (
                name.map(|n| n.to_string()).unwrap_or_default(),
                b["is_error"] == true,
                content,
            )
        })
        .collect()
}

fn tool_lines(ledger: &[LedgerLine]) -> Vec<(String, String)> {
    ledger
        .iter()
        .filter(|l| l.event == "ToolCall")
        .map(|l| {
            let verdict = serde_json::to_value(l.verdict).unwrap_or_default();
            (
                l.tool.clone().unwrap_or_default(),
                verdict.as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_agent_asks_the_engine_under_c3_and_gets_unknown_tools_under_c2() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let script_path = dir.path().join("ask.json");
    std::fs::write(&script_path, script().to_string()).expect("the script is written");
    let out = dir.path().join("batch");
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("run")
        .arg("--tasks")
        .arg(root().join("bench/scenarios/tasks"))
        .args([
            "--task",
            "amount-total",
            "--condition",
            "C2,C3",
            "--reps",
            "1",
        ])
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
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = |condition: &str| out.join("runs/amount-total").join(condition).join("1");
    let (_, def_line) = parse_amount();

    let c3 = tool_results(&run("C3").join("transcript.jsonl"));
    let names: Vec<&str> = c3.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["mcp__sens__already_exists", "mcp__sens__find_symbol"],
        "{c3:?}"
    );
    assert!(c3.iter().all(|(_, error, _)| !error), "{c3:?}");
    let exists: Value = serde_json::from_str(&c3[0].2).expect("already_exists answers JSON");
    let copy = &exists["copies"][0];
    assert_eq!(copy["kind"], "copy.renamed", "{exists}");
    assert_eq!(
        (copy["file"].as_str(), copy["line"].as_u64()),
        (Some("src/util.py"), Some(def_line))
    );
    assert_eq!(copy["yours"], "to_cents");
    let found: Value = serde_json::from_str(&c3[1].2).expect("find_symbol answers JSON");
    let first = &found["definitions"][0];
    assert_eq!(
        (first["name"].as_str(), first["file"].as_str()),
        (Some("parse_amount"), Some("src/util.py"))
    );
    assert_eq!(first["line"].as_u64(), Some(def_line));

    let ledger = read_ledger::<LedgerLine>(&run("C3").join("hooks.jsonl")).expect("the C3 ledger");
    let answered = ["already_exists", "find_symbol"].map(|t| (t.to_string(), "answer".to_string()));
    assert_eq!(tool_lines(&ledger), answered);
    // Each answer names the agent's tool use, as the PreToolUse of that call does.
    let pre_ids: Vec<&Value> = ledger
        .iter()
        .filter(|l| l.event == "PreToolUse")
        .map(|l| &l.input["tool_use_id"])
        .collect();
    let call_ids: Vec<&Value> = ledger
        .iter()
        .filter(|l| l.event == "ToolCall")
        .map(|l| &l.input["tool_use_id"])
        .collect();
    assert!(call_ids.iter().all(|id| id.is_string()), "{call_ids:?}");
    assert_eq!(call_ids, pre_ids);

    let c2 = tool_results(&run("C2").join("transcript.jsonl"));
    assert_eq!(c2.len(), 2, "{c2:?}");
    for (name, error, text) in &c2 {
        assert!(
            *error && text.contains("No such tool available") && text.contains(name.as_str()),
            "{c2:?}"
        );
    }
    let ledger = read_ledger::<LedgerLine>(&run("C2").join("hooks.jsonl")).expect("the C2 ledger");
    assert!(tool_lines(&ledger).is_empty());

    let records = read_records(&out.join("runs.jsonl")).expect("records");
    let by_condition: BTreeMap<&str, _> =
        records.iter().map(|r| (r.condition.as_str(), r)).collect();
    assert!(
        records.iter().all(|r| r.status == RunStatus::Ok),
        "{records:?}"
    );
    let counted = BTreeMap::from([
        ("already_exists".to_string(), 1),
        ("find_symbol".to_string(), 1),
    ]);
    assert_eq!(by_condition["C3"].tool_calls, counted);
    assert!(by_condition["C2"].tool_calls.is_empty());

    let report = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("report")
        .arg(&out)
        .args(["--baseline", "C2"])
        .output()
        .expect("sens-bench report runs");
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let text = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    let section = text
        .split("## Query tools")
        .nth(1)
        .expect("a query tools section");
    assert!(
        section.contains("| condition | runs | already_exists | find_symbol |"),
        "{section}"
    );
    assert!(
        section.contains("| C2 | 1 | 0 | 0 |") && section.contains("| C3 | 1 | 1 | 1 |"),
        "{section}"
    );
    assert!(text.contains("## Differences vs C2"), "{text}");
}
