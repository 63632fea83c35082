//! The hook worker: the handler's requests (hook callbacks and MCP messages)
//! queued from the reader and answered one at a time on their own thread.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::protocol::{Outgoing, control_response};
use crate::agent::HookHandler;
use crate::sync::lock;

pub(super) struct HookCall {
    pub(super) request_id: String,
    pub(super) request: HandlerRequest,
}

/// What the CLI asks the handler.
pub(super) enum HandlerRequest {
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
pub(super) struct HookQueue {
    pub(super) calls: std::sync::mpsc::Sender<HookCall>,
    pub(super) in_flight: Arc<watch::Sender<usize>>,
}

/// The hook worker: one callback at a time, in arrival order, so the handler sees
/// events in the order the CLI raised them. Answers to cancelled requests are
/// dropped. After the handler panicked, later calls stay unanswered.
pub(super) fn answer_hooks(
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
