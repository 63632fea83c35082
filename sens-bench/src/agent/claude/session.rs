//! A running CLI process: started with `initialize`, played turn by turn within
//! the time and spending limits, and ended with everything it started.

use std::collections::HashSet;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::error::AgentError;
use super::hooks::{HookQueue, answer_hooks};
use super::options::ClaudeOptions;
use super::protocol::{Event, Outgoing};
use super::result::{Cumulative, TurnResult};
use super::stream::{keep_stderr, read_stream, write_stdin};
use super::{EXIT_GRACE, HOOK_SETTLE, INTERRUPT_GRACE, STARTUP_TIMEOUT, STDERR_LOG};
use crate::agent::HookHandler;
use crate::agent::budget::{RunLimits, Spent, Tally};
use crate::exec::group::{descendants, kill_all, kill_group, kill_tree};
use crate::sync::lock;

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
