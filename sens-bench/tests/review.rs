//! `sens-bench review rules|test|run|dismiss` through the binary, with the
//! scripted model server as the decision model (its Messages API and its
//! decisions endpoint), answering from a script's `decisions`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use sens_bench::agent::model_server::{ModelServer, Route};
use sens_bench::agent::script::{Decision, Script};
use serde_json::{Value, json};

use common::files::write;

/// A rule in YAML; `marks` end up in its cases' diffs so a script can tell them apart.
fn rule(id: &str, kind: &str, wording: &str, marks: (&str, &str)) -> String {
    format!(
        "  - id: {id}\n    applies: ['**/*.py']\n    {kind}: {wording}\n    fix: Raise the error.\n    \
         reference: ref.py\n    cases:\n      violating:\n        - file: x.py\n          diff: \"+{}\\n\"\n      \
         compliant:\n        - file: x.py\n          diff: \"+{}\\n\"\n",
        marks.0, marks.1
    )
}

fn rules_file(root: &Path, folder: &str, rules: &[String]) {
    let prefix = if folder.is_empty() {
        String::new()
    } else {
        format!("{folder}/")
    };
    write(
        root,
        &format!("{prefix}docs/review/rules.yaml"),
        &format!("rules:\n{}", rules.concat()),
    );
    write(
        root,
        &format!("{prefix}ref.py"),
        "def parse(raw):\n    raise ValueError(raw)\n",
    );
}

fn decision(when: &str, reply: Value) -> Decision {
    Decision {
        when: when.into(),
        reply,
        delay_ms: 0,
    }
}

async fn server(decisions: Vec<Decision>) -> ModelServer {
    let script = Script {
        decisions,
        ..Script::default()
    };
    ModelServer::start(script, Path::new("/unused"))
        .await
        .unwrap()
}

