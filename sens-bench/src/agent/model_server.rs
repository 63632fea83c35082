//! The scripted model server: a loopback Anthropic Messages API that plays a [`Script`]
//! to the real Claude Code CLI (docs/contract.md, "Agents"; protocol doc section 6).
//!
//! It answers `HEAD /` (the CLI's warm-up probe) and `POST /v1/messages`, in SSE
//! with explicit `event:` lines or, when the request does not stream, as one JSON
//! message. Usage figures follow a fixed rule ([`usage_for`]) so token accounting
//! can be checked against what the server recorded.
//!
//! It also answers the harness's decision calls from the script's `decisions`: a
//! Messages API request without tools whose last user text contains a decision's
//! `when` gets that reply as its text, and `POST /v1/decisions` (the decisions
//! endpoint: `{"state", "questions"}`) whose text contains it gets
//! `{"probabilities": reply}`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Usage;
use super::script::{Block, Decision, Script, Turn};
use crate::sync::lock;

/// Headers worth keeping from each request (the rest are transport noise).
const RECORDED_HEADERS: [&str; 6] = [
    "x-api-key",
    "anthropic-version",
    "anthropic-beta",
    "x-claude-code-session-id",
    AGENT_HEADER,
    "user-agent",
];
const AGENT_HEADER: &str = "x-claude-code-agent-id";
/// What the CLI's `/compact` request says in its last user text.
const COMPACT_MARKER: &str = "CRITICAL: Respond with TEXT ONLY";
const COMPACT_SUMMARY: &str = "Summary: the conversation so far followed a scripted scenario.";
const EXHAUSTED_TEXT: &str = "The script has no more turns.";

/// Which script side answered a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The warm-up probe or an unknown path: nothing was played.
    Other,
    Main,
    Agent,
    Compact,
    /// A decision call answered from the script's `decisions`.
    Decision,
}

/// One request as the server saw it, and how it answered.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query, e.g. `/v1/messages?beta=true`.
    pub uri: String,
    /// The headers of interest, lower-case names.
    pub headers: BTreeMap<String, String>,
    pub body: Option<Value>,
    pub route: Route,
    /// The turn index played (assistant messages already in the request).
    pub turn: Option<usize>,
    /// The usage the answer reported; `None` when no message was answered.
    pub usage: Option<Usage>,
    pub status: u16,
}

struct ServerState {
    script: Script,
    workspace: PathBuf,
    requests: Vec<RecordedRequest>,
    fail_with: Option<StatusCode>,
    next_id: u64,
}

type Shared = Arc<Mutex<ServerState>>;

/// A running server; it stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    state: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl ModelServer {
    /// Binds 127.0.0.1 on a port the OS picks and serves `script`; relative
    /// `file_path`/`notebook_path` inputs are made absolute against `workspace`.
    pub async fn start(script: Script, workspace: &Path) -> anyhow::Result<ModelServer> {
        let state = Arc::new(Mutex::new(ServerState {
            script,
            workspace: workspace.to_path_buf(),
            requests: Vec::new(),
            fail_with: None,
            next_id: 0,
        }));
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("cannot bind the scripted model server to 127.0.0.1")?;
        let addr = listener
            .local_addr()
            .context("cannot read the scripted model server's address")?;
        let task = tokio::spawn(async move {
            if let Err(err) = axum::serve(listener, app).await {
                eprintln!("scripted model server on {addr} stopped: {err}");
            }
        });
        Ok(ModelServer { addr, state, task })
    }

    /// The value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// From now on answer every `POST /v1/messages` with this HTTP error status
    /// (`None` restores normal answers). For failure tests.
    pub fn fail_with(&self, status: Option<u16>) -> anyhow::Result<()> {
        let status = status
            .map(|code| {
                StatusCode::from_u16(code)
                    .with_context(|| format!("{code} is not an HTTP status code"))
            })
            .transpose()?;
        lock(&self.state).fail_with = status;
        Ok(())
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(state): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (response, delay) = respond(&state, method, uri, &headers, &body);
    // The lock is released: a held-back answer must not hold back other requests.
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    response
}

