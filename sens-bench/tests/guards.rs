//! The session's guards (docs/guards.md) through the whole harness: `sens-bench run`
//! plays `script:` scenarios on `bench/scenarios/tasks/amount-total` through the
//! pinned Claude Code CLI, under conditions written for each test (the guards
//! alone, `engine = false`, unless a test says otherwise). Each test reads the
//! guards' decisions from the ledger and their counts from the record.

use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::measure::ledger::{GuardCounts, LedgerLine, read_ledger};
use sens_bench::record::{RunRecord, read_records};
use sens_engine::session::guards::Kind;
use sens_engine::session::guards::acceptance::{Checklist, Evidence};
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
    /// The acceptance checklist, when the guard kept one.
    checklist: Option<Checklist>,
    /// `sens-bench gate --format json` on the batch: its exit code and output.
    gate: (Option<i32>, Value),
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

    /// The record's (notes, blocks) of `guard`.
    fn counts(&self, guard: &str) -> (u64, u64) {
        let counts = self.guard_counts(guard);
        (counts.notes, counts.blocks)
    }

    fn guard_counts(&self, guard: &str) -> GuardCounts {
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

/// A scenario: its name, the conditions file, the main loop's turns (each a
/// list of blocks), and files written beside the conditions file.
struct Scenario {
    name: &'static str,
    conditions: String,
    turns: Vec<Vec<Value>>,
    beside: Vec<(&'static str, &'static str)>,
    /// The script's answers to the harness's own model calls.
    decisions: Vec<Value>,
}

impl Scenario {
    fn new(name: &'static str, conditions: String, turns: Vec<Vec<Value>>) -> Self {
        Self {
            name,
            conditions,
            turns,
            beside: Vec::new(),
            decisions: Vec::new(),
        }
    }
}

/// Runs a scenario under its conditions' `G`; every subagent answers "Looks fine.".
fn play(scenario: Scenario) -> Played {
    let Scenario {
        name,
        conditions,
        turns,
        beside,
        decisions,
    } = scenario;
    let dir = tempfile::tempdir().expect("a temp folder");
    let script: Vec<Value> = turns.into_iter().map(|b| json!({"blocks": b})).collect();
    let agent = json!([{"blocks": [text("Looks fine.")]}]);
    let script_path = dir.path().join(format!("{name}.json"));
    std::fs::write(
        &script_path,
        json!({"main": script, "agent": agent, "decisions": decisions}).to_string(),
    )
    .expect("the script");
    let conditions_path = dir.path().join("conditions.toml");
    std::fs::write(&conditions_path, conditions).expect("the conditions");
    for (file, text) in beside {
        std::fs::write(dir.path().join(file), text).expect("a file beside the conditions");
    }
    let out = dir.path().join("batch");
    let output = run(&script_path, &conditions_path, &out);
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = out.join("runs/amount-total/G/1");
    let ledger = read_ledger(&run.join("hooks.jsonl")).expect("a ledger");
    let mut records = read_records(&out.join("runs.jsonl")).expect("records");
    let checklist = run.join("acceptance.json");
    let gate = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("gate")
        .arg(&out)
        .args(["--format", "json"])
        .output()
        .expect("sens-bench gate runs");
    let gate_json = serde_json::from_slice(&gate.stdout).unwrap_or(Value::Null);
    Played {
        gate: (gate.status.code(), gate_json),
        ledger,
        record: records.remove(0),
        checklist: checklist
            .exists()
            .then(|| Checklist::read(&checklist).expect("the checklist")),
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
fn play_all(scenarios: Vec<Scenario>) -> Vec<Played> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = scenarios
            .into_iter()
            .map(|scenario| scope.spawn(move || play(scenario)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a scenario thread"))
            .collect()
    })
}

fn tool(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
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
        Scenario::new(
            "loop-one-file",
            condition(false, &["loop"], ""),
            same_file.chain(done()).collect(),
        ),
        Scenario::new(
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
    assert_eq!(played[0].counts("loop"), (1, 0));
    assert!(played[1].decisions("loop").is_empty());
    assert_eq!(played[1].counts("loop"), (0, 0));
}

#[test]
fn stop_evidence_blocks_an_untested_change_once_and_nothing_else() {
    let guard = || condition(false, &["stop-evidence"], "");
    let played = play_all(vec![
        Scenario::new(
            "untested",
            guard(),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![text("Done.")],
                vec![text("Done, without tests.")],
            ],
        ),
        Scenario::new(
            "tested",
            guard(),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![bash(TESTS)],
                vec![text("Done, the tests pass.")],
            ],
        ),
        Scenario::new("nothing", guard(), vec![vec![text("Nothing to change.")]]),
        Scenario::new(
            "untested-with-the-engine",
            condition(true, &["stop-evidence"], ""),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![text("Done.")],
                vec![text("Done, without tests.")],
            ],
        ),
    ]);
    let blocks = played[0].decisions("stop-evidence");
    assert_eq!(
        blocks.len(),
        2,
        "a block, then a pass on the same state: {blocks:?}"
    );
    assert_eq!((blocks[0].0.as_str(), blocks[0].1), ("Stop", Kind::Block));
    assert!(blocks[0].2.contains("src/report.py"), "{}", blocks[0].2);
    assert_eq!(blocks[1].1, Kind::Mark);
    assert_eq!(played[0].stops(), ["Block", "Pass"]);
    assert_eq!(played[0].counts("stop-evidence"), (0, 1));
    assert_eq!(played[0].record.hooks.blocks, 1);
    for (name, run) in [("tested", &played[1]), ("nothing", &played[2])] {
        assert!(run.decisions("stop-evidence").is_empty(), "{name}");
        assert_eq!(run.stops(), ["Pass"], "{name}");
    }
    // With the engine the guard's block is the same, and the gate, replaying the
    // engine alone, finds no change: the engine passed that Stop.
    let engine = &played[3];
    assert_eq!(engine.stops(), ["Block", "Pass"]);
    let blocked = engine
        .ledger
        .iter()
        .find(|l| l.event == "Stop")
        .expect("a Stop");
    assert!(
        !blocked.findings.iter().any(|f| f.blocks),
        "{:?}",
        blocked.findings
    );
    for (name, run) in [("guards alone", &played[0]), ("with the engine", engine)] {
        let (code, report) = &run.gate;
        assert_eq!(*code, Some(0), "{name}: {report}");
        assert_eq!(report["changes"], json!([]), "{name}: {report}");
        assert_eq!(report["unreplayable"], json!([]), "{name}: {report}");
    }
}

