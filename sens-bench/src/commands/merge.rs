//! `sens-bench merge OUT SHARD_DIR...`: joins the folders of a batch's shards
//! (`--shard K/N`) into one batch folder.
//!
//! - The shards' manifests must be equal in everything but `shard`, and name the
//!   same count N; every shard 1..N must be given (or be in OUT already), unless
//!   `--partial`, which OUT's manifest then records (`[partial]`: which shards it
//!   holds). The merged manifest is the shards' without `shard`: what the same
//!   batch run on one machine writes, so `report` on it is byte for byte the same.
//! - Records (`runs.jsonl`) are copied line for line, in shard order; a run key in
//!   two shards, or in OUT with other content, is refused. Labels
//!   (`labels.jsonl`) are appended line for line. Run folders (`runs/`, and the
//!   superseded attempts' `superseded/`) are copied file by file; every attempt's
//!   line is copied (the key is the run's and the attempt); a file OUT holds with other content is refused. Report outputs
//!   (`report.md`, `runs.csv`, `plots/`) are not copied: report the merged batch.
//! - `--report` then reports the merged batch (`report`, or `sequence report` for
//!   a batch of sequence steps), so a cluster's merge job needs no other command.
//! - Every check runs before anything is written: a refusal names the difference
//!   and leaves OUT as it was. Merging again adds nothing (what OUT holds with the
//!   same content is skipped), and a partial merge can be completed later.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::batch::SUPERSEDED_DIR;
use crate::batch::labels::LABELS_FILE;
use crate::batch::lock::BatchLock;
use crate::batch::manifest::{Additions, Difference, Manifest, Partial};
use crate::record::{AttemptKey, RunKey, read_records};
use crate::report::{self, MANIFEST_FILE, RUNS_FILE};
use crate::spec::files::relative_files;

/// The labels of a batch's decisions (`sens-bench label`), one JSON value a line.
/// The run folders of a batch.
const RUNS_DIR: &str = "runs";

/// `sens-bench merge`.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// The merged batch folder (created, or completed when it exists).
    pub out: PathBuf,
    /// The shard folders (`sens-bench run --shard K/N --out ...`).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Merge even when some shards of 1..N are missing; the manifest records it.
    #[arg(long)]
    pub partial: bool,
    /// Then report the merged batch with the default options: `sequence report`
    /// when it holds only sequence steps, else `report`.
    #[arg(long)]
    pub report: bool,
}

/// One shard folder, read.
struct ShardFolder {
    dir: PathBuf,
    manifest: Manifest,
    index: u32,
}

