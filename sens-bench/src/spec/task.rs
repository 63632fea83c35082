//! Task files (`bench/tasks/<id>/task.toml`; docs/contract.md, "Task files"): parsed into
//! plain types, then checked, so that nothing runs on a bad file. Paths in a task file
//! are relative to the task's own folder and are resolved here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::hidden::Hidden;
use super::sequence::{self, Sequence};
use super::{
    Commands, Expect, check_language, check_name, existing, prompt_file, read_toml, relative_inside,
};

/// What kind of reuse a task tests (docs/contract.md, "Bench content").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Plain,
    NearReuse,
    FarReuse,
    CommonCause,
}

/// Where a task's project comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// An sdist from PyPI, `name==version`.
    Pypi { name: String, version: String },
    /// A public repository at a commit.
    Git { url: String, rev: String },
    /// The repository holding the task folder, at a commit.
    SelfRepo { repo: PathBuf, rev: String },
    /// A folder (absolute).
    Path(PathBuf),
    /// A sequence's start with reference patches 1..=step applied.
    Snapshot {
        sequence: Box<Sequence>,
        step: usize,
    },
}

/// A checked task.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    /// The task's folder (absolute).
    pub dir: PathBuf,
    pub language: String,
    pub kind: Kind,
    /// Absolute paths below.
    pub prompt: PathBuf,
    pub reference: PathBuf,
    pub hidden: Hidden,
    /// The agent's time limit.
    pub timeout: Duration,
    pub source: Source,
    /// The project inside the source (relative, may be empty).
    pub subdir: PathBuf,
    pub commands: Commands,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: String,
    language: String,
    kind: Kind,
    prompt: PathBuf,
    reference: PathBuf,
    hidden: PathBuf,
    timeout_s: u64,
    source: RawSource,
    commands: Commands,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    pypi: Option<String>,
    git: Option<String>,
    rev: Option<String>,
    #[serde(rename = "self")]
    self_rev: Option<String>,
    path: Option<PathBuf>,
    snapshot: Option<RawSnapshot>,
    #[serde(default)]
    subdir: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSnapshot {
    sequence: String,
    step: usize,
}

/// The file name of a task inside its folder.
pub const TASK_FILE: &str = "task.toml";

/// Loads and checks `DIR/task.toml`. Errors name the file and the field.
pub fn load_task(dir: &Path) -> Result<Task> {
    let dir = std::path::absolute(dir)
        .with_context(|| format!("cannot resolve the folder {}", dir.display()))?;
    let file = dir.join(TASK_FILE);
    let raw: RawTask = read_toml(&file)?;
    check_task(raw, &dir).with_context(|| format!("{}", file.display()))
}

