//! Precision of the copy rules on labelled duplicate groups of real projects
//! (`docs/precision.md`): of the groups the rules would deny, the share that
//! are real copies, per language and kind, at each threshold of the sweep. A
//! group is judged as a write: member `b` is the new unit, member `a` stands in
//! the project, and `b` and every unit inside it are judged by their best match
//! with `a` or a unit inside it, through the decision of a write
//! (`rules::may_block`, `rules::best_match` and `rules::blocks`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use sens_engine::config::RuleConfig;
use sens_engine::fingerprint::{NearRule, common_at_least};
use sens_engine::index::{CopyKind, CopyMatch, Index, Unit, UnitId};
use sens_engine::rules;
use sens_engine::units::UnitKind;
use sens_engine::walk::WalkOptions;

/// What a reviewer saw in a group (the rubric of `docs/precision.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truth {
    /// The second could call or reuse the first.
    Copy,
    /// Similar because an interface, a protocol or the project's boilerplate
    /// dictates the shape.
    Necessity,
    /// Different logic with the same token shape.
    NotCopy,
}

/// One labelled group: a line of the labels file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub project: String,
    pub language: String,
    pub version: String,
    /// The group's rule and similarity in `engine dupes` when it was drawn.
    pub kind: String,
    pub similarity: f64,
    pub group_size: usize,
    /// `file:line` of each member's first line, relative to the project.
    pub a: String,
    pub b: String,
    pub label: Truth,
    pub why: String,
}

/// Reads a labels file (JSON lines); an error names the file and line.
pub fn read_labels(path: &Path) -> Result<Vec<Label>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the labels file {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .with_context(|| format!("labels file {} line {}", path.display(), i + 1))
        })
        .collect()
}

/// Judged groups of one language and kind at one threshold.
#[derive(Debug, Clone, Serialize)]
pub struct PrecisionRow {
    pub threshold: f64,
    pub language: String,
    /// The kind the rules give the pair at this threshold (`none`: no copy).
    pub kind: String,
    pub groups: usize,
    /// Groups labelled `copy`.
    pub copies: usize,
    pub denied: usize,
    /// Denied groups labelled `copy`.
    pub denied_copies: usize,
}

impl PrecisionRow {
    /// Denied groups that are real copies; `None` when none is denied.
    pub fn precision(&self) -> Option<f64> {
        (self.denied > 0).then(|| self.denied_copies as f64 / self.denied as f64)
    }

    /// Groups that are not copies and are denied, of all groups that are not.
    pub fn unjust(&self) -> Option<f64> {
        let others = self.groups - self.copies;
        (others > 0).then(|| (self.denied - self.denied_copies) as f64 / others as f64)
    }
}

