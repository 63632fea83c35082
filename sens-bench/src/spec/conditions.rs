//! Conditions (docs/contract.md, "Conditions"): what an agent session gets besides the
//! task. They are data in `bench/conditions.toml`, so a user adds one without touching
//! code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sens_engine::config::RuleConfig;
use sens_engine::session::guards::GuardSpec;
use serde::{Deserialize, Serialize};

use super::check_name;

/// One condition as written in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub description: String,
    /// Append the Canon to the agent's system prompt.
    pub canon: bool,
    /// Answer the agent's hooks with the Sens engine in process.
    pub engine: bool,
    /// Serve the engine's query tools (`already_exists`, `find_symbol`) to the
    /// agent as the in-process MCP server `sens`; needs `engine`. The Canon
    /// mentions them only here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mcp_tools: bool,
    /// A rules file for the engine, relative to the conditions file (default:
    /// the default rules), so a batch can compare two rule sets as two conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<PathBuf>,
    /// The rules the engine judges with: `rules` loaded when the file is read.
    #[serde(skip)]
    pub rule_config: RuleConfig,
    /// The reviewer in the engine's Stop audit (needs `engine`): the project's
    /// review rules, the reviewer model, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewMode>,
    /// The confidence at which a review finding blocks (default 0.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_block_at: Option<f64>,
    /// The Messages API model the review asks (default: the review commands').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_model: Option<String>,
    /// Guards of the hook session (`sens_engine::session::guards`), in order.
    /// With `engine = false` they run alone, without the copy rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<String>,
    /// Per-guard settings: `[NAME.guard.loop] threshold = 5`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub guard: BTreeMap<String, toml::Table>,
    /// `guards` with their settings, checked when the file is read.
    #[serde(skip)]
    pub guard_specs: Vec<GuardSpec>,
    /// `rules` resolved against the conditions file's folder, when given.
    #[serde(skip)]
    pub rules_path: Option<PathBuf>,
}