/// Answers and records one request; the delay is the scripted decision's.
fn respond(
    state: &Shared,
    method: Method,
    uri: Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> (Response, Duration) {
    let mut state = lock(state);
    let mut delay = Duration::ZERO;
    let mut record = RecordedRequest {
        method: method.to_string(),
        uri: uri.to_string(),
        headers: RECORDED_HEADERS
            .iter()
            .filter_map(|name| {
                let value = headers.get(*name)?.to_str().ok()?;
                Some((name.to_string(), value.to_string()))
            })
            .collect(),
        body: None,
        route: Route::Other,
        turn: None,
        usage: None,
        status: 200,
    };
    let response = if method == Method::POST && uri.path() == "/v1/messages" {
        answer_messages(&mut state, &mut record, body, &mut delay)
    } else if method == Method::POST && uri.path() == "/v1/decisions" {
        answer_decisions(&state.script, &mut record, body, &mut delay)
    } else if method == Method::HEAD && uri.path() == "/" {
        StatusCode::OK.into_response()
    } else {
        error_response(
            StatusCode::NOT_FOUND,
            "not_found_error",
            &format!("the scripted model server does not serve {method} {uri}"),
        )
    };
    record.status = response.status().as_u16();
    state.requests.push(record);
    (response, delay)
}

/// The first scripted decision whose `when` is in `text`.
fn decision_for<'a>(script: &'a Script, text: &str) -> Option<&'a Decision> {
    script.decisions.iter().find(|d| text.contains(&d.when))
}

fn answer_decisions(
    script: &Script,
    record: &mut RecordedRequest,
    body: &[u8],
    delay: &mut Duration,
) -> Response {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("the request body is not JSON: {err}"),
            );
        }
    };
    let text = format!("{}\n{}", request["state"], request["questions"]);
    record.body = Some(request);
    let Some(decision) = decision_for(script, &text) else {
        return error_response(
            StatusCode::NOT_FOUND,
            "not_found_error",
            "no scripted decision matches this request",
        );
    };
    record.route = Route::Decision;
    *delay = Duration::from_millis(decision.delay_ms);
    match &decision.reply {
        Value::String(text) => text.clone().into_response(),
        reply => axum::Json(json!({"probabilities": reply})).into_response(),
    }
}

fn answer_messages(
    state: &mut ServerState,
    record: &mut RecordedRequest,
    body: &[u8],
    delay: &mut Duration,
) -> Response {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!("the request body is not JSON: {err}"),
            );
        }
    };
    record.body = Some(request.clone());
    let Some(model) = request["model"].as_str().map(str::to_string) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "model: field required",
        );
    };
    if let Some(status) = state.fail_with {
        return error_response(
            status,
            "api_error",
            &format!("scripted failure {}", status.as_u16()),
        );
    }
    let is_agent = record.headers.contains_key(AGENT_HEADER);
    let decision = decision_call(&state.script, &request);
    if let Some(decision) = decision {
        *delay = Duration::from_millis(decision.delay_ms);
    }
    let play = match decision {
        Some(decision) => Play {
            route: Route::Decision,
            turn: None,
            blocks: vec![Block::text(decision.reply_text())],
        },
        None => choose(&state.script, &request, is_agent),
    };
    record.route = play.route;
    record.turn = play.turn;
    let content: Vec<Value> = play
        .blocks
        .iter()
        .map(|block| {
            state.next_id += 1;
            content_block(block, &state.workspace, state.next_id)
        })
        .collect();
    let usage = usage_for(&request, &play.blocks);
    record.usage = Some(usage);
    state.next_id += 1;
    let message = Message {
        id: format!("msg_{:024}", state.next_id),
        model,
        stop_reason: stop_reason(&play.blocks),
        content,
        usage,
    };
    if request["stream"].as_bool() == Some(true) {
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            message.to_sse(),
        )
            .into_response()
    } else {
        axum::Json(message.to_json()).into_response()
    }
}

fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// What one request gets played.
#[derive(Debug, PartialEq)]
struct Play {
    route: Route,
    turn: Option<usize>,
    blocks: Vec<Block>,
}

