//! Horizonte sequence files (`sequences/<name>/sequence.toml` and its `probes.toml`;
//! docs/contract.md, "Horizonte sequences"): parsed into plain types, then checked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use regex::Regex;
use serde::Deserialize;

use super::files::{FileSet, Matcher, Probe, SyntaxQuery};
use super::hidden::Hidden;
use super::{Commands, Expect, check_language, check_name, existing, prompt_file, read_toml};

/// The file name of a sequence inside its folder.
pub const SEQUENCE_FILE: &str = "sequence.toml";

/// A checked sequence.
#[derive(Debug, Clone)]
pub struct Sequence {
    pub name: String,
    /// The sequence's folder (absolute).
    pub dir: PathBuf,
    pub language: String,
    /// The project at step 0 (absolute).
    pub start: PathBuf,
    /// What counts as project size.
    pub size: FileSet,
    pub probes: Vec<Probe>,
    pub commands: Commands,
    pub steps: Vec<Step>,
}

/// One step; paths absolute.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    pub prompt: PathBuf,
    /// The sequence's shared hidden folder (if any) and the step's own.
    pub hidden: Hidden,
    pub reference: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSequence {
    name: String,
    language: String,
    start: PathBuf,
    size: Vec<String>,
    #[serde(default)]
    size_exclude: Vec<String>,
    probes: PathBuf,
    /// A folder of hidden files every step lays over the copy with its own.
    hidden_shared: Option<PathBuf>,
    commands: Commands,
    #[serde(default)]
    step: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    id: String,
    prompt: PathBuf,
    hidden: PathBuf,
    reference: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProbes {
    #[serde(default)]
    probe: Vec<RawProbe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProbe {
    concept: String,
    /// A regex over the text, or
    pattern: Option<String>,
    /// a tree-sitter query over the syntax tree, in the sequence's language.
    query: Option<String>,
    files: Option<Vec<String>>,
}

/// Loads and checks `DIR/sequence.toml` and its probes file.
pub fn load_sequence(dir: &Path) -> Result<Sequence> {
    let dir = std::path::absolute(dir)
        .with_context(|| format!("cannot resolve the folder {}", dir.display()))?;
    let file = dir.join(SEQUENCE_FILE);
    let raw: RawSequence = read_toml(&file)?;
    check_sequence(raw, &dir).with_context(|| format!("{}", file.display()))
}

fn check_sequence(raw: RawSequence, dir: &Path) -> Result<Sequence> {
    check_name("name", &raw.name)?;
    let folder = dir
        .file_name()
        .and_then(|name| name.to_str())
        .context("the sequence folder has no UTF-8 name")?;
    if raw.name != folder {
        bail!(
            "field `name`: expected the folder name `{folder}`, found `{}`",
            raw.name
        );
    }
    check_language(&raw.language)?;
    raw.commands.check()?;
    if raw.size.is_empty() {
        bail!("field `size`: expected at least one glob");
    }
    let size =
        FileSet::new(&raw.size, &raw.size_exclude).context("field `size` or `size_exclude`")?;
    if raw.step.is_empty() {
        bail!("no `[[step]]` entries: a sequence needs at least one step");
    }
    let shared = raw
        .hidden_shared
        .map(|folder| existing(dir, "hidden_shared", &folder, Expect::Folder))
        .transpose()?;
    let mut ids = BTreeSet::new();
    let mut steps = Vec::new();
    for (index, step) in raw.step.into_iter().enumerate() {
        let at = |field: &str| format!("step[{index}].{field}");
        check_name(&at("id"), &step.id)?;
        if !ids.insert(step.id.clone()) {
            bail!(
                "field `{}`: `{}` is used by an earlier step",
                at("id"),
                step.id
            );
        }
        steps.push(Step {
            prompt: prompt_file(dir, &at("prompt"), &step.prompt)?,
            hidden: step_hidden(dir, shared.as_deref(), &at("hidden"), &step.hidden)?,
            reference: existing(dir, &at("reference"), &step.reference, Expect::File)?,
            id: step.id,
        });
    }
    let probes_file = existing(dir, "probes", &raw.probes, Expect::File)?;
    let probes = load_probes(&probes_file, &raw.language)?;
    Ok(Sequence {
        name: raw.name,
        dir: dir.to_path_buf(),
        language: raw.language,
        start: existing(dir, "start", &raw.start, Expect::Folder)?,
        size,
        probes,
        commands: raw.commands,
        steps,
    })
}

/// A step's hidden files: the shared folder's (if any) with its own folder's,
/// which must not put a file where the shared folder does.
fn step_hidden(dir: &Path, shared: Option<&Path>, field: &str, own: &Path) -> Result<Hidden> {
    let own = existing(dir, field, own, Expect::Folder)?;
    let folders = shared.map(Path::to_path_buf).into_iter().chain([own]);
    Hidden::layered(folders.collect())
        .with_context(|| format!("field `{field}` and field `hidden_shared`"))
}

fn load_probes(file: &Path, language: &str) -> Result<Vec<Probe>> {
    let raw: RawProbes = read_toml(file)?;
    let mut concepts = BTreeSet::new();
    let mut probes = Vec::new();
    for (index, probe) in raw.probe.into_iter().enumerate() {
        let field = |name: &str| format!("{}: field `probe[{index}].{name}`", file.display());
        if !concepts.insert(probe.concept.clone()) {
            bail!(
                "{}: `{}` has an earlier probe",
                field("concept"),
                probe.concept
            );
        }
        let matcher = match (probe.pattern, probe.query) {
            (Some(pattern), None) => Matcher::Regex(
                Regex::new(&pattern)
                    .with_context(|| format!("{}: not a valid regex", field("pattern")))?,
            ),
            (None, Some(query)) => Matcher::Query(Arc::new(
                SyntaxQuery::new(language, &query).with_context(|| field("query"))?,
            )),
            _ => bail!(
                "{}: give exactly one of `pattern` and `query`",
                field("pattern")
            ),
        };
        let files = match probe.files {
            Some(globs) => Some(FileSet::new(&globs, &[]).with_context(|| field("files"))?),
            None => None,
        };
        probes.push(Probe {
            concept: probe.concept,
            matcher,
            files,
        });
    }
    Ok(probes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "s"
language = "typescript"
start = "start"
size = ["src/**/*.ts"]
probes = "probes.toml"

[commands]
setup = "npm ci"
test = "npm test"
hidden = "node --test hidden_tests/*.test.ts"

[[step]]
id = "01-a"
prompt = "steps/01/prompt.md"
hidden = "steps/01/hidden"
reference = "steps/01/reference.patch"
"#;

    const PROBES: &str = r#"
[[probe]]
concept = "dates"
pattern = 'new Date\('

[[probe]]
concept = "csv"
pattern = 'split\(","\)'
files = ["src/*.ts"]
"#;

    fn load(sequence_toml: &str, probes_toml: &str) -> Result<Sequence> {
        load_with(sequence_toml, probes_toml, &[])
    }

    /// [`load`] with more (empty) files in the sequence folder.
    fn load_with(sequence_toml: &str, probes_toml: &str, files: &[&str]) -> Result<Sequence> {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path().join("s");
        std::fs::create_dir_all(dir.join("start/src")).expect("mkdir");
        std::fs::create_dir_all(dir.join("steps/01/hidden")).expect("mkdir");
        std::fs::write(dir.join("steps/01/prompt.md"), "Add it.\n").expect("write");
        std::fs::write(dir.join("steps/01/reference.patch"), "").expect("write");
        std::fs::write(dir.join(SEQUENCE_FILE), sequence_toml).expect("write");
        std::fs::write(dir.join("probes.toml"), probes_toml).expect("write");
        for file in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        load_sequence(&dir)
    }

    fn error_of(sequence_toml: &str, probes_toml: &str) -> String {
        format!(
            "{:#}",
            load(sequence_toml, probes_toml).expect_err("bad sequence")
        )
    }

    #[test]
    fn a_good_sequence_is_parsed() {
        let sequence = load(GOOD, PROBES).expect("good sequence");
        assert_eq!(sequence.steps.len(), 1);
        assert_eq!(sequence.steps[0].id, "01-a");
        let folders = sequence.steps[0].hidden.folders();
        assert!(
            folders.len() == 1 && folders[0].is_absolute(),
            "{folders:?}"
        );
        assert_eq!(sequence.probes.len(), 2);
        assert!(sequence.probes[0].files.is_none());
        assert_eq!(sequence.commands.setup(), Some("npm ci"));
        assert!(sequence.size.matches(Path::new("src/a/b.ts")));
    }

    #[test]
    fn a_shared_hidden_folder_joins_every_step_and_must_exist_without_clashes() {
        let shared = GOOD.replace(
            "probes = \"probes.toml\"\n",
            "probes = \"probes.toml\"\nhidden_shared = \"hidden\"\n",
        );
        let err = error_of(&shared, PROBES);
        assert!(
            err.contains("sequence.toml")
                && err.contains("field `hidden_shared`")
                && err.contains("does not exist"),
            "{err}"
        );

        let harness = "hidden/hidden_tests/harness.ts";
        let sequence = load_with(&shared, PROBES, &[harness]).expect("a shared folder");
        assert_eq!(
            sequence.steps[0].hidden.folders(),
            [
                sequence.dir.join("hidden"),
                sequence.dir.join("steps/01/hidden")
            ]
        );

        let clash = ["steps/01/hidden/hidden_tests/harness.ts", harness];
        let err = format!(
            "{:#}",
            load_with(&shared, PROBES, &clash).expect_err("a clash")
        );
        assert!(
            err.contains("field `step[0].hidden` and field `hidden_shared`")
                && err.contains("s/hidden/hidden_tests/harness.ts and ")
                && err.contains("s/steps/01/hidden/hidden_tests/harness.ts"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_or_unknown_field_is_named() {
        let err = error_of(&GOOD.replace("start = \"start\"\n", ""), PROBES);
        assert!(
            err.contains("sequence.toml") && err.contains("missing field `start`"),
            "{err}"
        );
        let err = error_of(
            &GOOD.replace("id = \"01-a\"", "id = \"01-a\"\nname = \"x\""),
            PROBES,
        );
        assert!(err.contains("unknown field `name`"), "{err}");
    }

    #[test]
    fn missing_step_files_are_named_with_the_step() {
        let err = error_of(
            &GOOD.replace("steps/01/prompt.md", "steps/02/prompt.md"),
            PROBES,
        );
        assert!(err.contains("field `step[0].prompt`"), "{err}");
    }

    #[test]
    fn duplicate_step_ids_are_refused() {
        let twice = format!(
            "{GOOD}\n[[step]]\nid = \"01-a\"\nprompt = \"steps/01/prompt.md\"\nhidden = \"steps/01/hidden\"\nreference = \"steps/01/reference.patch\"\n"
        );
        let err = error_of(&twice, PROBES);
        assert!(err.contains("step[1].id"), "{err}");
    }

    #[test]
    fn bad_probes_are_named() {
        let err = error_of(GOOD, &PROBES.replace(r"new Date\(", "new Date("));
        assert!(
            err.contains("probe[0].pattern") && err.contains("not a valid regex"),
            "{err}"
        );
        let err = error_of(GOOD, &PROBES.replace("\"csv\"", "\"dates\""));
        assert!(err.contains("probe[1].concept"), "{err}");
        let err = error_of(GOOD, &PROBES.replace("src/*.ts", "src/[.ts"));
        assert!(err.contains("probe[1].files"), "{err}");
        let err = error_of(GOOD, &PROBES.replace("files", "globs"));
        assert!(err.contains("unknown field `globs`"), "{err}");
    }

    #[test]
    fn query_probes_are_compiled_for_the_sequence_language() {
        let query = r#"
[[probe]]
concept = "weeks"
query = '((call_expression function: (member_expression property: (property_identifier) @day)) @probe (#eq? @day "getDay"))'
"#;
        let sequence = load(GOOD, query).expect("a good query");
        assert!(matches!(sequence.probes[0].matcher, Matcher::Query(_)));
        let err = error_of(GOOD, &query.replace("call_expression", "call_expresion"));
        assert!(
            err.contains("probe[0].query") && err.contains("not a valid typescript query"),
            "{err}"
        );
        let err = error_of(GOOD, &query.replace(") @probe", ") @found"));
        assert!(err.contains("captures no `@probe`"), "{err}");
        let both = query.replace("query =", "pattern = 'x'\nquery =");
        let err = error_of(GOOD, &both);
        assert!(
            err.contains("exactly one of `pattern` and `query`"),
            "{err}"
        );
        let err = error_of(GOOD, "[[probe]]\nconcept = \"weeks\"\n");
        assert!(
            err.contains("exactly one of `pattern` and `query`"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_size_glob_is_named() {
        let err = error_of(&GOOD.replace("src/**/*.ts", "src/{a"), PROBES);
        assert!(err.contains("field `size`"), "{err}");
    }
}