/// Loads every task folder under `tasks_dir` (each subfolder must hold a
/// `task.toml`), or only `only` when given. All errors are reported together.
pub fn load_tasks(tasks_dir: &Path, only: Option<&str>) -> Result<Vec<Task>> {
    if let Some(id) = only {
        let dir = tasks_dir.join(id);
        if !dir.join(TASK_FILE).is_file() {
            bail!(
                "no task `{id}`: {} does not exist",
                dir.join(TASK_FILE).display()
            );
        }
        return Ok(vec![load_task(&dir)?]);
    }
    let entries = std::fs::read_dir(tasks_dir)
        .with_context(|| format!("cannot list the tasks folder {}", tasks_dir.display()))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", tasks_dir.display()))?;
        if entry.path().is_dir() {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    for dir in dirs {
        match load_task(&dir) {
            Ok(task) => tasks.push(task),
            Err(err) => errors.push(format!("{err:#}")),
        }
    }
    if !errors.is_empty() {
        bail!(
            "{} bad task file(s); nothing was run:\n  {}",
            errors.len(),
            errors.join("\n  ")
        );
    }
    if tasks.is_empty() {
        bail!("no task folders under {}", tasks_dir.display());
    }
    Ok(tasks)
}

fn check_task(raw: RawTask, dir: &Path) -> Result<Task> {
    check_name("id", &raw.id)?;
    let folder = dir
        .file_name()
        .and_then(|name| name.to_str())
        .context("the task folder has no UTF-8 name")?;
    if raw.id != folder {
        bail!(
            "field `id`: expected the folder name `{folder}`, found `{}`",
            raw.id
        );
    }
    check_language(&raw.language)?;
    if raw.timeout_s == 0 {
        bail!("field `timeout_s`: expected a positive number of seconds, found 0");
    }
    raw.commands.check()?;
    Ok(Task {
        id: raw.id,
        dir: dir.to_path_buf(),
        language: raw.language,
        kind: raw.kind,
        prompt: prompt_file(dir, "prompt", &raw.prompt)?,
        reference: existing(dir, "reference", &raw.reference, Expect::File)?,
        hidden: Hidden::folder(existing(dir, "hidden", &raw.hidden, Expect::Folder)?),
        timeout: Duration::from_secs(raw.timeout_s),
        subdir: relative_inside("source.subdir", &raw.source.subdir)?,
        source: check_source(raw.source, dir)?,
        commands: raw.commands,
    })
}

fn check_source(raw: RawSource, dir: &Path) -> Result<Source> {
    if raw.rev.is_some() && raw.git.is_none() {
        bail!("field `source.rev`: only allowed with `source.git`");
    }
    let given: Vec<&str> = [
        ("pypi", raw.pypi.is_some()),
        ("git", raw.git.is_some()),
        ("self", raw.self_rev.is_some()),
        ("path", raw.path.is_some()),
        ("snapshot", raw.snapshot.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect();
    match (raw.pypi, raw.git, raw.self_rev, raw.path, raw.snapshot) {
        (Some(spec), None, None, None, None) => pypi_source(&spec),
        (None, Some(url), None, None, None) => git_source(url, raw.rev),
        (None, None, Some(rev), None, None) => self_source(dir, rev),
        (None, None, None, Some(path), None) => Ok(Source::Path(existing(
            dir,
            "source.path",
            &path,
            Expect::Folder,
        )?)),
        (None, None, None, None, Some(snapshot)) => snapshot_source(dir, &snapshot),
        _ => bail!(
            "table `source`: expected exactly one of pypi, git (with rev), self, path, snapshot; found {}",
            if given.is_empty() {
                "none".to_string()
            } else {
                given.join(" and ")
            }
        ),
    }
}

fn pypi_source(spec: &str) -> Result<Source> {
    match spec.split_once("==") {
        Some((name, version)) if !name.trim().is_empty() && !version.trim().is_empty() => {
            Ok(Source::Pypi {
                name: name.trim().to_string(),
                version: version.trim().to_string(),
            })
        }
        _ => bail!("field `source.pypi`: expected `name==version`, found `{spec}`"),
    }
}

fn git_source(url: String, rev: Option<String>) -> Result<Source> {
    let Some(rev) = rev else {
        bail!("field `source.rev`: expected the commit to check out of `{url}`");
    };
    check_sha("source.rev", &rev)?;
    Ok(Source::Git { url, rev })
}

fn self_source(dir: &Path, rev: String) -> Result<Source> {
    check_sha("source.self", &rev)?;
    let repo = git2::Repository::discover(dir)
        .context("field `source.self`: the task folder is not inside a git repository")?;
    let commit = repo
        .revparse_single(&rev)
        .and_then(|obj| obj.peel_to_commit());
    if let Err(err) = commit {
        bail!(
            "field `source.self`: `{rev}` is not a commit of the repository at {}: {}",
            repo.path().display(),
            err.message()
        );
    }
    let root = repo
        .workdir()
        .context("field `source.self`: the repository is bare")?;
    Ok(Source::SelfRepo {
        repo: root.to_path_buf(),
        rev,
    })
}

fn snapshot_source(dir: &Path, snapshot: &RawSnapshot) -> Result<Source> {
    let sequence_dir = find_sequence(dir, &snapshot.sequence)?;
    let sequence = sequence::load_sequence(&sequence_dir)?;
    if snapshot.step > sequence.steps.len() {
        bail!(
            "field `source.snapshot.step`: sequence `{}` has {} steps, found step {}",
            sequence.name,
            sequence.steps.len(),
            snapshot.step
        );
    }
    Ok(Source::Snapshot {
        sequence: Box::new(sequence),
        step: snapshot.step,
    })
}

/// The nearest `sequences/<name>` folder holding a `sequence.toml`, looking from
/// the task folder upwards (so `bench/tasks/x` finds `sequences/` at the root).
fn find_sequence(task_dir: &Path, name: &str) -> Result<PathBuf> {
    relative_inside("source.snapshot.sequence", Path::new(name))?;
    task_dir
        .ancestors()
        .map(|dir| dir.join("sequences").join(name))
        .find(|dir| dir.join(sequence::SEQUENCE_FILE).is_file())
        .with_context(|| {
            format!(
                "field `source.snapshot.sequence`: no `sequences/{name}/{}` above {}",
                sequence::SEQUENCE_FILE,
                task_dir.display()
            )
        })
}

fn check_sha(field: &str, rev: &str) -> Result<()> {
    if (4..=40).contains(&rev.len()) && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        bail!("field `{field}`: expected a commit id (hex), found `{rev}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
id = "t1"
language = "python"
kind = "far-reuse"
prompt = "prompt.md"
reference = "reference.patch"
hidden = "hidden"
timeout_s = 900

[source]
pypi = "click==8.1.7"

[commands]
test = "python3 -m pytest -q tests"
hidden = "python3 -m pytest -q hidden_tests"
"#;

    /// A task folder `t1` holding `task_toml` and the files it names.
    fn task_dir(task_toml: &str) -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("t1");
        std::fs::create_dir_all(dir.join("hidden")).expect("mkdir");
        std::fs::write(dir.join("prompt.md"), "Do it.\n").expect("write");
        std::fs::write(dir.join("reference.patch"), "").expect("write");
        std::fs::write(dir.join(TASK_FILE), task_toml).expect("write");
        root
    }

    fn load(task_toml: &str) -> Result<Task> {
        let root = task_dir(task_toml);
        load_task(&root.path().join("t1"))
    }

    fn error_of(task_toml: &str) -> String {
        format!("{:#}", load(task_toml).expect_err("a bad task file"))
    }

    #[test]
    fn a_good_task_is_parsed_with_resolved_paths() {
        let task = load(GOOD).expect("good task");
        assert_eq!(task.id, "t1");
        assert_eq!(task.kind, Kind::FarReuse);
        assert_eq!(task.timeout, Duration::from_secs(900));
        assert!(task.prompt.ends_with("t1/prompt.md"));
        assert!(task.hidden.folders()[0].is_absolute());
        assert_eq!(task.commands.setup(), None);
        assert!(matches!(
            task.source,
            Source::Pypi { ref name, ref version } if name == "click" && version == "8.1.7"
        ));
    }

    #[test]
    fn a_missing_field_is_named() {
        let err = error_of(&GOOD.replace("kind = \"far-reuse\"\n", ""));
        assert!(
            err.contains("task.toml") && err.contains("missing field `kind`"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_field_is_named() {
        let err = error_of(&GOOD.replace("timeout_s = 900", "timeout_s = 900\ncolour = 1"));
        assert!(err.contains("unknown field `colour`"), "{err}");
        let err = error_of(&GOOD.replace("[commands]", "[commands]\nbuild = \"make\""));
        assert!(err.contains("unknown field `build`"), "{err}");
    }

    #[test]
    fn two_sources_are_refused() {
        let err = error_of(&GOOD.replace(
            "pypi = \"click==8.1.7\"",
            "pypi = \"click==8.1.7\"\npath = \"hidden\"",
        ));
        assert!(
            err.contains("exactly one of") && err.contains("pypi and path"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("pypi = \"click==8.1.7\"", "subdir = \"x\""));
        assert!(err.contains("found none"), "{err}");
    }

    #[test]
    fn a_bad_kind_or_language_is_refused() {
        let err = error_of(&GOOD.replace("far-reuse", "reuse"));
        assert!(
            err.contains("unknown variant `reuse`") && err.contains("near-reuse"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("\"python\"", "\"cobol\""));
        assert!(
            err.contains("field `language`") && err.contains("cobol"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_prompt_file_is_named() {
        let err = error_of(&GOOD.replace("prompt.md", "absent.md"));
        assert!(
            err.contains("field `prompt`") && err.contains("absent.md"),
            "{err}"
        );
        let err = error_of(&GOOD.replace("hidden = \"hidden\"", "hidden = \"prompt.md\""));
        assert!(err.contains("field `hidden`: expected a folder"), "{err}");
    }

    #[test]
    fn an_id_other_than_the_folder_is_refused() {
        let err = error_of(&GOOD.replace("id = \"t1\"", "id = \"t2\""));
        assert!(err.contains("field `id`") && err.contains("`t1`"), "{err}");
    }

    #[test]
    fn bad_source_values_are_refused() {
        let err = error_of(&GOOD.replace("click==8.1.7", "click"));
        assert!(err.contains("field `source.pypi`"), "{err}");
        let err = error_of(&GOOD.replace(
            "pypi = \"click==8.1.7\"",
            "git = \"https://example.invalid/x.git\"",
        ));
        assert!(err.contains("field `source.rev`"), "{err}");
        let err = error_of(&GOOD.replace("pypi = \"click==8.1.7\"", "self = \"main\""));
        assert!(
            err.contains("field `source.self`: expected a commit id"),
            "{err}"
        );
        let err = error_of(&GOOD.replace(
            "pypi = \"click==8.1.7\"",
            "pypi = \"click==8.1.7\"\nsubdir = \"../x\"",
        ));
        assert!(err.contains("field `source.subdir`"), "{err}");
        let err = error_of(&GOOD.replace(
            "pypi = \"click==8.1.7\"",
            "snapshot = { sequence = \"nowhere\", step = 1 }",
        ));
        assert!(
            err.contains("no `sequences/nowhere/sequence.toml`"),
            "{err}"
        );
    }

    #[test]
    fn the_fixture_tasks_load_with_every_source_kind_they_use() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tasks");
        let tasks = load_tasks(&dir, None).expect("fixtures are good");
        let find = |id: &str| tasks.iter().find(|t| t.id == id).expect("fixture present");
        assert!(matches!(
            &find("snapshot-pow").source,
            Source::Snapshot { sequence, step: 1 } if sequence.name == "tiny"
        ));
        assert!(matches!(
            &find("self-skeleton").source,
            Source::SelfRepo { .. }
        ));
        assert_eq!(find("self-skeleton").subdir, Path::new("sens-engine"));
        assert!(matches!(&find("valid").source, Source::Path(p) if p.ends_with("tiny/start")));
        let err = format!(
            "{:#}",
            check_source(
                RawSource {
                    pypi: None,
                    git: None,
                    rev: None,
                    self_rev: Some("0000000000".into()),
                    path: None,
                    snapshot: Some(RawSnapshot {
                        sequence: "tiny".into(),
                        step: 1
                    }),
                    subdir: PathBuf::new(),
                },
                &dir
            )
            .expect_err("two sources")
        );
        assert!(err.contains("self and snapshot"), "{err}");
        let err = format!(
            "{:#}",
            self_source(&dir, "0000000000".into()).expect_err("no such commit")
        );
        assert!(err.contains("is not a commit"), "{err}");
        let err = format!(
            "{:#}",
            snapshot_source(
                &dir.join("valid"),
                &RawSnapshot {
                    sequence: "tiny".into(),
                    step: 3
                }
            )
            .expect_err("past the last step")
        );
        assert!(err.contains("has 2 steps, found step 3"), "{err}");
    }

    #[test]
    fn an_empty_test_command_is_refused() {
        let err = error_of(&GOOD.replace("python3 -m pytest -q tests", ""));
        assert!(err.contains("field `commands.test`"), "{err}");
    }

    #[test]
    fn a_folder_without_task_file_stops_loading_the_tasks() {
        let root = task_dir(GOOD);
        std::fs::create_dir(root.path().join("stray")).expect("mkdir");
        let err = format!(
            "{:#}",
            load_tasks(root.path(), None).expect_err("stray folder")
        );
        assert!(
            err.contains("stray") && err.contains("nothing was run"),
            "{err}"
        );
        let tasks = load_tasks(root.path(), Some("t1")).expect("the one task");
        assert_eq!(tasks.len(), 1);
    }
}