/// Runs the binary off the async threads, against `server`'s Messages API (or,
/// with `endpoint`, its decisions endpoint).
async fn sens_bench(args: &[&str], server: Option<(&ModelServer, bool)>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sens-bench"));
    command
        .args(args)
        .env_remove("SENS_DECISIONS_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY");
    match server {
        Some((server, false)) => {
            command
                .env("ANTHROPIC_BASE_URL", server.base_url())
                .env("ANTHROPIC_API_KEY", "test-key");
        }
        Some((server, true)) => {
            command.env(
                "SENS_DECISIONS_URL",
                format!("{}/v1/decisions", server.base_url()),
            );
        }
        None => {}
    }
    let output = tokio::task::spawn_blocking(move || command.output().expect("sens-bench starts"))
        .await
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn nested_rules_apply_down_their_folder_and_the_sixteenth_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let none = ("v", "c");
    rules_file(
        root,
        "",
        &[rule("everywhere", "statement", "Errors are raised.", none)],
    );
    rules_file(
        root,
        "a",
        &[rule("in-a", "mistake", "An error becomes None.", none)],
    );
    rules_file(
        root,
        "a/c",
        &[rule("in-c", "mistake", "A product branch.", none)],
    );
    let root_text = root.to_str().unwrap();

    let output = sens_bench(&["review", "rules", root_text, "--files", "a/b/x.py"], None).await;
    assert!(output.status.success());
    let text = stdout(&output);
    assert!(text.starts_with("a/b/x.py: 2 rules\n"), "{text}");
    assert!(
        text.contains("- everywhere (untested): do: Errors are raised."),
        "{text}"
    );
    assert!(
        text.contains("- in-a (untested): avoid: An error becomes None."),
        "{text}"
    );
    assert!(
        text.contains("reference: a/ref.py\n  from: a/docs/review/rules.yaml"),
        "{text}"
    );
    assert!(
        !text.contains("in-c"),
        "a sibling folder's rule applied: {text}"
    );

    let more: Vec<String> = (0..14)
        .map(|i| rule(&format!("b{i}"), "statement", "Keep it short.", none))
        .collect();
    rules_file(root, "a/b", &more);
    let output = sens_bench(&["review", "rules", root_text, "--files", "a/b/x.py"], None).await;
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("16 rules apply to a/b/x.py, more than 15"),
        "{err}"
    );

    write(
        root,
        "a/docs/review/rules.yaml",
        "rules:\n  - id: bad\n    applies: ['*']\n    oops: 1\n",
    );
    let output = sens_bench(&["review", "rules", root_text, "--files", "a/x.py"], None).await;
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("a/docs/review/rules.yaml: rule `bad`")
            && err.contains("unknown field `oops`"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn review_test_passes_a_wide_margin_fails_a_narrow_one_and_sees_edits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    rules_file(
        root,
        "",
        &[
            rule(
                "wide",
                "mistake",
                "An error becomes None.",
                ("WIDE_BAD", "WIDE_GOOD"),
            ),
            rule(
                "narrow",
                "statement",
                "Errors are raised.",
                ("NARROW_BAD", "NARROW_GOOD"),
            ),
        ],
    );
    // A mistake's probability is flipped: 0.8 -> 0.2 and 0.2 -> 0.8, 0.6 apart.
    let server = server(vec![
        decision("WIDE_BAD", json!({"wide": 0.8})),
        decision("WIDE_GOOD", json!({"wide": 0.2})),
        decision("NARROW_BAD", json!({"narrow": 0.35})),
        decision("NARROW_GOOD", json!({"narrow": 0.65})),
    ])
    .await;
    let root_text = root.to_str().unwrap();
    let output = sens_bench(&["review", "test", root_text], Some((&server, false))).await;
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("pass wide: margin 0.60 (violating 0.20; compliant 0.80); was untested"),
        "{text}"
    );
    assert!(text.contains("FAIL narrow: margin 0.30"), "{text}");
    let decisions = server
        .requests()
        .iter()
        .filter(|r| r.route == Route::Decision)
        .count();
    assert_eq!(decisions, 4, "each case is scored alone");

    let written = std::fs::read_to_string(root.join("docs/review/rules.yaml")).unwrap();
    let yaml: Value = yaml_serde::from_str(&written).unwrap();
    assert_eq!(
        yaml["rules"][0]["tested"]["margin"]
            .as_f64()
            .map(|m| (m * 100.0).round()),
        Some(60.0)
    );
    assert_eq!(
        yaml["rules"][0]["tested"]["hash"].as_str().map(str::len),
        Some(64)
    );
    assert!(yaml["rules"][1].get("tested").is_none(), "{written}");

    let only = sens_bench(
        &["review", "test", root_text, "--rule", "wide"],
        Some((&server, false)),
    )
    .await;
    let text = stdout(&only);
    assert_eq!(only.status.code(), Some(0), "{text}");
    assert!(
        text.contains("was tested, margin 0.60") && !text.contains("narrow"),
        "{text}"
    );
    let unknown = sens_bench(
        &["review", "test", root_text, "--rule", "nope"],
        Some((&server, false)),
    )
    .await;
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no rule `nope`"));

    let listed = |output: Output| stdout(&output);
    let text = listed(sens_bench(&["review", "rules", root_text, "--files", "x.py"], None).await);
    assert!(text.contains("- wide (tested, margin 0.60)"), "{text}");
    std::fs::write(
        root.join("docs/review/rules.yaml"),
        written.replace("An error becomes None.", "An error is swallowed into None."),
    )
    .unwrap();
    let text = listed(sens_bench(&["review", "rules", root_text, "--files", "x.py"], None).await);
    assert!(
        text.contains("- wide (stale (edited since its test))"),
        "{text}"
    );
}

