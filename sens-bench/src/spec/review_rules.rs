//! Review rules files: `docs/review/rules.yaml` in any folder of a project, its
//! rules applying to that folder and everything below it. A file is a list of
//! rules, either at its top level or under a `rules` key.
//!
//! - `applies` globs and `reference` are relative to the rules' folder (the one
//!   holding `docs/`); `*` does not cross `/` (write `**/*.py` for any depth).
//! - A reference must be a file inside the project once every link is followed:
//!   its content goes to the decision model, so a rules file cannot send what
//!   lies outside. A rules file that is a link must stay inside too.
//! - A rule is exactly one of a `mistake` (true when the change breaks it) or a
//!   `statement` (true when the change follows it).
//! - Rule ids are unique across a project, so a decision's answers and a
//!   dismissal name a rule alone.
//! - `review test` writes `tested` back in place ([`tested`]).

mod tested;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Where a folder's rules live, relative to the folder.
pub const RULES_FILE: &str = "docs/review/rules.yaml";
/// More rules than this applying to one file would drown each of them.
pub const MAX_RULES_PER_FILE: usize = 15;

pub use tested::write_tested;

/// A rules file with its rules under a `rules` key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    rules: Vec<yaml_serde::Value>,
}

/// A rule as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleText {
    pub id: String,
    pub applies: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement: Option<String>,
    pub fix: String,
    pub reference: String,
    pub cases: Cases,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested: Option<Tested>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cases {
    pub violating: Vec<Case>,
    pub compliant: Vec<Case>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub file: String,
    pub diff: String,
}

/// What `review test` wrote back: the margin and the hash of what it tested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tested {
    pub margin: f64,
    pub hash: String,
}

impl Tested {
    /// A test's result as written: the margin to two decimals, as a person reads it.
    pub fn new(margin: f64, hash: String) -> Tested {
        Tested {
            margin: (margin * 100.0).round() / 100.0,
            hash,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Mistake,
    Statement,
}

/// Whether a rule's `tested` still describes it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum TestStatus {
    Untested,
    /// Edited since its test.
    Stale,
    Tested {
        margin: f64,
    },
}

/// A checked rule and where it came from.
#[derive(Debug, Clone)]
pub struct Rule {
    pub text: RuleText,
    pub kind: Kind,
    /// The rules' folder, project-relative (`""` for the root).
    pub folder: String,
    /// The rules file, project-relative.
    pub source: String,
    globs: GlobSet,
}

impl Rule {
    /// The mistake or the statement.
    pub fn wording(&self) -> &str {
        match self.kind {
            Kind::Mistake => self.text.mistake.as_deref().unwrap_or_default(),
            Kind::Statement => self.text.statement.as_deref().unwrap_or_default(),
        }
    }

    /// The reference file, project-relative as written (it may hold `..`).
    pub fn reference(&self) -> String {
        join(&self.folder, &self.text.reference)
    }

    /// The reference file on disk, every link followed; an error naming the
    /// rules file, the rule and the field unless it is a file inside `root`.
    /// Checked again by every reader, since the project may change in between.
    pub fn reference_file(&self, root: &Path) -> anyhow::Result<PathBuf> {
        let what = format!(
            "{}: rule `{}`: field `reference`: `{}`",
            self.source, self.text.id, self.text.reference
        );
        let resolved = inside(&canonical(root)?, &root.join(self.reference()), &what)?;
        ensure!(
            resolved.is_file(),
            "{what}: {} is not a file",
            resolved.display()
        );
        Ok(resolved)
    }

    /// Whether the rule applies to a project-relative file.
    pub fn applies_to(&self, file: &str) -> bool {
        let relative = if self.folder.is_empty() {
            Some(file)
        } else {
            file.strip_prefix(&self.folder)
                .and_then(|rest| rest.strip_prefix('/'))
        };
        relative.is_some_and(|rest| self.globs.is_match(rest))
    }

    /// The hash of what a test judges: the wording and the cases.
    pub fn hash(&self) -> String {
        let material = serde_json::json!([self.kind, self.wording(), self.text.cases]);
        hex::encode(Sha256::digest(material.to_string().as_bytes()))
    }

    pub fn status(&self) -> TestStatus {
        match &self.text.tested {
            None => TestStatus::Untested,
            Some(tested) if tested.hash != self.hash() => TestStatus::Stale,
            Some(tested) => TestStatus::Tested {
                margin: tested.margin,
            },
        }
    }

    /// The question the decision model answers, prefixed by where the rule applies.
    pub fn question(&self) -> String {
        let place = if self.folder.is_empty() {
            "the project".to_string()
        } else {
            format!("{}/", self.folder)
        };
        let scope = format!("[{place}, files {}]", self.text.applies.join(", "));
        match self.kind {
            Kind::Mistake => format!(
                "{scope} Does the change make this mistake: {}",
                self.wording()
            ),
            Kind::Statement => format!(
                "{scope} Does the change follow this rule: {}",
                self.wording()
            ),
        }
    }

