//! `sens-bench engine reuse-eval CASES`: the re-implementation finder
//! (`sens_engine::reuse`) against a file of re-implementations and new code, on
//! projects fetched by name and version.
//!
//! The case file (TOML):
//!
//! ```toml
//! [projects.boltons]                # as in suggest-eval: pypi, npm, crate, self,
//! pypi = "boltons==24.0.0"          # path, or task (a bench task folder)
//! [[cases]]
//! project = "boltons"
//! file = "boltons/reportutils.py"   # where the code is written (added at the end
//!                                   # of the file when the project has it)
//! kind = "reimpl"                   # reimpl | new | reference
//! code = '''def to_snake(name): ...'''
//! expected = ["camel2under"]        # reimpl: the existing units it does again
//! holdout = true                    # kept out of tuning (reported apart)
//! ```
//!
//! `reimpl`: the code adds one unit, which re-implements an expected one; `new`:
//! each unit the code adds has no equivalent in the project; `reference`: the
//! project is a bench task, and each unit its `reference.patch` adds is new code
//! (no `file`, `code` or `expected`). Figures per set (all, tuning, held out) and
//! per language: over re-implementations, hit@1 and hit@3 (a note whose first,
//! or first three, candidates hold an expected unit), MRR (of the first expected
//! candidate, 0 without a note), the first candidate right whatever the
//! decision, and an expected unit among the Stop reviewer's candidates; over new units, the false notes. The tuning set's figures are also
//! printed with the threshold at other values, and each project's time of one
//! write's lookups (p50 and max, index resident, every vector made).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sens_engine::lang;
use sens_engine::reuse::{self, Lookup, decision};
use serde::{Deserialize, Serialize};

use crate::evals::suggest::{ProjectSource, check_projects, fetch, open_engine};
use crate::workspace::cache::Cache;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub projects: BTreeMap<String, ProjectSource>,
    pub cases: Vec<Case>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Reimpl,
    New,
    Reference,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub project: String,
    pub kind: Kind,
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub expected: Vec<String>,
    #[serde(default)]
    pub holdout: bool,
}

/// What the finder said of one unit a case adds.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub project: String,
    pub kind: Kind,
    pub holdout: bool,
    pub language: String,
    pub file: String,
    pub lookup: Lookup,
    /// Re-implementations: the 1-based rank of the first expected candidate.
    pub rank: Option<usize>,
}

impl Outcome {
    /// The note names an expected unit among its first `k` candidates.
    fn hit(&self, k: usize, threshold: f64) -> bool {
        self.noted(threshold) && self.rank.is_some_and(|r| r <= k)
    }

    fn noted(&self, threshold: f64) -> bool {
        self.lookup
            .candidates
            .first()
            .is_some_and(|c| decision::speaks_at(c, threshold))
    }
}

/// The figures over a set of outcomes at a threshold.
#[derive(Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub reimplementations: usize,
    pub hit_at_1: usize,
    pub hit_at_3: usize,
    pub mrr: f64,
    /// The first candidate is expected, whatever the decision.
    pub ranked_first: usize,
    /// An expected unit is among the Stop reviewer's candidates
    /// ([`reuse::REVIEW_CANDIDATES`]), whatever the decision.
    pub reviewer: usize,
    pub new_units: usize,
    pub false_notes: usize,
    /// The agent's note (`decision::notes`, whatever the threshold): it names
    /// an expected unit.
    pub note_hits: usize,
    /// The agent's note on a new unit.
    pub note_false: usize,
}

pub fn figures<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>, threshold: f64) -> Figures {
    let mut f = Figures::default();
    let mut reciprocal = 0.0;
    for o in outcomes {
        let note = decision::notes(&o.lookup.candidates);
        if o.kind == Kind::Reimpl {
            f.note_hits += usize::from(note && o.rank == Some(1));
            f.reimplementations += 1;
            f.hit_at_1 += usize::from(o.hit(1, threshold));
            f.hit_at_3 += usize::from(o.hit(3, threshold));
            f.ranked_first += usize::from(o.rank == Some(1));
            f.reviewer += usize::from(o.rank.is_some_and(|r| r <= reuse::REVIEW_CANDIDATES));
            if o.noted(threshold) {
                reciprocal += o.rank.map_or(0.0, |r| 1.0 / r as f64);
            }
        } else {
            f.new_units += 1;
            f.false_notes += usize::from(o.noted(threshold));
            f.note_false += usize::from(note);
        }
    }
    if f.reimplementations > 0 {
        f.mrr = reciprocal / f.reimplementations as f64;
    }
    f
}