impl Condition {
    /// Whether the agent's hooks are answered (by the engine, its guards, or both).
    pub fn has_hooks(&self) -> bool {
        self.engine || !self.guards.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewMode {
    Rules,
    Reviewer,
    Both,
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
        let base = path.parent().unwrap_or(Path::new(""));
        let mut conditions = Self::parse_in(&text, base)
            .with_context(|| format!("in conditions file {}", path.display()))?;
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

    /// Parses a conditions text; guards' files are read from the current folder.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        Self::parse_in(text, Path::new(""))
    }

    /// Parses a conditions text whose guards' files are relative to `base`.
    fn parse_in(text: &str, base: &Path) -> anyhow::Result<Self> {
        let mut map: BTreeMap<String, Condition> = toml::from_str(text)?;
        for name in map.keys() {
            check_name("condition name", name)?;
        }
        if map.is_empty() {
            bail!(
                "no condition is defined: add a table such as [C0] with description, canon, engine"
            );
        }
        for (name, condition) in &mut map {
            if condition.mcp_tools && !condition.engine {
                bail!(
                    "[{name}] field `mcp_tools`: the tools are served by the engine's session, so \
                     mcp_tools = true needs engine = true"
                );
            }
            if condition.review.is_some() && !condition.engine {
                bail!(
                    "[{name}] field `review`: the review runs in the engine's Stop audit; set engine = true"
                );
            }
            if let Some(at) = condition
                .review_block_at
                .filter(|at| !(*at > 0.0 && *at <= 1.0))
            {
                bail!("[{name}] field `review_block_at`: {at} is not a confidence in (0, 1]");
            }
            condition.guard_specs =
                guard_specs(condition, base).with_context(|| format!("[{name}]"))?;
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

/// The condition's guards with their settings; an unknown guard, settings for a
/// guard not listed, or bad settings are errors naming the guard.
fn guard_specs(condition: &Condition, base: &Path) -> anyhow::Result<Vec<GuardSpec>> {
    if let Some(name) = condition
        .guard
        .keys()
        .find(|n| !condition.guards.contains(n))
    {
        bail!("field `guard.{name}`: settings for a guard that `guards` does not list");
    }
    let mut specs = Vec::with_capacity(condition.guards.len());
    for (i, name) in condition.guards.iter().enumerate() {
        if condition.guards[..i].contains(name) {
            bail!("field `guards`: guard `{name}` is listed twice");
        }
        let settings = condition.guard.get(name).cloned().unwrap_or_default();
        let settings = serde_json::to_value(settings).context("reading guard settings")?;
        specs.push(GuardSpec::parse(name, settings, base).context("field `guards`")?);
    }
    Ok(specs)
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
    fn the_shipped_file_defines_c0_to_c3() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/conditions.toml");
        let conditions = Conditions::load(&path).expect("the shipped conditions parse");
        let picked = conditions
            .select(&names(&["C0", "C1", "C2", "C3"]))
            .expect("all four exist");
        let flags: Vec<(bool, bool, bool)> = picked
            .iter()
            .map(|(_, c)| (c.canon, c.engine, c.mcp_tools))
            .collect();
        assert_eq!(
            flags,
            [
                (false, false, false),
                (true, false, false),
                (true, true, false),
                (true, true, true)
            ]
        );
    }

    #[test]
    fn tools_need_the_engine_and_leave_other_conditions_digests_alone() {
        let text = "[T]\ndescription = \"x\"\ncanon = true\nengine = false\nmcp_tools = true\n";
        let err = format!("{:#}", Conditions::parse(text).unwrap_err());
        assert!(
            err.contains("[T] field `mcp_tools`") && err.contains("engine = true"),
            "{err}"
        );
        // Written only when set, so conditions without it keep their digests.
        let c2 = "[C2]\ndescription = \"x\"\ncanon = true\nengine = true\n";
        let parsed = Conditions::parse(c2)
            .unwrap()
            .select(&names(&["C2"]))
            .unwrap();
        let written = toml::to_string(&parsed[0].1).unwrap();
        assert!(!written.contains("mcp_tools"), "{written}");
    }

    #[test]
    fn review_options_parse_and_are_checked() {
        let text = "[R]\ndescription = \"d\"\ncanon = false\nengine = true\nreview = \"both\"\n\
                    review_block_at = 0.95\n";
        let conditions = Conditions::parse(text).expect("parses");
        let picked = conditions.select(&names(&["R"])).expect("exists");
        assert_eq!(picked[0].1.review, Some(ReviewMode::Both));
        let no_engine = text.replace("engine = true", "engine = false");
        let err = Conditions::parse(&no_engine).unwrap_err().to_string();
        assert!(err.contains("[R] field `review`"), "{err}");
        let err = Conditions::parse(&text.replace("0.95", "1.5"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("[R] field `review_block_at`"), "{err}");
        let err = Conditions::parse(&text.replace("\"both\"", "\"all\"")).unwrap_err();
        assert!(
            format!("{err:#}").contains("unknown variant `all`"),
            "{err:#}"
        );
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
    fn guards_are_checked_when_the_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("conditions.toml");
        let load = |text: &str| {
            std::fs::write(&file, text).unwrap();
            Conditions::load(&file).map_err(|e| format!("{e:#}"))
        };
        let head = "[C0G]\ndescription = \"x\"\ncanon = false\nengine = false\n";
        let ok = load(&format!(
            "{head}guards = [\"loop\", \"stop-evidence\"]\n[C0G.guard.loop]\nthreshold = 3\n"
        ))
        .unwrap();
        let picked = ok.select(&names(&["C0G"])).unwrap();
        assert_eq!(picked[0].1.guard_specs.len(), 2);
        assert!(picked[0].1.has_hooks());
        for (text, parts) in [
            (
                format!("{head}guards = [\"lop\"]\n"),
                vec!["conditions.toml", "[C0G]", "unknown guard `lop`", "loop"],
            ),
            (
                format!("{head}guards = [\"loop\"]\n[C0G.guard.loop]\nthreshhold = 3\n"),
                vec!["[C0G]", "guard `loop`", "threshhold"],
            ),
            (
                format!("{head}guards = []\n[C0G.guard.loop]\nthreshold = 3\n"),
                vec!["[C0G]", "guard.loop"],
            ),
            (
                format!("{head}guards = [\"loop\", \"loop\"]\n"),
                vec!["listed twice"],
            ),
        ] {
            let err = load(&text).unwrap_err();
            for part in parts {
                assert!(err.contains(part), "{part}: {err}");
            }
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
