//! The re-implementation note at PostToolUse (issue 43), through a real hook
//! session on a git repository with the real engine: a function written again
//! under a name that shares no word with the project's helper gets a note naming
//! the helper (never a denial); a function with nothing like it and test code get
//! none; the ledger line replays to the same note, and a rules file that turns
//! the note off removes it from the replay.

use std::path::PathBuf;

use git2::{Repository, Signature};
use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::finding::Finding;
use sens_engine::replay::{self, Material, ParseCache, Replay};
use sens_engine::reuse;
use sens_engine::session::ledger::Verdict;
use sens_engine::session::{Session, SessionOptions};
use serde_json::{Value, json};

mod ledger_project;

use ledger_project::FILES;

/// Accent folding again: no word of `fold` in its name.
const REIMPLEMENTATION: &str = "import unicodedata\n\n\ndef normalize_for_search(s):\n    \"\"\"Make 'Crème' match 'creme' in searches: drop diacritics, ignore case.\"\"\"\n    out = []\n    for ch in unicodedata.normalize(\"NFD\", s):\n        if unicodedata.category(ch) != \"Mn\":\n            out.append(ch.lower())\n    return \"\".join(out)\n";

/// Nothing in the project computes a distance.
const NEW_CODE: &str = "import math\n\n\ndef haversine_km(lat1, lon1, lat2, lon2):\n    \"\"\"Great-circle distance between two points on Earth, in kilometres.\"\"\"\n    p1, p2 = math.radians(lat1), math.radians(lat2)\n    dl = math.radians(lon2 - lon1)\n    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2\n    return 2 * 6371.0 * math.asin(math.sqrt(a))\n";

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ledger: PathBuf,
    session: Session,
}

impl Project {
    fn new(cfg: RuleConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        for (path, text) in FILES {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let repo = Repository::init(&root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let me = Signature::now("test", "test@example.com").unwrap();
        repo.commit(Some("HEAD"), &me, &me, "baseline", &tree, &[])
            .unwrap();
        let ledger = dir.path().join("hooks.jsonl");
        let mut options = SessionOptions::new(ledger.clone());
        options.rules_digest = cfg.digest();
        let engine = Engine::open(&root, cfg).unwrap();
        let session = Session::new(&root, Box::new(engine), options).unwrap();
        Self {
            _dir: dir,
            root,
            ledger,
            session,
        }
    }

    fn input(&self, event: &str, extra: Value) -> Value {
        let mut input = json!({
            "session_id": "2f0c9a4e-1b7d-4c55-9a51-6f2f4a1e0c11",
            "transcript_path": "/root/.claude/projects/-proj/2f0c9a4e.jsonl",
            "cwd": self.root.to_string_lossy(),
            "permission_mode": "acceptEdits",
            "hook_event_name": event,
        });
        for (k, v) in extra.as_object().unwrap() {
            input[k] = v.clone();
        }
        input
    }

    fn handle(&mut self, input: &Value) -> Value {
        let event = input["hook_event_name"].as_str().unwrap().to_string();
        self.session.handle(&format!("sens_{event}"), input)
    }

    /// The agent writes `content` to `rel` with the Write tool: PreToolUse, the
    /// write, PostToolUse; the two answers.
    fn write(&mut self, rel: &str, content: &str) -> (Value, Value) {
        let tool_input = json!({"file_path": self.root.join(rel), "content": content});
        let pre = self.input(
            "PreToolUse",
            json!({"tool_name": "Write", "tool_input": tool_input, "tool_use_id": "toolu_1"}),
        );
        let pre = self.handle(&pre);
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        let post = self.input(
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": tool_input, "tool_use_id": "toolu_1",
                   "tool_response": {"type": "create", "filePath": path}}),
        );
        let post = self.handle(&post);
        (pre, post)
    }

    fn start(&mut self) {
        let prompt = self.input("UserPromptSubmit", json!({"prompt": "add a search"}));
        self.handle(&prompt);
    }

    fn ledger_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.ledger)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn context(output: &Value) -> &str {
    output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("")
}

fn notes(findings: &[Finding]) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.rule == reuse::NOTE_RULE)
        .collect()
}

