//! The Claude Code driver: one CLI process per session, spoken to over
//! stream-json (protocol doc sections 1, 2, 5).
//!
//! Three tasks share the process: a reader (stdout -> transcript, control
//! requests, results), a writer (the only owner of stdin), and a hook worker
//! thread that answers `hook_callback`s and `mcp_message`s (the handler's
//! in-process MCP servers) in arrival order with the session's [`HookHandler`].
//!
//! Decisions where the contract (docs/contract.md) is silent:
//! - `--safe-mode` exists in 2.1.197 and is kept for every condition: it turns
//!   off file-based customizations (settings hooks, CLAUDE.md, plugins), while
//!   hooks registered through `initialize` still fire (the integration tests
//!   run with it).
//! - Several user messages may go to one process ([`ClaudeSession::turn`]); the
//!   time limit applies to each turn. The CLI's `modelUsage` and cost add up over
//!   a session, so the driver reports each turn's share.
//! - A hook callback the handler cannot answer (it panicked) stays unanswered:
//!   the CLI then blocks the tool at the callback timeout, where an error answer
//!   would let it run. The turn fails as a harness error.
//! - On a timeout and at the end, everything the CLI started is killed,
//!   including the Bash commands it detaches into their own sessions. After a
//!   crash only its process group can be ended: the orphans' parent links are gone.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::budget::{RunLimits, Spent, Tally};
use super::{HookHandler, Usage};
use crate::exec::group::{descendants, kill_all, kill_group, kill_tree};
use crate::sandbox::View;
use crate::sync::lock;

/// How long the CLI gets to answer `initialize`, at most: a shorter time limit
/// of the run bounds it too.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// The file beside the transcript that keeps everything the CLI writes to stderr.
pub const STDERR_LOG: &str = "agent.stderr.log";
/// After an interrupt, how long the turn gets to close with its `result`.
const INTERRUPT_GRACE: Duration = Duration::from_secs(10);
/// After stdin closes (or the stream ends), how long the CLI gets to exit.
const EXIT_GRACE: Duration = Duration::from_secs(10);
/// After a turn's result, how long a callback still in the handler (the CLI gave
/// up waiting for it) may take before the turn fails as a harness error.
const HOOK_SETTLE: Duration = Duration::from_secs(60);
/// How much of the CLI's stderr a crash report quotes.
const STDERR_TAIL: usize = 4000;

/// The model API the CLI talks to instead of its default (the scripted server).
#[derive(Debug, Clone)]
pub struct ApiEndpoint {
    pub base_url: String,
    pub api_key: String,
}

/// Everything one session needs, decided before it starts.
#[derive(Debug, Clone)]
pub struct ClaudeOptions {
    pub binary: PathBuf,
    /// The project the agent works in (the CLI's cwd).
    pub workdir: PathBuf,
    /// A private HOME: the CLI keeps its config and transcripts there.
    pub home: PathBuf,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The limit for each turn, from sending the prompt to its `result`.
    pub timeout: Duration,
    /// `None`: the CLI uses the API settings of the environment.
    pub api: Option<ApiEndpoint>,
    /// Given with `--append-system-prompt` (C1, C2: the Canon).
    pub append_system_prompt: Option<String>,
    pub env: Vec<(String, String)>,
    /// Every line the CLI writes, in order; its stderr goes to [`STDERR_LOG`] in
    /// the same folder.
    pub transcript: PathBuf,
    /// The bubblewrap sandbox the CLI runs in; `None` with `--no-sandbox`.
    pub sandbox: Option<View>,
    /// Each turn's spending limits (see [`super::budget`]).
    pub limits: RunLimits,
}

impl ClaudeOptions {
    /// The command line; the same permissions for every condition (protocol doc 8).
    /// The engine's MCP server is allowed too: without it 2.1.197 refuses its tools
    /// ("requested permissions ... you haven't granted it yet"); where the
    /// condition does not serve them, the rule names nothing.
    fn args(&self) -> Vec<String> {
        let allowed = format!("Bash,{}", sens_engine::mcp::permission_rule());
        let mut args: Vec<String> = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            &allowed,
            "--safe-mode",
        ]
        .map(String::from)
        .to_vec();
        let optional = [
            ("--model", &self.model),
            ("--effort", &self.effort),
            ("--append-system-prompt", &self.append_system_prompt),
        ];
        for (flag, value) in optional {
            if let Some(value) = value {
                args.extend([flag.to_string(), value.clone()]);
            }
        }
        args
    }
}