/// Picks the answer for a request: a compaction summary, the script turn whose
/// index equals the number of assistant messages so far (its `on_error` when the
/// last tool result failed, else its `on_context` when the text since the last
/// assistant message contains its text), or a closing text once the script is
/// exhausted.
fn choose(script: &Script, request: &Value, is_agent: bool) -> Play {
    let messages = request["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if last_user_text(messages).is_some_and(|text| text.contains(COMPACT_MARKER)) {
        return Play {
            route: Route::Compact,
            turn: None,
            blocks: vec![Block::text(COMPACT_SUMMARY)],
        };
    }
    let (route, turns) = if is_agent {
        (Route::Agent, &script.agent)
    } else {
        (Route::Main, &script.main)
    };
    let index = messages
        .iter()
        .filter(|message| message["role"] == "assistant")
        .count();
    let blocks = match turns.get(index) {
        Some(Turn { on_error, .. })
            if !on_error.is_empty() && last_tool_result_failed(messages) =>
        {
            on_error.clone()
        }
        Some(Turn {
            on_context: Some(branch),
            ..
        }) if text_since_last_answer(messages).contains(&branch.contains) => branch.blocks.clone(),
        Some(turn) => turn.blocks.clone(),
        None => vec![Block::text(EXHAUSTED_TEXT)],
    };
    Play {
        route,
        turn: Some(index),
        blocks,
    }
}

/// The scripted decision a Messages API request is: the CLI's requests carry
/// tools, the harness's decision calls none.
fn decision_call<'a>(script: &'a Script, request: &Value) -> Option<&'a Decision> {
    if request.get("tools").is_some() {
        return None;
    }
    let messages = request["messages"].as_array()?;
    decision_for(script, &last_user_text(messages)?)
}

/// Content blocks of a message: a string is one text block.
fn blocks_of(message: &Value) -> Vec<&Value> {
    match &message["content"] {
        Value::Array(blocks) => blocks.iter().collect(),
        text @ Value::String(_) => vec![text],
        _ => Vec::new(),
    }
}

fn last_user_text(messages: &[Value]) -> Option<String> {
    let message = messages.iter().rev().find(|m| m["role"] == "user")?;
    let text: Vec<&str> = blocks_of(message)
        .into_iter()
        .filter_map(|block| block.as_str().or_else(|| block["text"].as_str()))
        .collect();
    Some(text.join("\n"))
}

/// Whether the newest tool result since the last assistant message is an error.
fn last_tool_result_failed(messages: &[Value]) -> bool {
    messages
        .iter()
        .rev()
        .take_while(|message| message["role"] != "assistant")
        .flat_map(blocks_of)
        .find(|block| block["type"] == "tool_result")
        .is_some_and(|block| block["is_error"] == true)
}

/// Every text since the last assistant message: the tool results' content and
/// the text blocks beside them, where the CLI puts a hook's `additionalContext`
/// as a `<system-reminder>` (and the `role: "system"` messages it sends).
fn text_since_last_answer(messages: &[Value]) -> String {
    let mut texts = Vec::new();
    for message in messages
        .iter()
        .rev()
        .take_while(|message| message["role"] != "assistant")
    {
        for block in blocks_of(message) {
            // A tool result's own content is a string or blocks, as a message's is.
            texts.extend(
                std::iter::once(block)
                    .chain(blocks_of(block))
                    .filter_map(|b| b.as_str().or_else(|| b["text"].as_str())),
            );
        }
    }
    texts.join("\n")
}

/// The fixed usage rule: input = 100 + 10 per message in the request; cache
/// creation 20 and cache read 30 per request; output = 1 per block plus one per 4
/// bytes of its text or JSON input.
pub fn usage_for(request: &Value, blocks: &[Block]) -> Usage {
    let messages = request["messages"].as_array().map_or(0, Vec::len) as u64;
    let output = blocks
        .iter()
        .map(|block| {
            let bytes = match block {
                Block::Text { text } => text.len(),
                Block::ToolUse { input, .. } => input.to_string().len(),
            };
            1 + bytes.div_ceil(4) as u64
        })
        .sum();
    Usage {
        input: 100 + 10 * messages,
        output,
        cache_read: 30,
        cache_creation: 20,
    }
}

