//! A run's page: the prompt, the agent's messages and tool calls in order, each
//! call with its result and the engine's decisions on it inline, then the diff,
//! test logs, integrity evidence and timings.
//!
//! The timeline is built from the transcript (the CLI's stream-json lines) and the
//! ledger: a tool call's ledger lines are those with its `tool_use_id`; a ledger
//! line of another event (Stop, SubagentStop, UserPromptSubmit) goes where the
//! transcript shows the CLI's hook callback of that event (the k-th `Stop`
//! callback is the k-th `Stop` line). Ledger lines the transcript does not place
//! (a transcript cut short) follow at the end.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context;
use maud::{Markup, html};
use serde_json::Value;

use super::page;
use crate::measure::ledger::{LedgerLine, read_ledger};
use crate::measure::outcomes::{Outcome, classify};
use crate::record::RunRecord;

/// Links to the neighbouring steps of a sequence run, relative to the index.
pub struct StepLinks {
    pub previous: Option<PathBuf>,
    pub next: Option<PathBuf>,
}

/// One entry of the timeline.
#[derive(Debug, PartialEq)]
enum Item {
    Text {
        agent: Option<String>,
        text: String,
    },
    Call {
        agent: Option<String>,
        name: String,
        /// The call's input fields: strings as written, other values as JSON.
        input: Vec<(String, String)>,
        result: Option<(String, bool)>,
        ledger: Vec<usize>,
    },
    Hook(usize),
    Result {
        subtype: String,
        text: String,
    },
    Unparsed(String),
}

/// What a run folder holds, read once.
pub struct RunPage {
    prompt: Option<String>,
    items: Vec<Item>,
    ledger: Vec<LedgerLine>,
    outcomes: HashMap<u64, Outcome>,
    diff: Option<String>,
    logs: Vec<(String, String)>,
    integrity: Option<String>,
    timings: Vec<(String, String)>,
}

/// `dir/name` as text; `None` when the file does not exist.
/// Bytes of one run file a page shows: an agent that writes a gigabyte, or a
/// test that prints one, still gets a page a browser opens.
const SHOWN: u64 = 1 << 20;

/// The first [`SHOWN`] bytes of `dir/name`, with a line saying how much more
/// the file holds; `None` when it does not exist.
fn read_optional(dir: &Path, name: &str) -> anyhow::Result<Option<String>> {
    use std::io::Read;
    let path = dir.join(name);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let size = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let mut bytes = Vec::new();
    file.take(SHOWN)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if size > SHOWN {
        text.push_str(&format!(
            "\n[{} more bytes of {name} are not shown here; the whole file is in the run folder]\n",
            size - SHOWN
        ));
    }
    Ok(Some(text))
}

