//! The change rules: copies (exact, renamed, near) and orphans, judged over the
//! index with the thresholds of [`RuleConfig`].

use crate::config::RuleConfig;
use crate::dictated::only_shape;
use crate::finding::{ExistingUnit, Finding, NewUnit};
use crate::index::{CopyKind, CopyMatch, Index, Unit, UnitId};
use crate::paths::{is_fixture_path, is_test_path};
use crate::units::{OverBudget, ParsedFile, UnitData, UnitKind};
use crate::walk::is_generated_file;

/// A unit the write adds: its fingerprint did not stand in the file before.
pub fn added_units<'a>(before: &[&UnitData], after: &'a ParsedFile) -> Vec<&'a UnitData> {
    let old: Vec<u64> = before.iter().map(|u| u.renamed).collect();
    after
        .units
        .iter()
        .filter(|u| u.kind.has_fingerprints() && !old.contains(&u.renamed))
        .collect()
}

/// Copy findings (`copy.exact`, `copy.renamed`, `copy.near`) for the units that
/// `after` adds to `path` relative to `before`, against every other file of the
/// index. One finding per copied region: a window inside a copied function is
/// not reported again.
pub fn copy_findings(
    index: &Index,
    path: &str,
    text: &str,
    after: &ParsedFile,
    before: &[&UnitData],
) -> Vec<Finding> {
    let cfg = index.config();
    let may_block = may_block(path, text);
    let same_file = |_: UnitId, u: &Unit| &*u.file == path;
    let mut found: Vec<Judged> = Vec::new();
    for unit in added_units(before, after) {
        let mut matches = index.copies(unit, same_file);
        // A copy that already stood in the old version of this unit is not new.
        let old_twin = before
            .iter()
            .find(|o| o.kind == unit.kind && o.name == unit.name);
        if let Some(old) = old_twin {
            let old_matches: Vec<UnitId> =
                index.copies(old, same_file).iter().map(|m| m.id).collect();
            matches.retain(|m| !old_matches.contains(&m.id));
        }
        let Some((best, existing)) = best_match(index, unit, &matches) else {
            continue;
        };
        let blocks = may_block && blocks(cfg, text, unit, best.kind, existing);
        found.push(Judged {
            unit,
            existing,
            finding: copy_finding(index, path, unit, best, existing, blocks),
        });
    }
    confirm_by_windows(&mut found);
    outermost(found.into_iter().map(|j| (j.unit, j.finding)).collect())
}

/// A unit the write adds, its best match and the finding made of them.
struct Judged<'a> {
    unit: &'a UnitData,
    existing: &'a Unit,
    finding: Finding,
}

/// A whole unit whose match was only a hint (its shape alone seemed dictated:
/// renamed names and a line inserted or deleted share few words) denies when
/// a window inside it denies against the unit it matched: the copy is proven,
/// and the whole unit is the finding to report ("call `parse_amount`"), not a
/// run of its lines.
fn confirm_by_windows(found: &mut [Judged]) {
    let within = |inner: &Judged, outer: &Judged| {
        let (i, o) = (&inner.existing, &outer.existing);
        i.file == o.file
            && o.data.start_line <= i.data.start_line
            && i.data.end_line <= o.data.end_line
            && outer.unit.start_line <= inner.unit.start_line
            && inner.unit.end_line <= outer.unit.end_line
    };
    let proven: Vec<usize> = (0..found.len())
        .filter(|&o| {
            let outer = &found[o];
            !outer.finding.blocks
                && outer.unit.kind != UnitKind::Window
                && found.iter().any(|inner| {
                    inner.finding.blocks
                        && inner.unit.kind == UnitKind::Window
                        && within(inner, outer)
                })
        })
        .collect();
    for o in proven {
        found[o].finding.blocks = true;
    }
}

/// Whether a write of `text` to `path` may be denied for a copy at all:
/// generated files and fixtures never are.
pub fn may_block(path: &str, text: &str) -> bool {
    !is_generated_file(path, text) && !is_fixture_path(path)
}

