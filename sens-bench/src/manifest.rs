//! `manifest.toml`: what a batch was run with (SPEC 3.5). A rerun into the same
//! folder must match it (same agent, CLI version, model, effort, seed, and the same
//! content for every task and condition already in it); it may add tasks,
//! conditions and repetitions. A mismatch is an error listing every difference,
//! never a silent mix of two set-ups in one batch.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use crate::record::AgentInfo;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub sens_bench_version: String,
    /// The commit of this repository the engine was built from, when known.
    pub engine_rev: String,
    pub seed: u64,
    pub agent: AgentInfo,
    /// Condition name -> digest of its definition.
    pub conditions: BTreeMap<String, String>,
    /// Engine condition name -> `RuleConfig::digest` of the rules it judges with.
    #[serde(default)]
    pub rules: BTreeMap<String, String>,
    /// Task or sequence id -> digest of its folder.
    pub units: BTreeMap<String, String>,
}

impl Manifest {
    pub fn load(path: &Path) -> anyhow::Result<Option<Self>> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .map(Some)
                .with_context(|| format!("{} is not a batch manifest", path.display())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = toml::to_string_pretty(self).context("cannot serialize the manifest")?;
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// The manifest a rerun should leave: `self` (what is on disk) extended by what
    /// `next` adds. Fails with every difference in what both name.
    pub fn merge(&self, next: &Manifest) -> anyhow::Result<Manifest> {
        let mut differences = Vec::new();
        let mut differ = |what: &str, old: &dyn std::fmt::Display, new: &dyn std::fmt::Display| {
            differences.push(format!("{what}: batch has {old}, this run has {new}"));
        };
        if self.seed != next.seed {
            differ("seed", &self.seed, &next.seed);
        }
        if self.engine_rev != next.engine_rev {
            differ("engine_rev", &self.engine_rev, &next.engine_rev);
        }
        let agent_fields = [
            ("agent.name", &self.agent.name, &next.agent.name),
            ("agent.version", &self.agent.version, &next.agent.version),
            ("agent.model", &self.agent.model, &next.agent.model),
            ("agent.effort", &self.agent.effort, &next.agent.effort),
        ];
        for (what, old, new) in agent_fields {
            if old != new {
                differ(what, old, new);
            }
        }
        for (kind, old, new) in [
            ("condition", &self.conditions, &next.conditions),
            ("rules of condition", &self.rules, &next.rules),
            ("task", &self.units, &next.units),
        ] {
            for (name, digest) in new {
                if let Some(recorded) = old.get(name).filter(|d| *d != digest) {
                    differ(&format!("{kind} {name}"), recorded, digest);
                }
            }
        }
        if !differences.is_empty() {
            bail!(
                "this batch was run with a different set-up; use a new --out folder, or restore:\n  {}",
                differences.join("\n  ")
            );
        }
        let mut merged = self.clone();
        merged.conditions.extend(next.conditions.clone());
        merged.rules.extend(next.rules.clone());
        merged.units.extend(next.units.clone());
        Ok(merged)
    }
}

/// A digest of a folder's files: paths (sorted, `/`-separated) and contents.
pub fn digest_dir(dir: &Path) -> anyhow::Result<String> {
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for relative in files {
        let bytes = std::fs::read(dir.join(&relative))
            .with_context(|| format!("cannot read {}", dir.join(&relative).display()))?;
        hasher.update(relative.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// A digest of any serializable definition (a condition, options).
pub fn digest_value<T: Serialize>(value: &T) -> anyhow::Result<String> {
    let json = serde_json::to_vec(value).context("cannot serialize for a digest")?;
    Ok(hex::encode(Sha256::digest(json)))
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("cannot stat {}", path.display()))?;
        if kind.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            sens_bench_version: "0.1.0".into(),
            engine_rev: "abc".into(),
            seed: 1,
            agent: AgentInfo {
                name: "oracle".into(),
                version: "2.1.197".into(),
                model: "claude-sonnet".into(),
                effort: "medium".into(),
            },
            conditions: BTreeMap::from([("C0".into(), "d0".into())]),
            rules: BTreeMap::new(),
            units: BTreeMap::from([("t1".into(), "h1".into())]),
        }
    }

    #[test]
    fn a_rerun_may_add_tasks_and_conditions() {
        let mut next = manifest();
        next.units.insert("t2".into(), "h2".into());
        next.conditions.insert("C2".into(), "d2".into());
        let merged = manifest().merge(&next).expect("compatible");
        assert_eq!(merged.units.len(), 2);
        assert_eq!(merged.conditions.len(), 2);
    }

    #[test]
    fn every_difference_is_named() {
        let mut next = manifest();
        next.agent.model = "other".into();
        next.seed = 2;
        next.units.insert("t1".into(), "changed".into());
        let err = manifest().merge(&next).unwrap_err().to_string();
        assert!(
            err.contains("agent.model") && err.contains("seed") && err.contains("task t1"),
            "{err}"
        );
    }

    #[test]
    fn saves_and_loads_and_digests_folders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.toml");
        assert_eq!(Manifest::load(&path).unwrap(), None);
        manifest().save(&path).unwrap();
        assert_eq!(Manifest::load(&path).unwrap(), Some(manifest()));

        let task = dir.path().join("task");
        std::fs::create_dir_all(task.join("hidden")).unwrap();
        std::fs::write(task.join("task.toml"), "id = 1").unwrap();
        std::fs::write(task.join("hidden/t.py"), "x").unwrap();
        let before = digest_dir(&task).unwrap();
        assert_eq!(before, digest_dir(&task).unwrap());
        std::fs::write(task.join("hidden/t.py"), "y").unwrap();
        assert_ne!(before, digest_dir(&task).unwrap());
    }
}
