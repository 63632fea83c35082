//! The agents end to end: the pinned Claude Code CLI against the scripted model
//! server, no network. Each test is one short CLI session, bounded in time.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sens_bench::agent::claude::{
    AgentError, ApiEndpoint, ClaudeOptions, ClaudeSession, TurnResult, pinned_claude_bin, run_once,
};
use sens_bench::agent::model_server::{ModelServer, RecordedRequest, Route};
use sens_bench::agent::oracle::{FINAL_TEXT, oracle_script};
use sens_bench::agent::script::{Block, Script, Turn};
use sens_bench::agent::{HookHandler, Usage};
use serde_json::{Value, json};

/// Every test finishes well within this, or fails instead of hanging.
const TEST_LIMIT: Duration = Duration::from_secs(150);
const MARKER: &str = "FORBIDDEN-COPY";

struct Fixture {
    dir: tempfile::TempDir,
    server: ModelServer,
    options: ClaudeOptions,
}

impl Fixture {
    async fn new(script: Script) -> Fixture {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let binary = pinned_claude_bin(&root).unwrap_or_else(|err| panic!("{err:#}"));
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("ws");
        std::fs::create_dir(&workdir).unwrap();
        let server = ModelServer::start(script, &workdir).await.unwrap();
        let options = ClaudeOptions {
            binary,
            workdir,
            home: dir.path().join("home"),
            model: None,
            effort: None,
            timeout: Duration::from_secs(90),
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
        Fixture {
            dir,
            server,
            options,
        }
    }

    fn ws(&self, path: &str) -> PathBuf {
        self.options.workdir.join(path)
    }

    fn transcript(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.options.transcript)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    async fn run(&self, handler: Option<Box<dyn HookHandler>>) -> Result<TurnResult, AgentError> {
        tokio::time::timeout(TEST_LIMIT, run_once(&self.options, handler, "Do the task."))
            .await
            .expect("the session ended within the test limit")
    }

    fn posts(&self, route: Route) -> Vec<RecordedRequest> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.route == route)
            .collect()
    }
}

fn canon_first_line() -> &'static str {
    sens_engine::CANON.lines().next().unwrap()
}

fn system_text(request: &RecordedRequest) -> String {
    request.body.as_ref().unwrap()["system"].to_string()
}

fn write(path: &str, content: &str) -> Block {
    Block::tool("Write", json!({"file_path": path, "content": content}))
}

fn bash(command: &str) -> Block {
    Block::tool("Bash", json!({"command": command}))
}

#[tokio::test(flavor = "multi_thread")]
async fn write_edit_bash_script_plays_and_the_transcript_holds_the_stream() {
    let script = Script {
        main: vec![
            Turn::new(vec![write("a.txt", "hello world\n")]),
            Turn::new(vec![Block::tool(
                "Edit",
                json!({"file_path": "a.txt", "old_string": "world", "new_string": "there"}),
            )]),
            Turn::new(vec![bash("cp a.txt b.txt")]),
            Turn::new(vec![Block::text("All done.")]),
        ],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    let fx = Fixture::new(script).await;
    let result = fx.run(None).await.unwrap();

    assert_eq!(
        std::fs::read_to_string(fx.ws("a.txt")).unwrap(),
        "hello there\n"
    );
    assert_eq!(
        std::fs::read_to_string(fx.ws("b.txt")).unwrap(),
        "hello there\n"
    );
    assert_eq!(result.text.as_deref(), Some("All done."));
    assert_eq!(result.num_turns, 4);
    assert!(result.permission_denials.is_empty());

    let requests = fx.server.requests();
    assert_eq!(requests.iter().filter(|r| r.method == "HEAD").count(), 1);
    let posts = fx.posts(Route::Main);
    assert_eq!(posts.len(), 4);
    assert_eq!(
        posts.iter().map(|r| r.turn).collect::<Vec<_>>(),
        [Some(0), Some(1), Some(2), Some(3)]
    );
    assert!(posts.iter().all(|r| r.uri == "/v1/messages?beta=true"));
    assert_eq!(posts[0].headers["x-api-key"], "scripted");
    assert_eq!(
        posts[0].headers["x-claude-code-session-id"],
        result.session_id
    );
    // C0: no Canon in the system prompt.
    assert!(!system_text(&posts[0]).contains(canon_first_line()));

    let transcript = fx.transcript();
    assert_eq!(
        transcript[0]["type"], "control_response",
        "the initialize reply"
    );
    assert_eq!(transcript[1]["type"], "system");
    assert_eq!(transcript[1]["subtype"], "init");
    let last = transcript.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["session_id"], result.session_id);
    let tool_results = transcript
        .iter()
        .filter(|m| m["type"] == "user" && m["message"]["content"][0]["type"] == "tool_result")
        .count();
    assert_eq!(tool_results, 3);

    // Main-loop tokens are the server's figures, summed.
    let served: Usage = posts.iter().map(|r| r.usage.unwrap()).sum();
    assert_eq!(result.usage, served);
    assert_eq!(result.total_usage(), served);
    assert!(result.total_cost_usd > 0.0);
}

