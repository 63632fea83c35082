//! The query tools through the hook session's MCP server, with the real engine
//! on a git repository: answers come from the index as the last rescan left it,
//! every call is a ledger line, and a session without its tools knows none.

use std::path::Path;

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::session::{Session, SessionOptions, TOOL_CALL_EVENT};
use serde_json::{Value, json};

const MONEY: &str = "def parse_amount(text):\n    \"\"\"Parses an amount such as '12,50' into cents.\"\"\"\n    cleaned = text.strip().replace(' ', '')\n    whole, _, frac = cleaned.replace(',', '.').partition('.')\n    return int(whole) * 100 + int((frac + '00')[:2])\n";

struct Project {
    dir: tempfile::TempDir,
    session: Session,
}

impl Project {
    fn new(tools: bool) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::write(root.join("app/money.py"), MONEY).unwrap();
        git2::Repository::init(&root).unwrap();
        let engine = Engine::open(&root, RuleConfig::default()).unwrap();
        let mut options = SessionOptions::new(dir.path().join("hooks.jsonl"));
        options.tools = tools;
        let session = Session::new(&root, Box::new(engine), options).unwrap();
        Project { dir, session }
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("proj")
    }

    fn hook(&mut self, event: &str, extra: Value) -> Value {
        let mut input = json!({"hook_event_name": event, "cwd": self.root(), "session_id": "s"});
        if let (Some(input), Some(extra)) = (input.as_object_mut(), extra.as_object()) {
            input.extend(extra.clone());
        }
        self.session.handle(&format!("sens_{event}"), &input)
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                             "params": {"name": tool, "arguments": arguments,
                                        "_meta": {"claudecode/toolUseId": "toolu_9"}}});
        self.session
            .mcp_message(&message)
            .expect("a request gets a response")
    }

    fn ledger(&self) -> Vec<Value> {
        read_lines(&self.dir.path().join("hooks.jsonl"))
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The tool's answer, parsed from the text the agent reads.
fn answer(response: &Value) -> Value {
    assert!(response["result"].get("isError").is_none(), "{response}");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

fn defined(answer: &Value) -> Vec<String> {
    answer["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{} {}",
                d["file"].as_str().unwrap(),
                d["line"],
                d["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn answers_follow_the_last_rescan_and_each_call_is_a_ledger_line() {
    let mut project = Project::new(true);
    assert_eq!(project.session.mcp_servers(), ["sens"]);
    project.hook("UserPromptSubmit", json!({"prompt": "Add a total."}));
    let copy = MONEY.replace("parse_amount", "to_cents");
    let exists = answer(&project.call("already_exists", json!({"code": copy})));
    assert_eq!(exists["copies"][0]["kind"], "copy.renamed", "{exists}");
    assert_eq!(exists["copies"][0]["file"], "app/money.py");
    assert_eq!(exists["copies"][0]["line"], 1);

    // A file written by a tool is not in the index until the PostToolUse rescan.
    let helper = "def fresh_helper(x):\n    return x + 1\n";
    std::fs::write(project.root().join("app/fresh.py"), helper).unwrap();
    let before = answer(&project.call("find_symbol", json!({"name": "fresh"})));
    assert!(defined(&before).is_empty(), "{before}");
    project.hook(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "true"}, "tool_response": {}}),
    );
    let after = answer(&project.call("find_symbol", json!({"name": "fresh"})));
    assert_eq!(defined(&after), ["app/fresh.py:1 fresh_helper"]);

    let bad = project.call("find_symbol", json!({}));
    assert_eq!(bad["result"]["isError"], true, "{bad}");

    let calls: Vec<(String, String)> = project
        .ledger()
        .iter()
        .filter(|l| l["event"] == TOOL_CALL_EVENT)
        .map(|l| {
            (
                l["tool"].as_str().unwrap().to_string(),
                l["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("already_exists", "answer"),
        ("find_symbol", "answer"),
        ("find_symbol", "answer"),
        ("find_symbol", "error"),
    ];
    assert_eq!(calls, expected.map(|(t, v)| (t.to_string(), v.to_string())));
    let last_answer = project
        .ledger()
        .into_iter()
        .rfind(|l| l["verdict"] == "answer")
        .unwrap();
    assert_eq!(last_answer["output"], after);
    assert_eq!(last_answer["input"]["tool_input"], json!({"name": "fresh"}));
    assert_eq!(last_answer["input"]["tool_use_id"], "toolu_9");
    assert!(last_answer["tree_before"].is_string());
}

#[test]
fn a_session_without_its_tools_serves_none() {
    let mut project = Project::new(false);
    assert!(project.session.mcp_servers().is_empty());
    let response = project.call("find_symbol", json!({"name": "parse"}));
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let ledger = project.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        (ledger[0]["event"].as_str(), ledger[0]["verdict"].as_str()),
        (Some(TOOL_CALL_EVENT), Some("error"))
    );
}