/// Where the pinned CLI is: `SENS_CLAUDE_BIN`, else `.tools/node_modules/.bin/claude`
/// under the workspace root (installed by `scripts/setup.sh`).
pub fn pinned_claude_bin(workspace_root: &Path) -> anyhow::Result<PathBuf> {
    let from_env = std::env::var_os("SENS_CLAUDE_BIN").map(PathBuf::from);
    claude_bin(from_env, workspace_root)
}

fn claude_bin(from_env: Option<PathBuf>, workspace_root: &Path) -> anyhow::Result<PathBuf> {
    let path = from_env.unwrap_or_else(|| workspace_root.join(".tools/node_modules/.bin/claude"));
    anyhow::ensure!(
        path.is_file(),
        "the Claude Code CLI is missing at {}: run scripts/setup.sh (or set SENS_CLAUDE_BIN)",
        path.display()
    );
    Ok(path)
}

/// Why a session failed, in the classes a run record keeps apart.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(
        "the Claude Code CLI was not found at {}: run scripts/setup.sh or pass its path",
        path.display()
    )]
    CliMissing { path: PathBuf },
    #[error(
        "the Claude Code CLI ended ({status}) without a result; its stderr (whole in {STDERR_LOG}) ended with:\n{stderr}"
    )]
    CliCrashed { status: String, stderr: String },
    #[error("{}", describe_error_result(result))]
    ApiError { result: Box<TurnResult> },
    #[error("the agent did not finish within {}s: interrupted, then killed", after.as_secs())]
    Timeout { after: Duration },
    /// A spending limit was passed: mid-turn (the CLI was killed, `result` is
    /// `None` and `spent` is the stream's tally) or by the turn's `result`.
    #[error("{reason}{}", if result.is_none() { ": the agent was killed" } else { "" })]
    Budget {
        reason: String,
        spent: Spent,
        result: Option<Box<TurnResult>>,
    },
    /// The harness's side failed (transcript, protocol); not the agent's fault.
    #[error(transparent)]
    Harness(#[from] anyhow::Error),
}

fn describe_error_result(result: &TurnResult) -> String {
    let text = result.text.as_deref().unwrap_or("no message");
    match result.api_error_status {
        Some(status) => format!("the model API answered HTTP {status}: {text}"),
        None => format!("the turn ended in an error ({}): {text}", result.subtype),
    }
}

/// What the CLI's `result` message reports for one turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TurnResult {
    pub subtype: String,
    pub is_error: bool,
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// The final text; absent for some error subtypes.
    #[serde(rename = "result", default)]
    pub text: Option<String>,
    /// Main-loop API calls.
    pub num_turns: u64,
    /// Main loop only.
    #[serde(deserialize_with = "api_usage")]
    pub usage: Usage,
    /// Per model, subagents included; this turn's only (see [`Cumulative`]).
    #[serde(rename = "modelUsage")]
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Subagents included; this turn's only.
    pub total_cost_usd: f64,
    #[serde(default)]
    pub permission_denials: Vec<Value>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    pub session_id: String,
    pub duration_ms: u64,
}

impl TurnResult {
    /// Tokens of every model call, subagents included.
    pub fn total_usage(&self) -> Usage {
        self.model_usage.values().map(|m| m.usage).sum()
    }

    fn parse(value: Value) -> anyhow::Result<TurnResult> {
        serde_json::from_value(value)
            .context("the CLI's result message lacks a field sens-bench reads")
    }
}

/// In one process the CLI's `modelUsage` and `total_cost_usd` add up over the
/// whole session, while `usage` and `num_turns` are the turn's own (seen on
/// 2.1.197). This keeps the running totals so every [`TurnResult`] holds one
/// turn's figures.
#[derive(Debug, Default)]
struct Cumulative {
    models: BTreeMap<String, ModelUsage>,
    cost_usd: f64,
}

