//! The engine's query tools ([`crate::tools`]) as an MCP server: JSON-RPC 2.0
//! messages in, responses out, whatever carries them (the CLI's `mcp_message`
//! control requests for an in-process SDK server, or a stdio server's lines).
//!
//! Only the tools part of MCP: `initialize`, `ping`, `tools/list`, `tools/call`;
//! every message is answered as JSON-RPC 2.0 says (a batch with an array, what
//! is not a request with Invalid Request), notifications (no `id`) not at all. An unknown tool is a protocol error
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

/// The response to `message` as JSON-RPC 2.0 asks, calling `call(name,
/// arguments, tool_use_id)` for each `tools/call` (the id of the agent's tool
/// use, where the client sends it as Claude Code 2.1.197 does in `_meta`): a
/// batch is answered with an array, a message that is no request with Invalid
/// Request; `None` when only notifications came.
pub fn respond(
    message: &Value,
    mut call: impl FnMut(&str, &Value, Option<&str>) -> Result<Value, ToolError>,
) -> Option<Value> {
    answer_each(message, |request, id| answer(request, id, &mut call))
}

/// A well-formed request's method and parameters (`null` when absent).
pub struct Request<'a> {
    pub method: &'a str,
    pub params: &'a Value,
}

/// Applies `answer(request, id)` to each request of `message` (one, or a
/// batch) and collects the responses; what is not a request is answered with
/// Invalid Request (id null when its own id is unusable), a notification not at
/// all. Transports use it to answer a message their engine cannot.
pub fn answer_each(
    message: &Value,
    mut answer: impl FnMut(Request, Value) -> Value,
) -> Option<Value> {
    match message {
        Value::Array(batch) if batch.is_empty() => Some(error(
            Value::Null,
            INVALID_REQUEST,
            "an empty batch holds no request",
        )),
        Value::Array(batch) => {
            let responses: Vec<Value> = batch
                .iter()
                .filter_map(|message| answer_one(message, &mut answer))
                .collect();
            (!responses.is_empty()).then_some(Value::Array(responses))
        }
        message => answer_one(message, &mut answer),
    }
}

fn answer_one(message: &Value, answer: &mut impl FnMut(Request, Value) -> Value) -> Option<Value> {
    let Some(object) = message.as_object() else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a message must be an object (or a batch of objects)",
        ));
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => Some(id.clone()),
        Some(_) => {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "`id` must be a string, a number or null",
            ));
        }
    };
    let method = object.get("method").and_then(Value::as_str);
    let problem = if object.get("jsonrpc") != Some(&json!("2.0")) {
        "`jsonrpc` must be \"2.0\""
    } else {
        "a request needs a string `method`"
    };
    match (method, id) {
        (Some(method), id) if object.get("jsonrpc") == Some(&json!("2.0")) => {
            let params = object.get("params").unwrap_or(&Value::Null);
            // No id: a notification, whose sender wants no response.
            id.map(|id| answer(Request { method, params }, id))
        }
        (_, id) => Some(error(id.unwrap_or(Value::Null), INVALID_REQUEST, problem)),
    }
}

/// The response to one well-formed request.
fn answer(
    Request { method, params }: Request,
    id: Value,
    call: &mut impl FnMut(&str, &Value, Option<&str>) -> Result<Value, ToolError>,
) -> Value {
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
                return error(
                    id,
                    INVALID_PARAMS,
                    "tools/call needs a string `params.name`",
                );
            };
            let empty = json!({});
            let arguments = params.get("arguments").unwrap_or(&empty);
            let tool_use_id = params["_meta"]["claudecode/toolUseId"].as_str();
            match call(name, arguments, tool_use_id) {
                Ok(answer) => tool_result(&answer.to_string(), false),
                Err(e @ ToolError::Unknown(_)) => {
                    return error(id, INVALID_PARAMS, &e.to_string());
                }
                Err(e) => tool_result(&e.to_string(), true),
            }
        }
        other => {
            return error(id, METHOD_NOT_FOUND, &format!("method `{other}` not found"));
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
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
        let notes = json!([note, {"jsonrpc": "2.0", "method": "notifications/cancelled"}]);
        assert_eq!(respond(&notes, never), None, "a batch of notifications");
    }

    #[test]
    fn a_null_id_is_a_request_answered_with_a_null_id() {
        let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "ping"});
        assert_eq!(
            respond(&null_id, never),
            Some(json!({"jsonrpc": "2.0", "id": null, "result": {}}))
        );
    }

    fn invalid_with_null_id(response: Option<Value>) {
        let response = response.expect("an invalid request is answered");
        assert_eq!(response["id"], Value::Null, "{response}");
        assert_eq!(response["error"]["code"], INVALID_REQUEST, "{response}");
    }

    #[test]
    fn a_message_that_is_not_an_object_is_an_invalid_request() {
        for message in [
            json!(1),
            json!("ping"),
            json!(null),
            json!(true),
            json!([[]]),
        ] {
            let response = respond(&message, never);
            match message {
                Value::Array(_) => invalid_with_null_id(response.unwrap()[0].clone().into()),
                _ => invalid_with_null_id(response),
            }
        }
    }

    #[test]
    fn an_id_that_is_not_a_string_or_number_is_refused_not_echoed() {
        for id in [json!({"x": 1}), json!([1]), json!(true)] {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            invalid_with_null_id(respond(&message, never));
        }
    }

    #[test]
    fn a_request_without_a_method_or_version_is_invalid_even_without_an_id() {
        invalid_with_null_id(respond(&json!({"jsonrpc": "2.0", "method": 1}), never));
        invalid_with_null_id(respond(&json!({"foo": "boo"}), never));
        let old = respond(&json!({"jsonrpc": "1.0", "id": 4, "method": "ping"}), never).unwrap();
        assert_eq!(
            (old["id"].clone(), old["error"]["code"].clone()),
            (json!(4), json!(INVALID_REQUEST))
        );
    }

    #[test]
    fn a_batch_is_answered_with_an_array_of_its_requests_responses() {
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "find_symbol"}},
            7,
        ]);
        let mut calls = 0;
        let response = respond(&batch, |_, _, _| {
            calls += 1;
            Ok(json!({}))
        })
        .unwrap();
        let responses = response.as_array().expect("an array answers a batch");
        assert_eq!(calls, 1);
        assert_eq!(responses.len(), 3, "{response}");
        assert_eq!(
            responses[0],
            json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        assert_eq!(responses[1]["id"], "b");
        assert!(responses[1]["result"]["content"].is_array());
        invalid_with_null_id(Some(responses[2].clone()));
        invalid_with_null_id(respond(&json!([]), never));
    }

    #[test]
    fn a_call_answers_text_or_says_why_not() {
        let call = |params: Value, answer: Result<Value, ToolError>| {
            let (mut seen, mut answer) = (None, Some(answer));
            let response = respond(&request("tools/call", params), |name, args, id| {
                seen = Some((name.to_string(), args.clone(), id.map(str::to_string)));
                answer.take().expect("one call")
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
