//! The socket protocol between `sens hook`/`approve`/`reject`/`status` and the
//! resident engine: per connection one request and one reply, each one line of
//! JSON (hook inputs hold file contents; JSON escapes their newlines).

use std::io::{BufRead, Write};

use anyhow::{Context, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
pub enum Request {
    /// A hook input as the CLI wrote it on the hook's stdin.
    Hook {
        input: Value,
    },
    /// A JSON-RPC message of the query tools' MCP server, as the CLI wrote it
    /// to `sens mcp`; the reply is the response, `null` for a notification.
    Mcp {
        message: Value,
    },
    Approve,
    Reject,
    Status,
}

/// The engine's answer (a hook output, or a command's result) or its error.
pub type Reply = Result<Value, String>;

/// Writes `message` as one line and flushes it.
pub fn send(writer: &mut impl Write, message: &impl Serialize) -> anyhow::Result<()> {
    let mut line = serde_json::to_vec(message).context("encoding a message for the engine")?;
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()?;
    Ok(())
}

/// Reads one line and parses it; end of stream before a line is an error.
pub fn receive<T: DeserializeOwned>(reader: &mut impl BufRead) -> anyhow::Result<T> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        bail!("the connection closed before a message arrived");
    }
    serde_json::from_str(&line).context("the message is not the protocol's JSON")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_and_a_reply_round_trip_as_one_line_each() {
        let request = Request::Hook {
            input: json!({"hook_event_name": "PreToolUse", "tool_input": {"content": "a\nb"}}),
        };
        let mut wire = Vec::new();
        send(&mut wire, &request).unwrap();
        let reply: Reply = Err("no engine".into());
        send(&mut wire, &reply).unwrap();
        assert_eq!(wire.iter().filter(|b| **b == b'\n').count(), 2);
        let mut reader = wire.as_slice();
        let Request::Hook { input } = receive(&mut reader).unwrap() else {
            panic!("not a hook request");
        };
        assert_eq!(input["tool_input"]["content"], "a\nb");
        assert_eq!(receive::<Reply>(&mut reader).unwrap(), reply);
        assert!(receive::<Reply>(&mut reader).is_err());
    }
}