pub fn load(path: &Path) -> Result<CaseFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: CaseFile = toml::from_str(&text)
        .with_context(|| format!("{} is not a valid case file", path.display()))?;
    for (i, case) in file.cases.iter().enumerate() {
        let at = || format!("{}: cases[{i}]", path.display());
        if !file.projects.contains_key(&case.project) {
            bail!(
                "{}: field `project`: no project `{}` in [projects]",
                at(),
                case.project
            );
        }
        let written = !case.file.is_empty() && !case.code.trim().is_empty();
        match case.kind {
            Kind::Reimpl if case.expected.is_empty() => {
                bail!(
                    "{}: field `expected` names no unit for a re-implementation",
                    at()
                )
            }
            Kind::New if !case.expected.is_empty() => {
                bail!("{}: field `expected` must be empty for kind new", at())
            }
            Kind::Reimpl | Kind::New if !written => {
                bail!(
                    "{}: fields `file` and `code` are needed for kind reimpl and new",
                    at()
                )
            }
            Kind::Reference if written || !case.expected.is_empty() => bail!(
                "{}: kind reference takes no `file`, `code` or `expected` (the task's patch is the code)",
                at()
            ),
            _ => {}
        }
    }
    check_projects(&file.projects, path)?;
    Ok(file)
}

/// Thresholds the tuning sweep tries.
const SWEEP: [f64; 9] = [2.0, 2.5, 2.8, 3.0, 3.2, 3.5, 4.0, 4.5, 5.0];

#[derive(Serialize)]
struct Report<'a> {
    threshold: f64,
    rows: Vec<(String, Figures)>,
    sweep: Vec<(f64, Figures)>,
    speed: Vec<Speed>,
    outcomes: &'a [Outcome],
}

/// The time of one write's lookups on a project with its index resident and
/// every candidate's vector made.
#[derive(Serialize)]
struct Speed {
    project: String,
    ms_p50: f64,
    ms_max: f64,
    writes: usize,
}

