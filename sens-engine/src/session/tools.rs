//! The engine's query tools served as the session's in-process MCP server, each
//! call written to the ledger.

use std::time::Instant;

use serde_json::{Value, json};

use super::ledger::Verdict;
use super::{Outcome, Session, TOOL_CALL_EVENT};
use crate::mcp;
use crate::tools::ToolError;

impl Session {
    /// The in-process MCP servers the session answers (the `sdkMcpServers` of
    /// the CLI's `initialize`): [`mcp::SERVER_NAME`] when it serves its tools.
    pub fn mcp_servers(&self) -> Vec<String> {
        if self.options.tools {
            vec![mcp::SERVER_NAME.to_string()]
        } else {
            Vec::new()
        }
    }

    /// Answers one JSON-RPC message to the session's MCP server; `None` for a
    /// notification.
    pub fn mcp_message(&mut self, message: &Value) -> Option<Value> {
        mcp::respond(message, |name, arguments, tool_use_id| {
            self.call_tool(name, arguments, tool_use_id)
        })
    }

    /// Answers one call of the engine's query tools on the judge's index as the
    /// last rescan left it, written to the ledger (event [`TOOL_CALL_EVENT`],
    /// verdict `answer`, or `error` with why) like every callback, with the
    /// agent's `tool_use_id` when the CLI gave it. A session that does not serve
    /// its tools knows none.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &Value,
        tool_use_id: Option<&str>,
    ) -> Result<Value, ToolError> {
        let started = Instant::now();
        let approved_before = self.approved.map(|c| c.tree);
        let mut input = json!({"tool_name": name, "tool_input": arguments});
        if let Some(id) = tool_use_id {
            input["tool_use_id"] = json!(id);
        }
        let answered = if self.options.tools {
            self.judged_tree()
                .map_err(ToolError::Engine)
                .and_then(|tree| match &self.judge {
                    Some(judge) => Ok((tree, judge.tool(name, arguments)?)),
                    // A session of guards alone has no judge, so it knows no tool.
                    None => Err(ToolError::Unknown(name.to_string())),
                })
        } else {
            Err(ToolError::Unknown(name.to_string()))
        };
        let outcome = match &answered {
            Ok((tree, answer)) => Outcome::new(Verdict::Answer, answer.clone(), *tree),
            Err(e) => {
                let mut outcome = Outcome::new(Verdict::Error, json!({}), self.last_look);
                outcome.error = Some(e.to_string());
                outcome
            }
        };
        self.write_ledger(TOOL_CALL_EVENT, &input, approved_before, &outcome, started)?;
        answered.map(|(_, answer)| answer)
    }
}
