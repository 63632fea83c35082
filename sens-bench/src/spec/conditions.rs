//! Conditions (SPEC 3.4): what an agent session gets besides the task. They are
//! data in `bench/conditions.toml`, so a user adds one without touching code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sens_engine::config::RuleConfig;

use super::check_name;
use serde::{Deserialize, Serialize};

/// One condition as written in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub description: String,
    /// Append the Canon to the agent's system prompt.
    pub canon: bool,
    /// Answer the agent's hooks with the Sens engine in process.
    pub engine: bool,
    /// A rules file for the engine, relative to the conditions file (default:
    /// the default rules), so a batch can compare two rule sets as two conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<PathBuf>,
    /// The rules the engine judges with: `rules` loaded when the file is read.
    #[serde(skip)]
    pub rule_config: RuleConfig,
    /// `rules` resolved against the conditions file's folder, when given.
    #[serde(skip)]
    pub rules_path: Option<PathBuf>,
}

/// Every condition of a conditions file, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditions(BTreeMap<String, Condition>);

impl Conditions {
    /// Reads and checks the file; every `rules` file is loaded and validated now,
    /// so a bad one stops the batch before anything runs.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read conditions file {}", path.display()))?;
        let mut conditions =
            Self::parse(&text).with_context(|| format!("in conditions file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new(""));
        for (name, condition) in &mut conditions.0 {
            if let Some(rules) = &condition.rules {
                let rules_path = base.join(rules);
                condition.rule_config = RuleConfig::from_file(&rules_path).with_context(|| {
                    format!("conditions file {}: [{name}] field `rules`", path.display())
                })?;
                condition.rules_path = Some(rules_path);
            }
        }
        Ok(conditions)
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let map: BTreeMap<String, Condition> = toml::from_str(text)?;
        for name in map.keys() {
            check_name("condition name", name)?;
        }
        if map.is_empty() {
            bail!(
                "no condition is defined: add a table such as [C0] with description, canon, engine"
            );
        }
        Ok(Self(map))
    }

    /// The named conditions, in the order given, or an error naming the unknown ones.
    pub fn select(&self, names: &[String]) -> anyhow::Result<Vec<(String, Condition)>> {
        if names.is_empty() {
            bail!("no condition selected");
        }
        let mut picked = Vec::with_capacity(names.len());
        for name in names {
            if picked.iter().any(|(n, _): &(String, Condition)| n == name) {
                bail!("condition {name} is selected twice");
            }
            let condition = self.0.get(name).with_context(|| {
                let known: Vec<&str> = self.0.keys().map(String::as_str).collect();
                format!("unknown condition {name}; defined: {}", known.join(", "))
            })?;
            picked.push((name.clone(), condition.clone()));
        }
        Ok(picked)
    }
}

/// Engine condition name -> the digest of its rules, for `manifest.toml`.
pub fn rule_digests(conditions: &[(String, Condition)]) -> BTreeMap<String, String> {
    conditions
        .iter()
        .filter(|(_, c)| c.engine)
        .map(|(name, c)| (name.clone(), c.rule_config.digest()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_shipped_file_defines_c0_c1_c2() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/conditions.toml");
        let conditions = Conditions::load(&path).expect("the shipped conditions parse");
        let picked = conditions
            .select(&names(&["C0", "C1", "C2"]))
            .expect("all three exist");
        let flags: Vec<(bool, bool)> = picked.iter().map(|(_, c)| (c.canon, c.engine)).collect();
        assert_eq!(flags, [(false, false), (true, false), (true, true)]);
    }

    #[test]
    fn a_user_condition_is_data() {
        let text = "[engine-only]\ndescription = \"no Canon\"\ncanon = false\nengine = true\n";
        let conditions = Conditions::parse(text).expect("parses");
        let picked = conditions.select(&names(&["engine-only"])).expect("exists");
        assert!(picked[0].1.engine && !picked[0].1.canon);
    }

    #[test]
    fn rules_are_read_relative_to_the_conditions_file_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("rules")).unwrap();
        std::fs::write(dir.path().join("rules/high.toml"), "floor = 100000\n").unwrap();
        std::fs::write(dir.path().join("rules/bad.toml"), "flor = 1\n").unwrap();
        let file = dir.path().join("conditions.toml");
        let condition = |rules: &str| {
            format!("[C3]\ndescription = \"x\"\ncanon = true\nengine = true\nrules = \"{rules}\"\n")
        };
        std::fs::write(&file, condition("rules/high.toml")).unwrap();
        let picked = Conditions::load(&file)
            .unwrap()
            .select(&names(&["C3"]))
            .unwrap();
        assert_eq!(picked[0].1.rule_config.floor, 100000);
        std::fs::write(&file, condition("rules/bad.toml")).unwrap();
        let err = format!("{:#}", Conditions::load(&file).unwrap_err());
        for part in ["conditions.toml", "[C3]", "`rules`", "bad.toml", "flor"] {
            assert!(err.contains(part), "{part}: {err}");
        }
    }

    #[test]
    fn bad_files_and_selections_say_what_is_wrong() {
        let unknown_field =
            "[C0]\ndescription = \"x\"\ncanon = false\nengine = false\nhooks = true\n";
        let err = format!("{:#}", Conditions::parse(unknown_field).unwrap_err());
        assert!(err.contains("hooks"), "{err}");
        let missing = "[C0]\ndescription = \"x\"\ncanon = false\n";
        let err = format!("{:#}", Conditions::parse(missing).unwrap_err());
        assert!(err.contains("engine"), "{err}");
        let conditions =
            Conditions::parse("[C0]\ndescription = \"x\"\ncanon = false\nengine = false\n")
                .unwrap();
        let err = format!("{:#}", conditions.select(&names(&["C9"])).unwrap_err());
        assert!(err.contains("C9") && err.contains("C0"), "{err}");
        assert!(conditions.select(&names(&["C0", "C0"])).is_err());
        let traversal =
            "[\"../../../victim\"]\ndescription = \"x\"\ncanon = false\nengine = false\n";
        let err = format!("{:#}", Conditions::parse(traversal).unwrap_err());
        assert!(
            err.contains("field `condition name`") && err.contains("not a safe name"),
            "{err}"
        );
    }
}
