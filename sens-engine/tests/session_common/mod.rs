//! Shared fixtures for the session tests: a real git repository in a temp
//! folder, hook inputs shaped as Claude Code 2.1.197 sends them, and a test
//! judge that treats the marker `COPY_OF_ALPHA` as a copy of `src/alpha.rs:3`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};
use git2::{Repository, Signature};
use sens_engine::finding::{ExistingUnit, Finding, NewUnit, Suggestion};
use sens_engine::judge::{FileChange, Judge};
use sens_engine::session::{Session, SessionOptions};
use serde_json::{Value, json};

pub const MARKER: &str = "COPY_OF_ALPHA";
pub const HINT: &str = "LIKE_ALPHA";
pub const ALPHA_SIGNATURE: &str = "pub fn alpha(x: i32) -> i32";
pub const ALPHA: &str = "// alpha\n\npub fn alpha(x: i32) -> i32 {\n    x * 2 + 1\n}\n";

/// A judge that sees a copy wherever the marker stands.
pub struct MarkerJudge {
    root: PathBuf,
    seen: HashMap<String, String>,
    fail: Arc<AtomicBool>,
}

impl MarkerJudge {
    pub fn new(root: &Path, fail: Arc<AtomicBool>) -> Self {
        let mut judge = Self {
            root: root.to_path_buf(),
            seen: HashMap::new(),
            fail,
        };
        judge.seen = judge.read_all();
        judge
    }

    fn read_all(&self) -> HashMap<String, String> {
        let mut files = HashMap::new();
        for path in walk(&self.root).unwrap_or_default() {
            if let (Ok(rel), Ok(text)) = (
                path.strip_prefix(&self.root),
                std::fs::read_to_string(&path),
            ) {
                files.insert(rel.to_string_lossy().into_owned(), text);
            }
        }
        files
    }

    fn check_failing(&self) -> anyhow::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            bail!("the test judge was told to fail");
        }
        Ok(())
    }
}

/// Findings for every marker (blocking) and hint (not blocking) in `content`.
pub fn marker_findings(file: &str, content: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, line) in content.lines().enumerate() {
        for (needle, blocks) in [(MARKER, true), (HINT, false)] {
            if line.contains(needle) {
                findings.push(Finding {
                    rule: "copy.exact".into(),
                    blocks,
                    similarity: 1.0,
                    message: "Call `alpha` instead of repeating it.".into(),
                    new: NewUnit {
                        file: file.into(),
                        line: i + 1,
                        name: "beta".into(),
                    },
                    existing: Some(ExistingUnit {
                        file: "src/alpha.rs".into(),
                        line: 3,
                        signature: ALPHA_SIGNATURE.into(),
                        usages: 4,
                    }),
                });
            }
        }
    }
    findings
}

impl Judge for MarkerJudge {
    fn check_write(&mut self, path: &Path, content: &str) -> anyhow::Result<Vec<Finding>> {
        self.check_failing()?;
        Ok(marker_findings(&path.to_string_lossy(), content))
    }

    fn rescan(&mut self) -> anyhow::Result<Vec<Finding>> {
        self.check_failing()?;
        let now = self.read_all();
        let mut findings = Vec::new();
        for (path, text) in &now {
            if self.seen.get(path) != Some(text) {
                findings.extend(marker_findings(path, text));
            }
        }
        self.seen = now;
        Ok(findings)
    }

    fn audit(&mut self, changes: &[FileChange]) -> anyhow::Result<Vec<Finding>> {
        self.check_failing()?;
        Ok(changes
            .iter()
            .filter_map(|c| {
                c.after
                    .as_ref()
                    .map(|after| marker_findings(&c.path, after))
            })
            .flatten()
            .collect())
    }

    fn suggest(&self, prompt: &str) -> anyhow::Result<Vec<Suggestion>> {
        self.check_failing()?;
        if !prompt.contains("double") {
            return Ok(Vec::new());
        }
        Ok(vec![Suggestion {
            name: "alpha".into(),
            signature: ALPHA_SIGNATURE.into(),
            file: "src/alpha.rs".into(),
            line: 3,
            usages: 4,
            score: 3.5,
        }])
    }
}

/// A project in a temp folder: a git repository with one commit, and a session.
pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ledger: PathBuf,
    pub fail: Arc<AtomicBool>,
    pub session: Session,
}

impl Project {
    pub fn new() -> anyhow::Result<Self> {
        Self::with_options(|_| {})
    }

