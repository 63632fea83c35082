//! `manifest.toml`: what a batch was run with (docs/contract.md, "Runs"). A rerun into
//! the same folder must match it (same agent, CLI version, model, effort, seed, and the
//! same content for every task and condition already in it); it may add tasks, conditions
//! and repetitions. A mismatch is an error listing every difference, never a silent mix
//! of two set-ups in one batch.
//!
//! A shard of a batch split across machines records its part in `shard`; a batch
//! merged from shards has none, and `partial` when some shards were left out
//! (`sens-bench merge --partial`). A complete merge's manifest is the one the same
//! batch run on one machine writes.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agent::budget::RunLimits;
pub use crate::record::AgentInfo;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The manifest's format version ([`crate::record::format`]); written first.
    #[serde(
        default = "crate::record::format::unstated",
        deserialize_with = "crate::record::format::known"
    )]
    pub format: u32,
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
    /// The part of the plan this folder runs (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardPart>,
    /// Every input a run reads, by name (`task ID`, `source of task ID`, `sequence
    /// NAME`, `script`, `rules of condition NAME`) -> file (relative to the input's
    /// folder, or the file's name) -> digest of its content: a changed file is
    /// named when a rerun is refused. Absent in manifests before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: Inputs,
    /// The spending limits of the latest command on the batch: a rerun may
    /// change them (each record's status says whether its run passed one).
    #[serde(default)]
    pub budgets: Budgets,
    /// A merge that left shards out: which of how many it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// `--max-tokens`, `--max-cost-usd` and `--batch-max-cost-usd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Budgets {
    #[serde(flatten)]
    pub run: RunLimits,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_max_cost_usd: Option<f64>,
}

/// Input name -> file -> content digest (see [`Manifest::inputs`]).
pub type Inputs = BTreeMap<String, BTreeMap<String, String>>;

/// `--shard K/N` and the `--weights` it was balanced by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardPart {
    pub index: u32,
    pub count: u32,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub weights: BTreeMap<String, u64>,
}

impl std::fmt::Display for ShardPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "shard {}/{}", self.index, self.count)?;
        if !self.weights.is_empty() {
            let weights: Vec<String> = self
                .weights
                .iter()
                .map(|(u, w)| format!("{u}={w}"))
                .collect();
            write!(f, " weighted {}", weights.join(","))?;
        }
        Ok(())
    }
}

/// The shards a partial merge holds, of `count`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub count: u32,
    pub merged: Vec<u32>,
}

/// One field in which two manifests differ, with both values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub what: String,
    pub old: String,
    pub new: String,
}

/// Whether units and conditions only in the second manifest count as differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Additions {
    /// A rerun may add tasks and conditions.
    Allowed,
    /// Shards of one batch name the same ones.
    Differ,
}

fn describe_shard(shard: &Option<ShardPart>) -> String {
    shard
        .as_ref()
        .map_or_else(|| "no shard".to_string(), ToString::to_string)
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
        let differences = self.differences(next, Additions::Allowed);
        if !differences.is_empty() {
            let lines: Vec<String> = differences
                .iter()
                .map(|d| format!("{}: batch has {}, this run has {}", d.what, d.old, d.new))
                .collect();
            bail!(
                "this batch was run with a different set-up; use a new --out folder, or restore:\n  {}",
                lines.join("\n  ")
            );
        }
        let mut merged = self.clone();
        merged.conditions.extend(next.conditions.clone());
        merged.rules.extend(next.rules.clone());
        merged.units.extend(next.units.clone());
        merged.inputs.extend(next.inputs.clone());
        merged.budgets = next.budgets.clone();
        Ok(merged)
    }

    /// Every field in which `next` differs from `self` (`partial` aside).
    pub fn differences(&self, next: &Manifest, additions: Additions) -> Vec<Difference> {
        let mut differences = Vec::new();
        let mut differ = |what: &str, old: &dyn std::fmt::Display, new: &dyn std::fmt::Display| {
            differences.push(Difference {
                what: what.to_string(),
                old: old.to_string(),
                new: new.to_string(),
            });
        };
        if additions == Additions::Differ && self.sens_bench_version != next.sens_bench_version {
            differ(
                "sens_bench_version",
                &self.sens_bench_version,
                &next.sens_bench_version,
            );
        }
        if self.seed != next.seed {
            differ("seed", &self.seed, &next.seed);
        }
        if self.engine_rev != next.engine_rev {
            differ("engine_rev", &self.engine_rev, &next.engine_rev);
        }
        if self.shard != next.shard {
            differ(
                "shard",
                &describe_shard(&self.shard),
                &describe_shard(&next.shard),
            );
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
        if self.agent.no_sandbox != next.agent.no_sandbox {
            let sandbox = |no: bool| if no { "--no-sandbox" } else { "sandboxed" };
            differ(
                "agent.no_sandbox",
                &sandbox(self.agent.no_sandbox),
                &sandbox(next.agent.no_sandbox),
            );
        }
        let absent = "none".to_string();
        for (kind, old, new) in [
            ("condition", &self.conditions, &next.conditions),
            ("rules of condition", &self.rules, &next.rules),
            ("task", &self.units, &next.units),
        ] {
            let names: std::collections::BTreeSet<&String> = match additions {
                Additions::Allowed => new.keys().filter(|n| old.contains_key(*n)).collect(),
                Additions::Differ => old.keys().chain(new.keys()).collect(),
            };
            for name in names {
                let (recorded, digest) = (
                    old.get(name).unwrap_or(&absent),
                    new.get(name).unwrap_or(&absent),
                );
                if recorded != digest {
                    differ(&format!("{kind} {name}"), recorded, digest);
                }
            }
        }
        let no_files = BTreeMap::new();
        for (input, new_files) in &next.inputs {
            let old_files = match (self.inputs.get(input), additions) {
                (Some(files), _) => files,
                // A manifest before inputs were pinned, or an input a rerun adds.
                (None, Additions::Allowed) => continue,
                (None, Additions::Differ) => &no_files,
            };
            let files: std::collections::BTreeSet<&String> =
                old_files.keys().chain(new_files.keys()).collect();
            for file in files {
                let (old, new) = (old_files.get(file), new_files.get(file));
                if old != new {
                    differ(
                        &format!("{input}: file {file}"),
                        old.unwrap_or(&absent),
                        new.unwrap_or(&absent),
                    );
                }
            }
        }
        differences
    }
}