/// Whether `unit`, added by a write of `text` that [`may_block`], copying
/// `existing` as `kind` denies the write; otherwise the copy is a hint.
pub fn blocks(
    cfg: &RuleConfig,
    text: &str,
    unit: &UnitData,
    kind: CopyKind,
    existing: &Unit,
) -> bool {
    !is_fixture_path(&existing.file)
        && unit.tokens as usize >= cfg.floor
        && !unit.imports_only
        && !is_trivial(unit, kind, cfg)
        && !only_shape(unit, text, kind, &existing.data)
}

/// A file whose parse ran over its budget: nothing in it can be judged, so it
/// may not pass unjudged.
pub fn unjudged_finding(path: &str, why: &OverBudget) -> Finding {
    Finding {
        rule: "unjudged".to_string(),
        blocks: true,
        similarity: 0.0,
        message: format!("{path} could not be judged ({why}): split it into smaller files."),
        new: NewUnit {
            file: path.to_string(),
            line: 1,
            name: "<file>".to_string(),
        },
        existing: None,
    }
}

/// Long but repetitive fragments (tables, lists of calls) are not logic to
/// reuse. A whole function, method or class copied exactly or with names changed
/// is, however repetitive its body (a run of field assignments).
fn is_trivial(unit: &UnitData, kind: CopyKind, cfg: &RuleConfig) -> bool {
    let whole_copy = unit.kind != UnitKind::Window && kind != CopyKind::Near;
    !whole_copy && unit.shingles.len() < cfg.min_shingles
}

/// The match to report: the strongest kind, then the highest similarity, then
/// one of the same kind, then one of the same name, then a function or class
/// over a window, then the most used. It alone decides whether the unit
/// denies.
pub fn best_match<'a>(
    index: &'a Index,
    unit: &UnitData,
    matches: &[CopyMatch],
) -> Option<(CopyMatch, &'a Unit)> {
    matches
        .iter()
        .filter_map(|m| Some((*m, index.unit(m.id)?)))
        .min_by(|(a, ua), (b, ub)| {
            let other_kind = |u: &Unit| u.data.kind != unit.kind;
            a.kind
                .cmp(&b.kind)
                .then(b.similarity.total_cmp(&a.similarity))
                .then(other_kind(ua).cmp(&other_kind(ub)))
                .then((ua.data.name != unit.name).cmp(&(ub.data.name != unit.name)))
                .then((ua.data.kind == UnitKind::Window).cmp(&(ub.data.kind == UnitKind::Window)))
                .then(usages(index, ub).cmp(&usages(index, ua)))
                .then((&ua.file, ua.data.start_line).cmp(&(&ub.file, ub.data.start_line)))
        })
}

/// References to the unit's name (a window counts its enclosing unit's).
fn usages(index: &Index, unit: &Unit) -> u32 {
    let name = unit
        .data
        .name
        .strip_prefix(WINDOW_PREFIX)
        .unwrap_or(&unit.data.name);
    index.usages(name)
}

const WINDOW_PREFIX: &str = "window in ";

fn copy_finding(
    index: &Index,
    path: &str,
    unit: &UnitData,
    m: CopyMatch,
    existing: &Unit,
    blocks: bool,
) -> Finding {
    let at = format!("{}:{}", existing.file, existing.data.start_line);
    let name = &existing.data.name;
    let windowed = unit.kind == UnitKind::Window || existing.data.kind == UnitKind::Window;
    let message = if windowed {
        let owner = name.strip_prefix(WINDOW_PREFIX).unwrap_or(name);
        format!(
            "Lines {}-{} repeat code of `{owner}` at {at}: extract the shared part once and call it from both.",
            unit.start_line, unit.end_line
        )
    } else {
        match m.kind {
            CopyKind::Exact => format!(
                "`{}` is a copy of `{name}` at {at}: call `{name}` instead.",
                unit.name
            ),
            CopyKind::Renamed => format!(
                "`{}` is `{name}` at {at} with names changed: call `{name}` instead.",
                unit.name
            ),
            CopyKind::Near => format!(
                "`{}` is {:.0}% the same as `{name}` at {at}: call `{name}`, or extract the shared part once and call it from both.",
                unit.name,
                m.similarity * 100.0
            ),
        }
    };
    Finding {
        rule: m.kind.rule().to_string(),
        blocks,
        similarity: m.similarity,
        message,
        new: NewUnit {
            file: path.to_string(),
            line: unit.start_line as usize,
            name: unit.name.clone(),
        },
        existing: Some(ExistingUnit {
            file: existing.file.to_string(),
            line: existing.data.start_line as usize,
            signature: existing.data.signature.clone(),
            usages: usages(index, existing) as usize,
        }),
    }
}

