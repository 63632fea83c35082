//! The engine's query tools ([`crate::tools`]) as an MCP server: JSON-RPC 2.0
//! messages in, responses out, whatever carries them (the CLI's `mcp_message`
//! control requests for an in-process SDK server, or a stdio server's lines).
//!
//! Only the tools part of MCP: `initialize`, `ping`, `tools/list`, `tools/call`;
//! notifications (no `id`) get no response. An unknown tool is a protocol error
//! (-32602); a tool that cannot answer its input answers `isError` with why, so
//! the agent reads it, as MCP asks of tool errors.

use serde_json::{Value, json};

use crate::tools::{self, ToolError};

/// The server's name: the agent sees its tools as `mcp__sens__<tool>`.
pub const SERVER_NAME: &str = "sens";
/// The permission rule that lets the agent call every tool of the server
/// (`--allowedTools` or a settings file's `permissions.allow`).
pub fn permission_rule() -> String {
    format!("mcp__{SERVER_NAME}")
}

/// Answered when the client asks for none (the tools part is the same in every
/// version up to 2025-06-18).
const PROTOCOL_VERSION: &str = "2024-11-05";

/// A line that is not JSON (answered by a transport that reads lines).
pub const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// The server could not answer (a transport whose engine is out of reach).
pub const INTERNAL_ERROR: i64 = -32603;

/// The response to `message`, calling `call(name, arguments, tool_use_id)` for
/// `tools/call` (the id of the agent's tool use, where the client sends it as
/// Claude Code 2.1.197 does in `_meta`); `None` for a notification.
pub fn respond(
    message: &Value,
    call: impl FnOnce(&str, &Value, Option<&str>) -> Result<Value, ToolError>,
) -> Option<Value> {
    let id = message.get("id").filter(|id| !id.is_null())?.clone();
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Some(error(
            id,
            INVALID_REQUEST,
            "a request needs a string `method`",
        ));
    };
    let params = message.get("params").unwrap_or(&Value::Null);
    let result = match method {
        "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(PROTOCOL_VERSION);
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
            })
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": tools::tools()}),
        "tools/call" => {
            let Some(name) = params.get("name").and_then(Value::as_str) else {
                return Some(error(
                    id,
                    INVALID_PARAMS,
                    "tools/call needs a string `params.name`",
                ));
            };
            let empty = json!({});
            let arguments = params.get("arguments").unwrap_or(&empty);
            let tool_use_id = params["_meta"]["claudecode/toolUseId"].as_str();
            match call(name, arguments, tool_use_id) {
                Ok(answer) => tool_result(&answer.to_string(), false),
                Err(e @ ToolError::Unknown(_)) => {
                    return Some(error(id, INVALID_PARAMS, &e.to_string()));
                }
                Err(e) => tool_result(&e.to_string(), true),
            }
        }
        other => {
            return Some(error(
                id,
                METHOD_NOT_FOUND,
                &format!("method `{other}` not found"),
            ));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn tool_result(text: &str, is_error: bool) -> Value {
    let mut result = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        result["isError"] = json!(true);
    }
    result
}

/// The JSON-RPC error response to the request `id`.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    }

    fn never(_: &str, _: &Value, _: Option<&str>) -> Result<Value, ToolError> {
        panic!("no tool is called here")
    }

    #[test]
    fn initialize_and_list_describe_a_tools_server() {
        let init = respond(
            &request("initialize", json!({"protocolVersion": "2025-06-18"})),
            never,
        )
        .unwrap();
        assert_eq!(init["id"], 7);
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "sens");
        assert!(init["result"]["capabilities"]["tools"].is_object());
        let list = respond(&request("tools/list", json!({})), never).unwrap();
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["already_exists", "find_symbol"]);
        assert!(list["result"]["tools"][0]["inputSchema"].is_object());
    }

    #[test]
    fn notifications_get_no_response() {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(respond(&note, never), None);
        let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "ping"});
        assert_eq!(respond(&null_id, never), None);
    }

    #[test]
    fn a_call_answers_text_or_says_why_not() {
        let call = |params: Value, answer: Result<Value, ToolError>| {
            let mut seen = None;
            let response = respond(&request("tools/call", params), |name, args, id| {
                seen = Some((name.to_string(), args.clone(), id.map(str::to_string)));
                answer
            });
            (response.unwrap(), seen)
        };
        let (ok, seen) = call(
            json!({"name": "find_symbol", "arguments": {"name": "x"},
                   "_meta": {"claudecode/toolUseId": "toolu_1", "progressToken": 3}}),
            Ok(json!({"definitions": []})),
        );
        let expected = (
            "find_symbol".into(),
            json!({"name": "x"}),
            Some("toolu_1".into()),
        );
        assert_eq!(seen, Some(expected));
        assert_eq!(ok["result"]["content"][0]["text"], r#"{"definitions":[]}"#);
        assert!(ok["result"].get("isError").is_none());
        let (bad, _) = call(
            json!({"name": "find_symbol"}),
            Err(ToolError::Input(
                "`find_symbol` needs the field `name`".into(),
            )),
        );
        assert_eq!(bad["result"]["isError"], true);
        assert!(
            bad["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("`name`")
        );
        let (unknown, _) = call(
            json!({"name": "grep"}),
            Err(ToolError::Unknown("grep".into())),
        );
        assert_eq!(unknown["error"]["code"], INVALID_PARAMS);
        assert!(
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`grep`")
        );
    }

    #[test]
    fn malformed_requests_are_protocol_errors() {
        let no_name = respond(&request("tools/call", json!({})), never).unwrap();
        assert_eq!(no_name["error"]["code"], INVALID_PARAMS);
        let other = respond(&request("resources/list", json!({})), never).unwrap();
        assert_eq!(other["error"]["code"], METHOD_NOT_FOUND);
        let no_method = respond(&json!({"jsonrpc": "2.0", "id": 1}), never).unwrap();
        assert_eq!(no_method["error"]["code"], INVALID_REQUEST);
    }
}