pub fn run(cases_path: &Path, json: bool) -> Result<ExitCode> {
    let file = load(cases_path)?;
    let base = cases_path.parent().unwrap_or(Path::new("."));
    let cache = Cache::from_env()?;
    let mut outcomes = Vec::new();
    let mut speed = Vec::new();
    for (name, source) in &file.projects {
        let cases: Vec<&Case> = file.cases.iter().filter(|c| &c.project == name).collect();
        if cases.is_empty() {
            continue;
        }
        let (root, _copy) = fetch(source, base, &cache)
            .with_context(|| format!("{}: projects.{name}", cases_path.display()))?;
        let (engine, _) =
            open_engine(&root, &cache, false).with_context(|| format!("projects.{name}"))?;
        let mut times = Vec::new();
        for case in cases {
            let writes = match case.kind {
                Kind::Reference => reference_writes(&root, source, base)
                    .with_context(|| format!("projects.{name}: the reference patch"))?,
                _ => vec![case_write(&root, case)?],
            };
            for (path, before, after) in writes {
                let start = Instant::now();
                let lookups = reuse::find(engine.index(), &path, before.as_deref(), &after)?;
                times.push(start.elapsed().as_secs_f64() * 1000.0);
                if case.kind == Kind::Reimpl && lookups.len() != 1 {
                    bail!(
                        "{}: a {name} case in {path} adds {} units, not one",
                        cases_path.display(),
                        lookups.len()
                    );
                }
                let language = lang::for_path(&path).map_or("other", |l| l.name());
                outcomes.extend(lookups.into_iter().map(|lookup| {
                    Outcome {
                        project: name.clone(),
                        kind: case.kind,
                        holdout: case.holdout,
                        language: language.to_string(),
                        file: path.clone(),
                        rank: lookup
                            .candidates
                            .iter()
                            .position(|c| case.expected.contains(&c.suggestion.name))
                            .map(|i| i + 1),
                        lookup,
                    }
                }));
            }
        }
        times.sort_by(f64::total_cmp);
        speed.push(Speed {
            project: name.clone(),
            ms_p50: times[times.len() / 2],
            ms_max: times.last().copied().unwrap_or(0.0),
            writes: times.len(),
        });
    }
    let threshold = decision::THRESHOLD;
    let mut rows = vec![
        ("all".to_string(), figures(&outcomes, threshold)),
        (
            "tuning".to_string(),
            figures(outcomes.iter().filter(|o| !o.holdout), threshold),
        ),
        (
            "holdout".to_string(),
            figures(outcomes.iter().filter(|o| o.holdout), threshold),
        ),
    ];
    let mut languages: Vec<&str> = outcomes.iter().map(|o| o.language.as_str()).collect();
    languages.sort_unstable();
    languages.dedup();
    for language in languages {
        for (set, holdout) in [("tuning", false), ("holdout", true)] {
            let these = outcomes
                .iter()
                .filter(|o| o.language == language && o.holdout == holdout);
            rows.push((format!("{language} {set}"), figures(these, threshold)));
        }
    }
    let sweep = SWEEP
        .iter()
        .map(|&t| (t, figures(outcomes.iter().filter(|o| !o.holdout), t)))
        .collect();
    let report = Report {
        threshold,
        rows,
        sweep,
        speed,
        outcomes: &outcomes,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The case's file as the project has it (if it does) and with the code added.
fn case_write(root: &Path, case: &Case) -> Result<(String, Option<String>, String)> {
    let before = std::fs::read_to_string(root.join(&case.file)).ok();
    let after = match &before {
        Some(text) => format!("{text}\n{}", case.code),
        None => case.code.clone(),
    };
    Ok((case.file.clone(), before, after))
}

/// Each file a task's reference patch changes, before and after: the patch is
/// applied to the task's copy (`root`, indexed before).
fn reference_writes(
    root: &Path,
    source: &ProjectSource,
    base: &Path,
) -> Result<Vec<(String, Option<String>, String)>> {
    let task = source
        .task
        .as_ref()
        .context("field `kind`: a reference case needs a project given by `task`")?;
    let patch = std::path::absolute(base.join(task).join("reference.patch"))
        .context("cannot resolve the reference patch's path")?;
    let text = std::fs::read_to_string(&patch)
        .with_context(|| format!("cannot read {}", patch.display()))?;
    let files: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("+++ b/"))
        .map(str::to_string)
        .collect();
    let before: Vec<Option<String>> = files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).ok())
        .collect();
    let out = Command::new("git")
        .arg("apply")
        .arg(&patch)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .context("cannot run git apply")?;
    if !out.status.success() {
        bail!(
            "git apply {} failed: {}",
            patch.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    files
        .into_iter()
        .zip(before)
        .map(|(f, before)| {
            let after = std::fs::read_to_string(root.join(&f))
                .with_context(|| format!("cannot read {} after the patch", f))?;
            Ok((f, before, after))
        })
        .collect()
}

fn table(r: &Report) -> String {
    let mut out = String::new();
    for o in r.outcomes {
        let noted = o.noted(r.threshold);
        let verdict = match (o.kind, noted, o.rank) {
            (Kind::Reimpl, true, Some(1)) => "hit@1".to_string(),
            (Kind::Reimpl, true, Some(k)) => format!("note@{k}"),
            (Kind::Reimpl, true, None) => "WRONG".to_string(),
            (Kind::Reimpl, false, _) => "silent".to_string(),
            (_, true, _) => "FALSE".to_string(),
            (_, false, _) => "quiet".to_string(),
        };
        let held = if o.holdout { "H" } else { " " };
        let note = if decision::notes(&o.lookup.candidates) {
            "NOTE"
        } else {
            "    "
        };
        out.push_str(&format!(
            "{verdict:<7} {held} {note} {:<10} {} ({}:{})\n",
            o.project, o.lookup.name, o.file, o.lookup.line
        ));
        for c in o.lookup.candidates.iter().take(3) {
            let twin = c.twin.map_or("-".to_string(), |t| format!("{t:.2}"));
            out.push_str(&format!(
                "        {:.2} coverage {:.2} twin {twin}  {} ({}:{})\n",
                c.suggestion.score,
                c.coverage,
                c.suggestion.name,
                c.suggestion.file,
                c.suggestion.line
            ));
        }
    }
    let sweep = r
        .sweep
        .iter()
        .map(|(t, f)| (format!("tuning at {t:.1}"), f));
    let rows = r.rows.iter().map(|(l, f)| (l.clone(), f)).chain(sweep);
    out.push_str(&format!("threshold {:.2}\n", r.threshold));
    // A set without cases (a file all held out) has no row.
    for (label, f) in rows.filter(|(_, f)| f.reimplementations + f.new_units > 0) {
        out.push_str(&format!(
            "{label:<18} hit@1 {}/{}  hit@3 {}  MRR {:.2}  first always {}  reviewer's {}  \
             false notes {}/{}  | note: right {}/{}  on new code {}/{}\n",
            f.hit_at_1,
            f.reimplementations,
            f.hit_at_3,
            f.mrr,
            f.ranked_first,
            f.reviewer,
            f.false_notes,
            f.new_units,
            f.note_hits,
            f.reimplementations,
            f.note_false,
            f.new_units
        ));
    }
    for s in &r.speed {
        out.push_str(&format!(
            "{:<18} lookup p50 {:.1} ms, max {:.1} ms over {} writes, index resident\n",
            s.project, s.ms_p50, s.ms_max, s.writes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sens_engine::finding::Suggestion;
    use sens_engine::reuse::Candidate;

    /// An outcome whose candidates are `names` with `score` each (the model's
    /// cosine given, so the decision can speak).
    fn outcome(kind: Kind, names: &[&str], score: f64, expected: &[&str]) -> Outcome {
        let candidates: Vec<Candidate> = names
            .iter()
            .map(|n| Candidate {
                suggestion: Suggestion {
                    name: n.to_string(),
                    signature: String::new(),
                    file: "f.py".into(),
                    line: 1,
                    usages: 0,
                    score,
                },
                coverage: 0.0,
                twin: Some(0.5),
            })
            .collect();
        Outcome {
            project: "p".into(),
            kind,
            holdout: false,
            language: "python".into(),
            file: "new.py".into(),
            rank: names
                .iter()
                .position(|n| expected.contains(n))
                .map(|i| i + 1),
            lookup: Lookup {
                name: "mine".into(),
                line: 1,
                signature: String::new(),
                exists: false,
                candidates,
            },
        }
    }

    #[test]
    fn figures_follow_the_labels_and_the_threshold() {
        let outcomes = [
            outcome(Kind::Reimpl, &["a", "b"], 5.0, &["a"]),
            outcome(Kind::Reimpl, &["x", "b"], 5.0, &["b"]),
            outcome(Kind::Reimpl, &["c"], 1.0, &["c"]),
            outcome(Kind::New, &["q"], 5.0, &[]),
            outcome(Kind::Reference, &["r"], 1.0, &[]),
        ];
        let f = figures(&outcomes, 3.0);
        assert_eq!(
            (f.reimplementations, f.hit_at_1, f.hit_at_3, f.ranked_first),
            (3, 1, 2, 2)
        );
        // Every expected unit is among the reviewer's candidates, noted or not.
        assert_eq!(f.reviewer, 3);
        // The third is silent: it counts 0 in the MRR.
        assert!((f.mrr - (1.0 + 0.5) / 3.0).abs() < 1e-12);
        assert_eq!((f.new_units, f.false_notes), (2, 1));
        let low = figures(&outcomes, 0.5);
        assert_eq!((low.hit_at_1, low.false_notes), (2, 2));
    }
}
