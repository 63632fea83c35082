//! C2's hook handler: the engine's hook session answering the CLI's callbacks
//! in process (SPEC 2.6). The session already speaks the CLI's hook JSON; this
//! lets the driver hold it as a [`HookHandler`] and builds it for a workspace.

use std::path::Path;

use anyhow::Context;
use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::session::review::ReviewOptions;
use sens_engine::session::{Session, SessionOptions};
use serde_json::Value;

use super::HookHandler;

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
/// its `.sens/`), with the reviewer of the Stop audit when given. Pass it to
/// [`super::claude::ClaudeSession::start`].
pub fn engine_handler(
    workspace: &Path,
    ledger: &Path,
    rules: RuleConfig,
    review: Option<ReviewOptions>,
) -> anyhow::Result<Session> {
    let rules_digest = rules.digest();
    let engine = Engine::open(workspace, rules)
        .with_context(|| format!("indexing the workspace {}", workspace.display()))?;
    let mut options = SessionOptions::new(ledger.to_path_buf());
    options.rules_digest = rules_digest;
    options.review = review;
    Session::new(workspace, Box::new(engine), options).with_context(|| {
        format!(
            "starting the engine's hook session in {}",
            workspace.display()
        )
    })
}
