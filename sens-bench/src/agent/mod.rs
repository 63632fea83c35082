//! Agents (docs/contract.md, "Agents"): the real Claude Code CLI driven over stream-json,
//! and the scripted model server that stands in for the model (`oracle`, `script:FILE`).
//! The engine reaches a session only through [`HookHandler`].
//!
//! Horizonte sequences run one process per step: the workspace carries the
//! agent's own previous work forward, each step's tokens and time are its own,
//! and a scripted agent plays one script per step (its turn index counts the
//! assistant messages of the whole conversation). [`claude::ClaudeSession`] can
//! also take several prompts in one process when a conversation must continue.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod acceptance;
pub mod budget;
pub mod claude;
pub mod decider;
pub mod engine;
pub mod messages;
pub mod model_server;
pub mod oracle;
pub mod review;
pub mod script;

/// Answers Claude Code hook callbacks in process (C2's engine session; tests).
pub trait HookHandler: Send {
    /// The `hooks` field of the `initialize` control request:
    /// `{Event: [{"matcher": str|null, "hookCallbackIds": [..], "timeout": secs}]}`.
    fn hook_registrations(&self) -> serde_json::Value;

    /// The hook-output object for one `hook_callback` (`{}` for no opinion).
    fn handle(&mut self, callback_id: &str, input: &serde_json::Value) -> serde_json::Value;

    /// The in-process MCP servers it answers: the `sdkMcpServers` of `initialize`.
    fn mcp_servers(&self) -> Vec<String> {
        Vec::new()
    }

    /// The JSON-RPC response to one message the CLI sends `server` (an
    /// `mcp_message` control request); `None` for a notification. Called only for
    /// the servers of [`HookHandler::mcp_servers`].
    fn mcp_message(
        &mut self,
        _server: &str,
        _message: &serde_json::Value,
    ) -> Option<serde_json::Value> {
        None
    }
}

/// Token counts of the CLI's `result` message; the run record's `tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, other: Usage) -> Usage {
        Usage {
            input: self.input + other.input,
            output: self.output + other.output,
            cache_read: self.cache_read + other.cache_read,
            cache_creation: self.cache_creation + other.cache_creation,
        }
    }
}

impl Usage {
    /// All tokens: the "tokens" metric of reports.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_creation
    }

    /// `None` when any count of `earlier` exceeds this one's.
    pub fn checked_sub(self, earlier: Usage) -> Option<Usage> {
        Some(Usage {
            input: self.input.checked_sub(earlier.input)?,
            output: self.output.checked_sub(earlier.output)?,
            cache_read: self.cache_read.checked_sub(earlier.cache_read)?,
            cache_creation: self.cache_creation.checked_sub(earlier.cache_creation)?,
        })
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| a + b)
    }
}

/// Which agent a run uses, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentKind {
    /// The CLI against the real model API.
    Claude,
    /// The CLI against the scripted server playing the task's reference patch.
    Oracle,
    /// The CLI against the scripted server playing a scenario file.
    Script(PathBuf),
}

impl FromStr for AgentKind {
    type Err = anyhow::Error;
    fn from_str(text: &str) -> anyhow::Result<AgentKind> {
        match text {
            "claude" => Ok(AgentKind::Claude),
            "oracle" => Ok(AgentKind::Oracle),
            _ => match text.strip_prefix("script:") {
                Some("") => anyhow::bail!("agent `script:` names no file: write script:FILE"),
                Some(file) => Ok(AgentKind::Script(PathBuf::from(file))),
                None => anyhow::bail!(
                    "unknown agent `{text}`: expected `claude`, `oracle` or `script:FILE`"
                ),
            },
        }
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentKind::Claude => f.write_str("claude"),
            AgentKind::Oracle => f.write_str("oracle"),
            AgentKind::Script(file) => write!(f, "script:{}", file.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_kinds_parse_and_print_back() {
        for text in ["claude", "oracle", "script:tests/s.json"] {
            let kind: AgentKind = text.parse().unwrap();
            assert_eq!(kind.to_string(), text);
        }
        assert_eq!(
            "script:a.json".parse::<AgentKind>().unwrap(),
            AgentKind::Script(PathBuf::from("a.json"))
        );
        let err = "script:".parse::<AgentKind>().unwrap_err();
        assert!(err.to_string().contains("names no file"));
        let err = "gpt".parse::<AgentKind>().unwrap_err();
        assert!(err.to_string().contains("unknown agent `gpt`"));
    }

    #[test]
    fn usage_sums_field_by_field() {
        let a = Usage {
            input: 1,
            output: 2,
            cache_read: 3,
            cache_creation: 4,
        };
        let total: Usage = [a, a, a].into_iter().sum();
        assert_eq!(
            total,
            Usage {
                input: 3,
                output: 6,
                cache_read: 9,
                cache_creation: 12
            }
        );
        assert_eq!(total.checked_sub(a), Some(a + a));
        assert_eq!(a.checked_sub(total), None);
    }
}