#[test]
fn a_risk_glob_raises_the_level_and_a_later_low_risk_edit_does_not_lower_it() {
    let conditions = condition(
        false,
        &["risk"],
        "[G.guard.risk.paths]\n\"src/pay*.py\" = \"R2\"\n\"src/*.py\" = \"R1\"\n",
    );
    let played = play(Scenario::new(
        "risk",
        conditions,
        vec![
            vec![write("src/payments.py", &module(0))],
            vec![write("src/report.py", &module(1))],
            vec![text("Done.")],
            vec![text("Done.")],
        ],
    ));
    let decisions = played.decisions("risk");
    let marks: Vec<&str> = decisions
        .iter()
        .filter(|d| d.1 == Kind::Mark && d.2.starts_with("risk"))
        .map(|d| d.2.as_str())
        .collect();
    assert_eq!(
        marks,
        ["risk R0 -> R2, raised by src/payments.py"],
        "{decisions:?}"
    );
    // The last edit was R1, yet the Stop still needs R2's evidence.
    let blocks: Vec<_> = decisions.iter().filter(|d| d.1 == Kind::Block).collect();
    assert_eq!(blocks.len(), 1, "{decisions:?}");
    assert!(blocks[0].2.contains("src/report.py"), "{}", blocks[0].2);
    assert_eq!(played.stops(), ["Block", "Pass"]);
    assert_eq!(played.counts("risk"), (0, 1));
}

