//! The stream-json messages between the session and the CLI: the events the
//! reader passes on, the lines the writer sends, and the control response's
//! envelope.

use serde_json::{Value, json};

/// What the reader passes to the session.
pub(super) enum Event {
    Response(Value),
    /// An `assistant` message: its API call's usage counts against the limits.
    Assistant(Value),
    Result(Value),
    /// The stream ended; `Err` when reading or recording it failed.
    Closed(Result<(), String>),
}

pub(super) enum Outgoing {
    Line(Value),
    Close,
}

pub(super) fn control_response(request_id: &str, outcome: Result<Value, String>) -> Value {
    let response = match outcome {
        Ok(response) => {
            json!({"subtype": "success", "request_id": request_id, "response": response})
        }
        Err(error) => json!({"subtype": "error", "request_id": request_id, "error": error}),
    };
    json!({"type": "control_response", "response": response})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_responses_have_the_protocol_envelope() {
        assert_eq!(
            control_response("r1", Ok(json!({}))),
            json!({"type": "control_response",
                   "response": {"subtype": "success", "request_id": "r1", "response": {}}})
        );
        assert_eq!(
            control_response("r2", Err("no".into()))["response"],
            json!({"subtype": "error", "request_id": "r2", "error": "no"})
        );
    }
}