/// The content digest of every file under `dir`, by `/`-separated relative path.
pub fn file_digests(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files)?;
    files
        .into_iter()
        .map(|relative| {
            let digest = file_digest(&dir.join(&relative))?;
            Ok((relative, digest))
        })
        .collect()
}

/// The content digest of one file.
pub fn file_digest(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hex::encode(Sha256::digest(bytes)))
}

/// One file as an input: its name -> its digest.
pub fn file_input(path: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{} names no file", path.display()))?;
    Ok(BTreeMap::from([(name, file_digest(path)?)]))
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
pub(crate) mod tests {
    use super::*;

    /// An unsharded manifest, for tests to alter.
    pub(crate) fn manifest() -> Manifest {
        Manifest {
            format: crate::record::format::FORMAT,
            sens_bench_version: "0.1.0".into(),
            engine_rev: "abc".into(),
            seed: 1,
            agent: AgentInfo {
                name: "oracle".into(),
                version: "2.1.197".into(),
                model: "claude-sonnet".into(),
                effort: "medium".into(),
                no_sandbox: false,
            },
            conditions: BTreeMap::from([("C0".into(), "d0".into())]),
            rules: BTreeMap::new(),
            budgets: Budgets::default(),
            units: BTreeMap::from([("t1".into(), "h1".into())]),
            inputs: BTreeMap::from([(
                "source of task t1".into(),
                BTreeMap::from([("src/a.py".into(), "a1".into())]),
            )]),
            shard: None,
            partial: None,
        }
    }

    #[test]
    fn a_manifest_of_an_unknown_format_is_refused_by_name_and_one_without_reads_as_1() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.toml");
        manifest().save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("format = 1\n"), "{text}");

        std::fs::write(
            &path,
            text.replacen("format = 1", "format = 7\nnew_field = 1", 1),
        )
        .unwrap();
        let err = format!("{:#}", Manifest::load(&path).unwrap_err());
        assert!(err.contains("manifest.toml"), "{err}");
        assert!(err.contains("`format` is 7"), "{err}");

        std::fs::write(&path, text.replacen("format = 1\n", "", 1)).unwrap();
        assert_eq!(Manifest::load(&path).unwrap(), Some(manifest()));
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
    fn a_rerun_may_change_the_limits_and_they_are_saved() {
        let mut next = manifest();
        next.budgets = Budgets {
            run: RunLimits {
                max_tokens: Some(1000),
                max_cost_usd: Some(0.5),
            },
            batch_max_cost_usd: Some(2.0),
        };
        let merged = manifest().merge(&next).expect("limits may change");
        assert_eq!(merged.budgets, next.budgets);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.toml");
        merged.save(&path).unwrap();
        assert_eq!(Manifest::load(&path).unwrap(), Some(merged));
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
    fn a_changed_input_file_is_named() {
        let mut next = manifest();
        let files = next.inputs.get_mut("source of task t1").unwrap();
        files.insert("src/a.py".into(), "a2".into());
        files.insert("src/b.py".into(), "b1".into());
        let err = manifest().merge(&next).unwrap_err().to_string();
        assert!(
            err.contains("source of task t1: file src/a.py: batch has a1, this run has a2")
                && err.contains("source of task t1: file src/b.py: batch has none"),
            "{err}"
        );
        let mut older = manifest();
        older.inputs.clear();
        assert!(older.merge(&manifest()).is_ok(), "a manifest before inputs");
    }

    #[test]
    fn a_rerun_into_a_shard_folder_keeps_its_shard() {
        let mut first = manifest();
        first.shard = Some(ShardPart {
            index: 1,
            count: 2,
            weights: BTreeMap::new(),
        });
        let mut other = first.clone();
        other.shard = Some(ShardPart {
            index: 2,
            count: 2,
            weights: BTreeMap::new(),
        });
        let err = first.merge(&other).unwrap_err().to_string();
        assert!(
            err.contains("shard: batch has shard 1/2, this run has shard 2/2"),
            "{err}"
        );
        assert!(first.merge(&first).is_ok());
    }

    #[test]
    fn shards_must_name_the_same_units() {
        let mut next = manifest();
        next.units.insert("t2".into(), "h2".into());
        let differences = manifest().differences(&next, Additions::Differ);
        assert_eq!(
            differences,
            [Difference {
                what: "task t2".into(),
                old: "none".into(),
                new: "h2".into()
            }]
        );
        assert!(manifest().differences(&next, Additions::Allowed).is_empty());
    }

    #[test]
    fn an_unsharded_manifest_has_no_shard_or_partial_table() {
        let text = toml::to_string_pretty(&manifest()).unwrap();
        assert!(
            !text.contains("shard") && !text.contains("partial"),
            "{text}"
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
