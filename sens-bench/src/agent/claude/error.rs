//! Why a session failed, in the classes a run record keeps apart.

use std::path::PathBuf;
use std::time::Duration;

use super::STDERR_LOG;
use super::result::TurnResult;
use crate::agent::budget::Spent;

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
