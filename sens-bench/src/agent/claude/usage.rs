//! Token usage in the CLI's names: `usage` in the API's snake case,
//! `modelUsage` entries in camel case with their cost.

use serde::Deserialize;

use crate::agent::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct ModelUsage {
    #[serde(flatten, deserialize_with = "model_usage")]
    pub usage: Usage,
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
}

/// `usage` in the API's names.
pub(super) fn api_usage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Usage, D::Error> {
    #[derive(Deserialize)]
    struct Api {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_input_tokens: u64,
        cache_creation_input_tokens: u64,
    }
    let u = Api::deserialize(d)?;
    Ok(Usage {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_input_tokens,
        cache_creation: u.cache_creation_input_tokens,
    })
}

/// `modelUsage` entries in the CLI's camel-case names.
fn model_usage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Usage, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cli {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_input_tokens: u64,
        cache_creation_input_tokens: u64,
    }
    let u = Cli::deserialize(d)?;
    Ok(Usage {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_input_tokens,
        cache_creation: u.cache_creation_input_tokens,
    })
}