/// Merges; see the module documentation.
pub fn merge(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let shards = args
        .shards
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let Some(first) = shards.first() else {
        bail!("give at least one shard folder");
    };
    let count = first.manifest.shard.as_ref().map_or(1, |s| s.count);
    let mut manifest = common_manifest(first, &shards)?;
    let existing = Manifest::load(&args.out.join(MANIFEST_FILE))?;
    let mut merged: BTreeSet<u32> = shards.iter().map(|s| s.index).collect();
    if let Some(existing) = &existing {
        check_same_batch(existing, &manifest, &args.out)?;
        match &existing.partial {
            Some(partial) if partial.count != count => bail!(
                "{} holds shards of {}, these shards are of {count}",
                args.out.join(MANIFEST_FILE).display(),
                partial.count
            ),
            Some(partial) => merged.extend(&partial.merged),
            None => merged.extend(1..=count),
        }
    }
    let missing: Vec<u32> = (1..=count).filter(|k| !merged.contains(k)).collect();
    if !missing.is_empty() {
        if !args.partial {
            let names: Vec<String> = missing.iter().map(|k| format!("{k}/{count}")).collect();
            bail!(
                "shard {} missing: give every shard folder of 1..{count}, or --partial to merge without",
                names.join(", ")
            );
        }
        manifest.partial = Some(Partial {
            count,
            merged: merged.into_iter().collect(),
        });
    }

    // One writer: an existing OUT is locked before it is read; a new one once created.
    let held = if args.out.is_dir() {
        Some(BatchLock::acquire(&args.out)?)
    } else {
        None
    };
    let records = merged_lines(&args.out, &shards)?;
    let labels = new_labels(&args.out, &shards)?;
    let copies = planned_copies(&args.out, &shards)?;

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let _lock = match held {
        Some(lock) => lock,
        None => BatchLock::acquire(&args.out)?,
    };
    for (from, to) in &copies {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::copy(from, to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    append_lines(&args.out.join(LABELS_FILE), &labels)?;
    append_lines(&args.out.join(RUNS_FILE), &records)?;
    manifest.save(&args.out.join(MANIFEST_FILE))?;
    let state = match &manifest.partial {
        Some(partial) => format!("partial: shards {:?} of {count}", partial.merged),
        None => format!("complete: {count} shards"),
    };
    println!(
        "merged into {} ({state}): {} records, {} labels and {} files added",
        args.out.display(),
        records.len(),
        labels.len(),
        copies.len()
    );
    if !args.report {
        return Ok(ExitCode::SUCCESS);
    }
    let steps_only = read_records(&args.out.join(RUNS_FILE))?
        .iter()
        .all(|r| r.sequence.is_some());
    if steps_only {
        report::sequence::sequence_report(&default_options(&args.out)?)
    } else {
        report::report(&default_options(&args.out)?)
    }
}

/// A report command's options for `batch` as its command line's defaults make them.
fn default_options<T: clap::Args + clap::FromArgMatches>(batch: &Path) -> anyhow::Result<T> {
    let command = T::augment_args(clap::Command::new("report"));
    let matches = command
        .try_get_matches_from([std::ffi::OsStr::new("report"), batch.as_os_str()])
        .context("cannot make the report's default options")?;
    T::from_arg_matches(&matches).context("cannot make the report's default options")
}

fn read_shard(dir: &Path) -> anyhow::Result<ShardFolder> {
    let path = dir.join(MANIFEST_FILE);
    let manifest = Manifest::load(&path)?
        .with_context(|| format!("{} is missing: is this a shard folder?", path.display()))?;
    let index = manifest.shard.as_ref().map(|s| s.index).with_context(|| {
        format!(
            "{}: no `shard`: not the folder of a `run --shard K/N`",
            path.display()
        )
    })?;
    Ok(ShardFolder {
        dir: dir.to_path_buf(),
        manifest,
        index,
    })
}

/// The shards' manifest without `shard`; fails naming the first shard that
/// differs from the first one given, or a shard given twice.
fn common_manifest(first: &ShardFolder, shards: &[ShardFolder]) -> anyhow::Result<Manifest> {
    let count_of = |s: &ShardFolder| {
        s.manifest
            .shard
            .as_ref()
            .map(|p| (p.count, p.weights.clone()))
    };
    let mut seen: HashMap<u32, &Path> = HashMap::new();
    for shard in shards {
        if let Some(other) = seen.insert(shard.index, &shard.dir) {
            bail!(
                "shard {} is given twice: {} and {}",
                shard.index,
                other.display(),
                shard.dir.display()
            );
        }
        let mut differences = without_shard(&first.manifest)
            .differences(&without_shard(&shard.manifest), Additions::Differ);
        if count_of(shard) != count_of(first) {
            let describe = |s: &ShardFolder| {
                s.manifest
                    .shard
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            };
            differences.push(Difference {
                what: "shard".into(),
                old: describe(first),
                new: describe(shard),
            });
        }
        if !differences.is_empty() {
            let lines: Vec<String> = differences
                .iter()
                .map(|d| format!("{}: {} vs {}", d.what, d.old, d.new))
                .collect();
            bail!(
                "{} differs from {}; shards of one batch share every setting but the shard:\n  {}",
                shard.dir.join(MANIFEST_FILE).display(),
                first.dir.join(MANIFEST_FILE).display(),
                lines.join("\n  ")
            );
        }
    }
    Ok(without_shard(&first.manifest))
}

fn without_shard(manifest: &Manifest) -> Manifest {
    Manifest {
        shard: None,
        partial: None,
        ..manifest.clone()
    }
}

fn check_same_batch(existing: &Manifest, merged: &Manifest, out: &Path) -> anyhow::Result<()> {
    let differences = without_shard(existing).differences(merged, Additions::Differ);
    if differences.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = differences
        .iter()
        .map(|d| {
            format!(
                "{}: {} has {}, the shards have {}",
                d.what,
                out.display(),
                d.old,
                d.new
            )
        })
        .collect();
    bail!(
        "{} holds another batch; merge into a new folder:\n  {}",
        out.join(MANIFEST_FILE).display(),
        lines.join("\n  ")
    )
}

/// The text of `path`; empty when it does not exist.
fn read_text(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The non-blank lines of `path` (none when it does not exist).
fn read_lines(path: &Path) -> anyhow::Result<Vec<String>> {
    Ok(read_text(path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// The records to append to OUT's `runs.jsonl`: each shard's, in order, except
/// those OUT holds already (same line). A key twice is refused.
fn merged_lines(out: &Path, shards: &[ShardFolder]) -> anyhow::Result<Vec<String>> {
    let mut owners: HashMap<AttemptKey, (PathBuf, String)> = HashMap::new();
    let out_runs = out.join(RUNS_FILE);
    for (key, line) in keyed_lines(&out_runs)? {
        owners.insert(key, (out_runs.clone(), line));
    }
    let mut added = Vec::new();
    for shard in shards {
        let path = shard.dir.join(RUNS_FILE);
        // Whole records only: the error names the file and line of one that is not.
        read_records(&path)?;
        for (key, line) in keyed_lines(&path)? {
            match owners.get(&key) {
                Some((owner, same)) if owner == &out_runs && *same == line => {}
                Some((owner, _)) => bail!(
                    "a duplicated record: {} attempt {} is in {} and in {}",
                    describe_key(&key.run),
                    key.attempt,
                    owner.display(),
                    path.display()
                ),
                None => {
                    owners.insert(key, (path.clone(), line.clone()));
                    added.push(line);
                }
            }
        }
    }
    Ok(added)
}

fn describe_key(key: &RunKey) -> String {
    let run = format!("{} {} rep {}", key.task, key.condition, key.rep);
    match (&key.sequence, key.step) {
        (Some(sequence), Some(step)) => format!("sequence {sequence} step {step} ({run})"),
        _ => format!("task {run}"),
    }
}

/// Every record line of `path` with its key and attempt (a retried run has a
/// line per attempt, all copied).
fn keyed_lines(path: &Path) -> anyhow::Result<Vec<(AttemptKey, String)>> {
    let text = read_text(path)?;
    let raw: Vec<&str> = text.lines().collect();
    crate::jsonl::lines::<AttemptKey>(&text, path, "a run record")
        .map(|line| line.map(|(number, key)| (key, raw[number - 1].to_string())))
        .collect()
}

/// The shards' labels OUT does not hold yet, in shard order.
fn new_labels(out: &Path, shards: &[ShardFolder]) -> anyhow::Result<Vec<String>> {
    let mut held: HashSet<String> = read_lines(&out.join(LABELS_FILE))?.into_iter().collect();
    let mut added = Vec::new();
    for shard in shards {
        for line in read_lines(&shard.dir.join(LABELS_FILE))? {
            if held.insert(line.clone()) {
                added.push(line);
            }
        }
    }
    Ok(added)
}

/// (from, to) for every file of the shards' `runs/` and `superseded/` that OUT lacks; a file OUT
/// (or another shard) holds with other content is refused.
fn planned_copies(out: &Path, shards: &[ShardFolder]) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    let mut planned: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for (shard, folder) in shards
        .iter()
        .flat_map(|shard| [RUNS_DIR, SUPERSEDED_DIR].map(|folder| (shard, folder)))
    {
        let root = shard.dir.join(folder);
        if !root.is_dir() {
            continue;
        }
        // Every file, hidden ones too: a run folder is copied whole.
        let walk = ignore::WalkBuilder::new(&root)
            .standard_filters(false)
            .build();
        for relative in relative_files(walk, &root, |_| true)? {
            let from = root.join(&relative);
            let to = out.join(folder).join(&relative);
            let held = planned
                .get(&to)
                .cloned()
                .or_else(|| to.exists().then(|| to.clone()));
            match held {
                Some(other) if same_content(&other, &from)? => {}
                Some(other) => bail!(
                    "{} and {} differ: one run folder from two places",
                    other.display(),
                    from.display()
                ),
                None => {
                    planned.insert(to, from);
                }
            }
        }
    }
    Ok(planned.into_iter().map(|(to, from)| (from, to)).collect())
}

fn same_content(a: &Path, b: &Path) -> anyhow::Result<bool> {
    let read = |p: &Path| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
    Ok(read(a)? == read(b)?)
}

/// Appends `lines` to `path` through a temporary file renamed over it.
fn append_lines(path: &Path, lines: &[String]) -> anyhow::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut text = read_lines(path)?.join("\n");
    for line in lines {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
    }
    text.push('\n');
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::manifest::ShardPart;
    use crate::batch::manifest::tests::manifest;
    use crate::record::tests::sample_json;

    /// A shard folder `dir` of `count` holding one record of `task` (with a run
    /// folder file) and one label.
    fn shard(dir: &Path, index: u32, count: u32, task: &str) -> PathBuf {
        std::fs::create_dir_all(dir.join("runs").join(task)).unwrap();
        let mut part = manifest();
        part.shard = Some(ShardPart {
            index,
            count,
            weights: BTreeMap::new(),
        });
        part.save(&dir.join(MANIFEST_FILE)).unwrap();
        let mut record = sample_json();
        record["task"] = task.into();
        std::fs::write(dir.join(RUNS_FILE), format!("{record}\n")).unwrap();
        std::fs::write(dir.join("runs").join(task).join("diff.patch"), task).unwrap();
        std::fs::write(dir.join(LABELS_FILE), format!("{{\"run\": \"{task}\"}}\n")).unwrap();
        dir.to_path_buf()
    }

    fn merge_into(out: &Path, shards: &[PathBuf], partial: bool) -> anyhow::Result<ExitCode> {
        merge(&MergeArgs {
            out: out.to_path_buf(),
            shards: shards.to_vec(),
            partial,
            report: false,
        })
    }

    #[test]
    fn records_run_folders_and_labels_are_joined_once() {
        let dir = tempfile::tempdir().unwrap();
        let shards = [
            shard(&dir.path().join("s1"), 1, 2, "t1"),
            shard(&dir.path().join("s2"), 2, 2, "t2"),
        ];
        let out = dir.path().join("merged");
        merge_into(&out, &shards, false).unwrap();
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
        assert_eq!(read(RUNS_FILE).lines().count(), 2);
        assert_eq!(read(LABELS_FILE).lines().count(), 2);
        assert_eq!(read("runs/t2/diff.patch"), "t2");
        assert_eq!(
            Manifest::load(&out.join(MANIFEST_FILE)).unwrap(),
            Some(manifest())
        );
        let before = [read(RUNS_FILE), read(LABELS_FILE), read(MANIFEST_FILE)];
        merge_into(&out, &shards, false).unwrap();
        assert_eq!(
            [read(RUNS_FILE), read(LABELS_FILE), read(MANIFEST_FILE)],
            before
        );
    }

    #[test]
    fn a_shard_twice_another_count_or_a_differing_run_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let one = shard(&dir.path().join("s1"), 1, 2, "t1");
        let again = shard(&dir.path().join("again"), 1, 2, "t2");
        let of_three = shard(&dir.path().join("of3"), 2, 3, "t2");
        let out = dir.path().join("merged");
        let err = merge_into(&out, &[one.clone(), again], false).unwrap_err();
        assert!(err.to_string().contains("shard 1 is given twice"), "{err}");
        let err = format!(
            "{:#}",
            merge_into(&out, &[one.clone(), of_three], false).unwrap_err()
        );
        assert!(err.contains("shard: shard 1/2 vs shard 2/3"), "{err}");
        assert!(!out.exists());

        merge_into(&out, std::slice::from_ref(&one), true).unwrap();
        let partial = Manifest::load(&out.join(MANIFEST_FILE)).unwrap().unwrap();
        assert_eq!(
            partial.partial,
            Some(Partial {
                count: 2,
                merged: vec![1]
            })
        );
        std::fs::write(out.join("runs/t1/diff.patch"), "changed").unwrap();
        let err = merge_into(&out, &[one], true).unwrap_err().to_string();
        assert!(
            err.contains("diff.patch") && err.contains("differ"),
            "{err}"
        );
    }
}
