//! Sens in a person's own Claude Code: `sens install` writes the hooks, the
//! pinned CLI runs in plain `-p` mode against the scripted model server, and the
//! resident engine (started by the first hook call) judges it.

mod common;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use sens_bench::agent::claude::pinned_claude_bin;
use sens_bench::agent::model_server::RecordedRequest;
use sens_bench::agent::script::{Block, Script, Turn};
use sens_bench::exec::group::kill_group;
use sens_bench::measure::ledger::{LedgerLine, ledger_lines, read_ledger};
use sens_engine::session::ledger::Verdict;
use serde_json::{Value, json};

use common::cli::{amounts_project, cli_env, copied_report, git, play, repo_root, write_report};

const SENS: &str = env!("CARGO_BIN_EXE_sens");

/// A copy of the scenario project `amounts` (its `parse_amount`) under git.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        amounts_project(&dir.path().join("p"));
        Project { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("p")
    }

    fn sens(&self, args: &[&str]) -> Output {
        let out = Command::new(SENS)
            .args(args)
            .arg(self.root())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        eprintln!(
            "sens {args:?}: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn ledger(&self) -> Vec<LedgerLine> {
        read_ledger(&self.root().join(".sens/hooks.jsonl")).unwrap()
    }

    fn engine_pid(&self) -> String {
        std::fs::read_to_string(self.root().join(".sens/engine.pid")).unwrap()
    }

    /// Runs the pinned CLI once in `-p` mode on the project, against `script`;
    /// returns the requests the model server received.
    async fn claude(&self, script: Script) -> Vec<RecordedRequest> {
        let log = self.dir.path().join("claude.log");
        play(&self.root(), self.cli_env(), log, script).await
    }
}

impl Project {
    /// The CLI's environment (`common::cli::cli_env`), with this build's `sens`
    /// first on PATH (the plugin's hooks call it by name).
    fn cli_env(&self) -> Vec<(String, String)> {
        let bin = Path::new(SENS).parent().unwrap();
        cli_env(&self.dir.path().join("home"), &self.root(), bin)
    }

    /// `claude plugin ARGS` with the CLI's environment; it must succeed.
    fn plugin(&self, args: &[&str]) {
        let binary = pinned_claude_bin(&repo_root()).unwrap_or_else(|err| panic!("{err:#}"));
        let out = Command::new(binary)
            .arg("plugin")
            .args(args)
            .envs(self.cli_env())
            .current_dir(self.root())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "claude plugin {args:?}: {said}");
    }
}

/// Ends the engine the hooks started, whatever the test's outcome.
impl Drop for Project {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.root().join(".sens/engine.pid")) {
            let _ = kill_group(pid.trim().parse().unwrap_or(0));
            common::processes::wait_until_ended(&pid);
        }
    }
}

fn bash(command: &str) -> Block {
    Block::tool("Bash", json!({"command": command}))
}

fn done() -> Turn {
    Turn::new(vec![Block::text("Done.")])
}

fn stops(ledger: &[LedgerLine]) -> Vec<Verdict> {
    ledger
        .iter()
        .filter(|l| l.event == "Stop")
        .map(|l| l.verdict)
        .collect()
}

