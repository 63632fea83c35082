//! Rules as data and the regression gate (SPEC 3.11): which rules each condition
//! judges with, `sens-bench gate` (every recorded engine decision replayed with
//! other rules), and the labels that say which decisions were just.

use std::collections::BTreeMap;

use crate::conditions::Condition;

/// Engine condition name -> the digest of its rules, for `manifest.toml`.
pub fn rule_digests(conditions: &[(String, Condition)]) -> BTreeMap<String, String> {
    conditions
        .iter()
        .filter(|(_, c)| c.engine)
        .map(|(name, c)| (name.clone(), c.rule_config.digest()))
        .collect()
}