    /// The score "the change follows the rule" from the answer's probability.
    pub fn follows(&self, probability: f64) -> f64 {
        match self.kind {
            Kind::Mistake => 1.0 - probability,
            Kind::Statement => probability,
        }
    }
}

fn canonical(root: &Path) -> anyhow::Result<PathBuf> {
    root.canonicalize()
        .with_context(|| format!("cannot resolve the project folder {}", root.display()))
}

/// `path` with every link followed; an error starting with `what` unless it
/// exists inside `project` (canonical).
fn inside(project: &Path, path: &Path, what: &str) -> anyhow::Result<PathBuf> {
    let resolved = path
        .canonicalize()
        .with_context(|| format!("{what}: {} is not a file", path.display()))?;
    ensure!(
        resolved.starts_with(project),
        "{what}: resolves to {}, outside the project {}",
        resolved.display(),
        project.display()
    );
    Ok(resolved)
}

fn join(folder: &str, path: &str) -> String {
    if folder.is_empty() {
        path.to_string()
    } else {
        format!("{folder}/{path}")
    }
}

/// Every rule of a project, in the order of their files' paths.
#[derive(Debug, Clone, Default)]
pub struct RuleBook {
    pub rules: Vec<Rule>,
}

impl RuleBook {
    /// Reads every `docs/review/rules.yaml` under `root` (what git ignores left out).
    pub fn load(root: &Path) -> anyhow::Result<RuleBook> {
        let mut sources: Vec<PathBuf> = ignore::WalkBuilder::new(root)
            .hidden(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build()
            .filter_map(Result::ok)
            .map(|entry| entry.into_path())
            .filter(|path| path.ends_with(RULES_FILE))
            .collect();
        sources.sort();
        let mut book = RuleBook::default();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let project = canonical(root)?;
        for path in sources {
            let source = relative(root, &path)?;
            let folder = source
                .strip_suffix(RULES_FILE)
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_string();
            // A rules file may be a link, but not to one outside the project.
            let text = std::fs::read_to_string(inside(&project, &path, &source)?)
                .with_context(|| format!("cannot read {}", path.display()))?;
            for rule in parse(&text, &folder, &source)? {
                if let Some(first) = seen.insert(rule.text.id.clone(), source.clone()) {
                    bail!(
                        "{source}: rule `{}`: field `id`: the id is already used in {first}; \
                         rule ids are unique across a project",
                        rule.text.id
                    );
                }
                rule.reference_file(root)?;
                book.rules.push(rule);
            }
        }
        Ok(book)
    }

    /// The rules applying to a project-relative file; more than
    /// [`MAX_RULES_PER_FILE`] is an error naming it.
    pub fn applicable(&self, file: &str) -> anyhow::Result<Vec<&Rule>> {
        let rules: Vec<&Rule> = self.rules.iter().filter(|r| r.applies_to(file)).collect();
        ensure!(
            rules.len() <= MAX_RULES_PER_FILE,
            "{} rules apply to {file}, more than {MAX_RULES_PER_FILE}: {}; narrow their `applies` \
             or move some into a deeper folder",
            rules.len(),
            rules
                .iter()
                .map(|r| format!("{} ({})", r.text.id, r.source))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(rules)
    }

    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.text.id == id)
    }
}

fn relative(root: &Path, path: &Path) -> anyhow::Result<String> {
    let rel = path
        .strip_prefix(root)
        .with_context(|| format!("{} is not under {}", path.display(), root.display()))?;
    Ok(rel.to_string_lossy().replace('\\', "/"))
}

/// The rules of a file as written: its top-level list, or its `rules`.
fn rule_values(text: &str, source: &str) -> anyhow::Result<Vec<yaml_serde::Value>> {
    let value: yaml_serde::Value =
        yaml_serde::from_str(text).with_context(|| format!("{source}: not a rules file"))?;
    match value {
        yaml_serde::Value::Sequence(rules) => Ok(rules),
        other => {
            let file: RulesFile = yaml_serde::from_value(other).with_context(|| {
                format!("{source}: not a rules file (a list of rules, or a mapping with `rules`)")
            })?;
            Ok(file.rules)
        }
    }
}

/// Parses one rules file; errors name the file, the rule and the field.
fn parse(text: &str, folder: &str, source: &str) -> anyhow::Result<Vec<Rule>> {
    rule_values(text, source)?
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            let name = value
                .get("id")
                .and_then(|id| id.as_str())
                .map_or_else(|| format!("rules[{index}]"), |id| format!("rule `{id}`"));
            let text: RuleText =
                yaml_serde::from_value(value).with_context(|| format!("{source}: {name}"))?;
            check(text, folder, source).with_context(|| format!("{source}: {name}"))
        })
        .collect()
}