fn install(project: &Project) {
    let out = project.sens(&["install", "--idle-secs", "120"]);
    assert!(out.status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_is_denied_a_stop_with_a_copy_on_disk_blocked_and_the_third_round_pauses_for_approve()
 {
    let project = Project::new();
    install(&project);
    let copy = copied_report();
    let heredoc = format!("cat > src/report.py <<'SENS_EOF'\n{copy}SENS_EOF");
    project
        .claude(Script {
            main: vec![
                Turn::new(vec![write_report(&copy)]),
                Turn {
                    blocks: vec![Block::text("Written.")],
                    on_error: vec![bash(&heredoc)],
                    on_context: None,
                },
                done(),
                done(),
                done(),
                done(),
            ],
            agent: Vec::new(),
            decisions: Vec::new(),
        })
        .await;
    let ledger = project.ledger();
    let write = ledger
        .iter()
        .find(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("Write"))
        .unwrap();
    assert_eq!(write.verdict, Verdict::Deny);
    let copied = write.findings.iter().find(|f| f.blocks).unwrap();
    assert_eq!(copied.existing.as_ref().unwrap().file, "src/util.py");
    assert_eq!(
        std::fs::read_to_string(project.root().join("src/report.py")).unwrap(),
        copy,
        "the copy reached the disk through Bash"
    );
    assert_eq!(
        stops(&ledger),
        [Verdict::Block, Verdict::Block, Verdict::Paused]
    );
    let pause = ledger.iter().rfind(|l| l.event == "Stop").unwrap();
    let message = pause.output["systemMessage"].as_str().unwrap();
    assert!(message.contains("src/report.py"), "{message}");
    assert!(message.contains("`sens approve "), "{message}");
    assert!(message.contains("`sens reject "), "{message}");

    let status = project.sens(&["status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("paused"));
    let approved_before = git(&project.root(), &["rev-parse", "refs/sens/approved"]);
    assert!(project.sens(&["approve"]).status.success());
    assert_ne!(
        git(&project.root(), &["rev-parse", "refs/sens/approved"]),
        approved_before
    );
    assert_eq!(
        git(
            &project.root(),
            &["show", "refs/sens/approved:src/report.py"]
        ),
        copy,
        "the approved state holds the copy the person approved"
    );
    assert_eq!(project.ledger().last().unwrap().verdict, Verdict::Approved);
    let status = project.sens(&["status"]);
    assert!(!String::from_utf8_lossy(&status.stdout).contains("paused"));
}

/// Sens as a Claude Code plugin (`plugin/`): installed with the pinned CLI from
/// the repository's local marketplace, its hooks deny the copy; uninstalled, the
/// same session writes it and the engine hears nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_plugin_from_the_local_marketplace_answers_the_hooks_until_it_is_uninstalled() {
    let project = Project::new();
    let marketplace = repo_root().join("plugin");
    project.plugin(&["marketplace", "add", marketplace.to_str().unwrap()]);
    project.plugin(&["install", "sens@sens-local"]);
    let copy = copied_report();
    let session = || Script {
        main: vec![
            Turn::new(vec![Block::tool(
                "mcp__plugin_sens_sens__find_symbol",
                json!({"name": "parse_amount"}),
            )]),
            Turn::new(vec![write_report(&copy)]),
            done(),
            done(),
            done(),
        ],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    // A plugin cannot grant its own tools: the person allows them once, as here
    // in the user's settings the CLI wrote.
    let settings = project.dir.path().join("home/.claude/settings.json");
    let mut user: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    user["permissions"]["allow"] = json!(["mcp__plugin_sens_sens"]);
    std::fs::write(&settings, user.to_string()).unwrap();
    let requests = project.claude(session()).await;
    let (_, answer) = first_tool_result(&requests);
    let found: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer}"));
    assert_eq!(found["definitions"][0]["file"], "src/util.py", "{answer}");
    let ledger = project.ledger();
    let write = ledger
        .iter()
        .find(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("Write"))
        .expect("the plugin's PreToolUse hook reached the engine");
    assert_eq!(write.verdict, Verdict::Deny);
    assert!(ledger.iter().any(|l| l.event == "UserPromptSubmit"));
    assert!(ledger.iter().any(|l| l.event == "Stop"));
    assert!(ledger.iter().any(|l| l.event == "ToolCall"));
    assert!(!project.root().join("src/report.py").exists());

    project.plugin(&["uninstall", "sens@sens-local"]);
    let heard = project.ledger().len();
    project.claude(session()).await;
    assert_eq!(
        std::fs::read_to_string(project.root().join("src/report.py")).unwrap(),
        copy,
        "without the plugin the copy is written"
    );
    assert_eq!(project.ledger().len(), heard, "no hook after uninstall");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_killed_mid_session_is_restarted_by_the_next_hook_and_keeps_the_approved_point() {
    let project = Project::new();
    install(&project);
    let killed = project.dir.path().join("killed.pid");
    let kill = format!(
        "pid=$(cat .sens/engine.pid) && kill -9 $pid && echo $pid > {}",
        killed.display()
    );
    project
        .claude(Script {
            main: vec![
                Turn::new(vec![bash(&kill)]),
                Turn::new(vec![write_report(&copied_report())]),
                done(),
                done(),
            ],
            agent: Vec::new(),
            decisions: Vec::new(),
        })
        .await;
    let killed = std::fs::read_to_string(killed).unwrap();
    common::processes::wait_until_ended(&killed);
    assert_ne!(killed.trim(), project.engine_pid().trim());
    let ledger = ledger_lines(&project.root().join(".sens")).unwrap();
    let line = |event: &str| ledger.iter().rfind(|l| l["event"] == event).unwrap();
    let write = ledger
        .iter()
        .find(|l| l["event"] == "PreToolUse" && l["tool"] == "Write")
        .unwrap();
    assert_eq!(write["verdict"], "deny", "the new engine judges");
    let stop = line("Stop");
    assert_eq!(stop["verdict"], "pass");
    assert_eq!(
        stop["approved_tree"],
        line("UserPromptSubmit")["tree_before"],
        "the restarted engine audits from the approved point of the first one"
    );
}

/// The id and text of the last tool result the model was sent.
fn last_tool_result(requests: &[RecordedRequest]) -> (Value, String) {
    tool_result_text(
        tool_results(requests)
            .last()
            .expect("a tool result reached the model"),
    )
}

fn first_tool_result(requests: &[RecordedRequest]) -> (Value, String) {
    tool_result_text(
        tool_results(requests)
            .first()
            .expect("a tool result reached the model"),
    )
}

/// Every tool result the model received, in the order of its requests.
fn tool_results(requests: &[RecordedRequest]) -> Vec<&Value> {
    requests
        .iter()
        .filter_map(|r| r.body.as_ref()?["messages"].as_array())
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .collect()
}

/// A tool result's id and text.
fn tool_result_text(result: &Value) -> (Value, String) {
    let text = match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => panic!("a tool result's content: {other}"),
    };
    (result["tool_use_id"].clone(), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_installed_mcp_server_answers_find_symbol_from_the_resident_engine_in_the_ledger() {
    let project = Project::new();
    install(&project);
    let requests = project
        .claude(Script {
            main: vec![
                Turn::new(vec![Block::tool(
                    "mcp__sens__find_symbol",
                    json!({"name": "parse_amount"}),
                )]),
                done(),
            ],
            agent: Vec::new(),
            decisions: Vec::new(),
        })
        .await;
    let (tool_use_id, answer) = last_tool_result(&requests);
    let found: Value = serde_json::from_str(&answer).unwrap_or_else(|_| panic!("{answer}"));
    let first = &found["definitions"][0];
    assert_eq!(
        (first["file"].as_str(), first["line"].as_u64()),
        (Some("src/util.py"), Some(4)),
        "{answer}"
    );
    assert!(
        first["signature"]
            .as_str()
            .unwrap()
            .starts_with("def parse_amount("),
        "{answer}"
    );
    let ledger = project.ledger();
    let call = ledger
        .iter()
        .find(|l| l.event == "ToolCall")
        .expect("the call is a ledger line");
    assert_eq!(call.tool.as_deref(), Some("find_symbol"));
    assert_eq!(call.verdict, Verdict::Answer);
    assert_eq!(call.output["definitions"][0]["file"], "src/util.py");
    assert!(
        ledger
            .iter()
            .any(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("mcp__sens__find_symbol")),
        "the hooks and the tool are the same session"
    );
    assert_eq!(
        call.input["tool_use_id"], tool_use_id,
        "the answer is filed under the agent's tool call"
    );
}

#[test]
fn the_mcp_server_answers_batches_and_malformed_messages_as_json_rpc_says() {
    let project = Project::new();
    let lines = [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]"#,
        "5",
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
        "[]",
        "{not json",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ];
    let mut child = Command::new(SENS)
        .arg("mcp")
        .arg(project.root())
        .args(["--idle-secs", "5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = lines.join("\n") + "\n";
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ids_and_codes =
        |response: &Value| (response["id"].clone(), response["error"]["code"].clone());
    assert_eq!(
        responses.len(),
        6,
        "one line per message but the notification: {responses:?}"
    );
    let batch = responses[0]
        .as_array()
        .expect("a batch is answered with an array");
    assert_eq!(batch.len(), 2, "{batch:?}");
    assert_eq!(batch[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(batch[1]["id"], "b");
    assert!(batch[1]["result"]["tools"].is_array());
    for response in &responses[1..4] {
        assert_eq!(
            ids_and_codes(response),
            (Value::Null, json!(-32600)),
            "{response}"
        );
    }
    assert_eq!(ids_and_codes(&responses[4]), (Value::Null, json!(-32700)));
    assert_eq!(
        responses[5],
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[test]
fn a_torn_or_non_utf8_ledger_line_is_skipped_and_reported_never_glued_onto() {
    let project = Project::new();
    std::fs::create_dir_all(project.root().join(".sens")).unwrap();
    let ledger = project.root().join(".sens/hooks.jsonl");
    std::fs::write(
        &ledger,
        b"\xff\xfe not utf-8\n{\"seq\":2,\"event\":\"Stop\",\"verd",
    )
    .unwrap();
    let status = project.sens(&["status"]);
    assert!(status.status.success());
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("skipped   2 unreadable lines"), "{text}");

    let out = hook_with(&project.root(), &["--idle-secs", "5"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let bytes = std::fs::read(&ledger).unwrap();
    let last = bytes
        .split(|b| *b == b'\n')
        .rfind(|line| !line.is_empty())
        .unwrap();
    let line: Value = serde_json::from_slice(last).unwrap();
    assert_eq!(line["event"], "PreToolUse", "a line of its own");
    let status = project.sens(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("decisions 1 in"), "{text}");
    assert!(text.contains("skipped   2 unreadable lines"), "{text}");
}

const PERSON_SETTINGS: &str = "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n    \"hooks\": {\n        \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]\n    }\n}\n";

const PERSON_MCP: &str =
    "{\"mcpServers\": {\"mine\": {\"command\": \"./my-server\", \"args\": []}}}";

#[test]
fn install_twice_changes_nothing_the_second_time_and_uninstall_restores_byte_for_byte() {
    let project = Project::new();
    let settings = project.root().join(".claude/settings.json");
    let mcp = project.root().join(".mcp.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, PERSON_SETTINGS).unwrap();
    std::fs::write(&mcp, PERSON_MCP).unwrap();
    install(&project);
    let installed = std::fs::read(&settings).unwrap();
    let installed_mcp = std::fs::read(&mcp).unwrap();
    let servers: Value = serde_json::from_slice(&installed_mcp).unwrap();
    assert_eq!(servers["mcpServers"]["mine"]["command"], "./my-server");
    let args = servers["mcpServers"]["sens"]["args"].as_array().unwrap();
    assert_eq!(args[..2], [json!("mcp"), json!(project.root())]);
    let value: Value = serde_json::from_slice(&installed).unwrap();
    assert_eq!(
        value["permissions"]["allow"],
        json!(["Bash(ls)", "mcp__sens"])
    );
    let pre = value["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0]["hooks"][0]["command"], "./mine.sh");
    for event in [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
    ] {
        let command =
            value["hooks"][event].as_array().unwrap().last().unwrap()["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .to_string();
        assert!(command.contains(" hook "), "{event}: {command}");
    }
    install(&project);
    assert_eq!(std::fs::read(&settings).unwrap(), installed);
    assert_eq!(std::fs::read(&mcp).unwrap(), installed_mcp);
    assert!(project.sens(&["uninstall"]).status.success());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), PERSON_SETTINGS);
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), PERSON_MCP);
    assert!(!project.root().join(".sens/install.json").exists());
}

#[test]
fn uninstall_after_the_person_changed_the_file_removes_only_the_hooks_it_added() {
    let project = Project::new();
    install(&project);
    let settings = project.root().join(".claude/settings.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    value["model"] = json!("sonnet");
    std::fs::write(&settings, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    assert!(project.sens(&["uninstall"]).status.success());
    let left: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(left, json!({"model": "sonnet"}));

    let fresh = Project::new();
    install(&fresh);
    assert!(fresh.sens(&["uninstall"]).status.success());
    assert!(
        !fresh.root().join(".claude").exists(),
        "install had created .claude/"
    );
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_with_its_path_and_left_untouched() {
    let project = Project::new();
    let settings = project.root().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"hooks\": {").unwrap();
    let out = project.sens(&["install"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&settings.display().to_string()));
    assert_eq!(std::fs::read(&settings).unwrap(), b"{\"hooks\": {");
    assert!(!project.root().join(".sens/install.json").exists());

    // A broken .mcp.json: refused with its path, and neither file written.
    std::fs::remove_file(&settings).unwrap();
    let mcp = project.root().join(".mcp.json");
    std::fs::write(&mcp, "{\"mcpServers\": [").unwrap();
    let out = project.sens(&["install"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&mcp.display().to_string()));
    assert_eq!(std::fs::read(&mcp).unwrap(), b"{\"mcpServers\": [");
    assert!(!settings.exists(), "the settings are not written either");
}

/// The hook commands of Sens left in the settings at `path`.
fn sens_hooks_left(path: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    let Some(events) = value["hooks"].as_object() else {
        return Vec::new();
    };
    events
        .values()
        .flat_map(|groups| groups.as_array().cloned().unwrap_or_default())
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|hook| hook["command"].as_str().map(str::to_string))
        .filter(|command| command.contains(" hook "))
        .collect()
}

#[test]
fn install_refuses_a_folder_that_is_not_a_git_repository_saying_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(SENS)
        .arg("install")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("git init"), "{stderr}");
    assert!(!dir.path().join(".claude").exists(), "nothing written");
    assert!(!dir.path().join(".sens").exists(), "nothing written");
}

#[test]
fn uninstall_removes_sens_hooks_the_person_edited_and_never_claims_success_leaving_one() {
    let project = Project::new();
    install(&project);
    let settings = project.root().join(".claude/settings.json");
    let mut value: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    for groups in value["hooks"].as_object_mut().unwrap().values_mut() {
        for group in groups.as_array_mut().unwrap() {
            group["hooks"][0]["timeout"] = json!(30);
        }
    }
    value["hooks"]["Stop"][0]["matcher"] = json!("");
    std::fs::write(&settings, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    assert!(project.sens(&["uninstall"]).status.success());
    assert_eq!(sens_hooks_left(&settings), Vec::<String>::new());
    let mcp: Value = serde_json::from_slice(
        &std::fs::read(project.root().join(".mcp.json")).unwrap_or_default(),
    )
    .unwrap_or(json!({}));
    assert!(mcp["mcpServers"]["sens"].is_null(), "{mcp}");
}

#[test]
fn install_and_uninstall_agree_after_the_engine_folder_was_deleted() {
    let project = Project::new();
    let settings = project.root().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, PERSON_SETTINGS).unwrap();
    install(&project);
    // As `git clean -fdx` does.
    std::fs::remove_dir_all(project.root().join(".sens")).unwrap();
    let again = project.sens(&["install", "--idle-secs", "120"]);
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("already installed"),
        "{again:?}"
    );
    let _ = std::fs::remove_dir_all(project.root().join(".sens"));
    let out = project.sens(&["uninstall"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(sens_hooks_left(&settings), Vec::<String>::new());
    let left: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<Value>(PERSON_SETTINGS).unwrap()
    );
    let out = project.sens(&["uninstall"]);
    assert_eq!(out.status.code(), Some(2), "nothing is installed now");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not installed"));
}

#[test]
fn a_planted_backup_or_record_is_refused_never_restored() {
    let project = Project::new();
    let settings = project.root().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, PERSON_SETTINGS).unwrap();
    install(&project);
    let backup = project.root().join(".sens/settings.json.backup");
    assert!(backup.exists());
    std::fs::write(&backup, r#"{"permissions": {"allow": ["Bash(*)"]}}"#).unwrap();
    let out = project.sens(&["uninstall"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("not restored") && said.contains(&backup.display().to_string()),
        "{said}"
    );
    let left: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<Value>(PERSON_SETTINGS).unwrap()
    );

    // A record that claims install created the file must not delete the person's.
    install(&project);
    let record_path = project.root().join(".sens/install.json");
    let mut record: Value = serde_json::from_slice(&std::fs::read(&record_path).unwrap()).unwrap();
    record["settings"]["created_file"] = json!(true);
    record["settings"]["created_dir"] = json!(true);
    std::fs::write(&record_path, record.to_string()).unwrap();
    assert!(project.sens(&["uninstall"]).status.success());
    let left: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<Value>(PERSON_SETTINGS).unwrap()
    );
}

fn hook(dir: &Path, timeout_secs: &str) -> Output {
    hook_with(dir, &["--timeout-secs", timeout_secs])
}

fn hook_with(dir: &Path, options: &[&str]) -> Output {
    let mut child = Command::new(SENS)
        .arg("hook")
        .arg(dir)
        .args(options)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": dir,
        "tool_input": {"file_path": dir.join("a.py"), "content": "x = 1\n"}});
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        input.to_string().as_bytes(),
    )
    .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn an_engine_that_cannot_start_or_does_not_answer_gets_the_blocking_answer() {
    // Not a git repository: the engine cannot start.
    let bare = tempfile::tempdir().unwrap();
    let out = hook(bare.path(), "60");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no answer that could approve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`sens serve ") && stderr.contains("`sens uninstall "),
        "{stderr}"
    );

    // A socket that accepts and never answers: the hook gives up within its timeout.
    let project = Project::new();
    std::fs::create_dir_all(project.root().join(".sens")).unwrap();
    let _silent = UnixListener::bind(project.root().join(".sens/engine.sock")).unwrap();
    let out = hook(&project.root(), "1");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("in time"));
}

#[test]
fn reject_asks_then_restores_the_approved_files_and_keeps_the_rejected_state() {
    let project = Project::new();
    assert!(project.sens(&["approve"]).status.success());
    let util = project.root().join("src/util.py");
    let original = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, "changed = True\n").unwrap();
    std::fs::write(project.root().join("src/new.py"), "added = True\n").unwrap();

    let mut refused = Command::new(SENS)
        .arg("reject")
        .arg(project.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut refused.stdin.take().unwrap(), b"n\n").unwrap();
    let refused = refused.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("src/new.py"));
    assert_eq!(std::fs::read_to_string(&util).unwrap(), "changed = True\n");

    assert!(project.sens(&["reject", "--yes"]).status.success());
    assert_eq!(std::fs::read_to_string(&util).unwrap(), original);
    assert!(!project.root().join("src/new.py").exists());
    assert_eq!(
        git(
            &project.root(),
            &["show", "refs/sens/rejected/1:src/new.py"]
        ),
        "added = True\n"
    );
    assert_eq!(project.ledger().last().unwrap().verdict, Verdict::Rejected);
}

#[test]
fn one_engine_serves_a_project_and_exits_after_its_idle_time() {
    let project = Project::new();
    let first = hook_with(&project.root(), &["--idle-secs", "2"]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    assert_eq!(first.stdout, b"{}\n", "a plain write draws no objection");
    let pid = project.engine_pid();
    let again = hook_with(&project.root(), &["--idle-secs", "2"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(project.engine_pid(), pid, "the running engine answered");
    let socket = project.root().join(".sens/engine.sock");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&socket).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "only the person may connect");
    common::processes::wait_until_ended(&pid);
    assert!(!socket.exists(), "the idle exit removes its socket");
    assert!(!project.root().join(".sens/engine.pid").exists());
}

#[test]
fn deleting_the_engine_folder_mid_session_leaves_one_engine() {
    let project = Project::new();
    let first = hook_with(&project.root(), &["--idle-secs", "60"]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let old = project.engine_pid();
    // As `git clean -fdx` does.
    std::fs::remove_dir_all(project.root().join(".sens")).unwrap();
    let again = hook_with(&project.root(), &["--idle-secs", "60"]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let new = project.engine_pid();
    assert_ne!(new, old, "a fresh engine answered");
    let old_ended = common::processes::ends_within(&old, Duration::from_secs(10));
    if !old_ended {
        let _ = kill_group(old.trim().parse().unwrap_or(0));
    }
    assert!(old_ended, "the first engine still runs beside the second");
    let third = hook_with(&project.root(), &["--idle-secs", "60"]);
    assert_eq!(third.status.code(), Some(0), "{third:?}");
    assert_eq!(project.engine_pid(), new, "the second engine still serves");
}

#[test]
fn links_planted_in_the_engine_folder_are_never_written_through() {
    let project = Project::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let engine_dir = project.root().join(".sens");
    std::fs::create_dir_all(&engine_dir).unwrap();
    let settings = project.root().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, PERSON_SETTINGS).unwrap();
    // As a script of the agent's could leave them, each aimed at a file of the person's.
    let planted = [
        "engine.lock",
        "engine.pid",
        "engine.log",
        "hooks.jsonl",
        ".gitignore",
        "settings.json.backup",
    ];
    let victims: Vec<PathBuf> = planted
        .iter()
        .map(|name| {
            let victim = elsewhere.path().join(name);
            std::fs::write(&victim, "precious\n").unwrap();
            std::os::unix::fs::symlink(&victim, engine_dir.join(name)).unwrap();
            victim
        })
        .collect();
    install(&project);
    let out = hook_with(&project.root(), &["--idle-secs", "5"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for victim in &victims {
        assert_eq!(
            std::fs::read_to_string(victim).unwrap(),
            "precious\n",
            "{} was written through a link",
            victim.display()
        );
    }
    assert!(
        !project.ledger().is_empty(),
        "the engine keeps a ledger of its own"
    );
}