/// A project with three rules and a committed baseline, then a change to `src/x.py`.
fn changed_project(root: &Path) {
    rules_file(
        root,
        "",
        &[
            rule("no-none", "mistake", "An error becomes None.", ("v", "c")),
            rule("raises", "statement", "Errors are raised.", ("v", "c")),
            rule("short", "statement", "Functions stay short.", ("v", "c")),
        ],
    );
    write(root, "src/x.py", "def f(raw):\n    return int(raw)\n");
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "baseline"]);
    write(
        root,
        "src/x.py",
        "def f(raw):\n    try:\n        return int(raw)\n    except ValueError:\n        return None\n",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn review_run_flips_mistakes_sorts_hints_and_honours_a_dismissal() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    changed_project(root);
    write(root, "summary.txt", "Parse leniently.\n");
    let server = server(vec![decision(
        "return None",
        json!({"no-none": 0.9, "raises": 0.5, "short": 0.95}),
    )])
    .await;
    let root_text = root.to_str().unwrap();
    let summary = root.join("summary.txt");
    let run = [
        "review",
        "run",
        root_text,
        "--summary",
        summary.to_str().unwrap(),
    ];
    let text = stdout(&sens_bench(&run, Some((&server, false))).await);
    let expected_hints = "hints (scores under 80%, worst first):\n\
        - 0.10 no-none in src/x.py: An error becomes None.\n  fix: Raise the error.\n  reference: ref.py\n\
        - 0.50 raises in src/x.py: Errors are raised.\n";
    assert!(text.starts_with(expected_hints), "{text}");
    assert!(
        text.ends_with("compliance 1/3 rules at 80% or above\n"),
        "{text}"
    );
    let request = server.requests().last().unwrap().body.clone().unwrap();
    let user = request["messages"][0]["content"].as_str().unwrap();
    assert!(
        user.contains("Parse leniently."),
        "the summary is sent: {user}"
    );
    assert!(
        user.contains("+        return None"),
        "the diff is sent: {user}"
    );
    assert!(
        user.contains("raise ValueError(raw)"),
        "the reference is sent: {user}"
    );
    assert!(
        user.contains("- no-none: [the project, files **/*.py] Does the change make this mistake"),
        "{user}"
    );

    let output = sens_bench(
        &[
            "review",
            "dismiss",
            root_text,
            "no-none",
            "parsing is lenient here",
        ],
        None,
    )
    .await;
    assert!(output.status.success(), "{}", stdout(&output));
    let text = stdout(&sens_bench(&run, Some((&server, false))).await);
    assert!(
        !text.contains("- 0.10 no-none"),
        "a dismissed hint is listed again: {text}"
    );
    assert!(
        text.contains("dismissed: 0.10 no-none in src/x.py: parsing is lenient here ("),
        "{text}"
    );
    assert!(text.contains("- 0.50 raises"), "{text}");

    // The decisions endpoint answers the same questions the same way.
    let output = sens_bench(
        &[&run[..], &["--format", "json"]].concat(),
        Some((&server, true)),
    )
    .await;
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["compliance"], json!({"passing": 1, "rules": 3}));
    assert_eq!(
        report["dismissed"][0]["dismissal"]["reason"],
        "parsing is lenient here"
    );
    assert_eq!(server.requests().last().unwrap().uri, "/v1/decisions");
    let output = sens_bench(&["review", "dismiss", root_text, "short", "x"], None).await;
    assert_eq!(
        output.status.code(),
        Some(2),
        "a rule without a hint is not dismissed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decider_that_times_out_or_answers_malformed_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    changed_project(root);
    let slow = Decision {
        delay_ms: 5_000,
        ..decision(
            "return None",
            json!({"no-none": 0.9, "raises": 0.5, "short": 0.95}),
        )
    };
    let server_slow = server(vec![slow]).await;
    let root_text = root.to_str().unwrap();
    let run = ["review", "run", root_text, "--timeout-s", "1"];
    let output = sens_bench(&run, Some((&server_slow, false))).await;
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.starts_with("review did not run: "), "{text}");
    assert!(text.contains("did not answer within 1s"), "{text}");

    let server_bad = server(vec![decision(
        "return None",
        json!("{\"no-none\": 0.9, \"raises\": 0.5"),
    )])
    .await;
    let output = sens_bench(&run, Some((&server_bad, false))).await;
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).contains("review did not run: the decision model's answer is malformed")
    );

    let output = sens_bench(
        &[&run[..], &["--budget", "10"]].concat(),
        Some((&server_bad, false)),
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("over the budget of 10: narrow it"), "{err}");
}

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `total` that swallows a bad amount: what the reviewer is scripted to find.
const SWALLOWING: &str = "from util import parse_amount\n\n\ndef total(items):\n    \"\"\"The sum, in cents, of typed amounts.\"\"\"\n    result = 0\n    for item in items:\n        try:\n            result += parse_amount(item)\n        except ValueError:\n            pass\n    return result\n";
const RAISING: &str = "from util import parse_amount\n\n\ndef total(items):\n    \"\"\"The sum, in cents, of typed amounts.\"\"\"\n    return sum(parse_amount(item) for item in items)\n";
const SWALLOW_QUOTE: &str = "except ValueError:\n            pass";