impl RunPage {
    /// Reads the run folder `dir` (a missing folder or file leaves its section out).
    pub fn load(dir: &Path) -> anyhow::Result<RunPage> {
        let ledger_path = dir.join("hooks.jsonl");
        let ledger = if ledger_path.exists() {
            read_ledger(&ledger_path)?
        } else {
            Vec::new()
        };
        let outcomes = classify(&ledger)
            .into_iter()
            .map(|d| (d.seq, d.outcome))
            .collect();
        let transcript = read_optional(dir, "transcript.jsonl")?.unwrap_or_default();
        let mut logs = Vec::new();
        if dir.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .with_context(|| format!("cannot list {}", dir.display()))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".log"))
                .collect();
            names.sort();
            for name in names {
                let text = read_optional(dir, &name)?.unwrap_or_default();
                logs.push((name, text));
            }
        }
        let timings = match read_optional(dir, "timings.json")? {
            Some(text) => timing_rows(&text).with_context(|| {
                format!(
                    "{} is not a JSON object",
                    dir.join("timings.json").display()
                )
            })?,
            None => Vec::new(),
        };
        let prompt = read_optional(dir, "prompt.md")?.or_else(|| {
            ledger
                .iter()
                .find_map(|l| l.input["prompt"].as_str().map(str::to_string))
        });
        Ok(RunPage {
            prompt,
            items: timeline(&transcript, &ledger),
            ledger,
            outcomes,
            diff: read_optional(dir, "diff.patch")?,
            logs,
            integrity: read_optional(dir, "integrity.txt")?,
            timings,
        })
    }

    /// The page's HTML; `root` leads from the page back to the index's folder.
    pub fn render(&self, record: &RunRecord, steps: &StepLinks, root: &str) -> String {
        let title = match record.sequence_step() {
            Some((sequence, step)) => format!(
                "{sequence} step {step} ({}) {} rep {}",
                record.task, record.condition, record.rep
            ),
            None => format!("{} {} rep {}", record.task, record.condition, record.rep),
        };
        let link = |path: &PathBuf| format!("{root}{}", path.to_string_lossy().replace('\\', "/"));
        let body = html! {
            p { a href={ (root) "report.html" } { "batch" } }
            h1 { (title) }
            @if steps.previous.is_some() || steps.next.is_some() {
                p {
                    @if let Some(p) = &steps.previous { a href=(link(p)) { "previous step" } " " }
                    @if let Some(n) = &steps.next { a href=(link(n)) { "next step" } }
                }
            }
            p {
                "status " b { (record.status.as_str()) }
                @if let Some(error) = &record.error { " (" (error) ")" }
                "; hidden pass " (flag(record.hidden_pass)) "; project pass " (flag(record.project_pass))
                "; lines added " (record.loc_added.map_or("–".to_string(), |v| v.to_string()))
                "; tokens " (record.tokens.map_or("–".to_string(), |t| t.total().to_string()))
                "; cost USD " (record.cost_usd.map_or("–".to_string(), |c| c.to_string()))
            }
            h2 { "Prompt" }
            @match &self.prompt {
                Some(prompt) => pre #prompt { (prompt) },
                None => p { "The run folder keeps no prompt." },
            }
            h2 { "Timeline" }
            @if self.items.is_empty() { p { "No transcript." } }
            @for item in &self.items { (self.item(item)) }
            h2 { "Diff" }
            @match &self.diff {
                Some(diff) => (diff_markup(diff)),
                None => p { "No diff." },
            }
            h2 { "Test logs" }
            @for (name, text) in &self.logs {
                details { summary { (name) } pre { (text) } }
            }
            h2 { "Integrity" }
            p {
                "touched task files: " (yes_no(record.integrity.touched_task_files))
                "; edited tests: " (yes_no(record.integrity.edited_tests))
            }
            @if let Some(evidence) = &self.integrity { pre #integrity { (evidence) } }
            h2 { "Timings (s)" }
            table {
                tr { th { "agent (record)" } td { (record.duration_s) } }
                @for (name, value) in &self.timings { tr { th { (name) } td { (value) } } }
            }
        };
        page(&title, body, None)
    }

    fn item(&self, item: &Item) -> Markup {
        match item {
            Item::Text { agent, text } => html! {
                div.item.text { (agent_tag(agent)) b { "agent: " } pre { (text) } }
            },
            Item::Call {
                agent,
                name,
                input,
                result,
                ledger,
            } => html! {
                div.item.call {
                    (agent_tag(agent)) b { "tool call " span.tool { (name) } }
                    @for (field, value) in input {
                        div.input { span.tag { (field) } pre { (value) } }
                    }
                    @for i in ledger { (self.decision(*i)) }
                    @match result {
                        Some((text, error)) => div.result {
                            @if *error { b { "result (error)" } } @else { b { "result" } }
                            pre { (text) }
                        },
                        None => p { "no result" },
                    }
                }
            },
            Item::Hook(i) => self.decision(*i),
            Item::Result { subtype, text } => html! {
                div.item.final { b { "turn ended: " (subtype) } pre { (text) } }
            },
            Item::Unparsed(line) => html! { div.item { b { "transcript line" } pre { (line) } } },
        }
    }

    /// One ledger line: the event, the verdict, its findings, what the engine said,
    /// and for a denial, block or re-implementation note what the agent did next.
    fn decision(&self, i: usize) -> Markup {
        let line = &self.ledger[i];
        let verdict = serde_json::to_value(line.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let said = engine_message(&line.output);
        html! {
            div.item.decision.(verdict) {
                span.tag { "engine " (line.event) } " " b.verdict { (verdict) }
                @if let Some(outcome) = self.outcomes.get(&line.seq) {
                    " → agent " span.outcome { (outcome.as_str()) }
                }
                @if let Some(text) = said { pre.reason { (text) } }
                @if let Some(error) = &line.error { pre.error { "engine error: " (error) } }
                @if !line.findings.is_empty() {
                    ul {
                        @for f in &line.findings {
                            li {
                                (f.rule) ": "
                                a href={ "#diff-" (anchor(&f.new.file)) } { (f.new.file) ":" (f.new.line) }
                                " " (f.new.name)
                                @if let Some(existing) = &f.existing {
                                    " copies " code { (existing.file) ":" (existing.line) } " " code { (existing.signature) }
                                }
                                " – " (f.message)
                            }
                        }
                    }
                }
                @if !line.suggestions.is_empty() { p { (line.suggestions.len()) " suggestions" } }
            }
        }
    }
}

/// What the engine told the agent: a denial's or block's reason, or the context it
/// added (guard notes, rescan findings).
fn engine_message(output: &Value) -> Option<String> {
    let specific = &output["hookSpecificOutput"];
    [
        &specific["permissionDecisionReason"],
        &output["reason"],
        &specific["additionalContext"],
        &output["systemMessage"],
    ]
    .into_iter()
    .find_map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string))
}