/// A group the defaults deny although it is not a copy, or let through
/// although it is: what to read when a rule changes.
#[derive(Debug, Clone, Serialize)]
pub struct Wrong {
    pub label: Label,
    /// The rules' kind at the defaults (`none`: no copy).
    pub kind: String,
    pub denied: bool,
    /// The first lines of the deciding match's units in `b`'s and `a`'s files.
    pub lines: Option<[u32; 2]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Precision {
    pub labels: String,
    pub config: RuleConfig,
    /// Per threshold, per language (and `all`), per kind (and `all`).
    pub rows: Vec<PrecisionRow>,
    /// At the defaults: non-copies denied, and copies not denied.
    pub wrong: Vec<Wrong>,
}

/// How a group is judged at one threshold: the kind of the deciding match,
/// whether it denies, and the first lines of its new and existing units.
type Verdict = Option<(CopyKind, bool, [u32; 2])>;

/// Judges every labelled group of `labels` in the projects under `projects`
/// (one folder per project name) at each of `thresholds`, the other fields at
/// their defaults.
pub fn measure(labels: &Path, projects: &Path, thresholds: &[f64]) -> Result<Precision> {
    let defaults = RuleConfig::default();
    let all = read_labels(labels)?;
    let mut by_project: BTreeMap<&str, Vec<&Label>> = BTreeMap::new();
    for label in &all {
        by_project.entry(&label.project).or_default().push(label);
    }
    let configs: Vec<RuleConfig> = thresholds
        .iter()
        .map(|&threshold| RuleConfig {
            threshold,
            ..defaults.clone()
        })
        .collect();
    // The index finds candidates at the loosest rule; each config confirms them.
    let loosest = RuleConfig {
        threshold: thresholds
            .iter()
            .copied()
            .fold(defaults.threshold, f64::min),
        ..defaults.clone()
    };
    let mut judged: Vec<(&Label, Vec<Verdict>)> = Vec::new();
    for (project, group) in by_project {
        let root = projects.join(project);
        if !root.is_dir() {
            bail!(
                "project `{project}` of the labels file {} is not a folder of {} (scripts/precision-corpus.sh fetches it)",
                labels.display(),
                projects.display()
            );
        }
        let (index, _) = Index::build(&root, loosest.clone(), WalkOptions::default())
            .with_context(|| format!("cannot index {}", root.display()))?;
        for label in group {
            let find = |at: &str| {
                unit_at(&index, at).with_context(|| {
                    format!(
                        "label of {project} {} / {}: no unit at {at}",
                        label.a, label.b
                    )
                })
            };
            let ((_, a), (_, b)) = (find(&label.a)?, find(&label.b)?);
            let text = std::fs::read_to_string(root.join(&*b.file))
                .with_context(|| format!("cannot read {}", root.join(&*b.file).display()))?;
            let may_block = rules::may_block(&b.file, &text);
            // As a write of `b` would be judged: `b` and every unit inside it,
            // each against `a` and the units inside `a`, each unit by its
            // best match (`rules::best_match`).
            let index = &index;
            let found: Vec<(&Unit, Vec<CopyMatch>)> = nested(index, b)
                .map(|new| {
                    let outside_a = |_: UnitId, old: &Unit| !inside(old, a) || overlaps(old, b);
                    (new, index.copies(&new.data, outside_a))
                })
                .collect();
            let verdicts = configs
                .iter()
                .map(|cfg| {
                    let judged: Vec<(CopyKind, bool, [u32; 2])> = found
                        .iter()
                        .filter_map(|(new, matches)| {
                            let kept: Vec<CopyMatch> = matches
                                .iter()
                                .filter(|m| {
                                    index
                                        .unit(m.id)
                                        .is_some_and(|old| confirmed(cfg, new, m, old))
                                })
                                .copied()
                                .collect();
                            let (m, old) = rules::best_match(index, &new.data, &kept)?;
                            let blocks =
                                may_block && rules::blocks(cfg, &text, &new.data, m.kind, old);
                            Some((m.kind, blocks, [new.data.start_line, old.data.start_line]))
                        })
                        .collect();
                    // A denial if any denies, else the strongest match as a hint.
                    judged
                        .iter()
                        .find(|(_, blocks, _)| *blocks)
                        .or_else(|| judged.iter().min_by_key(|(kind, _, _)| *kind))
                        .copied()
                })
                .collect();
            judged.push((label, verdicts));
        }
    }
    let at_defaults = thresholds
        .iter()
        .position(|&t| t == defaults.threshold)
        .context("the thresholds swept must include the default")?;
    Ok(Precision {
        labels: labels.display().to_string(),
        rows: rows(thresholds, &judged),
        wrong: judged
            .iter()
            .filter_map(|(label, verdicts)| {
                let verdict = verdicts[at_defaults];
                let denied = verdict.is_some_and(|(_, d, _)| d);
                (denied != (label.label == Truth::Copy)).then(|| Wrong {
                    label: (*label).clone(),
                    kind: kind_name(verdict),
                    denied,
                    lines: verdict.map(|(_, _, lines)| lines),
                })
            })
            .collect(),
        config: defaults,
    })
}

/// The outermost unit starting at `file:line`.
fn unit_at<'a>(index: &'a Index, at: &str) -> Option<(UnitId, &'a Unit)> {
    let (file, line) = at.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    index
        .file(file)?
        .units
        .iter()
        .filter_map(|&id| Some((id, index.unit(id)?)))
        .filter(|(_, u)| u.data.start_line == line)
        .max_by_key(|(_, u)| u.data.end_line)
}

/// Whether `inner` lies within `outer` (or is it).
fn inside(inner: &Unit, outer: &Unit) -> bool {
    inner.file == outer.file
        && outer.data.start_line <= inner.data.start_line
        && inner.data.end_line <= outer.data.end_line
}

fn overlaps(x: &Unit, y: &Unit) -> bool {
    x.file == y.file && x.data.start_line <= y.data.end_line && y.data.start_line <= x.data.end_line
}

/// `outer` and the units inside it.
fn nested<'a>(index: &'a Index, outer: &'a Unit) -> impl Iterator<Item = &'a Unit> {
    index
        .file(&outer.file)
        .into_iter()
        .flat_map(|entry| entry.units.iter().filter_map(|&id| index.unit(id)))
        .filter(move |u| inside(u, outer))
}