#[test]
fn a_reviewer_subagent_that_can_write_is_denied_and_others_are_not() {
    // Through a script: the CLI asks approval for a plain command writing `.claude/`.
    let define = |name: &str, tools: &str| {
        format!(
            "import pathlib; p = pathlib.Path('.claude/agents/{name}.md'); \
             p.parent.mkdir(parents=True, exist_ok=True); \
             p.write_text('---\\nname: {name}\\ndescription: Reviews code\\ntools: {tools}\\n---\\nReview.\\n')"
        )
    };
    let define = format!(
        "python3 -c \"{}\" && python3 -c \"{}\"",
        define("code-reviewer", "Read, Write"),
        define("safe-reviewer", "Read, Grep")
    );
    let spawn = |agent_type: &str, description: &str| {
        tool(
            "Agent",
            json!({"description": description, "prompt": "Look at src/util.py.", "subagent_type": agent_type}),
        )
    };
    let played = play(Scenario::new(
        "reviewer-gate",
        condition(false, &["reviewer-gate"], ""),
        vec![
            vec![bash(&define)],
            vec![spawn("code-reviewer", "Review the change")],
            vec![spawn("safe-reviewer", "Review the change")],
            vec![spawn("general-purpose", "Count the functions")],
            vec![text("Done.")],
        ],
    ));
    let spawns: Vec<(String, String)> = played
        .ledger
        .iter()
        .filter(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("Agent"))
        .map(|l| {
            let agent = l.input["tool_input"]["subagent_type"]
                .as_str()
                .unwrap_or("");
            (agent.to_string(), format!("{:?}", l.verdict))
        })
        .collect();
    let expected = [
        ("code-reviewer", "Deny"),
        ("safe-reviewer", "Allow"),
        ("general-purpose", "Allow"),
    ]
    .map(|(a, v)| (a.to_string(), v.to_string()));
    let denials = played.decisions("reviewer-gate");
    assert_eq!(spawns, expected, "{denials:?}");
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert!(
        denials[0].2.contains("its tools include Write"),
        "{}",
        denials[0].2
    );
    assert_eq!(played.counts("reviewer-gate"), (0, 1));
}

#[test]
fn fragments_commands_and_secrets_are_guarded() {
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n";
    let settings = "[G.guard.context]\nfragments = [{glob = \"src/*.py\", file = \"src-contract.md\"}]\n\
                    [G.guard.command-guard]\ndeny = [{pattern = \"git\\\\s+push\\\\s+.*--force\", message = \"Force-pushing is not allowed here.\"}]\n";
    let scenario = Scenario {
        beside: vec![(
            "src-contract.md",
            "src/ is the package's public API: keep signatures.",
        )],
        ..Scenario::new(
            "context-command-secrets",
            condition(false, &["context", "command-guard", "secrets"], settings),
            vec![
                vec![write("src/report.py", &module(1))],
                vec![write("src/summary.py", &module(2))],
                vec![bash("cd src && git push --force origin main")],
                vec![bash("git status --short")],
                vec![write("config/deploy_key", key)],
                vec![write(
                    "config/app.toml",
                    "[server]\nport = 8080\ntimeout = 30\n",
                )],
                vec![tool("Read", json!({"file_path": "config/deploy_key"}))],
                vec![tool("Read", json!({"file_path": "config/app.toml"}))],
                vec![text("Done.")],
            ],
        )
    };
    let played = play(scenario);
    let fragments = played.decisions("context");
    assert_eq!(
        fragments.len(),
        1,
        "once for two matching files: {fragments:?}"
    );
    assert!(fragments[0].2.contains("public API"), "{}", fragments[0].2);
    let commands = played.decisions("command-guard");
    assert_eq!(commands.len(), 1, "{commands:?}");
    assert!(commands[0].2.contains("Force-pushing is not allowed here."));
    let pushed = played
        .ledger
        .iter()
        .find(|l| {
            l.input["tool_input"]["command"]
                .as_str()
                .is_some_and(|c| c.contains("push"))
        })
        .expect("the push's PreToolUse");
    let reason = pushed.output["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("Force-pushing is not allowed here."),
        "{reason}"
    );
    let reads: Vec<(String, String)> = played
        .ledger
        .iter()
        .filter(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("Read"))
        .map(|l| {
            let file = l.input["tool_input"]["file_path"].as_str().unwrap_or("");
            let name = file.rsplit('/').next().unwrap_or("").to_string();
            (name, format!("{:?}", l.verdict))
        })
        .collect();
    let expected = [("deploy_key", "Deny"), ("app.toml", "Allow")]
        .map(|(f, v)| (f.to_string(), v.to_string()));
    assert_eq!(reads, expected);
    let secrets = played.decisions("secrets");
    assert_eq!(secrets.len(), 1, "{secrets:?}");
    assert!(secrets[0].2.contains("private key") && !secrets[0].2.contains("b3Blbn"));
    assert_eq!(played.counts("secrets"), (0, 1));
}