    /// A project whose session takes the default options as `edit` changes them.
    pub fn with_options(edit: impl FnOnce(&mut SessionOptions)) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join("src"))?;
        std::fs::write(root.join("src/alpha.rs"), ALPHA)?;
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n")?;
        std::fs::write(root.join(".gitignore"), "target/\n")?;
        std::fs::write(root.join(".mcp.json"), "{}\n")?;
        std::fs::create_dir_all(root.join(".claude"))?;
        std::fs::write(root.join(".claude/settings.json"), "{}\n")?;
        let repo = Repository::init(&root)?;
        commit_all(&repo, "baseline")?;
        let fail = Arc::new(AtomicBool::new(false));
        let ledger = dir.path().join("hooks.jsonl");
        let judge = MarkerJudge::new(&root, fail.clone());
        let mut options = SessionOptions::new(ledger.clone());
        edit(&mut options);
        let session = Session::new(&root, Box::new(judge), options)?;
        Ok(Self {
            _dir: dir,
            root,
            ledger,
            fail,
            session,
        })
    }

    pub fn path(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    pub fn write(&self, rel: &str, content: &str) -> anyhow::Result<()> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))
    }

    pub fn handle(&mut self, input: &Value) -> Value {
        let event = input["hook_event_name"].as_str().unwrap_or("");
        self.session.handle(&format!("sens_{event}"), input)
    }

    pub fn common(&self, event: &str) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert(
            "session_id".into(),
            json!("2f0c9a4e-1b7d-4c55-9a51-6f2f4a1e0c11"),
        );
        map.insert(
            "transcript_path".into(),
            json!("/root/.claude/projects/-proj/2f0c9a4e.jsonl"),
        );
        map.insert("cwd".into(), json!(self.root.to_string_lossy()));
        map.insert(
            "prompt_id".into(),
            json!("b3a1c0de-0000-4000-8000-000000000001"),
        );
        map.insert("permission_mode".into(), json!("acceptEdits"));
        map.insert("hook_event_name".into(), json!(event));
        map
    }

    pub fn prompt(&self, text: &str) -> Value {
        let mut map = self.common("UserPromptSubmit");
        map.insert("prompt".into(), json!(text));
        Value::Object(map)
    }

    pub fn pre(&self, tool: &str, tool_input: Value) -> Value {
        let mut map = self.common("PreToolUse");
        map.insert("tool_name".into(), json!(tool));
        map.insert("tool_input".into(), tool_input);
        map.insert(
            "tool_use_id".into(),
            json!("toolu_01AbCdEfGhIjKlMnOpQrStUv"),
        );
        map.insert("effort".into(), json!({"level": "high"}));
        Value::Object(map)
    }

    pub fn post(&self, tool: &str, tool_input: Value, tool_response: Value) -> Value {
        let mut input = self.pre(tool, tool_input);
        input["hook_event_name"] = json!("PostToolUse");
        input["tool_response"] = tool_response;
        input["duration_ms"] = json!(12);
        input
    }

    pub fn bash(&self, command: &str) -> Value {
        self.pre("Bash", json!({"command": command, "description": "run it"}))
    }

    pub fn post_bash(&self, command: &str) -> Value {
        self.post(
            "Bash",
            json!({"command": command}),
            json!({"stdout": "", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": true}),
        )
    }

    pub fn stop(&self, active: bool) -> Value {
        let mut map = self.common("Stop");
        map.insert("stop_hook_active".into(), json!(active));
        map.insert("last_assistant_message".into(), json!("Done."));
        map.insert("background_tasks".into(), json!([]));
        map.insert("session_crons".into(), json!([]));
        map.insert("effort".into(), json!({"level": "high"}));
        Value::Object(map)
    }

    pub fn ledger_lines(&self) -> anyhow::Result<Vec<Value>> {
        std::fs::read_to_string(&self.ledger)?
            .lines()
            .map(|l| serde_json::from_str(l).context("a ledger line is not JSON"))
            .collect()
    }

    pub fn approved_tree(&self) -> Option<git2::Oid> {
        self.session.approved().map(|c| c.tree)
    }
}

/// Inside a subagent every event carries `agent_id` and `agent_type`.
pub fn as_subagent(mut input: Value) -> Value {
    input["agent_id"] = json!("a1b2c3d4e5f6");
    input["agent_type"] = json!("general-purpose");
    input
}

pub fn subagent_stop(project: &Project) -> Value {
    let mut input = as_subagent(project.stop(false));
    input["hook_event_name"] = json!("SubagentStop");
    input["agent_transcript_path"] = json!("/root/.claude/projects/-proj/agent-a1b2.jsonl");
    input
}

pub fn commit_all(repo: &Repository, message: &str) -> anyhow::Result<git2::Oid> {
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = Signature::now("test", "test@example.com")?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    Ok(repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )?)
}

pub fn decision(output: &Value) -> Option<&str> {
    output["hookSpecificOutput"]["permissionDecision"].as_str()
}

pub fn reason(output: &Value) -> &str {
    output["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or("")
}

/// Everything a `git commit` could change, except objects and `refs/sens/*`:
/// HEAD, the index file, every other ref, and every working-tree file.
pub fn repository_state(root: &Path) -> anyhow::Result<BTreeMap<String, Vec<u8>>> {
    let mut state = BTreeMap::new();
    let git = root.join(".git");
    for name in [
        "HEAD",
        "index",
        "packed-refs",
        "ORIG_HEAD",
        "COMMIT_EDITMSG",
        "config",
    ] {
        if let Ok(bytes) = std::fs::read(git.join(name)) {
            state.insert(format!(".git/{name}"), bytes);
        }
    }
    let repo = Repository::open(root)?;
    for reference in repo.references()? {
        let reference = reference?;
        let name = reference.name().unwrap_or("").to_string();
        if !name.starts_with("refs/sens/") {
            let target = reference
                .target()
                .map(|t| t.to_string())
                .unwrap_or_default();
            state.insert(name, target.into_bytes());
        }
    }
    for path in walk(root)? {
        let rel = path.strip_prefix(root)?.to_string_lossy().into_owned();
        state.insert(rel, std::fs::read(&path)?);
    }
    Ok(state)
}

/// Every file under `dir` except the `.git` folder.
pub fn walk(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.file_name().is_some_and(|n| n == ".git") {
            continue;
        }
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    Ok(files)
}