/// Whether a match the index found at the loosest rule stands under `cfg`:
/// exact and renamed always, a near one when `cfg`'s own rule confirms it.
fn confirmed(cfg: &RuleConfig, new: &Unit, m: &CopyMatch, old: &Unit) -> bool {
    if m.kind != CopyKind::Near {
        return true;
    }
    let (a, b) = (&new.data.shingles, &old.data.shingles);
    let whole = new.data.kind != UnitKind::Window && old.data.kind != UnitKind::Window;
    common_at_least(a, b, 0)
        .and_then(|common| NearRule::new(cfg).similarity(a.len(), b.len(), common, whole))
        .is_some()
}

fn kind_name(verdict: Verdict) -> String {
    verdict.map_or("none", |(k, _, _)| k.rule()).to_string()
}

fn rows(thresholds: &[f64], judged: &[(&Label, Vec<Verdict>)]) -> Vec<PrecisionRow> {
    let mut rows: BTreeMap<(usize, String, String), PrecisionRow> = BTreeMap::new();
    for (label, verdicts) in judged {
        for (i, (&threshold, &verdict)) in thresholds.iter().zip(verdicts).enumerate() {
            let kind = kind_name(verdict);
            let denied = verdict.is_some_and(|(_, d, _)| d);
            let copy = label.label == Truth::Copy;
            for language in [label.language.as_str(), "all"] {
                for kind in [kind.as_str(), "all"] {
                    let row = rows
                        .entry((i, language.to_string(), kind.to_string()))
                        .or_insert_with(|| PrecisionRow {
                            threshold,
                            language: language.to_string(),
                            kind: kind.to_string(),
                            groups: 0,
                            copies: 0,
                            denied: 0,
                            denied_copies: 0,
                        });
                    row.groups += 1;
                    row.copies += usize::from(copy);
                    row.denied += usize::from(denied);
                    row.denied_copies += usize::from(denied && copy);
                }
            }
        }
    }
    rows.into_values().collect()
}

/// The report: per language and kind at the defaults, the sweep over all
/// kinds, and the groups judged wrongly at the defaults.
pub fn markdown(p: &Precision) -> String {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.1}", 100.0 * x));
    let mut md = format!(
        "# Precision on labelled real groups\n\nLabels: {}. A group is denied when its second member, written anew, is a blocking copy of its first.\n\n",
        p.labels
    );
    md.push_str(&format!(
        "## At the defaults (threshold {})\n\n",
        p.config.threshold
    ));
    md.push_str("| language | kind | groups | copies | denied | denied copies | precision % | unjust-denial % |\n|---|---|---|---|---|---|---|---|\n");
    let defaults = p.config.threshold;
    for r in p.rows.iter().filter(|r| r.threshold == defaults) {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.language,
            r.kind,
            r.groups,
            r.copies,
            r.denied,
            r.denied_copies,
            pct(r.precision()),
            pct(r.unjust())
        ));
    }
    md.push_str("\n## Per threshold (all kinds): precision % / unjust-denial % / denied\n\n");
    let languages: Vec<&str> = {
        let mut l: Vec<&str> = p.rows.iter().map(|r| r.language.as_str()).collect();
        l.dedup();
        l.sort_unstable();
        l.dedup();
        l
    };
    md.push_str(&format!("| threshold | {} |\n|---|", languages.join(" | ")));
    md.push_str(&"---|".repeat(languages.len()));
    md.push('\n');
    let mut thresholds: Vec<f64> = p.rows.iter().map(|r| r.threshold).collect();
    thresholds.dedup();
    for t in thresholds {
        md.push_str(&format!("| {t:.2} |"));
        for language in &languages {
            let cell = p
                .rows
                .iter()
                .find(|r| r.threshold == t && r.language == *language && r.kind == "all")
                .map_or("-".to_string(), |r| {
                    format!(
                        "{} / {} / {}",
                        pct(r.precision()),
                        pct(r.unjust()),
                        r.denied
                    )
                });
            md.push_str(&format!(" {cell} |"));
        }
        md.push('\n');
    }
    for (title, denied) in [
        ("Denied at the defaults, not copies", true),
        ("Copies not denied at the defaults", false),
    ] {
        md.push_str(&format!("\n## {title}\n\n"));
        for w in p.wrong.iter().filter(|w| w.denied == denied) {
            let l = &w.label;
            let by = w.lines.map_or(String::new(), |[new, old]| {
                format!(" at lines {new} / {old}")
            });
            md.push_str(&format!(
                "- {} {} / {} ({}, {:?}, judged {}{by}): {}\n",
                l.project, l.a, l.b, l.language, l.label, w.kind, l.why
            ));
        }
    }
    md
}