/// Keeps the findings of the outermost units: a unit inside another reported
/// unit repeats its finding. Denials first: a hint on a class body's window
/// does not hide a copied method inside it, and is dropped beside it.
fn outermost(mut found: Vec<(&UnitData, Finding)>) -> Vec<Finding> {
    let position = |u: &UnitData| (u.start_line, std::cmp::Reverse(u.end_line));
    found.sort_by_key(|(u, f)| (!f.blocks, position(u)));
    let within = |inner: &UnitData, outer: &UnitData| {
        outer.start_line <= inner.start_line && inner.end_line <= outer.end_line
    };
    let mut kept: Vec<(&UnitData, Finding)> = Vec::new();
    for (unit, finding) in found {
        let covered = kept
            .iter()
            .any(|(k, _)| within(unit, k) || (!finding.blocks && within(k, unit)));
        if !covered {
            kept.push((unit, finding));
        }
    }
    kept.sort_by_key(|(u, _)| position(u));
    kept.into_iter().map(|(_, f)| f).collect()
}

/// Names the runtime or a framework calls: never orphans.
const ENTRY_POINTS: &[&str] = &["main", "init", "constructor", "setUp", "tearDown"];

/// `orphan` findings (audit only): functions and methods `after` adds to `path`
/// that nothing references. The index must already hold the project as it is
/// after the change, so references from other changed files count. A function
/// the `prompt` names is what the person asked for, not an orphan.
pub fn orphan_findings(
    index: &Index,
    path: &str,
    text: &str,
    after: &ParsedFile,
    before: &[&UnitData],
    prompt: &str,
) -> Vec<Finding> {
    if is_test_path(path) || is_fixture_path(path) || is_generated_file(path, text) {
        return Vec::new();
    }
    let old_names: Vec<&str> = before
        .iter()
        .filter(|u| u.kind == UnitKind::Function)
        .map(|u| u.name.as_str())
        .collect();
    after
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Function && !old_names.contains(&u.name.as_str()))
        .filter(|u| {
            !is_excluded_from_orphans(u, path, text)
                && !names_word(prompt, &u.name)
                && index.usages(&u.name) == 0
        })
        .map(|u| Finding {
            rule: "orphan".to_string(),
            blocks: true,
            similarity: 0.0,
            message: format!(
                "`{}` is added but nothing calls it: call it where it is needed, or delete it.",
                u.name
            ),
            new: NewUnit {
                file: path.to_string(),
                line: u.start_line as usize,
                name: u.name.clone(),
            },
            existing: None,
        })
        .collect()
}

fn is_excluded_from_orphans(unit: &UnitData, path: &str, text: &str) -> bool {
    let name = unit.name.as_str();
    let facts = &unit.facts;
    ENTRY_POINTS.contains(&name)
        || name.starts_with('<')
        || unit.is_dunder()
        || unit.is_test()
        || facts.exported
        || facts.implements
        || facts.callback
        // Attributes and decorators hand the function to a framework or the
        // test runner (`#[test]`, `@app.route`, `@pytest.fixture`).
        || !facts.decorators.is_empty()
        || python_public(path, text, name, unit.start_line)
}

/// Whether `text` has `name` as a whole word (identifier characters around it
/// end the word), e.g. a prompt asking for `total`.
pub fn names_word(text: &str, name: &str) -> bool {
    !name.is_empty()
        && text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == name)
}

/// A Python module's API: a module-level function without a leading underscore
/// (what a person asking for a function gets), public names of an
/// `__init__.py`, or names listed in the module's `__all__`.
fn python_public(path: &str, text: &str, name: &str, line: u32) -> bool {
    if !path.ends_with(".py") {
        return false;
    }
    let public = !name.starts_with('_');
    let def_line = text
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("");
    let module_level = def_line.starts_with("def ") || def_line.starts_with("async def ");
    let init = path.rsplit('/').next() == Some("__init__.py");
    (public && (module_level || init))
        || (text.contains("__all__")
            && (text.contains(&format!("\"{name}\"")) || text.contains(&format!("'{name}'"))))
}