impl Cumulative {
    fn per_turn(&mut self, mut result: TurnResult) -> anyhow::Result<TurnResult> {
        let totals = Cumulative {
            models: result.model_usage.clone(),
            cost_usd: result.total_cost_usd,
        };
        for (model, turn) in &mut result.model_usage {
            if let Some(before) = self.models.get(model) {
                turn.usage = turn.usage.checked_sub(before.usage).with_context(|| {
                    format!("the CLI's modelUsage for {model} went down between turns")
                })?;
                turn.cost_usd -= before.cost_usd;
            }
        }
        result.total_cost_usd -= self.cost_usd;
        *self = totals;
        Ok(result)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct ModelUsage {
    #[serde(flatten, deserialize_with = "model_usage")]
    pub usage: Usage,
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
}

/// `usage` in the API's names.
fn api_usage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Usage, D::Error> {
    #[derive(Deserialize)]
    struct Api {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_input_tokens: u64,
        cache_creation_input_tokens: u64,
    }
    let u = Api::deserialize(d)?;
    Ok(Usage {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_input_tokens,
        cache_creation: u.cache_creation_input_tokens,
    })
}

/// `modelUsage` entries in the CLI's camel-case names.
fn model_usage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Usage, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cli {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_input_tokens: u64,
        cache_creation_input_tokens: u64,
    }
    let u = Cli::deserialize(d)?;
    Ok(Usage {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_input_tokens,
        cache_creation: u.cache_creation_input_tokens,
    })
}

/// What the reader passes to the session.
enum Event {
    Response(Value),
    /// An `assistant` message: its API call's usage counts against the limits.
    Assistant(Value),
    Result(Value),
    /// The stream ended; `Err` when reading or recording it failed.
    Closed(Result<(), String>),
}

enum Outgoing {
    Line(Value),
    Close,
}

struct HookCall {
    request_id: String,
    request: HandlerRequest,
}

/// What the CLI asks the handler.
enum HandlerRequest {
    Hook { callback_id: String, input: Value },
    Mcp { server: String, message: Value },
}

impl HandlerRequest {
    /// The control response's `response` object.
    fn answer(&self, handler: &mut dyn HookHandler) -> Value {
        match self {
            HandlerRequest::Hook { callback_id, input } => handler.handle(callback_id, input),
            HandlerRequest::Mcp { server, message } => {
                // The CLI hands whatever comes back to its MCP client; for a
                // notification that is an empty result, as the Python SDK answers.
                let response = handler
                    .mcp_message(server, message)
                    .unwrap_or_else(|| json!({"jsonrpc": "2.0", "result": {}}));
                json!({"mcp_response": response})
            }
        }
    }

    /// What it was, for a failure report.
    fn describe(&self) -> String {
        match self {
            HandlerRequest::Hook { callback_id, input } => {
                format!("{callback_id} ({})", input["hook_event_name"])
            }
            HandlerRequest::Mcp { server, message } => {
                format!("mcp_message to {server} ({})", message["method"])
            }
        }
    }
}

/// The way from the reader to the hook worker, with a count of the callbacks
/// handed over and not yet finished by the handler.
#[derive(Clone)]
struct HookQueue {
    calls: std::sync::mpsc::Sender<HookCall>,
    in_flight: Arc<watch::Sender<usize>>,
}

/// A running CLI process.
pub struct ClaudeSession {
    child: Child,
    pid: u32,
    timeout: Duration,
    limits: RunLimits,
    writer: mpsc::UnboundedSender<Outgoing>,
    events: mpsc::UnboundedReceiver<Event>,
    reader: Option<JoinHandle<()>>,
    stderr: Arc<Mutex<String>>,
    /// Ends when the CLI's stderr closes: a crash report waits for it, so it
    /// quotes what the CLI wrote last.
    stderr_reader: Option<JoinHandle<()>>,
    handler_failure: Arc<Mutex<Option<String>>>,
    /// Callbacks the handler has not finished (see [`HookQueue`]).
    hooks_in_flight: Arc<watch::Sender<usize>>,
    cumulative: Cumulative,
    /// Why the reader stopped, when it failed (not the CLI's fault).
    stream_error: Option<String>,
    next_request: u64,
    /// Set once the process was killed or its stream ended: no more turns.
    ended: bool,
}

impl ClaudeSession {
    /// Spawns the CLI in its own process group and completes `initialize`
    /// (registering the handler's hooks, if any).
    pub async fn start(
        options: &ClaudeOptions,
        handler: Option<Box<dyn HookHandler>>,
    ) -> Result<ClaudeSession, AgentError> {
        std::fs::create_dir_all(&options.home).with_context(|| {
            format!("cannot create the session HOME {}", options.home.display())
        })?;
        let transcript = tokio::fs::File::create(&options.transcript)
            .await
            .with_context(|| {
                format!(
                    "cannot create the transcript {}",
                    options.transcript.display()
                )
            })?;
        if !options.binary.exists() {
            return Err(AgentError::CliMissing {
                path: options.binary.clone(),
            });
        }
        let mut command = match &options.sandbox {
            Some(view) => view.command(&options.binary, &options.workdir)?,
            None => Command::new(&options.binary),
        };
        command
            .args(options.args())
            .current_dir(&options.workdir)
            .env("HOME", &options.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(api) = &options.api {
            command
                .env("ANTHROPIC_BASE_URL", &api.base_url)
                .env("ANTHROPIC_API_KEY", &api.api_key)
                .env_remove("ANTHROPIC_AUTH_TOKEN");
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(AgentError::CliMissing {
                    path: options.binary.clone(),
                });
            }
            Err(err) => {
                return Err(anyhow::Error::new(err)
                    .context(format!("cannot start {}", options.binary.display()))
                    .into());
            }
        };
        let pid = child
            .id()
            .context("the CLI exited before it could be watched")?;
        let (stdin, stdout, stderr_pipe) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => return Err(anyhow::anyhow!("the CLI's pipes were not opened").into()),
            };
        let (writer, outgoing) = mpsc::unbounded_channel();
        tokio::spawn(write_stdin(stdin, outgoing));
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_log = options.transcript.with_file_name(STDERR_LOG);
        let log = tokio::fs::File::create(&stderr_log)
            .await
            .with_context(|| format!("cannot create {}", stderr_log.display()))?;
        let stderr_reader = tokio::spawn(keep_stderr(stderr_pipe, Arc::clone(&stderr), log));

