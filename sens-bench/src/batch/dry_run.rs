//! `run --dry-run`: the plan a batch would run and what it could cost, printed
//! before anything is created (no batch folder, no lock, no CLI started).
//!
//! The cost estimate takes `--tokens-per-run N` as given and prices it per
//! model. Agent sessions mix input (most of it cache reads), cache writes and
//! output at different prices, and one figure cannot say the mix, so the
//! estimate is a range: every token at the model's input price (low) to every
//! token at its output price (high).

use std::collections::HashMap;

use crate::agent::budget::price;
use crate::batch::plan::PlannedRun;

/// The low and high cost in dollars of `runs` runs of `tokens` each at `price`.
pub fn estimate(runs: usize, tokens: u64, (input, output): (f64, f64)) -> (f64, f64) {
    let millions = runs as f64 * tokens as f64 / 1e6;
    (millions * input, millions * output)
}

/// The plan's summary: its size, the runs to do (not yet recorded) per
/// condition, and the cost line when a token figure is given. `todo` is
/// counted as it goes, never held.
pub fn describe(
    units: usize,
    conditions: &[String],
    reps: u32,
    shard: Option<String>,
    todo: impl IntoIterator<Item = PlannedRun>,
    cost: Option<(&str, u64)>,
) -> String {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for run in todo {
        *counts.entry(run.condition).or_default() += 1;
    }
    let total: usize = counts.values().sum();
    let mut text = format!(
        "plan: {units} units x {} conditions x {reps} reps = {} runs",
        conditions.len(),
        units as u128 * conditions.len() as u128 * u128::from(reps)
    );
    if let Some(shard) = shard {
        text.push_str(&format!("; {shard}"));
    }
    text.push_str(&format!("\nto run now: {total}"));
    for condition in conditions {
        let count = counts.get(condition).copied().unwrap_or(0);
        text.push_str(&format!("\n  {condition}: {count}"));
    }
    match cost {
        Some((model, tokens)) => match price(model) {
            Some(price) => {
                let (low, high) = estimate(total, tokens, price);
                text.push_str(&format!(
                    "\nestimated cost ({model}, {tokens} tokens per run): ${low:.2} to ${high:.2}"
                ));
            }
            None => text.push_str(&format!(
                "\nno price known for model `{model}` (known: opus, sonnet, haiku)"
            )),
        },
        None => text.push_str("\nno cost estimate: give --tokens-per-run N and --model"),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_a_range_from_the_input_to_the_output_price() {
        let (low, high) = estimate(10, 200_000, (3.0, 15.0));
        assert!((low - 6.0).abs() < 1e-9 && (high - 30.0).abs() < 1e-9);
    }

    #[test]
    fn the_plan_counts_runs_per_condition() {
        let todo: Vec<PlannedRun> = ["C0", "C2", "C2"]
            .iter()
            .map(|c| PlannedRun {
                unit: "t".into(),
                condition: c.to_string(),
                rep: 1,
            })
            .collect();
        let conditions = ["C0".to_string(), "C2".to_string()];
        let text = describe(1, &conditions, 2, None, todo, Some(("sonnet", 1_000_000)));
        assert!(
            text.contains("1 units x 2 conditions x 2 reps = 4 runs"),
            "{text}"
        );
        assert!(
            text.contains("C2: 2") && text.contains("$9.00 to $45.00"),
            "{text}"
        );
    }
}