fn recorded_notes(line: &Value) -> Vec<Finding> {
    let findings: Vec<Finding> = serde_json::from_value(line["findings"].clone()).unwrap();
    findings
        .into_iter()
        .filter(|f| f.rule == reuse::NOTE_RULE)
        .collect()
}

/// Every decision of the project's ledger replayed under `cfg`, by seq.
fn replayed(project: &Project, cfg: RuleConfig) -> Vec<(u64, replay::Replayed)> {
    let material = tempfile::tempdir().unwrap();
    replay::save_material(&project.root, material.path()).unwrap();
    let material = Material::open(material.path()).unwrap();
    let cache = ParseCache::new(cfg).unwrap();
    let mut replay = Replay::new(material.repo(), &cache).unwrap();
    project
        .ledger_lines()
        .iter()
        .filter_map(|line| {
            let seq = line["seq"].as_u64().unwrap();
            replay.line(line).unwrap().map(|r| (seq, r))
        })
        .collect()
}

fn post_tool_line(project: &Project) -> Value {
    project
        .ledger_lines()
        .into_iter()
        .rfind(|l| l["event"] == "PostToolUse")
        .unwrap()
}

#[test]
fn a_reimplementation_with_no_name_word_in_common_gets_the_note_and_it_replays() {
    let mut project = Project::new(RuleConfig::default());
    project.start();
    let (pre, post) = project.write("ledger/search.py", REIMPLEMENTATION);
    // The write itself is allowed: the note comes after it, never as a denial.
    assert_eq!(pre["hookSpecificOutput"]["permissionDecision"], Value::Null);
    let text = context(&post);
    assert_eq!(post["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert!(
        text.contains("ledger/search.py:4 `normalize_for_search`"),
        "{post}"
    );
    assert!(text.contains("ledger/text.py:4 `def fold(text)`"), "{post}");
    assert!(post.get("decision").is_none(), "{post}");

    let line = post_tool_line(&project);
    assert_eq!(line["verdict"], "context");
    let recorded = recorded_notes(&line);
    assert_eq!(recorded.len(), 1, "{line}");
    assert!(!recorded[0].blocks);

    // Replayed under the same rules: the same note.
    let seq = line["seq"].as_u64().unwrap();
    let same = replayed(&project, RuleConfig::default());
    let (_, again) = same.iter().find(|(s, _)| *s == seq).unwrap();
    assert_eq!(again.verdict, Verdict::Context);
    assert_eq!(notes(&again.findings), recorded.iter().collect::<Vec<_>>());

    // Under rules that turn the note off: none, and the decision goes quiet (a
    // change the gate lists).
    let off = RuleConfig {
        reuse_notes: false,
        ..RuleConfig::default()
    };
    let quiet = replayed(&project, off);
    let (_, again) = quiet.iter().find(|(s, _)| *s == seq).unwrap();
    assert_eq!(again.verdict, Verdict::Quiet);
    assert!(notes(&again.findings).is_empty());
}

#[test]
fn a_rules_file_can_turn_the_note_off() {
    let off = RuleConfig::from_toml("reuse_notes = false\n").unwrap();
    assert!(!off.reuse_notes);
    assert_ne!(off.digest(), RuleConfig::default().digest());
    let mut project = Project::new(off);
    project.start();
    let (_, post) = project.write("ledger/search.py", REIMPLEMENTATION);
    assert_eq!(post, json!({}));
}

#[test]
fn a_new_function_with_nothing_like_it_gets_no_note() {
    let mut project = Project::new(RuleConfig::default());
    project.start();
    let (_, post) = project.write("ledger/geo.py", NEW_CODE);
    assert_eq!(post, json!({}));
    let line = post_tool_line(&project);
    assert_eq!(line["verdict"], "quiet");
    assert!(recorded_notes(&line).is_empty());
}

#[test]
fn a_test_function_never_gets_the_note() {
    let mut project = Project::new(RuleConfig::default());
    project.start();
    let test = REIMPLEMENTATION.replace("normalize_for_search", "test_normalize_for_search");
    let (_, post) = project.write("ledger/search.py", &test);
    assert_eq!(post, json!({}));
    let (_, post) = project.write("tests/test_search.py", REIMPLEMENTATION);
    assert_eq!(post, json!({}));
}