        let registrations = handler
            .as_ref()
            .map(|h| (h.hook_registrations(), h.mcp_servers()));
        let cancelled = Arc::new(Mutex::new(HashSet::new()));
        let handler_failure = Arc::new(Mutex::new(None));
        let hooks_in_flight = Arc::new(watch::Sender::new(0));
        let hooks = handler.map(|handler| {
            let (calls, received) = std::sync::mpsc::channel();
            let queue = HookQueue {
                calls,
                in_flight: Arc::clone(&hooks_in_flight),
            };
            let writer = writer.clone();
            let (cancelled, failure) = (Arc::clone(&cancelled), Arc::clone(&handler_failure));
            let in_flight = Arc::clone(&hooks_in_flight);
            std::thread::spawn(move || {
                answer_hooks(handler, received, writer, cancelled, failure, &in_flight);
            });
            queue
        });
        let (events_tx, events) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_stream(
            stdout,
            transcript,
            events_tx,
            writer.clone(),
            hooks,
            cancelled,
        ));
        let mut session = ClaudeSession {
            child,
            pid,
            timeout: options.timeout,
            limits: options.limits,
            writer,
            events,
            reader: Some(reader),
            stderr,
            stderr_reader: Some(stderr_reader),
            handler_failure,
            hooks_in_flight,
            cumulative: Cumulative::default(),
            stream_error: None,
            next_request: 0,
            ended: false,
        };
        let mut request = json!({"subtype": "initialize"});
        if let Some((hooks, mcp_servers)) = registrations {
            request["hooks"] = hooks;
            if !mcp_servers.is_empty() {
                request["sdkMcpServers"] = json!(mcp_servers);
            }
        }
        session.send_request(request);
        let startup = STARTUP_TIMEOUT.min(options.timeout);
        match tokio::time::timeout(startup, session.next_event(true)).await {
            Ok(Some(Event::Response(response))) if response["subtype"] == "success" => Ok(session),
            Ok(Some(Event::Response(response))) => {
                Err(anyhow::anyhow!("the CLI refused initialize: {}", response["error"]).into())
            }
            Ok(_) => Err(session.crashed().await),
            Err(_) => {
                session.kill().await;
                Err(anyhow::anyhow!(
                    "the CLI did not answer initialize within {}s",
                    startup.as_secs()
                )
                .into())
            }
        }
    }

    /// Sends one user message and waits for its `result`, within the time limit.
    /// On timeout: an interrupt, a grace period, then the process group is killed
    /// and the session is over.
    pub async fn turn(&mut self, prompt: &str) -> Result<TurnResult, AgentError> {
        if self.ended {
            return Err(anyhow::anyhow!("the session has ended; start a new one").into());
        }
        self.send(json!({
            "type": "user",
            "session_id": "",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": null,
        }));
        let value = match tokio::time::timeout(self.timeout, self.watch_turn()).await {
            Ok(Some(Ok(value))) => value,
            Ok(Some(Err((reason, spent)))) => {
                self.kill().await;
                return Err(AgentError::Budget {
                    reason,
                    spent,
                    result: None,
                });
            }
            Ok(None) => return Err(self.crashed().await),
            Err(_) => {
                self.send_request(json!({"subtype": "interrupt"}));
                // The interrupted turn's result is not worth keeping: the run is a timeout.
                let _ = tokio::time::timeout(INTERRUPT_GRACE, self.next_result()).await;
                self.kill().await;
                return Err(AgentError::Timeout {
                    after: self.timeout,
                });
            }
        };
        // A callback the CLI gave up on may still be in the handler (a slow or
        // panicking engine); its outcome belongs to this turn.
        let mut in_flight = self.hooks_in_flight.subscribe();
        if tokio::time::timeout(HOOK_SETTLE, in_flight.wait_for(|n| *n == 0))
            .await
            .is_err()
        {
            return Err(anyhow::anyhow!(
                "the hook handler was still answering a callback {}s after the turn ended",
                HOOK_SETTLE.as_secs()
            )
            .into());
        }
        if let Some(failure) = lock(&self.handler_failure).clone() {
            return Err(
                anyhow::anyhow!("{failure}; the tools it was asked about were blocked").into(),
            );
        }
        let result = self.cumulative.per_turn(TurnResult::parse(value)?)?;
        let tokens = result.total_usage().total();
        if let Some(reason) = self.limits.passed(tokens, result.total_cost_usd) {
            return Err(AgentError::Budget {
                reason,
                spent: Spent {
                    usage: result.usage,
                    cost_usd: result.total_cost_usd,
                },
                result: Some(Box::new(result)),
            });
        }
        if result.is_error {
            return Err(AgentError::ApiError {
                result: Box::new(result),
            });
        }
        Ok(result)
    }

    /// Closes stdin, waits for the CLI to exit (killing the group after a grace
    /// period), ends anything it left running, and flushes the transcript.
    pub async fn finish(mut self) -> anyhow::Result<ExitStatus> {
        let spawned = descendants(self.pid);
        // The writer is gone only if stdin already broke; the exit below says why.
        let _ = self.writer.send(Outgoing::Close);
        let status = match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(status) => status.context("cannot wait for the CLI")?,
            Err(_) => {
                kill_group(self.pid).context("cannot kill the CLI's process group")?;
                self.child.wait().await.context("cannot wait for the CLI")?
            }
        };
        self.end_group().await?;
        kill_all(&spawned);
        Ok(status)
    }

    /// Ends the process group (leftover background commands included) and lets
    /// the reader flush the transcript.
    async fn end_group(&mut self) -> anyhow::Result<()> {
        kill_group(self.pid).context("cannot kill the CLI's process group")?;
        self.ended = true;
        if let Some(reader) = self.reader.take() {
            reader.await.context("the transcript reader failed")?;
        }
        while let Ok(event) = self.events.try_recv() {
            self.note_close(&event);
        }
        match &self.stream_error {
            Some(err) => anyhow::bail!("{err}"),
            None => Ok(()),
        }
    }

    async fn kill(&mut self) {
        // Killing is best effort here: the caller already reports the failure.
        kill_tree(self.pid);
        let _ = self.child.wait().await;
        let _ = self.end_group().await;
    }

    /// The stream ended without a result: the CLI exited or died, or the reader
    /// failed (then the CLI is not to blame and is not waited for).
    async fn crashed(&mut self) -> AgentError {
        if let Some(err) = self.stream_error.clone() {
            self.kill().await;
            return anyhow::anyhow!("{err}").into();
        }
        let status = match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(err)) => format!("status unknown: {err}"),
            Err(_) => "still running after its output closed".to_string(),
        };
        self.kill().await;
        // The group is dead, so its stderr closes; the grace bounds a pipe held
        // open by a process that escaped the group.
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(EXIT_GRACE, reader).await;
        }
        let stderr = lock(&self.stderr).clone();
        AgentError::CliCrashed { status, stderr }
    }

    fn send(&self, line: Value) {
        // A closed writer means the CLI's stdin broke; the reader sees the end.
        let _ = self.writer.send(Outgoing::Line(line));
    }

    fn send_request(&mut self, request: Value) {
        self.next_request += 1;
        self.send(json!({
            "type": "control_request",
            "request_id": format!("req_{}", self.next_request),
            "request": request,
        }));
    }

    fn note_close(&mut self, event: &Event) {
        if let Event::Closed(outcome) = event {
            self.ended = true;
            if let Err(err) = outcome {
                self.stream_error = Some(err.clone());
            }
        }
    }

    /// The next event of interest: results, and control responses when asked for.
    async fn next_event(&mut self, responses: bool) -> Option<Event> {
        loop {
            let event = self.events.recv().await?;
            self.note_close(&event);
            match event {
                Event::Response(_) if !responses => continue,
                event => return Some(event),
            }
        }
    }

    /// The turn's `result`, or what was spent when the stream's tally passed a
    /// limit first; `None` when the stream ended.
    async fn watch_turn(&mut self) -> Option<Result<Value, (String, Spent)>> {
        let mut tally = Tally::default();
        loop {
            match self.next_event(false).await? {
                Event::Result(value) => return Some(Ok(value)),
                Event::Assistant(message) => {
                    tally.add(&message);
                    let spent = tally.spent;
                    if let Some(reason) = self.limits.passed(spent.usage.total(), spent.cost_usd) {
                        return Some(Err((reason, spent)));
                    }
                }
                _ => return None,
            }
        }
    }

    async fn next_result(&mut self) -> Option<Value> {
        loop {
            match self.next_event(false).await? {
                Event::Result(value) => return Some(value),
                Event::Assistant(_) => continue,
                _ => return None,
            }
        }
    }
}