fn check(text: RuleText, folder: &str, source: &str) -> anyhow::Result<Rule> {
    let kind = match (&text.mistake, &text.statement) {
        (Some(_), None) => Kind::Mistake,
        (None, Some(_)) => Kind::Statement,
        (Some(_), Some(_)) => bail!("fields `mistake` and `statement`: give only one"),
        (None, None) => bail!("fields `mistake` and `statement`: give one"),
    };
    ensure!(
        !text.cases.violating.is_empty(),
        "field `cases.violating`: give at least one case"
    );
    ensure!(
        !text.cases.compliant.is_empty(),
        "field `cases.compliant`: give at least one case"
    );
    ensure!(
        !text.applies.is_empty(),
        "field `applies`: give at least one glob"
    );
    ensure!(
        Path::new(&text.reference).is_relative(),
        "field `reference`: `{}` is absolute; give a path relative to the rules' folder, \
         inside the project",
        text.reference
    );
    let mut globs = GlobSetBuilder::new();
    for glob in &text.applies {
        let glob = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .with_context(|| format!("field `applies`: `{glob}` is not a glob"))?;
        globs.add(glob);
    }
    let globs = globs.build().context("field `applies`")?;
    Ok(Rule {
        text,
        kind,
        folder: folder.to_string(),
        source: source.to_string(),
        globs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str = "rules:\n  - id: r\n    applies: ['**/*.py']\n    mistake: swallows errors\n    \
                        fix: raise\n    reference: ref.py\n    cases:\n      violating: [{file: a.py, diff: '+x'}]\n      \
                        compliant: [{file: a.py, diff: '+y'}]\n";

    fn err(text: &str) -> String {
        format!(
            "{:#}",
            parse(text, "", "docs/review/rules.yaml").unwrap_err()
        )
    }

    #[test]
    fn a_rule_parses_and_scores_read_follows() {
        let rules = parse(RULE, "pkg", "pkg/docs/review/rules.yaml").unwrap();
        let rule = &rules[0];
        assert_eq!(rule.kind, Kind::Mistake);
        assert_eq!(rule.reference(), "pkg/ref.py");
        assert!(rule.applies_to("pkg/deep/a.py"));
        assert!(!rule.applies_to("pkgx/a.py"));
        assert!(!rule.applies_to("pkg/a.rs"));
        assert!((rule.follows(0.8) - 0.2).abs() < 1e-9);
        assert!(
            rule.question()
                .starts_with("[pkg/, files **/*.py] Does the change make this mistake")
        );
        assert_eq!(rule.status(), TestStatus::Untested);
    }

    #[test]
    fn errors_name_the_file_the_rule_and_the_field() {
        let unknown = err(&RULE.replace("fix: raise", "fix: raise\n    owner: me"));
        assert!(
            unknown.contains("docs/review/rules.yaml: rule `r`"),
            "{unknown}"
        );
        assert!(unknown.contains("unknown field `owner`"), "{unknown}");
        let both = err(&RULE.replace("fix: raise", "fix: raise\n    statement: s"));
        assert!(
            both.contains("rule `r`") && both.contains("give only one"),
            "{both}"
        );
        let neither = err(&RULE.replace("mistake: swallows errors", ""));
        assert!(
            neither.contains("`mistake` and `statement`: give one"),
            "{neither}"
        );
        let no_case = err(&RULE.replace("[{file: a.py, diff: '+y'}]", "[]"));
        assert!(no_case.contains("cases.compliant"), "{no_case}");
        let absolute = err(&RULE.replace("ref.py", "/etc/passwd"));
        assert!(
            absolute.contains("rule `r`: field `reference`: `/etc/passwd` is absolute"),
            "{absolute}"
        );
        let shape = err("id: r\n");
        assert!(shape.contains("a list of rules, or a mapping"), "{shape}");
    }

    #[test]
    fn a_top_level_list_of_rules_parses_as_the_rules_key_does() {
        let list = RULE.strip_prefix("rules:\n").unwrap().replace("\n  ", "\n");
        let listed = parse(list.trim_start(), "", "s").unwrap();
        let keyed = parse(RULE, "", "s").unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].text, keyed[0].text);
    }

    #[test]
    fn a_margin_is_kept_to_two_decimals() {
        assert_eq!(Tested::new(0.95 - (1.0 - 0.95), "h".into()).margin, 0.9);
        assert_eq!(Tested::new(0.555, "h".into()).margin, 0.56);
    }

    #[test]
    fn the_hash_follows_the_wording_and_the_cases() {
        let rule = &parse(RULE, "", "s").unwrap()[0];
        let reworded =
            &parse(&RULE.replace("swallows errors", "drops errors"), "", "s").unwrap()[0];
        let refixed = &parse(&RULE.replace("fix: raise", "fix: re-raise"), "", "s").unwrap()[0];
        assert_ne!(rule.hash(), reworded.hash());
        assert_eq!(rule.hash(), refixed.hash());
    }
}