fn write_block(content: &str) -> Value {
    json!({"type": "tool_use", "name": "Write", "input": {"file_path": "src/report.py", "content": content}})
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// The scripted reviewer: one finding quoting the swallowed error at
/// `confidence`, and one quoting text that is in no diff.
fn reviewer_reply(confidence: f64) -> Value {
    json!([{"when": "Review this change.", "reply": {"findings": [
        {"message": "A bad amount is silently skipped.", "quote": SWALLOW_QUOTE, "confidence": confidence},
        {"message": "Returns None on error.", "quote": "return None", "confidence": 0.99},
    ]}}])
}

/// Plays `script` on the `amount-total` task of `tasks` under an engine condition
/// with `review = mode` in its Stop audit; returns the Stop lines of the ledger
/// and the record's hooks.
fn play_reviewed(name: &str, script: &Value, tasks: &Path, mode: &str) -> (Vec<Value>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join(format!("{name}.json"));
    std::fs::write(&script_path, script.to_string()).unwrap();
    let conditions = dir.path().join("conditions.toml");
    std::fs::write(
        &conditions,
        format!("[R]\ndescription = \"the engine reviewed\"\ncanon = false\nengine = true\nreview = \"{mode}\"\n"),
    )
    .unwrap();
    let out = dir.path().join("batch");
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("run")
        .arg("--tasks")
        .arg(tasks)
        .args(["--task", "amount-total", "--condition", "R", "--reps", "1"])
        .arg("--agent")
        .arg(format!("script:{}", script_path.display()))
        .arg("--conditions")
        .arg(&conditions)
        .arg("--out")
        .arg(&out)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ledger = std::fs::read_to_string(out.join("runs/amount-total/R/1/hooks.jsonl")).unwrap();
    let stops = ledger
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["event"] == "Stop")
        .collect();
    let runs = std::fs::read_to_string(out.join("runs.jsonl")).unwrap();
    let record: Value = serde_json::from_str(runs.lines().next().unwrap()).unwrap();
    assert_eq!(record["status"], "ok", "{record}");
    (stops, record["hooks"].clone())
}

fn quotes(findings: &Value) -> Vec<&str> {
    findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["quote"].as_str().unwrap())
        .collect()
}

