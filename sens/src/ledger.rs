//! The hook ledger's lines (`.sens/hooks.jsonl`, a run folder's `hooks.jsonl`)
//! as read back: each line typed once (the engine's own [`Verdict`]), for
//! `status`'s last decisions and the harness's counts.

use sens_engine::finding::Finding;
use sens_engine::session::guards::Decision;
use sens_engine::session::ledger::Verdict;
use sens_engine::session::review::ReviewRecord;
use serde::Deserialize;

/// One ledger line, as far as its readers read it.
#[derive(Debug, Clone, Deserialize)]
pub struct LedgerLine {
    #[serde(default)]
    pub seq: u64,
    /// The hook event (`PreToolUse`, `Stop`, ...).
    #[serde(default)]
    pub event: String,
    #[serde(default)]
    pub tool: Option<String>,
    /// Set when a subagent made the call.
    #[serde(default)]
    pub agent_id: Option<String>,
    pub verdict: Verdict,
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The hook's input as the CLI sent it (`tool_input`, `tool_use_id`, `prompt`).
    #[serde(default)]
    pub input: serde_json::Value,
    /// How the engine failed (verdict `error`).
    #[serde(default)]
    pub error: Option<String>,
    /// What the engine answered (a denial's reason, a block's, added context).
    #[serde(default)]
    pub output: serde_json::Value,
    /// Kept as written: only their number is counted.
    #[serde(default)]
    pub suggestions: Vec<serde_json::Value>,
    /// The Stop audit's review, when one ran.
    #[serde(default)]
    pub review: Option<ReviewRecord>,
    /// The guards' decisions on this callback.
    #[serde(default)]
    pub guards: Vec<Decision>,
}
