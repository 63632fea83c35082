//! Per-run spending limits (`--max-tokens`, `--max-cost-usd`): what a run has
//! spent so far, read from the CLI's stream as it goes, and whether a limit is
//! passed.
//!
//! Mid-run, each API call counts once: the CLI writes one `assistant` message
//! per content block, all with the call's `message.id` and the usage of its
//! `message_start` (2.1.197, protocol doc 5), so output tokens show only in the
//! turn's `result`. A call is priced with [`cost_of`] for
//! the model its message names; a model without a known price adds no cost
//! mid-run, and its limit is then checked on the `result`'s `total_cost_usd`.
//! Subagents' calls count: they are spent too.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Usage;

/// Dollars per million tokens, (input, output), of the Claude API models by the
/// family name a `--model` holds. Source: Anthropic's published API prices for
/// the 4.5 models (anthropic.com/pricing, November 2025: Opus 4.5 $5 / $25,
/// Sonnet 4.5 $3 / $15, Haiku 4.5 $1 / $5), not re-checked on 2026-12-01 since
/// this machine has no web access: check them before relying on an estimate.
const PRICES: [(&str, f64, f64); 3] = [
    ("opus", 5.0, 25.0),
    ("sonnet", 3.0, 15.0),
    ("haiku", 1.0, 5.0),
];

/// The (input, output) price of `model` per million tokens, when known.
pub fn price(model: &str) -> Option<(f64, f64)> {
    let model = model.to_ascii_lowercase();
    PRICES
        .iter()
        .find(|(family, _, _)| model.contains(family))
        .map(|&(_, input, output)| (input, output))
}

/// What `usage` costs at `(input, output)` per million tokens. Cache reads and
/// writes are priced at 0.1 and 1.25 times the input price (Anthropic's
/// published multipliers for 5-minute cache writes, same source as [`PRICES`]).
pub fn cost_of(usage: &Usage, (input, output): (f64, f64)) -> f64 {
    let inputs =
        usage.input as f64 + 0.1 * usage.cache_read as f64 + 1.25 * usage.cache_creation as f64;
    (inputs * input + usage.output as f64 * output) / 1e6
}

/// The limits of one run; `None`: no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RunLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

impl RunLimits {
    /// Why `tokens` and `cost_usd` are past a limit, if they are.
    pub fn passed(&self, tokens: u64, cost_usd: f64) -> Option<String> {
        if let Some(max) = self.max_tokens.filter(|max| tokens > *max) {
            return Some(format!("{tokens} tokens passed --max-tokens {max}"));
        }
        self.max_cost_usd
            .filter(|max| cost_usd > *max)
            .map(|max| format!("${cost_usd:.6} passed --max-cost-usd {max}"))
    }
}

/// What a run spent: tokens of every model call, and their cost in dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub usage: Usage,
    pub cost_usd: f64,
}

/// The running count of one turn's API calls (see the module documentation).
#[derive(Debug, Default)]
pub struct Tally {
    calls: HashSet<String>,
    pub spent: Spent,
}

impl Tally {
    /// Counts the API call behind one `assistant` stream message, once per call.
    pub fn add(&mut self, message: &Value) {
        let call = &message["message"];
        let Some(id) = call["id"].as_str() else {
            return;
        };
        if !self.calls.insert(id.to_string()) {
            return;
        }
        let count = |field: &str| call["usage"][field].as_u64().unwrap_or(0);
        let usage = Usage {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_read: count("cache_read_input_tokens"),
            cache_creation: count("cache_creation_input_tokens"),
        };
        let model = call["model"].as_str().unwrap_or_default();
        self.spent.usage = self.spent.usage + usage;
        self.spent.cost_usd += price(model).map_or(0.0, |p| cost_of(&usage, p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(id: &str, model: &str, input: u64) -> Value {
        json!({"type": "assistant", "message": {"id": id, "model": model,
            "usage": {"input_tokens": input, "output_tokens": 0,
                      "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
    }

    #[test]
    fn prices_are_per_model_family_and_cache_tokens_are_priced_apart() {
        assert_eq!(price("claude-sonnet-4-5"), Some((3.0, 15.0)));
        assert_eq!(price("unknown"), None);
        let usage = Usage {
            input: 1_000_000,
            output: 1_000_000,
            cache_read: 1_000_000,
            cache_creation: 1_000_000,
        };
        assert!((cost_of(&usage, (3.0, 15.0)) - (3.0 + 15.0 + 0.3 + 3.75)).abs() < 1e-9);
    }

    #[test]
    fn each_call_counts_once_and_is_priced_by_its_model() {
        let mut tally = Tally::default();
        tally.add(&block("m1", "claude-sonnet-4-5", 1_000_000));
        tally.add(&block("m1", "claude-sonnet-4-5", 1_000_000));
        tally.add(&block("m2", "unknown-model", 10));
        assert_eq!(tally.spent.usage.input, 1_000_010);
        assert!(
            (tally.spent.cost_usd - 3.0).abs() < 1e-9,
            "{:?}",
            tally.spent
        );
    }

    #[test]
    fn a_limit_is_passed_only_above_it() {
        let limits = RunLimits {
            max_tokens: Some(100),
            max_cost_usd: Some(0.5),
        };
        assert_eq!(limits.passed(100, 0.5), None);
        assert!(
            limits
                .passed(101, 0.0)
                .unwrap()
                .contains("--max-tokens 100")
        );
        assert!(
            limits
                .passed(0, 0.6)
                .unwrap()
                .contains("--max-cost-usd 0.5")
        );
        assert_eq!(RunLimits::default().passed(u64::MAX, 1e9), None);
    }
}
