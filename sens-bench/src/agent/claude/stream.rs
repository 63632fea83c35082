//! The CLI's pipes: the writer (the only owner of stdin), the stderr keeper, and
//! the reader that copies stdout to the transcript and routes the protocol
//! messages.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use super::STDERR_TAIL;
use super::hooks::{HandlerRequest, HookCall, HookQueue};
use super::protocol::{Event, Outgoing, control_response};
use crate::sync::lock;

pub(super) async fn write_stdin(
    mut stdin: ChildStdin,
    mut outgoing: mpsc::UnboundedReceiver<Outgoing>,
) {
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
pub(super) async fn keep_stderr(
    mut pipe: ChildStderr,
    tail: Arc<Mutex<String>>,
    log: tokio::fs::File,
) {
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

/// Copies every stdout line to the transcript and routes the protocol messages.
pub(super) async fn read_stream(
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