impl Drop for ClaudeSession {
    fn drop(&mut self) {
        if !self.ended {
            // Nothing can be reported from a drop; the tree is ended regardless.
            kill_tree(self.pid);
        }
    }
}

/// Starts a session, plays one prompt, and shuts the CLI down.
pub async fn run_once(
    options: &ClaudeOptions,
    handler: Option<Box<dyn HookHandler>>,
    prompt: &str,
) -> Result<TurnResult, AgentError> {
    let mut session = ClaudeSession::start(options, handler).await?;
    let outcome = session.turn(prompt).await;
    if !session.ended {
        session.finish().await?;
    }
    outcome
}

async fn write_stdin(mut stdin: ChildStdin, mut outgoing: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(Outgoing::Line(line)) = outgoing.recv().await {
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
    // Close (or every sender gone): dropping stdin sends EOF.
}

/// Writes the CLI's stderr to `log` and keeps its last [`STDERR_TAIL`] bytes in
/// `tail` for the crash report. A log that cannot be written is given up; the
/// tail is still kept.
async fn keep_stderr(mut pipe: ChildStderr, tail: Arc<Mutex<String>>, log: tokio::fs::File) {
    let mut buffer = [0u8; 4096];
    let mut log = Some(log);
    while let Ok(n) = pipe.read(&mut buffer).await {
        if n == 0 {
            return;
        }
        if let Some(file) = &mut log
            && (file.write_all(&buffer[..n]).await.is_err() || file.flush().await.is_err())
        {
            log = None;
        }
        let mut tail = lock(&tail);
        tail.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if tail.len() > STDERR_TAIL {
            let mut cut = tail.len() - STDERR_TAIL;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.drain(..cut);
        }
    }
}

fn control_response(request_id: &str, outcome: Result<Value, String>) -> Value {
    let response = match outcome {
        Ok(response) => {
            json!({"subtype": "success", "request_id": request_id, "response": response})
        }
        Err(error) => json!({"subtype": "error", "request_id": request_id, "error": error}),
    };
    json!({"type": "control_response", "response": response})
}

/// Copies every stdout line to the transcript and routes the protocol messages.
async fn read_stream(
    stdout: ChildStdout,
    mut transcript: tokio::fs::File,
    events: mpsc::UnboundedSender<Event>,
    writer: mpsc::UnboundedSender<Outgoing>,
    hooks: Option<HookQueue>,
    cancelled: Arc<Mutex<HashSet<String>>>,
) {
    let mut lines = BufReader::new(stdout).lines();
    let outcome = loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break Ok(()),
            Err(err) => break Err(format!("cannot read the CLI's output: {err}")),
        };
        if let Err(err) = transcript.write_all(format!("{line}\n").as_bytes()).await {
            break Err(format!("cannot write the transcript: {err}"));
        }
        // Non-JSON lines are kept in the transcript only.
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let forwarded = match message["type"].as_str() {
            Some("result") => events.send(Event::Result(message)).is_ok(),
            Some("assistant") => events.send(Event::Assistant(message)).is_ok(),
            Some("control_response") => events
                .send(Event::Response(message["response"].clone()))
                .is_ok(),
            Some("control_cancel_request") => {
                if let Some(id) = message["request_id"].as_str() {
                    lock(&cancelled).insert(id.to_string());
                }
                true
            }
            Some("control_request") => {
                route_control_request(&message, &writer, hooks.as_ref());
                true
            }
            _ => true,
        };
        if !forwarded {
            break Ok(());
        }
    };
    let outcome = match transcript.flush().await {
        Err(err) if outcome.is_ok() => Err(format!("cannot write the transcript: {err}")),
        _ => outcome,
    };
    // The session may already be gone; then nobody needs to hear it.
    let _ = events.send(Event::Closed(outcome));
}

