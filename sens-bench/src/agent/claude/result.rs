//! The CLI's `result` message of one turn, and the running totals that make
//! its session-wide figures the turn's own.

use std::collections::BTreeMap;

use anyhow::Context;
use serde::Deserialize;
use serde_json::Value;

use super::usage::{ModelUsage, api_usage};
use crate::agent::Usage;

/// What the CLI's `result` message reports for one turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TurnResult {
    pub subtype: String,
    pub is_error: bool,
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// The final text; absent for some error subtypes.
    #[serde(rename = "result", default)]
    pub text: Option<String>,
    /// Main-loop API calls.
    pub num_turns: u64,
    /// Main loop only.
    #[serde(deserialize_with = "api_usage")]
    pub usage: Usage,
    /// Per model, subagents included; this turn's only (see [`Cumulative`]).
    #[serde(rename = "modelUsage")]
    pub model_usage: BTreeMap<String, ModelUsage>,
    /// Subagents included; this turn's only.
    pub total_cost_usd: f64,
    #[serde(default)]
    pub permission_denials: Vec<Value>,
    #[serde(default)]
    pub terminal_reason: Option<String>,
    pub session_id: String,
    pub duration_ms: u64,
}

impl TurnResult {
    /// Tokens of every model call, subagents included.
    pub fn total_usage(&self) -> Usage {
        self.model_usage.values().map(|m| m.usage).sum()
    }

    pub(super) fn parse(value: Value) -> anyhow::Result<TurnResult> {
        serde_json::from_value(value)
            .context("the CLI's result message lacks a field sens-bench reads")
    }
}

/// In one process the CLI's `modelUsage` and `total_cost_usd` add up over the
/// whole session, while `usage` and `num_turns` are the turn's own (seen on
/// 2.1.197). This keeps the running totals so every [`TurnResult`] holds one
/// turn's figures.
#[derive(Debug, Default)]
pub(super) struct Cumulative {
    models: BTreeMap<String, ModelUsage>,
    cost_usd: f64,
}

impl Cumulative {
    pub(super) fn per_turn(&mut self, mut result: TurnResult) -> anyhow::Result<TurnResult> {
        let totals = Cumulative {
            models: result.model_usage.clone(),
            cost_usd: result.total_cost_usd,
        };
        for (model, turn) in &mut result.model_usage {
            if let Some(before) = self.models.get(model) {
                turn.usage = turn.usage.checked_sub(before.usage).with_context(|| {
                    format!("the CLI's modelUsage for {model} went down between turns")
                })?;
                turn.cost_usd -= before.cost_usd;
            }
        }
        result.total_cost_usd -= self.cost_usd;
        *self = totals;
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use super::super::AgentError;

    #[test]
    fn result_parses_usage_main_loop_and_models() {
        let result = TurnResult::parse(json!({
            "type": "result", "subtype": "success", "is_error": false, "api_error_status": null,
            "duration_ms": 10, "num_turns": 4, "result": "ok", "session_id": "s",
            "total_cost_usd": 0.5,
            "usage": {"input_tokens": 400, "output_tokens": 28, "cache_read_input_tokens": 3,
                      "cache_creation_input_tokens": 4, "server_tool_use": {}},
            "modelUsage": {"m": {"inputTokens": 600, "outputTokens": 40, "cacheReadInputTokens": 5,
                                 "cacheCreationInputTokens": 6, "costUSD": 0.5, "webSearchRequests": 0}},
            "permission_denials": [{"tool_name": "Write"}], "terminal_reason": "completed",
        }))
        .unwrap();
        assert_eq!(
            result.usage,
            Usage {
                input: 400,
                output: 28,
                cache_read: 3,
                cache_creation: 4
            }
        );
        assert_eq!(result.total_usage().input, 600);
        assert_eq!(result.model_usage["m"].cost_usd, 0.5);
        assert_eq!(result.permission_denials.len(), 1);
        assert_eq!(result.text.as_deref(), Some("ok"));

        let mut failed = result.clone();
        failed.api_error_status = Some(500);
        failed.text = Some("API Error: 500 overloaded".into());
        let err = AgentError::ApiError {
            result: Box::new(failed.clone()),
        };
        assert_eq!(
            err.to_string(),
            "the model API answered HTTP 500: API Error: 500 overloaded"
        );
        failed.api_error_status = None;
        failed.subtype = "error_max_turns".into();
        failed.text = None;
        let err = AgentError::ApiError {
            result: Box::new(failed),
        };
        assert_eq!(
            err.to_string(),
            "the turn ended in an error (error_max_turns): no message"
        );
    }

    #[test]
    fn cumulative_model_usage_and_cost_become_per_turn() {
        let result = |input: u64, cost: f64| TurnResult {
            subtype: "success".into(),
            is_error: false,
            api_error_status: None,
            text: None,
            num_turns: 1,
            usage: Usage::default(),
            model_usage: BTreeMap::from([(
                "m".to_string(),
                ModelUsage {
                    usage: Usage {
                        input,
                        ..Usage::default()
                    },
                    cost_usd: cost,
                },
            )]),
            total_cost_usd: cost,
            permission_denials: Vec::new(),
            terminal_reason: None,
            session_id: "s".into(),
            duration_ms: 1,
        };
        let mut totals = Cumulative::default();
        let first = totals.per_turn(result(100, 0.5)).unwrap();
        assert_eq!(
            (first.total_usage().input, first.total_cost_usd),
            (100, 0.5)
        );
        let second = totals.per_turn(result(250, 1.25)).unwrap();
        assert_eq!(
            (second.total_usage().input, second.total_cost_usd),
            (150, 0.75)
        );
        assert_eq!(second.model_usage["m"].cost_usd, 0.75);
        let err = totals.per_turn(result(10, 2.0)).unwrap_err();
        assert!(err.to_string().contains("went down"), "{err}");
    }

    #[test]
    fn a_result_without_usage_is_an_error_naming_the_field() {
        let err = TurnResult::parse(json!({"subtype": "success", "is_error": false,
            "num_turns": 1, "session_id": "s", "duration_ms": 1, "total_cost_usd": 0.0,
            "modelUsage": {}}))
        .unwrap_err();
        assert!(format!("{err:#}").contains("usage"), "{err:#}");
    }
}