#[test]
fn the_stop_reviewer_blocks_at_high_confidence_hints_below_and_drops_false_quotes() {
    // Blocks once: the fix removes the quoted lines, so the same answer then
    // quotes nothing in the diff and every finding is dropped.
    let blocking = json!({
        "main": [
            {"blocks": [write_block(SWALLOWING)]},
            {"blocks": [text_block("Added total().")]},
            {"blocks": [write_block(RAISING)]},
            {"blocks": [text_block("A bad amount now raises.")]},
        ],
        "decisions": reviewer_reply(0.95),
    });
    // A hint continues the turn once (Stop additionalContext); nothing changed
    // since the approved point at the next Stop, so no review runs then.
    let hinting = json!({
        "main": [
            {"blocks": [write_block(SWALLOWING)]},
            {"blocks": [text_block("Added total().")]},
            {"blocks": [text_block("Noted.")]},
        ],
        "decisions": reviewer_reply(0.6),
    });
    let tasks = repo_root().join("bench/scenarios/tasks");
    let (blocked, hinted) = std::thread::scope(|scope| {
        let blocked = scope.spawn(|| play_reviewed("blocking", &blocking, &tasks, "reviewer"));
        let hinted = scope.spawn(|| play_reviewed("hinting", &hinting, &tasks, "reviewer"));
        (blocked.join().unwrap(), hinted.join().unwrap())
    });

    let (stops, hooks) = blocked;
    let verdicts: Vec<&str> = stops
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["block", "pass"], "{stops:#?}");
    let first = &stops[0]["review"];
    assert_eq!(quotes(&first["blocking"]), [SWALLOW_QUOTE]);
    assert_eq!(
        quotes(&first["dropped"]),
        ["return None"],
        "a quote absent from the diff"
    );
    let reason = stops[0]["output"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("A bad amount is silently skipped."),
        "{reason}"
    );
    assert!(!reason.contains("Returns None"), "{reason}");
    assert_eq!(
        quotes(&stops[1]["review"]["dropped"]),
        [SWALLOW_QUOTE, "return None"]
    );
    assert_eq!(hooks["blocks"], 1);
    let review = &hooks["review"];
    assert_eq!(
        (review["calls"].as_u64(), review["blocking"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (review["dropped"].as_u64(), review["hints"].as_u64()),
        (Some(3), Some(0))
    );
    let tokens: u64 = stops
        .iter()
        .map(|s| s["review"]["tokens"].as_u64().unwrap())
        .sum();
    assert!(
        tokens > 0 && review["tokens"].as_u64() == Some(tokens),
        "{review}"
    );

    let (stops, hooks) = hinted;
    let verdicts: Vec<&str> = stops
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["pass", "pass"], "{stops:#?}");
    let context = stops[0]["output"]["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", stops[0]));
    assert!(
        context.contains("A bad amount is silently skipped."),
        "{context}"
    );
    assert_eq!(quotes(&stops[0]["review"]["hints"]), [SWALLOW_QUOTE]);
    assert!(
        stops[1].get("review").is_none(),
        "nothing changed: no review"
    );
    assert_eq!(hooks["blocks"], 0);
    assert_eq!(hooks["review"]["calls"], 1);
    assert_eq!(hooks["review"]["hints"], 1);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn under_both_the_stop_asks_the_review_rules_and_the_reviewer() {
    // The amounts project with a review rule, and the task pointing at it.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    copy_dir(
        &repo_root().join("bench/scenarios/projects/amounts"),
        &project,
    );
    write(
        &project,
        "docs/review/rules.yaml",
        "rules:\n  - id: no-swallow\n    applies: ['src/**']\n    mistake: A bad amount is skipped or \
         turned into a default.\n    fix: Let parse_amount's ValueError propagate.\n    reference: src/util.py\n    \
         cases:\n      violating: [{file: src/report.py, diff: '+except ValueError: pass'}]\n      \
         compliant: [{file: src/report.py, diff: '+return sum(parse_amount(i) for i in items)'}]\n",
    );
    let task = dir.path().join("tasks/amount-total");
    copy_dir(
        &repo_root().join("bench/scenarios/tasks/amount-total"),
        &task,
    );
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    let toml = toml.replace("../../projects/amounts", project.to_str().unwrap());
    std::fs::write(task.join("task.toml"), toml).unwrap();

    // The reviewer finds nothing; the rule is broken while the diff swallows
    // the error (0.97 that the mistake is made: confidence 0.97) and kept after.
    let script = json!({
        "main": [
            {"blocks": [write_block(SWALLOWING)]},
            {"blocks": [text_block("Added total().")]},
            {"blocks": [write_block(RAISING)]},
            {"blocks": [text_block("A bad amount now raises.")]},
        ],
        "decisions": [
            {"when": "Review this change.", "reply": {"findings": []}},
            {"when": "except ValueError", "reply": {"no-swallow": 0.97}},
            {"when": "Does the change make this mistake", "reply": {"no-swallow": 0.05}},
        ],
    });
    let (stops, hooks) = play_reviewed("both", &script, &dir.path().join("tasks"), "both");
    let verdicts: Vec<&str> = stops
        .iter()
        .map(|s| s["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["block", "pass"], "{stops:#?}");
    let blocking = &stops[0]["review"]["blocking"][0];
    assert_eq!(blocking["rule"], "no-swallow");
    assert!(
        (blocking["confidence"].as_f64().unwrap() - 0.97).abs() < 1e-9,
        "{blocking}"
    );
    let reason = stops[0]["output"]["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "Let parse_amount's ValueError propagate. (see src/util.py, in src/report.py)"
        ),
        "{reason}"
    );
    assert_eq!(stops[1]["review"]["blocking"], json!([]));
    assert_eq!(
        hooks["review"]["calls"], 4,
        "rules and reviewer at each Stop: {hooks}"
    );
}

/// A rules file whose one rule points at `reference`.
fn rule_with_reference(reference: &str) -> String {
    rule("peek", "mistake", "An error becomes None.", ("v", "c")).replace("ref.py", reference)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reference_outside_the_project_is_refused_and_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET\n").unwrap();
    let root = dir.path().join("project");
    changed_project(&root);
    std::os::unix::fs::symlink(&secret, root.join("inside.txt")).unwrap();
    std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
    let server = server(vec![decision("return None", json!({"peek": 0.9}))]).await;
    let root_text = root.to_str().unwrap();
    for reference in [
        secret.to_str().unwrap(),
        "../secret.txt",
        "inside.txt",
        "up/secret.txt",
    ] {
        write(
            &root,
            "docs/review/rules.yaml",
            &format!("rules:\n{}", rule_with_reference(reference)),
        );
        for args in [
            &["review", "rules", root_text, "--files", "src/x.py"][..],
            &["review", "run", root_text],
        ] {
            let output = sens_bench(args, Some((&server, false))).await;
            let err = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{reference}: {err}");
            assert!(
                err.contains(&format!(
                    "docs/review/rules.yaml: rule `peek`: field `reference`: `{reference}`"
                )) && err.contains("the project"),
                "{reference}: {err}"
            );
        }
    }
    // A rules file that is a link to one outside is refused too.
    let outside_rules = dir.path().join("rules.yaml");
    std::fs::write(
        &outside_rules,
        format!("rules:\n{}", rule_with_reference("ref.py")),
    )
    .unwrap();
    std::fs::remove_file(root.join("docs/review/rules.yaml")).unwrap();
    std::os::unix::fs::symlink(&outside_rules, root.join("docs/review/rules.yaml")).unwrap();
    let output = sens_bench(&["review", "run", root_text], Some((&server, false))).await;
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("docs/review/rules.yaml: resolves to") && err.contains("outside the project"),
        "{err}"
    );
    std::fs::remove_file(root.join("docs/review/rules.yaml")).unwrap();
    assert!(
        server.requests().is_empty(),
        "a refused rules file sent a request"
    );

    // A reference reached through `..` that stays inside the project is kept.
    std::fs::remove_file(root.join("inside.txt")).unwrap();
    std::fs::remove_file(root.join("up")).unwrap();
    write(
        &root,
        "docs/review/rules.yaml",
        &format!("rules:\n{}", rule_with_reference("src/../ref.py")),
    );
    let output = sens_bench(&["review", "run", root_text], Some((&server, false))).await;
    assert!(output.status.success(), "{}", stdout(&output));
    let request = server.requests().last().unwrap().body.clone().unwrap();
    let user = request["messages"][0]["content"].as_str().unwrap();
    assert!(user.contains("raise ValueError(raw)"), "{user}");
}