/// Denies any Write whose content carries the marker; records every callback.
struct Denier {
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl HookHandler for Denier {
    fn hook_registrations(&self) -> Value {
        let one = |id: &str| json!([{"matcher": null, "hookCallbackIds": [id], "timeout": 30}]);
        json!({
            "PreToolUse": one("pre"),
            "PostToolUse": one("post"),
            "SubagentStart": one("substart"),
            "Stop": one("stop"),
        })
    }

    fn handle(&mut self, callback_id: &str, input: &Value) -> Value {
        self.seen
            .lock()
            .unwrap()
            .push((callback_id.to_string(), input.clone()));
        let content = input["tool_input"]["content"].as_str().unwrap_or_default();
        if callback_id == "pre" && content.contains(MARKER) {
            return json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "denied by the test handler: reuse instead",
            }});
        }
        json!({})
    }
}

/// The shortcut scenario of docs/contract.md, "Shortcuts that stay closed": a denied
/// Write, settings that try to switch hooks off mid-session, and a subagent's Write.
fn shortcut_script() -> Script {
    // One python command: the CLI asks approval for shell writes under `.claude/`
    // even with `--allowedTools Bash`, and a denial here would hide what is tested.
    let settings = |extra: &str| {
        bash(&format!(
            "python3 -c \"import os; os.makedirs('.claude', exist_ok=True); \
             open('.claude/settings.local.json', 'w').write('{{\\\"disableAllHooks\\\": true}}'){extra}\""
        ))
    };
    Script {
        main: vec![
            Turn::new(vec![write("ok.txt", "fine\n")]),
            Turn::new(vec![write("denied.txt", MARKER)]),
            Turn {
                blocks: vec![settings("")],
                on_error: vec![settings("; open('saw-denial.txt', 'w')")],
                on_context: None,
            },
            Turn::new(vec![write("after.txt", MARKER)]),
            Turn::new(vec![Block::tool(
                "Agent",
                json!({"description": "Write a file", "prompt": "Write sub.txt.",
                       "subagent_type": "general-purpose"}),
            )]),
            Turn::new(vec![Block::text("Finished.")]),
        ],
        agent: vec![
            Turn::new(vec![write("sub.txt", MARKER)]),
            Turn::new(vec![Block::text("Subagent finished.")]),
        ],
        decisions: Vec::new(),
    }
}

