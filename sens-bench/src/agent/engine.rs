//! C2's hook handler: the engine's hook session answering the CLI's callbacks in process
//! (docs/contract.md, "The hook session"), under `mcp_tools` (C3) its query tools as the
//! SDK MCP server `sens`, and a condition's handler: the engine with the condition's
//! guards, or the guards alone (`engine = false`). The session already speaks the CLI's
//! hook JSON and MCP's JSON-RPC; this lets the driver hold it as a [`HookHandler`] and
//! builds it for a workspace.

use std::path::Path;

use anyhow::Context;
use sens::session::{engine_session, open_engine, session_options};
use sens_engine::config::RuleConfig;
use sens_engine::session::guards::{Acceptance, Guards};
use sens_engine::session::review::ReviewOptions;
use sens_engine::session::{Session, SessionOptions};
use serde_json::Value;

use super::HookHandler;
use crate::spec::conditions::Condition;

impl HookHandler for Session {
    fn hook_registrations(&self) -> Value {
        Session::hook_registrations(self)
    }

    fn handle(&mut self, callback_id: &str, input: &Value) -> Value {
        Session::handle(self, callback_id, input)
    }

    fn mcp_servers(&self) -> Vec<String> {
        Session::mcp_servers(self)
    }

    fn mcp_message(&mut self, _server: &str, message: &Value) -> Option<Value> {
        Session::mcp_message(self, message)
    }
}

/// What a condition asks of the engine's hook session besides its ledger.
#[derive(Debug, Default)]
pub struct HandlerOptions<'a> {
    /// The rules the engine judges with.
    pub rules: RuleConfig,
    /// Serve the query tools (condition option `mcp_tools`).
    pub tools: bool,
    /// The on-disk index cache folder (`None`: index every file).
    pub cache: Option<&'a Path>,
    /// The reviewer of the Stop audit (condition option `review`).
    pub review: Option<ReviewOptions>,
    /// The harness's own ignore patterns ([`crate::workspace::Workspace::excluded`]).
    pub excluded: &'a [String],
    /// No suggestions at the prompts, and so no symbol embedded at the start:
    /// for checks that judge the engine's decisions alone.
    pub without_suggestions: bool,
}

/// The C2 hook handler for `workspace` (a git repository): the engine, with the
/// index of the workspace as it stands and the condition's rules, inside a hook
/// session whose ledger is appended to `ledger` (outside the workspace, or under
/// its `.sens/`), as `handler` asks. Pass it to
/// [`super::claude::ClaudeSession::start`].
pub fn engine_handler(
    workspace: &Path,
    ledger: &Path,
    handler: HandlerOptions,
) -> anyhow::Result<Session> {
    let engine = open_engine(workspace, &handler.rules, handler.cache)?;
    // Part of the engine's start, so no run's first suggestion ranks by words
    // alone while the model's vectors are still being made.
    if !handler.without_suggestions {
        engine
            .prepare_suggestions()
            .with_context(|| format!("embedding the symbols of {}", workspace.display()))?;
    }
    let mut options = session_options(ledger, &handler.rules);
    options.suggestions = !handler.without_suggestions;
    options.tools = handler.tools;
    options.review = handler.review;
    options.excluded = handler.excluded.to_vec();
    engine_session(workspace, engine, options)
}

/// The hook handler a condition asks for: `None` without the engine and
/// without guards; the engine (as `handler` asks) with the guards added; or,
/// with `engine = false`, a session of the guards alone (no copy rules).
/// `test_commands` are the project's test commands (the guards' evidence of a
/// test run); `acceptance` is what that guard needs, when the condition lists it.
pub fn condition_handler(
    workspace: &Path,
    ledger: &Path,
    condition: &Condition,
    handler: HandlerOptions,
    test_commands: &[String],
    acceptance: Option<Acceptance>,
) -> anyhow::Result<Option<Session>> {
    let guards = Guards::new(&condition.guard_specs, test_commands, acceptance)?;
    if condition.engine {
        let session = engine_handler(workspace, ledger, handler)?;
        return Ok(Some(session.with_guards(guards)));
    }
    if guards.is_empty() {
        return Ok(None);
    }
    let mut options = SessionOptions::new(ledger.to_path_buf());
    options.excluded = handler.excluded.to_vec();
    let session = Session::guards_only(workspace, guards, options).with_context(|| {
        format!(
            "starting the guards' hook session in {}",
            workspace.display()
        )
    })?;
    Ok(Some(session))
}
