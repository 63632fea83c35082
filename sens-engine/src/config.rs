//! The one configuration of the change rules and fingerprints: defaults, a TOML
//! file of the same fields, validation, and a digest that names a rule set in
//! manifests and ledgers.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Every threshold the rules and fingerprints use. A rules file holds any of
/// these fields; absent ones take the defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuleConfig {
    /// Exact Jaccard of shingle sets at or above which a unit is a near copy.
    pub threshold: f64,
    /// Share of an existing unit's shingles found in a new unit at or above
    /// which the new unit is a near copy of it whatever its Jaccard (statements
    /// inserted around the copied code); see `fingerprint::NearRule`.
    pub containment: f64,
    /// Normalized tokens a new unit needs before a copy of it blocks; below, a hint.
    pub floor: usize,
    /// Distinct shingles a unit needs to count as logic rather than a repetitive
    /// fragment (a table, a run of calls): a new unit with fewer is never a
    /// blocking near copy, nor a window a blocking copy of any kind, and an
    /// existing unit with fewer is never judged contained in a new one. Apart
    /// from `floor` because functions of 80 tokens often have only 30-40 distinct
    /// shingles of normalized tokens (names and literals are placeholders).
    pub min_shingles: usize,
    /// Shingle size in normalized tokens.
    pub k: usize,
    /// MinHash permutations.
    pub permutations: usize,
    /// LSH bands; `permutations / bands` rows each.
    pub bands: usize,
    /// Tell the agent at PostToolUse when a function it wrote does what an
    /// existing one does (the re-implementation finder's note, docs/reuse.md).
    /// `false` turns the note off. Left out of the digest's text when on, so
    /// the defaults' digest is the one recorded before the field existed.
    #[serde(skip_serializing_if = "is_true")]
    pub reuse_notes: bool,
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Default for RuleConfig {
    fn default() -> Self {
        Self {
            // Chosen by `sens-bench calibrate`
            // (docs/experiments/calibration.md, "What chose the defaults"): 0.70 keeps
            // one inserted statement in an 80-token function a near copy; 20 bands of 6
            // rows give such pairs a candidate with probability 0.92 (16 x 8: 0.61) while
            // pairs at 0.4 get one 8 % of the time (24 x 5: 22 %, four times the lookup
            // cost).
            threshold: 0.70,
            // One inserted statement breaks k - 1 shingles of the existing unit,
            // so a unit of 32 shingles (the smallest judged contained) keeps 94 %.
            containment: 0.90,
            floor: 80,
            // Calibrated
            // (docs/experiments/calibration.md, "Third round: the leave-one-out keys"):
            // 32 keeps one statement inserted into a short function a near copy while no
            // unrelated function of the corpora was denied; tables stay far under it.
            min_shingles: 32,
            k: 3,
            permutations: 120,
            bands: 20,
            reuse_notes: true,
        }
    }
}

impl RuleConfig {
    /// Reads a rules file; every error names the file (and the field, where one
    /// is at fault).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the rules file {}", path.display()))?;
        Self::from_toml(&text).with_context(|| format!("rules file {}", path.display()))
    }

    /// Parses and validates the TOML text of a rules file.
    pub fn from_toml(text: &str) -> Result<Self> {
        let cfg: RuleConfig = toml::from_str(text).map_err(|err| anyhow::anyhow!("{err}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The defaults, or the rules file when one is given.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        path.map_or_else(|| Ok(Self::default()), Self::from_file)
    }

    /// Rejects settings the fingerprints cannot honour, naming the field.
    pub fn validate(&self) -> Result<()> {
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            bail!("field `threshold`: {} must be in (0, 1]", self.threshold);
        }
        if !(self.containment > 0.0 && self.containment <= 1.0) {
            bail!(
                "field `containment`: {} must be in (0, 1]",
                self.containment
            );
        }
        if self.k < 2 {
            bail!(
                "field `k`: shingle size {} must be at least 2 (single tokens match everywhere)",
                self.k
            );
        }
        if self.permutations == 0 {
            bail!("field `permutations`: must be at least 1");
        }
        if self.bands == 0 || !self.permutations.is_multiple_of(self.bands) {
            bail!(
                "field `bands`: {} permutations cannot be split into {} equal LSH bands",
                self.permutations,
                self.bands
            );
        }
        Ok(())
    }

    pub fn rows(&self) -> usize {
        self.permutations / self.bands
    }

    /// The first 16 hex digits of the SHA-256 of the canonical JSON of every
    /// field: equal rule sets have equal digests however their files are written.
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_string(self).expect("a RuleConfig always serializes");
        hex::encode(Sha256::digest(canonical.as_bytes()))[..16].to_string()
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
            (80, 3, 120, 20)
        );
        assert_eq!(cfg.rows(), 6);
        cfg.validate().unwrap();
    }

    #[test]
    fn impossible_settings_are_rejected_naming_the_field() {
        for (text, field) in [
            ("k = 1", "`k`"),
            ("bands = 7", "`bands`"),
            ("threshold = 0.0", "`threshold`"),
            ("containment = 1.5", "`containment`"),
            ("permutations = 0", "`permutations`"),
        ] {
            let err = RuleConfig::from_toml(text).expect_err(text);
            assert!(format!("{err:#}").contains(field), "{text}: {err:#}");
        }
    }

    #[test]
    fn the_smallest_and_largest_allowed_settings_are_valid() {
        for text in ["k = 2", "threshold = 1.0", "permutations = 1\nbands = 1"] {
            RuleConfig::from_toml(text).unwrap_or_else(|err| panic!("{text}: {err:#}"));
        }
        let err = RuleConfig::from_toml("bands = 0").expect_err("zero bands");
        assert!(format!("{err:#}").contains("`bands`"), "{err:#}");
    }

    #[test]
    fn load_reads_the_given_file_and_defaults_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.toml");
        std::fs::write(&path, "floor = 120\n").unwrap();
        assert_eq!(RuleConfig::load(Some(&path)).unwrap().floor, 120);
        assert_eq!(RuleConfig::load(None).unwrap(), RuleConfig::default());
    }

    #[test]
    fn a_file_with_some_fields_takes_the_defaults_for_the_rest() {
        let cfg = RuleConfig::from_toml("floor = 200\nthreshold = 0.9\n").unwrap();
        assert_eq!(cfg.floor, 200);
        assert_eq!(cfg.threshold, 0.9);
        assert_eq!(cfg.k, RuleConfig::default().k);
        assert_ne!(cfg.digest(), RuleConfig::default().digest());
    }

    #[test]
    fn unknown_and_mistyped_fields_are_errors_naming_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.toml");
        std::fs::write(&path, "floor = 80\nthreshhold = 0.8\n").unwrap();
        let err = format!("{:#}", RuleConfig::from_file(&path).unwrap_err());
        assert!(
            err.contains("rules.toml") && err.contains("threshhold"),
            "{err}"
        );
        std::fs::write(&path, "floor = \"many\"\n").unwrap();
        let err = format!("{:#}", RuleConfig::from_file(&path).unwrap_err());
        assert!(err.contains("rules.toml") && err.contains("floor"), "{err}");
    }

    #[test]
    fn the_digest_depends_on_values_not_on_how_the_file_is_written() {
        let a = RuleConfig::from_toml("k = 3\nfloor = 80").unwrap();
        let b = RuleConfig::from_toml("# defaults\n").unwrap();
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.digest().len(), 16);
    }
}