fn route_control_request(
    message: &Value,
    writer: &mpsc::UnboundedSender<Outgoing>,
    hooks: Option<&HookQueue>,
) {
    let request_id = message["request_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let request = &message["request"];
    let text = |field: &str| request[field].as_str().unwrap_or_default().to_string();
    let handled = match request["subtype"].as_str() {
        Some("hook_callback") => Some(HandlerRequest::Hook {
            callback_id: text("callback_id"),
            input: request["input"].clone(),
        }),
        Some("mcp_message") => Some(HandlerRequest::Mcp {
            server: text("server_name"),
            message: request["message"].clone(),
        }),
        _ => None,
    };
    let refusal = match (handled, hooks) {
        (Some(request), Some(hooks)) => {
            let call = HookCall {
                request_id: request_id.clone(),
                request,
            };
            // When the handler has failed, the call stays unanswered on purpose: an
            // error answer would let the tool run, silence makes the CLI block it
            // at the callback's timeout. The turn then reports the failure.
            hooks.in_flight.send_modify(|n| *n += 1);
            if hooks.calls.send(call).is_err() {
                hooks.in_flight.send_modify(|n| *n -= 1);
            }
            return;
        }
        (Some(_), None) => "no hook handler in this session".to_string(),
        (None, _) => format!(
            "sens-bench does not answer control requests of subtype {}",
            request["subtype"].as_str().unwrap_or("(none)")
        ),
    };
    // An unanswered request would stall the CLI until its timeout; say no instead.
    let _ = writer.send(Outgoing::Line(control_response(&request_id, Err(refusal))));
}

/// The hook worker: one callback at a time, in arrival order, so the handler sees
/// events in the order the CLI raised them. Answers to cancelled requests are
/// dropped. After the handler panicked, later calls stay unanswered.
fn answer_hooks(
    mut handler: Box<dyn HookHandler>,
    calls: std::sync::mpsc::Receiver<HookCall>,
    writer: mpsc::UnboundedSender<Outgoing>,
    cancelled: Arc<Mutex<HashSet<String>>>,
    failure: Arc<Mutex<Option<String>>>,
    in_flight: &watch::Sender<usize>,
) {
    for call in calls {
        if lock(&failure).is_none() {
            answer_hook(&mut *handler, &call, &writer, &cancelled, &failure);
        }
        in_flight.send_modify(|n| *n -= 1);
    }
}

fn answer_hook(
    handler: &mut dyn HookHandler,
    call: &HookCall,
    writer: &mpsc::UnboundedSender<Outgoing>,
    cancelled: &Mutex<HashSet<String>>,
    failure: &Mutex<Option<String>>,
) {
    let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        call.request.answer(handler)
    }));
    let output = match handled {
        Ok(output) => output,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            *lock(failure) = Some(format!(
                "the hook handler panicked on {}: {message}",
                call.request.describe()
            ));
            return;
        }
    };
    if !lock(cancelled).remove(&call.request_id) {
        // The session may be gone; then nobody waits for the answer.
        let _ = writer.send(Outgoing::Line(control_response(
            &call.request_id,
            Ok(output),
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ClaudeOptions {
        ClaudeOptions {
            binary: PathBuf::from("claude"),
            workdir: PathBuf::from("/w"),
            home: PathBuf::from("/h"),
            model: Some("claude-sonnet-4-5".into()),
            effort: None,
            timeout: Duration::from_secs(1),
            api: None,
            append_system_prompt: Some("CANON".into()),
            env: Vec::new(),
            transcript: PathBuf::from("/t"),
            sandbox: None,
            limits: Default::default(),
        }
    }

    #[test]
    fn args_carry_the_fixed_permissions_and_the_condition() {
        let args = options().args();
        let joined = args.join(" ");
        assert!(joined.starts_with(
            "-p --input-format stream-json --output-format stream-json --verbose \
             --permission-mode acceptEdits --allowedTools Bash,mcp__sens --safe-mode"
        ));
        assert!(joined.contains("--model claude-sonnet-4-5"));
        assert!(!joined.contains("--effort"));
        assert_eq!(&args[args.len() - 2..], ["--append-system-prompt", "CANON"]);
    }

    #[test]
    fn result_parses_usage_main_loop_and_models() {
        let result = TurnResult::parse(json!({
            "type": "result", "subtype": "success", "is_error": false, "api_error_status": null,
            "duration_ms": 10, "num_turns": 4, "result": "ok", "session_id": "s",
            "total_cost_usd": 0.5,
            "usage": {"input_tokens": 400, "output_tokens": 28, "cache_read_input_tokens": 3,
                      "cache_creation_input_tokens": 4, "server_tool_use": {}},
            "modelUsage": {"m": {"inputTokens": 600, "outputTokens": 40, "cacheReadInputTokens": 5,
                                 "cacheCreationInputTokens": 6, "costUSD": 0.5, "webSearchRequests": 0}},
            "permission_denials": [{"tool_name": "Write"}], "terminal_reason": "completed",
        }))
        .unwrap();
        assert_eq!(
            result.usage,
            Usage {
                input: 400,
                output: 28,
                cache_read: 3,
                cache_creation: 4
            }
        );
        assert_eq!(result.total_usage().input, 600);
        assert_eq!(result.model_usage["m"].cost_usd, 0.5);
        assert_eq!(result.permission_denials.len(), 1);
        assert_eq!(result.text.as_deref(), Some("ok"));

        let mut failed = result.clone();
        failed.api_error_status = Some(500);
        failed.text = Some("API Error: 500 overloaded".into());
        let err = AgentError::ApiError {
            result: Box::new(failed.clone()),
        };
        assert_eq!(
            err.to_string(),
            "the model API answered HTTP 500: API Error: 500 overloaded"
        );
        failed.api_error_status = None;
        failed.subtype = "error_max_turns".into();
        failed.text = None;
        let err = AgentError::ApiError {
            result: Box::new(failed),
        };
        assert_eq!(
            err.to_string(),
            "the turn ended in an error (error_max_turns): no message"
        );
    }

    #[test]
    fn cumulative_model_usage_and_cost_become_per_turn() {
        let result = |input: u64, cost: f64| TurnResult {
            subtype: "success".into(),
            is_error: false,
            api_error_status: None,
            text: None,
            num_turns: 1,
            usage: Usage::default(),
            model_usage: BTreeMap::from([(
                "m".to_string(),
                ModelUsage {
                    usage: Usage {
                        input,
                        ..Usage::default()
                    },
                    cost_usd: cost,
                },
            )]),
            total_cost_usd: cost,
            permission_denials: Vec::new(),
            terminal_reason: None,
            session_id: "s".into(),
            duration_ms: 1,
        };
        let mut totals = Cumulative::default();
        let first = totals.per_turn(result(100, 0.5)).unwrap();
        assert_eq!(
            (first.total_usage().input, first.total_cost_usd),
            (100, 0.5)
        );
        let second = totals.per_turn(result(250, 1.25)).unwrap();
        assert_eq!(
            (second.total_usage().input, second.total_cost_usd),
            (150, 0.75)
        );
        assert_eq!(second.model_usage["m"].cost_usd, 0.75);
        let err = totals.per_turn(result(10, 2.0)).unwrap_err();
        assert!(err.to_string().contains("went down"), "{err}");
    }

    #[test]
    fn a_result_without_usage_is_an_error_naming_the_field() {
        let err = TurnResult::parse(json!({"subtype": "success", "is_error": false,
            "num_turns": 1, "session_id": "s", "duration_ms": 1, "total_cost_usd": 0.0,
            "modelUsage": {}}))
        .unwrap_err();
        assert!(format!("{err:#}").contains("usage"), "{err:#}");
    }

    #[test]
    fn control_responses_have_the_protocol_envelope() {
        assert_eq!(
            control_response("r1", Ok(json!({}))),
            json!({"type": "control_response",
                   "response": {"subtype": "success", "request_id": "r1", "response": {}}})
        );
        assert_eq!(
            control_response("r2", Err("no".into()))["response"],
            json!({"subtype": "error", "request_id": "r2", "error": "no"})
        );
    }

    #[test]
    fn the_cli_is_found_in_the_environment_or_under_tools() {
        let dir = tempfile::tempdir().unwrap();
        let err = claude_bin(None, dir.path()).unwrap_err();
        assert!(err.to_string().contains("run scripts/setup.sh"), "{err}");
        assert!(
            err.to_string().contains(".tools/node_modules/.bin/claude"),
            "{err}"
        );
        let bin = dir.path().join(".tools/node_modules/.bin/claude");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "").unwrap();
        assert_eq!(claude_bin(None, dir.path()).unwrap(), bin);
        let other = dir.path().join("other");
        assert!(claude_bin(Some(other.clone()), dir.path()).is_err());
        std::fs::write(&other, "").unwrap();
        assert_eq!(claude_bin(Some(other.clone()), dir.path()).unwrap(), other);
    }
}