fn agent_tag(agent: &Option<String>) -> Markup {
    html! { @if let Some(id) = agent { span.tag { "subagent " (id) } " " } }
}

fn flag(value: Option<bool>) -> &'static str {
    value.map_or("–", yes_no)
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// An id for a file's part of the diff.
fn anchor(file: &str) -> String {
    file.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The diff, each line classed (added, removed, hunk header, file header); each
/// file's header carries its anchor.
fn diff_markup(diff: &str) -> Markup {
    html! {
        pre.diff {
            @for line in diff.lines() {
                @if let Some(file) = line.strip_prefix("+++ b/") {
                    span.file #{ "diff-" (anchor(file)) } { (line) } "\n"
                } @else if line.starts_with("diff ") || line.starts_with("--- ") || line.starts_with("+++ ") {
                    span.file { (line) } "\n"
                } @else if line.starts_with('+') {
                    span.add { (line) } "\n"
                } @else if line.starts_with('-') {
                    span.del { (line) } "\n"
                } @else if line.starts_with("@@") {
                    span.hunk { (line) } "\n"
                } @else {
                    (line) "\n"
                }
            }
        }
    }
}

/// `timings.json`'s fields, in key order.
fn timing_rows(text: &str) -> anyhow::Result<Vec<(String, String)>> {
    let value: serde_json::Map<String, Value> = serde_json::from_str(text)?;
    Ok(value
        .into_iter()
        .map(|(k, v)| {
            let shown = v
                .as_f64()
                .map_or_else(|| v.to_string(), crate::report::fmt_num);
            (k, shown)
        })
        .collect())
}

/// A tool call's input, field by field (in key order).
fn input_fields(input: &Value) -> Vec<(String, String)> {
    let show = |v: &Value| match v {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    match input {
        Value::Object(fields) => fields.iter().map(|(k, v)| (k.clone(), show(v))).collect(),
        other => vec![("input".to_string(), show(other))],
    }
}

/// A tool result's text: a string, or the text blocks of a list.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                b["text"]
                    .as_str()
                    .map_or_else(|| b.to_string(), str::to_string)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The timeline of a run from its transcript and ledger (see the module docs).
fn timeline(transcript: &str, ledger: &[LedgerLine]) -> Vec<Item> {
    let lines: Vec<Result<Value, String>> = transcript
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|_| l.to_string()))
        .collect();
    let mut results: HashMap<String, (String, bool)> = HashMap::new();
    for value in lines.iter().flatten().filter(|v| v["type"] == "user") {
        for block in value["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let id = block["tool_use_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let error = block["is_error"].as_bool().unwrap_or(false);
                results.insert(id, (result_text(&block["content"]), error));
            }
        }
    }
    let mut by_tool: HashMap<String, Vec<usize>> = HashMap::new();
    let mut by_event: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
    for (i, line) in ledger.iter().enumerate() {
        match line.input["tool_use_id"].as_str() {
            Some(id) => by_tool.entry(id.to_string()).or_default().push(i),
            None => by_event.entry(line.event.clone()).or_default().push_back(i),
        }
    }
    let mut items = Vec::new();
    for line in &lines {
        let value = match line {
            Ok(value) => value,
            Err(raw) => {
                items.push(Item::Unparsed(raw.clone()));
                continue;
            }
        };
        let agent = value["parent_tool_use_id"].as_str().map(str::to_string);
        match value["type"].as_str().unwrap_or_default() {
            "assistant" => {
                for block in value["message"]["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str().unwrap_or_default() {
                        "text" => items.push(Item::Text {
                            agent: agent.clone(),
                            text: block["text"].as_str().unwrap_or_default().to_string(),
                        }),
                        "tool_use" => {
                            let id = block["id"].as_str().unwrap_or_default();
                            items.push(Item::Call {
                                agent: agent.clone(),
                                name: block["name"].as_str().unwrap_or_default().to_string(),
                                input: input_fields(&block["input"]),
                                result: results.remove(id),
                                ledger: by_tool.remove(id).unwrap_or_default(),
                            });
                        }
                        _ => {}
                    }
                }
            }
            "control_request" if value["request"]["subtype"] == "hook_callback" => {
                let event = value["request"]["input"]["hook_event_name"]
                    .as_str()
                    .unwrap_or_default();
                if value["request"]["input"]["tool_use_id"].is_null()
                    && let Some(i) = by_event.get_mut(event).and_then(VecDeque::pop_front)
                {
                    items.push(Item::Hook(i));
                }
            }
            "result" => items.push(Item::Result {
                subtype: value["subtype"].as_str().unwrap_or_default().to_string(),
                text: value["result"].as_str().unwrap_or_default().to_string(),
            }),
            _ => {}
        }
    }
    let mut left: Vec<usize> = by_tool
        .into_values()
        .flatten()
        .chain(by_event.into_values().flatten())
        .collect();
    left.sort_unstable();
    items.extend(left.into_iter().map(Item::Hook));
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ledger_line(seq: u64, event: &str, verdict: &str, input: Value) -> LedgerLine {
        serde_json::from_value(
            json!({"seq": seq, "event": event, "verdict": verdict, "input": input}),
        )
        .unwrap()
    }

    #[test]
    fn a_huge_run_file_is_shown_in_part_with_what_was_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let size = SHOWN as usize + 5000;
        std::fs::write(dir.path().join("diff.patch"), "+x\n".repeat(size / 3)).unwrap();
        let shown = read_optional(dir.path(), "diff.patch").unwrap().unwrap();
        assert!(shown.len() < SHOWN as usize + 200, "{}", shown.len());
        assert!(shown.ends_with(&format!(
            "[{} more bytes of diff.patch are not shown here; the whole file is in the run folder]\n",
            size / 3 * 3 - SHOWN as usize
        )));
        assert_eq!(read_optional(dir.path(), "absent").unwrap(), None);
    }

    #[test]
    fn decisions_sit_on_their_tool_call_and_stop_lines_where_the_callback_came() {
        let transcript = [
            json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "writing"},
                {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "a.py"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "denied"}]}}),
            json!({"type": "control_request", "request": {"subtype": "hook_callback",
                "input": {"hook_event_name": "Stop"}}}),
            json!({"type": "result", "subtype": "success", "result": "done"}),
        ]
        .map(|v| v.to_string())
        .join("\n")
            + "\nnot json\n";
        let ledger = [
            ledger_line(1, "PreToolUse", "deny", json!({"tool_use_id": "t1"})),
            ledger_line(2, "Stop", "pass", json!({})),
            ledger_line(3, "Stop", "pass", json!({})),
        ];
        let items = timeline(&transcript, &ledger);
        assert_eq!(
            items,
            vec![
                Item::Text {
                    agent: None,
                    text: "writing".into()
                },
                Item::Call {
                    agent: None,
                    name: "Write".into(),
                    input: vec![("file_path".into(), "a.py".into())],
                    result: Some(("denied".into(), true)),
                    ledger: vec![0],
                },
                Item::Hook(1),
                Item::Result {
                    subtype: "success".into(),
                    text: "done".into()
                },
                Item::Unparsed("not json".into()),
                Item::Hook(2),
            ]
        );
    }
}
