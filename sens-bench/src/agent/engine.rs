//! C2's hook handler: the engine's hook session answering the CLI's callbacks
//! in process (SPEC 2.6). The session already speaks the CLI's hook JSON; this
//! only lets the driver hold it as a [`HookHandler`].

use std::path::Path;

use sens_engine::judge::Judge;
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

/// A hook session over the git repository `workspace` judged by `judge`, its
/// ledger appended to `ledger` (outside the workspace, or under its `.sens/`).
pub fn engine_session(
    workspace: &Path,
    judge: Box<dyn Judge>,
    ledger: &Path,
) -> anyhow::Result<Session> {
    Session::new(workspace, judge, SessionOptions::new(ledger.to_path_buf()))
}
