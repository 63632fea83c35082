//! The change rules (SPEC 2.4) and their one configuration. Every threshold the
//! rules and fingerprints use lives in [`RuleConfig`], so the bench can gate a
//! change of them.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleConfig {
    /// Exact Jaccard of shingle sets at or above which a unit is a near copy.
    pub threshold: f64,
    /// Normalized tokens a new unit needs before a copy of it blocks; below, a hint.
    pub floor: usize,
    /// Shingle size in normalized tokens.
    pub k: usize,
    /// MinHash permutations.
    pub permutations: usize,
    /// LSH bands; `permutations / bands` rows each.
    pub bands: usize,
}

impl Default for RuleConfig {
    fn default() -> Self {
        Self {
            threshold: 0.80,
            floor: 80,
            k: 3,
            permutations: 128,
            bands: 16,
        }
    }
}

impl RuleConfig {
    /// Rejects settings the fingerprints cannot honour.
    pub fn validate(&self) -> Result<()> {
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            bail!("rule threshold {} must be in (0, 1]", self.threshold);
        }
        if self.k < 2 {
            bail!(
                "shingle size k = {} must be at least 2 (single tokens match everywhere)",
                self.k
            );
        }
        if self.bands == 0
            || self.permutations == 0
            || !self.permutations.is_multiple_of(self.bands)
        {
            bail!(
                "{} permutations cannot be split into {} equal LSH bands",
                self.permutations,
                self.bands
            );
        }
        Ok(())
    }

    pub fn rows(&self) -> usize {
        self.permutations / self.bands
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_values_and_valid() {
        let cfg = RuleConfig::default();
        assert_eq!(
            (cfg.floor, cfg.k, cfg.permutations, cfg.bands),
            (80, 3, 128, 16)
        );
        assert_eq!(cfg.rows(), 8);
        cfg.validate().unwrap();
    }

    #[test]
    fn impossible_settings_are_rejected() {
        let bad = [
            RuleConfig {
                k: 1,
                ..RuleConfig::default()
            },
            RuleConfig {
                bands: 15,
                ..RuleConfig::default()
            },
            RuleConfig {
                threshold: 0.0,
                ..RuleConfig::default()
            },
        ];
        for cfg in bad {
            assert!(cfg.validate().is_err(), "{cfg:?}");
        }
    }
}
