//! C2's hook handler: the engine's hook session answering the CLI's callbacks
//! in process (SPEC 2.6), and a condition's handler: the engine with the
//! condition's guards, or the guards alone (`engine = false`). The session already speaks the CLI's hook JSON; this
//! lets the driver hold it as a [`HookHandler`] and builds it for a workspace.

use std::path::Path;

use anyhow::Context;
use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::session::guards::{Acceptance, Guards};
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
}

/// The C2 hook handler for `workspace` (a git repository): the engine, with the
/// index of the workspace as it stands and the condition's rules, inside a hook
/// session whose ledger is appended to `ledger` (outside the workspace, or under
/// its `.sens/`). Pass it to [`super::claude::ClaudeSession::start`].
pub fn engine_handler(
    workspace: &Path,
    ledger: &Path,
    rules: RuleConfig,
) -> anyhow::Result<Session> {
    let rules_digest = rules.digest();
    let engine = Engine::open(workspace, rules)
        .with_context(|| format!("indexing the workspace {}", workspace.display()))?;
    let mut options = SessionOptions::new(ledger.to_path_buf());
    options.rules_digest = rules_digest;
    Session::new(workspace, Box::new(engine), options).with_context(|| {
        format!(
            "starting the engine's hook session in {}",
            workspace.display()
        )
    })
}

/// The hook handler a condition asks for: `None` without the engine and
/// without guards; the engine with the guards added; or, with `engine =
/// false`, a session of the guards alone (no copy rules). `test_commands` are
/// the project's test commands (the guards' evidence of a test run);
/// `acceptance` is what that guard needs, when the condition lists it.
pub fn condition_handler(
    workspace: &Path,
    ledger: &Path,
    condition: &Condition,
    test_commands: &[String],
    acceptance: Option<Acceptance>,
) -> anyhow::Result<Option<Session>> {
    let guards = Guards::new(&condition.guard_specs, test_commands, acceptance)?;
    if condition.engine {
        let session = engine_handler(workspace, ledger, condition.rule_config.clone())?;
        return Ok(Some(session.with_guards(guards)));
    }
    if guards.is_empty() {
        return Ok(None);
    }
    let options = SessionOptions::new(ledger.to_path_buf());
    let session = Session::guards_only(workspace, guards, options).with_context(|| {
        format!(
            "starting the guards' hook session in {}",
            workspace.display()
        )
    })?;
    Ok(Some(session))
}