fn stop_reason(blocks: &[Block]) -> &'static str {
    if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// A block as the API returns it, with relative paths made absolute.
fn content_block(block: &Block, workspace: &Path, id: u64) -> Value {
    match block {
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::ToolUse { name, input } => json!({
            "type": "tool_use",
            "id": format!("toolu_{id:024}"),
            "name": name,
            "input": absolutize(input, workspace),
        }),
    }
}

fn absolutize(input: &Value, workspace: &Path) -> Value {
    let mut input = input.clone();
    for key in ["file_path", "notebook_path"] {
        if let Some(path) = input[key].as_str().filter(|p| Path::new(p).is_relative()) {
            input[key] = Value::String(workspace.join(path).to_string_lossy().into_owned());
        }
    }
    input
}

struct Message {
    id: String,
    model: String,
    stop_reason: &'static str,
    content: Vec<Value>,
    usage: Usage,
}

impl Message {
    fn usage_json(&self) -> Value {
        json!({
            "input_tokens": self.usage.input,
            "output_tokens": self.usage.output,
            "cache_read_input_tokens": self.usage.cache_read,
            "cache_creation_input_tokens": self.usage.cache_creation,
        })
    }

    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content,
            "stop_reason": self.stop_reason,
            "stop_sequence": null,
            "usage": self.usage_json(),
        })
    }

    /// The streaming form: `message_start` carries the input usage, the final
    /// `message_delta` the stop reason and output tokens.
    fn to_sse(&self) -> String {
        let mut start_usage = self.usage_json();
        start_usage["output_tokens"] = json!(0);
        let mut events = vec![(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage,
            }}),
        )];
        for (index, block) in self.content.iter().enumerate() {
            let (empty, delta) = if block["type"] == "tool_use" {
                (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                )
            } else {
                (
                    json!({"type": "text", "text": ""}),
                    json!({"type": "text_delta", "text": block["text"]}),
                )
            };
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": empty}),
            ));
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
            events.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        events.push((
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": self.stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": self.usage.output}}),
        ));
        events.push(("message_stop", json!({"type": "message_stop"})));
        events
            .iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::script::OnContext;

    fn script() -> Script {
        Script {
            main: vec![
                Turn {
                    blocks: vec![Block::tool("Write", json!({"file_path": "a.txt"}))],
                    on_error: vec![Block::text("it failed")],
                    on_context: None,
                },
                Turn::new(vec![Block::text("done")]),
            ],
            agent: vec![Turn::new(vec![Block::text("sub")])],
            decisions: Vec::new(),
        }
    }

    fn tool_result(is_error: bool) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": is_error}]})
    }

    #[test]
    fn turn_index_is_the_number_of_assistant_messages() {
        let first = json!({"messages": [{"role": "user", "content": "go"}]});
        let play = choose(&script(), &first, false);
        assert_eq!((play.route, play.turn), (Route::Main, Some(0)));
        assert_eq!(play.blocks, script().main[0].blocks);

        let second = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "system", "content": "note"},
            {"role": "assistant", "content": [{"type": "text", "text": "t"}]},
            tool_result(false),
        ]});
        assert_eq!(choose(&script(), &second, false).turn, Some(1));
        let exhausted = json!({"messages": [
            {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]});
        assert_eq!(
            choose(&script(), &exhausted, false).blocks,
            vec![Block::text(EXHAUSTED_TEXT)]
        );
    }

    #[test]
    fn on_error_plays_only_after_a_failed_tool_result() {
        let mut script = script();
        script.main[0].on_error = Vec::new();
        script.main[1].on_error = vec![Block::text("recover")];
        let failed = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            tool_result(true),
        ]});
        assert_eq!(
            choose(&script, &failed, false).blocks,
            vec![Block::text("recover")]
        );
        let ok = json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use"}]},
            tool_result(false),
        ]});
        assert_eq!(
            choose(&script, &ok, false).blocks,
            vec![Block::text("done")]
        );
    }

    #[test]
    fn on_context_plays_when_the_reminder_beside_the_tool_result_has_its_text() {
        let mut script = script();
        script.main[1].on_context = Some(OnContext {
            contains: "already has".into(),
            blocks: vec![Block::text("reuse")],
        });
        let request = |reminder: &str, is_error: bool| {
            json!({"messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use"}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": is_error},
                    {"type": "text", "text": format!("<system-reminder>\nPostToolUse:Write hook additional context: {reminder}\n</system-reminder>")},
                ]},
            ]})
        };
        let noted = request("Sens: the project already has what this write added", false);
        assert_eq!(
            choose(&script, &noted, false).blocks,
            vec![Block::text("reuse")]
        );
        let quiet = request("nothing", false);
        assert_eq!(
            choose(&script, &quiet, false).blocks,
            vec![Block::text("done")]
        );
        // A text in an earlier exchange is not this tool result's context.
        let mut earlier = noted.clone();
        earlier["messages"].as_array_mut().unwrap().extend([
            json!({"role": "assistant", "content": "a"}),
            tool_result(false),
        ]);
        script.main.push(script.main[1].clone());
        assert_eq!(
            choose(&script, &earlier, false).blocks,
            vec![Block::text("done")]
        );
    }

    #[test]
    fn agent_and_compact_requests_are_routed_apart() {
        let request = json!({"messages": [{"role": "user", "content": "sub task"}]});
        let play = choose(&script(), &request, true);
        assert_eq!(play.route, Route::Agent);
        assert_eq!(play.blocks, vec![Block::text("sub")]);

        let compact = json!({"messages": [
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": [{"type": "text", "text": "Summarize. CRITICAL: Respond with TEXT ONLY."}]},
        ]});
        let play = choose(&script(), &compact, false);
        assert_eq!(play.route, Route::Compact);
        assert_eq!(stop_reason(&play.blocks), "end_turn");
    }

    #[test]
    fn relative_paths_become_absolute_and_tool_use_stops_for_tools() {
        let block = Block::tool(
            "Write",
            json!({"file_path": "src/a.rs", "content": "x", "notebook_path": "/abs/n.ipynb"}),
        );
        let value = content_block(&block, Path::new("/ws"), 7);
        assert_eq!(value["input"]["file_path"], "/ws/src/a.rs");
        assert_eq!(value["input"]["notebook_path"], "/abs/n.ipynb");
        assert_eq!(value["id"], format!("toolu_{:024}", 7));
        assert_eq!(stop_reason(std::slice::from_ref(&block)), "tool_use");
        assert_eq!(stop_reason(&[Block::text("x")]), "end_turn");
    }

    #[test]
    fn usage_follows_the_fixed_rule() {
        let request = json!({"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": "a"}]});
        let usage = usage_for(&request, &[Block::text("12345678"), Block::text("1")]);
        assert_eq!(
            usage,
            Usage {
                input: 120,
                output: (1 + 2) + (1 + 1),
                cache_read: 30,
                cache_creation: 20
            }
        );
    }

    #[test]
    fn sse_has_explicit_events_in_order() {
        let message = Message {
            id: "msg_1".into(),
            model: "m".into(),
            stop_reason: "tool_use",
            content: vec![
                json!({"type": "text", "text": "hi"}),
                json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}),
            ],
            usage: Usage {
                input: 100,
                output: 9,
                cache_read: 0,
                cache_creation: 0,
            },
        };
        let sse = message.to_sse();
        let events: Vec<&str> = sse
            .lines()
            .filter_map(|line| line.strip_prefix("event: "))
            .collect();
        assert_eq!(
            events,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(
            sse.contains(r#""partial_json":"{\"command\":\"ls\"}""#),
            "{sse}"
        );
        assert!(sse.contains(r#""usage":{"output_tokens":9}"#), "{sse}");
        assert_eq!(message.to_json()["content"][1]["input"]["command"], "ls");
    }

    /// Sends one raw HTTP/1.1 request; returns the status line and the body.
    async fn http(server: &ModelServer, method: &str, path: &str, body: &str) -> (String, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             x-api-key: k\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        (head.lines().next().unwrap().to_string(), body.to_string())
    }

    #[tokio::test]
    async fn serves_json_without_stream_records_requests_and_fails_on_demand() {
        let server = ModelServer::start(script(), Path::new("/ws"))
            .await
            .unwrap();
        let (status, _) = http(&server, "HEAD", "/", "").await;
        assert!(status.ends_with("200 OK"), "{status}");

        let request = r#"{"model": "m", "messages": [{"role": "user", "content": "go"}]}"#;
        let (status, body) = http(&server, "POST", "/v1/messages?beta=true", request).await;
        assert!(status.ends_with("200 OK"), "{status}");
        let message: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(message["stop_reason"], "tool_use");
        assert_eq!(message["content"][0]["input"]["file_path"], "/ws/a.txt");
        assert_eq!(message["usage"]["input_tokens"], 110);

        let streamed = r#"{"model": "m", "stream": true, "messages": []}"#;
        let (_, body) = http(&server, "POST", "/v1/messages", streamed).await;
        assert!(body.contains("event: message_start"), "{body}");

        server.fail_with(Some(500)).unwrap();
        let (status, body) = http(&server, "POST", "/v1/messages", request).await;
        assert!(status.contains("500"), "{status}");
        assert!(body.contains("scripted failure 500"), "{body}");
        assert!(server.fail_with(Some(1000)).is_err());
        server.fail_with(None).unwrap();

        let (status, _) = http(&server, "POST", "/v1/messages", "{").await;
        assert!(status.contains("400"), "{status}");
        let (status, _) = http(&server, "GET", "/v1/models", "").await;
        assert!(status.contains("404"), "{status}");

        let requests = server.requests();
        let summary: Vec<(&str, u16, Route)> = requests
            .iter()
            .map(|r| (r.method.as_str(), r.status, r.route))
            .collect();
        assert_eq!(
            summary,
            [
                ("HEAD", 200, Route::Other),
                ("POST", 200, Route::Main),
                ("POST", 200, Route::Main),
                ("POST", 500, Route::Other),
                ("POST", 400, Route::Other),
                ("GET", 404, Route::Other),
            ]
        );
        assert_eq!(requests[1].uri, "/v1/messages?beta=true");
        assert_eq!(requests[1].headers["x-api-key"], "k");
        assert_eq!(requests[1].usage.unwrap().input, 110);
        assert_eq!(requests[1].body.as_ref().unwrap()["model"], "m");
    }

    #[tokio::test]
    async fn decision_calls_are_answered_from_the_scripts_decisions() {
        let mut script = script();
        script.decisions = vec![
            Decision {
                when: "rule a".into(),
                reply: json!({"a": 0.7}),
                delay_ms: 0,
            },
            Decision {
                when: "broken".into(),
                reply: json!("not json"),
                delay_ms: 0,
            },
        ];
        let server = ModelServer::start(script, Path::new("/ws")).await.unwrap();
        let ask = r#"{"model": "m", "messages": [{"role": "user", "content": "is rule a kept?"}]}"#;
        let (_, body) = http(&server, "POST", "/v1/messages", ask).await;
        let message: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(message["content"][0]["text"], r#"{"a":0.7}"#);
        // The CLI's requests carry tools: they play the script whatever their text.
        let cli =
            r#"{"model": "m", "tools": [], "messages": [{"role": "user", "content": "rule a"}]}"#;
        let (_, body) = http(&server, "POST", "/v1/messages", cli).await;
        let message: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(message["stop_reason"], "tool_use");

        let endpoint = r#"{"state": "diff", "questions": {"a": "is rule a kept?"}}"#;
        let (_, body) = http(&server, "POST", "/v1/decisions", endpoint).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"probabilities": {"a": 0.7}})
        );
        let broken = r#"{"state": "broken", "questions": {}}"#;
        let (_, body) = http(&server, "POST", "/v1/decisions", broken).await;
        assert_eq!(body, "not json");
        let unknown = r#"{"state": "x", "questions": {}}"#;
        let (status, _) = http(&server, "POST", "/v1/decisions", unknown).await;
        assert!(status.contains("404"), "{status}");

        let routes: Vec<Route> = server.requests().iter().map(|r| r.route).collect();
        assert_eq!(
            routes,
            [
                Route::Decision,
                Route::Main,
                Route::Decision,
                Route::Decision,
                Route::Other
            ]
        );
    }
}