#[test]
fn the_prompt_is_recited_every_n_tool_calls() {
    let prompt =
        std::fs::read_to_string(root().join("bench/scenarios/tasks/amount-total/prompt.md"))
            .expect("the task's prompt");
    let settings =
        "[G.guard.recitation]\nevery = 3\nconstraints = \"Keep src/util.py as it is.\"\n";
    let played = play(Scenario::new(
        "recitation",
        condition(false, &["recitation"], settings),
        vec![
            vec![write("src/report.py", &module(1))],
            vec![bash("git status --short")],
            vec![bash("ls src")],
            vec![bash("ls tests")],
            vec![text("Done.")],
        ],
    ));
    let notes = played.decisions("recitation");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].2.contains(prompt.trim()), "{}", notes[0].2);
    assert!(notes[0].2.contains("Keep src/util.py as it is."));
    let third = played
        .ledger
        .iter()
        .filter(|l| l.event == "PostToolUse")
        .nth(2)
        .expect("a third tool call");
    assert_eq!(third.guards.len(), 1, "recited on the third call");
}

#[test]
fn acceptance_points_come_from_the_prompt_and_an_unproved_stop_is_blocked_once() {
    let when = "Add `total(items)`";
    let points = json!({"points": [
        {"text": "total(items) in a new src/report.py", "acceptance": "src/report.py defines total",
         "command": TESTS, "inferred": false},
        {"text": "the sum is in cents", "acceptance": "1,50 EUR counts as 150", "command": null,
         "inferred": true},
    ]});
    let turns = || {
        vec![
            vec![write("src/report.py", &module(1))],
            vec![text("Done.")],
            vec![text("Done, as said.")],
        ]
    };
    let scenario = |name, reply: &Value| Scenario {
        decisions: vec![json!({"when": when, "reply": reply})],
        ..Scenario::new(name, condition(false, &["acceptance"], ""), turns())
    };
    let played = play_all(vec![
        scenario("acceptance", &points),
        scenario(
            "acceptance-garbage",
            &json!("These are the points: total, cents."),
        ),
    ]);
    let checklist = played[0].checklist.as_ref().expect("a checklist");
    let texts: Vec<&str> = checklist
        .points
        .iter()
        .map(|i| i.point.text.as_str())
        .collect();
    assert_eq!(
        texts,
        ["total(items) in a new src/report.py", "the sum is in cents"]
    );
    assert!(checklist.points[1].point.inferred && checklist.buffer.is_empty());
    let evidence: Vec<Evidence> = checklist.points.iter().map(|i| i.evidence).collect();
    assert_eq!(evidence, [Evidence::Diff, Evidence::Claimed]);
    assert_eq!(
        played[0].stops(),
        ["Block", "Pass"],
        "blocked once, then disarmed"
    );
    let blocks: Vec<_> = played[0]
        .decisions("acceptance")
        .into_iter()
        .filter(|d| d.1 == Kind::Block)
        .collect();
    assert!(
        blocks[0].2.contains("the sum is in cents"),
        "{}",
        blocks[0].2
    );
    let counts = played[0].guard_counts("acceptance");
    assert_eq!((counts.blocks, counts.points, counts.proved), (1, 2, 0));

    let garbage = played[1].checklist.as_ref().expect("a checklist");
    assert!(garbage.points.is_empty());
    assert_eq!(garbage.failed_extractions, 1);
    assert_eq!(garbage.buffer.len(), 1, "the user's words are kept");
    assert!(garbage.buffer[0].contains(when));
    let marks = played[1].decisions("acceptance");
    assert!(marks[0].2.contains("extraction failed"), "{marks:?}");
    assert_eq!(played[1].stops(), ["Pass"]);
}

