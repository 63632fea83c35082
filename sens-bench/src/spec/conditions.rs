//! Conditions (SPEC 3.4): what an agent session gets besides the task. They are
//! data in `bench/conditions.toml`, so a user adds one without touching code.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

/// One condition as written in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub description: String,
    /// Append the Canon to the agent's system prompt.
    pub canon: bool,
    /// Answer the agent's hooks with the Sens engine in process.
    pub engine: bool,
}

/// Every condition of a conditions file, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conditions(BTreeMap<String, Condition>);

impl Conditions {
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read conditions file {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in conditions file {}", path.display()))
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let map: BTreeMap<String, Condition> = toml::from_str(text)?;
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
    }
}