/// A rules file as a person writes it: comments, quoting of their choice, and
/// the rules as a top-level list.
const COMMENTED: &str = "# Review rules of the project.\n\
- id: wide # the one rule\n  \
  applies: [\"**/*.py\"]\n  \
  # Say it as a mistake.\n  \
  mistake: 'An error becomes None.'\n  \
  fix: \"Raise the error.\"\n  \
  reference: ref.py\n  \
  cases:\n    \
    violating:\n      - file: x.py\n        diff: \"+WIDE_BAD\\n\"\n    \
    compliant:\n      - file: x.py\n        diff: \"+WIDE_GOOD\\n\"\n\
# Rules below are drafts.\n";

/// `text` without the `tested` block `review test` writes at `indent`.
fn without_tested(text: &str, indent: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line == format!("{indent}tested:") {
            while lines
                .peek()
                .is_some_and(|l| l.starts_with(&format!("{indent}  ")))
            {
                lines.next();
            }
        } else {
            out.push(line);
        }
    }
    out.join("\n") + "\n"
}

#[tokio::test(flavor = "multi_thread")]
async fn review_test_edits_only_the_tested_block_and_rounds_the_margin() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "docs/review/rules.yaml", COMMENTED);
    write(
        root,
        "ref.py",
        "def parse(raw):\n    raise ValueError(raw)\n",
    );
    // 0.95 - (1 - 0.95) is 0.8999999999999999 in floating point.
    let wide_server = server(vec![
        decision("WIDE_BAD", json!({"wide": 0.95})),
        decision("WIDE_GOOD", json!({"wide": 0.05})),
    ])
    .await;
    let root_text = root.to_str().unwrap();
    let path = root.join("docs/review/rules.yaml");
    for round in 0..2 {
        let output = sens_bench(&["review", "test", root_text], Some((&wide_server, false))).await;
        assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(without_tested(&written, "  "), COMMENTED, "round {round}");
        assert!(
            written.contains("\n  tested:\n    margin: 0.90\n    hash: "),
            "round {round}: {written}"
        );
        assert!(
            written.ends_with("# Rules below are drafts.\n"),
            "{written}"
        );
    }
    let text = stdout(&sens_bench(&["review", "rules", root_text, "--files", "x.py"], None).await);
    assert!(text.contains("- wide (tested, margin 0.90)"), "{text}");

    // Under `rules:`, a second rule keeps its place, and a rule written after
    // the tested one is not touched.
    let wrapped = format!(
        "rules: # every rule\n{}{}",
        rule(
            "first",
            "mistake",
            "An error becomes None.",
            ("WIDE_BAD", "WIDE_GOOD")
        ),
        rule(
            "second",
            "statement",
            "Errors are raised.",
            ("N_BAD", "N_GOOD")
        ),
    );
    write(root, "docs/review/rules.yaml", &wrapped);
    let wrapped_server = server(vec![
        decision("WIDE_BAD", json!({"first": 0.95})),
        decision("WIDE_GOOD", json!({"first": 0.05})),
        decision("N_BAD", json!({"second": 0.5})),
        decision("N_GOOD", json!({"second": 0.6})),
    ])
    .await;
    let output = sens_bench(
        &["review", "test", root_text],
        Some((&wrapped_server, false)),
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(without_tested(&written, "    "), wrapped);
    let first_tested = written.find("tested:").unwrap();
    assert!(
        first_tested < written.find("id: second").unwrap(),
        "{written}"
    );
}