/// `/compact` as a user message of a stream-json session: the pinned CLI
/// compacts (the scripted server writes the summary), the engine's PreCompact
/// callback arms the recitation, and the next prompt's callback carries it.
#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_through_the_cli_gets_the_recitation() {
    use sens_bench::agent::claude::{ApiEndpoint, ClaudeOptions, ClaudeSession, pinned_claude_bin};
    use sens_bench::agent::engine::{HandlerOptions, condition_handler};
    use sens_bench::agent::model_server::ModelServer;
    use sens_bench::agent::script::Script;
    use sens_bench::spec::conditions::Conditions;

    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("app.py"), module(0)).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-qm",
            "start",
        ],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
    let done = json!({"blocks": [text("Done.")]});
    let script = Script::parse(&json!({"main": [done, done, done, done]}).to_string()).unwrap();
    let server = ModelServer::start(script, &ws).await.unwrap();
    let conditions = Conditions::parse(&condition(false, &["recitation"], "")).unwrap();
    let (_, condition) = conditions.select(&["G".to_string()]).unwrap().remove(0);
    let ledger = dir.path().join("hooks.jsonl");
    let handler = condition_handler(
        &ws,
        &ledger,
        &condition,
        HandlerOptions::default(),
        &[],
        None,
    )
    .unwrap()
    .expect("a guards' session");
    let options = ClaudeOptions {
        binary: pinned_claude_bin(&root()).unwrap(),
        workdir: ws.clone(),
        home: dir.path().join("home"),
        model: None,
        effort: None,
        timeout: std::time::Duration::from_secs(90),
        api: Some(ApiEndpoint {
            base_url: server.base_url(),
            api_key: "scripted".into(),
        }),
        append_system_prompt: None,
        env: vec![("CLAUDE_CODE_MAX_RETRIES".into(), "0".into())],
        transcript: dir.path().join("transcript.jsonl"),
        sandbox: None,
        limits: Default::default(),
    };
    let mut session = ClaudeSession::start(&options, Some(Box::new(handler)))
        .await
        .unwrap();
    for prompt in ["Add total(items) to app.py.", "/compact", "Go on."] {
        session
            .turn(prompt)
            .await
            .unwrap_or_else(|e| panic!("{prompt}: {e}"));
    }
    session.finish().await.unwrap();
    let lines = read_ledger::<LedgerLine>(&ledger).unwrap();
    let events: Vec<&str> = lines.iter().map(|l| l.event.as_str()).collect();
    let compact = events.iter().position(|e| *e == "PreCompact");
    let compact = compact.unwrap_or_else(|| panic!("no PreCompact callback: {events:?}"));
    let recited = lines[compact..]
        .iter()
        .find(|l| l.guards.iter().any(|d| d.decision == Kind::Note))
        .unwrap_or_else(|| panic!("no recitation after the compaction: {events:?}"));
    assert_eq!(recited.event, "UserPromptSubmit");
    let context = recited.output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default();
    assert!(context.contains("Add total(items) to app.py."), "{context}");
    let asked = server
        .requests()
        .into_iter()
        .filter_map(|r| r.body)
        .any(|body| body.to_string().contains("Sens (recitation)"));
    assert!(asked, "the recitation reached the model");
}

#[test]
fn a_condition_naming_an_unknown_guard_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let conditions = dir.path().join("conditions.toml");
    std::fs::write(&conditions, condition(false, &["loop", "lopp"], "")).expect("conditions");
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({"main": [{"blocks": [text("Done.")]}]}).to_string(),
    )
    .expect("the script");
    let out = dir.path().join("batch");
    let output = run(&script, &conditions, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    for part in ["conditions.toml", "[G]", "unknown guard `lopp`"] {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
    assert!(!out.join("runs").exists(), "nothing ran");
}