fn check_tokens(fx: &Fixture, result: &TurnResult) {
    let main: Usage = fx.posts(Route::Main).iter().map(|r| r.usage.unwrap()).sum();
    let agent: Usage = fx
        .posts(Route::Agent)
        .iter()
        .map(|r| r.usage.unwrap())
        .sum();
    assert!(agent.input > 0, "the subagent made no request");
    assert_eq!(result.usage, main, "main loop only");
    assert_eq!(result.total_usage(), main + agent, "subagents included");
    assert_eq!(result.num_turns as usize, fx.posts(Route::Main).len());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hook_handler_denies_writes_in_the_main_loop_and_subagents_despite_settings() {
    let fx = Fixture::new(shortcut_script()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = Denier {
        seen: Arc::clone(&seen),
    };
    let result = fx.run(Some(Box::new(handler))).await.unwrap();

    assert!(fx.ws("ok.txt").exists());
    assert!(
        fx.ws("saw-denial.txt").exists(),
        "on_error played after the denial"
    );
    let settings = std::fs::read_to_string(fx.ws(".claude/settings.local.json")).unwrap();
    assert!(settings.contains("disableAllHooks"));
    for denied in ["denied.txt", "after.txt", "sub.txt"] {
        assert!(!fx.ws(denied).exists(), "{denied} was written");
    }
    // The result lists the main loop's denials; the subagent's shows in the stream.
    assert_eq!(
        result.permission_denials.len(),
        2,
        "{:?}",
        result.permission_denials
    );

    let seen = seen.lock().unwrap();
    let sub_write = seen
        .iter()
        .find(|(id, input)| {
            id == "pre"
                && input["tool_input"]["file_path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("sub.txt"))
        })
        .expect("PreToolUse fired for the subagent's Write");
    assert!(sub_write.1["agent_id"].is_string(), "{}", sub_write.1);
    assert!(seen.iter().any(|(id, _)| id == "substart"));
    assert!(seen.iter().any(|(id, _)| id == "stop"));
    // The Write after the settings change still went through the handler.
    assert!(seen.iter().any(|(id, input)| {
        id == "pre"
            && input["tool_input"]["file_path"]
                .as_str()
                .is_some_and(|p| p.ends_with("after.txt"))
    }));

    let denial_reasons = fx
        .transcript()
        .iter()
        .flat_map(|m| {
            m["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|block| block["type"] == "tool_result" && block["is_error"] == true)
        .filter(|block| {
            block["content"]
                .to_string()
                .contains("denied by the test handler")
        })
        .count();
    assert_eq!(denial_reasons, 3);
    check_tokens(&fx, &result);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_handler_the_same_script_writes_everything_and_the_canon_reaches_the_model() {
    let mut fx = Fixture::new(shortcut_script()).await;
    fx.options.append_system_prompt = Some(sens_engine::CANON.to_string());
    let result = fx.run(None).await.unwrap();

    for written in ["ok.txt", "denied.txt", "after.txt", "sub.txt"] {
        assert!(fx.ws(written).exists(), "{written} was not written");
    }
    assert!(!fx.ws("saw-denial.txt").exists());
    assert!(result.permission_denials.is_empty());

    let main = fx.posts(Route::Main);
    assert!(
        main.iter()
            .all(|r| system_text(r).contains(canon_first_line()))
    );
    check_tokens(&fx, &result);
}

fn tree(root: &Path) -> Vec<(String, String, bool)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                files.push((
                    path.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read_to_string(&path).unwrap(),
                    mode & 0o100 != 0,
                ));
            }
        }
    }
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn the_oracle_plays_a_patch_like_git_apply() {
    const PATCH: &str = "\
diff --git a/lib/calc.py b/lib/calc.py
index 1111111..2222222 100644
--- a/lib/calc.py
+++ b/lib/calc.py
@@ -1,3 +1,4 @@
 def add(a, b):
-    return a - b
+    return a + b
 
+TOTAL = add(1, 2)
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 3333333..0000000
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-stale
-lines
diff --git a/tools/run.sh b/tools/run.sh
new file mode 100755
index 0000000..4444444
--- /dev/null
+++ b/tools/run.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+echo ran
";
    let seed = |root: &Path| {
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::write(
            root.join("lib/calc.py"),
            "def add(a, b):\n    return a - b\n\n",
        )
        .unwrap();
        std::fs::write(root.join("old.txt"), "stale\nlines\n").unwrap();
        std::fs::write(root.join("README"), "untouched\n").unwrap();
    };
    let copy = tempfile::tempdir().unwrap();
    seed(copy.path());
    let patch_file = copy.path().with_extension("diff");
    std::fs::write(&patch_file, PATCH).unwrap();
    let status = std::process::Command::new("git")
        .arg("apply")
        .arg(&patch_file)
        .current_dir(copy.path())
        .status()
        .unwrap();
    assert!(status.success());

    let mut fx = Fixture::new(Script::default()).await;
    seed(&fx.options.workdir);
    let test = "tools/run.sh && test ! -e old.txt && echo tests-passed";
    let script = oracle_script(&fx.options.workdir, PATCH, test).unwrap();
    fx.server = ModelServer::start(script, &fx.options.workdir)
        .await
        .unwrap();
    fx.options.api.as_mut().unwrap().base_url = fx.server.base_url();
    let result = fx.run(None).await.unwrap();

    assert_eq!(result.text.as_deref(), Some(FINAL_TEXT));
    assert_eq!(tree(&fx.options.workdir), tree(copy.path()));
    let test_output = fx
        .transcript()
        .iter()
        .filter_map(|m| m["tool_use_result"]["stdout"].as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(test_output.contains("ran\ntests-passed"), "{test_output}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_cli_is_reported_as_missing() {
    let mut fx = Fixture::new(Script::default()).await;
    fx.options.binary = fx.dir.path().join("no-such-claude");
    let err = fx.run(None).await.unwrap_err();
    assert!(matches!(err, AgentError::CliMissing { .. }), "{err}");
    assert!(err.to_string().contains("run scripts/setup.sh"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cli_that_dies_mid_turn_is_reported_as_crashed() {
    let mut fx = Fixture::new(Script::default()).await;
    // Answers initialize like the CLI, then dies on the user message.
    let fake = fx.dir.path().join("fake-claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\nread -r line\n\
         echo '{\"type\":\"control_response\",\"response\":{\"subtype\":\"success\",\"request_id\":\"req_1\",\"response\":{}}}'\n\
         read -r line\necho 'segfault in the fake CLI' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    fx.options.binary = fake;
    let err = fx.run(None).await.unwrap_err();
    let AgentError::CliCrashed { status, stderr } = &err else {
        panic!("expected a crash, got {err}");
    };
    assert!(status.contains('3'), "{status}");
    assert!(stderr.contains("segfault in the fake CLI"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_under_the_transcript_is_a_harness_error() {
    let mut fx = Fixture::new(Script::default()).await;
    fx.options.transcript = PathBuf::from("/dev/full");
    let err = fx.run(None).await.unwrap_err();
    assert!(matches!(err, AgentError::Harness(_)), "{err}");
    assert!(
        err.to_string().contains("cannot write the transcript"),
        "{err}"
    );
}

async fn api_failure(status: u16) {
    let fx = Fixture::new(Script::default()).await;
    fx.server.fail_with(Some(status)).unwrap();
    let err = fx.run(None).await.unwrap_err();
    let AgentError::ApiError { result } = &err else {
        panic!("expected an API error, got {err}");
    };
    assert_eq!(result.api_error_status, Some(status), "{err}");
    assert!(result.is_error);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_500_is_an_api_error() {
    api_failure(500).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_400_is_an_api_error() {
    api_failure(400).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_over_the_time_limit_is_interrupted_and_killed() {
    let script = Script {
        main: vec![Turn::new(vec![bash(
            "echo $$ > sleeper.pid; sleep 300; touch finished",
        )])],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    let mut fx = Fixture::new(script).await;
    // The limit also bounds the CLI's start, which takes several seconds on a
    // loaded machine; the turn's command would run for 300.
    fx.options.timeout = Duration::from_secs(30);
    let err = fx.run(None).await.unwrap_err();
    assert!(matches!(err, AgentError::Timeout { .. }), "{err}");
    // The CLI runs Bash detached from its group; the driver must end it anyway. The
    // shell writes `finished` only if it outlives the kill and ends on its own.
    let pid = std::fs::read_to_string(fx.ws("sleeper.pid")).unwrap();
    common::processes::wait_until_ended(&pid);
    assert!(
        !fx.ws("finished").exists(),
        "the command run by the agent survived"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_process_takes_several_prompts_in_turn() {
    // The turn index counts assistant messages over the whole conversation.
    let script = Script {
        main: vec![
            Turn::new(vec![write("one.txt", "1\n")]),
            Turn::new(vec![Block::text("First step done.")]),
            Turn::new(vec![bash("cat one.txt one.txt > two.txt")]),
            Turn::new(vec![Block::text("Second step done.")]),
        ],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    let fx = Fixture::new(script).await;
    let steps = async {
        let mut session = ClaudeSession::start(&fx.options, None).await?;
        let first = session.turn("Step one.").await?;
        let second = session.turn("Step two.").await?;
        session.finish().await?;
        Ok::<_, AgentError>((first, second))
    };
    let (first, second) = tokio::time::timeout(TEST_LIMIT, steps)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.text.as_deref(), Some("First step done."));
    assert_eq!(second.text.as_deref(), Some("Second step done."));
    assert_eq!(first.session_id, second.session_id);
    assert_eq!(std::fs::read_to_string(fx.ws("two.txt")).unwrap(), "1\n1\n");
    let results = fx
        .transcript()
        .iter()
        .filter(|m| m["type"] == "result")
        .count();
    assert_eq!(results, 2);
    // Each result counts its own turn's calls.
    assert_eq!((first.num_turns, second.num_turns), (2, 2));
    let posts = fx.posts(Route::Main);
    let usage = |turns: &[RecordedRequest]| turns.iter().map(|r| r.usage.unwrap()).sum::<Usage>();
    // In one process the CLI's modelUsage and cost add up over the session; the
    // driver reports each turn's own.
    for (result, turns) in [(&first, &posts[..2]), (&second, &posts[2..])] {
        assert_eq!(result.usage, usage(turns));
        assert_eq!(result.total_usage(), usage(turns));
    }
    let model_cost: f64 = second.model_usage.values().map(|m| m.cost_usd).sum();
    assert!((model_cost - second.total_cost_usd).abs() < 1e-12);
    assert!(second.total_cost_usd > 0.0);
}

/// Answers too late: the CLI gives up on the callback and cancels it.
struct Slow;

impl HookHandler for Slow {
    fn hook_registrations(&self) -> Value {
        json!({"PreToolUse": [{"matcher": "Write", "hookCallbackIds": ["pre"], "timeout": 1}]})
    }

    fn handle(&mut self, _: &str, _: &Value) -> Value {
        std::thread::sleep(Duration::from_millis(2500));
        json!({})
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_answered_after_its_timeout_is_cancelled_and_blocks_the_tool() {
    let script = Script {
        main: vec![
            Turn::new(vec![write("late.txt", "x")]),
            Turn::new(vec![Block::text("Done.")]),
        ],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    let fx = Fixture::new(script).await;
    let result = fx.run(Some(Box::new(Slow))).await.unwrap();
    assert_eq!(result.text.as_deref(), Some("Done."));
    assert!(!fx.ws("late.txt").exists());
    let transcript = fx.transcript();
    assert!(
        transcript
            .iter()
            .any(|m| m["type"] == "control_cancel_request")
    );
}

/// Fails on every callback: an internal failure must never let a tool through.
struct Panicky;

impl HookHandler for Panicky {
    fn hook_registrations(&self) -> Value {
        json!({"PreToolUse": [{"matcher": "Write", "hookCallbackIds": ["pre"], "timeout": 1}]})
    }

    fn handle(&mut self, _: &str, _: &Value) -> Value {
        panic!("engine bug");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_handler_blocks_the_tool_and_fails_the_turn() {
    let script = Script {
        main: vec![
            Turn::new(vec![write("unjudged.txt", "x")]),
            Turn::new(vec![Block::text("Done.")]),
        ],
        agent: Vec::new(),
        decisions: Vec::new(),
    };
    let fx = Fixture::new(script).await;
    let err = fx.run(Some(Box::new(Panicky))).await.unwrap_err();
    assert!(matches!(err, AgentError::Harness(_)), "{err}");
    assert!(err.to_string().contains("engine bug"), "{err}");
    assert!(!fx.ws("unjudged.txt").exists());
}
