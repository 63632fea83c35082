//! Re-implementations at write time: for each function or method a write adds,
//! the existing units that do the same thing, and whether to say so.
//!
//! An agent unaware of a helper writes it again under another name, with other
//! control flow: the change rules see copies, not that. The new code says what it
//! does far more precisely than a request, so it is searched the way a prompt
//! is ([`candidates`]: the suggestions' words and model, code against code), and
//! a calibrated score ([`decision`]) decides whether the best candidate is the
//! same thing or only alike: a note about new code teaches the agent to ignore
//! notes.

mod added;
pub mod candidates;
pub mod decision;

use serde::Serialize;

pub use candidates::Candidate;

use crate::finding::{ExistingUnit, Finding, NewUnit};
use crate::index::Index;

/// The candidates per new unit the Stop reviewer reads: on every held-out case
/// file, the right unit is among the first eight for 46 of 55
/// re-implementations, among the first three for 40 (docs/reuse.md): the
/// reviewer reads the diff and can dismiss a wrong candidate, not find a
/// missing one.
pub const REVIEW_CANDIDATES: usize = 8;

/// The rule of a reviewer's candidate from the finder: a hint, never a denial.
pub const REVIEW_RULE: &str = "reuse.candidate";

/// The rule of the note the agent gets at PostToolUse when the decision
/// names an existing unit: additional context, never a denial.
pub const NOTE_RULE: &str = "reuse.note";

/// What the finder made of one unit a write adds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lookup {
    pub name: String,
    /// 1-based, in the written file.
    pub line: usize,
    pub signature: String,
    /// The note's decision ([`decision::notes`]) speaks: the project has it,
    /// and the first candidate is the one to call. The agent's note and the
    /// `already_exists` tool both answer by it.
    pub exists: bool,
    /// Best first (kept when nothing is said, to explain).
    pub candidates: Vec<Candidate>,
}

/// The lookups of the units that the file at `path` gains when its content
/// `before` (`None`: a new file) becomes `after`; none for a file the engine
/// cannot parse.
pub fn find(
    index: &Index,
    path: &str,
    before: Option<&str>,
    after: &str,
) -> anyhow::Result<Vec<Lookup>> {
    let Some(parsed) = index.parse(path, after)? else {
        return Ok(Vec::new());
    };
    let before = match before {
        Some(text) => index.parse(path, text)?,
        None => None,
    };
    let lines: Vec<&str> = after.lines().collect();
    Ok(added::added(path, before.as_ref(), parsed)
        .into_iter()
        .map(|unit| {
            let d = &unit.data;
            let from = (d.start_line as usize).saturating_sub(1).min(lines.len());
            let to = (d.end_line as usize).clamp(from, lines.len());
            let code = lines[from..to].join("\n");
            let candidates = candidates::candidates(index, &unit, &code);
            let exists = decision::notes(&candidates);
            Lookup {
                name: d.name.clone(),
                line: d.start_line as usize,
                signature: d.signature.clone(),
                exists,
                candidates,
            }
        })
        .collect())
}

/// A lookup's first [`REVIEW_CANDIDATES`] candidates as hints for the reviewer:
/// the new unit in `path` may do again what each existing one does.
pub fn review_candidates(path: &str, lookup: &Lookup) -> Vec<Finding> {
    lookup
        .candidates
        .iter()
        .take(REVIEW_CANDIDATES)
        .map(|c| {
            let existing = &c.suggestion;
            let message = format!(
                "`{}` may do again what `{}` at {}:{} does: call it if it does.",
                lookup.name, existing.name, existing.file, existing.line
            );
            hint(REVIEW_RULE, message, path, lookup, c)
        })
        .collect()
}

/// The notes for the units the file at `path` gains from `before` to `after`:
/// one per new unit whose best candidate the note's decision names
/// ([`decision::notes`]). Never blocking. Without every candidate's vector the
/// finder says nothing, so the missing ones are made first when they are at
/// most `max_embed` (a hook answers within its timeout; a replay passes
/// `usize::MAX` and decides as a session whose vectors were all made).
pub fn notes(
    index: &Index,
    path: &str,
    before: Option<&str>,
    after: &str,
    max_embed: usize,
) -> anyhow::Result<Vec<Finding>> {
    let lookups = find(index, path, before, after)?;
    if lookups.is_empty() {
        return Ok(Vec::new());
    }
    let lookups = match crate::suggest::model::shared() {
        Some(m) => {
            let pool = crate::suggest::candidates(index);
            let missing = pool.iter().filter(|u| m.cached(u).is_none()).count();
            if missing > 0 && missing <= max_embed {
                m.prepare(&pool);
                find(index, path, before, after)?
            } else {
                lookups
            }
        }
        None => lookups,
    };
    Ok(lookups
        .iter()
        .filter_map(|lookup| note(path, lookup))
        .collect())
}

/// Drops the notes about a unit that `findings` already report as a copy of an
/// existing one: the copy's finding says more (and blocks where it should).
pub fn drop_copied(notes: &mut Vec<Finding>, findings: &[Finding]) {
    notes.retain(|n| {
        !findings.iter().any(|f| {
            f.rule != NOTE_RULE
                && f.existing.is_some()
                && f.new.file == n.new.file
                && f.new.name == n.new.name
        })
    });
}

/// A lookup's note, when the decision speaks about its first candidate.
pub fn note(path: &str, lookup: &Lookup) -> Option<Finding> {
    if !lookup.exists {
        return None;
    }
    let best = lookup.candidates.first()?;
    let existing = &best.suggestion;
    let message = format!(
        "`{}` seems to do what `{}` already does: call `{}` instead of keeping a second \
         implementation, unless it does not do what this code needs.",
        lookup.name, existing.name, existing.name
    );
    Some(hint(NOTE_RULE, message, path, lookup, best))
}

/// A finding of rule `rule` that never blocks, about the new unit of `lookup` in
/// `path` and the existing unit of `candidate`.
fn hint(
    rule: &str,
    message: String,
    path: &str,
    lookup: &Lookup,
    candidate: &Candidate,
) -> Finding {
    let existing = &candidate.suggestion;
    Finding {
        rule: rule.to_string(),
        blocks: false,
        similarity: candidate.twin.unwrap_or(0.0),
        message,
        new: NewUnit {
            file: path.to_string(),
            line: lookup.line,
            name: lookup.name.clone(),
        },
        existing: Some(ExistingUnit {
            file: existing.file.clone(),
            line: existing.line,
            signature: existing.signature.clone(),
            usages: existing.usages,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &str, file: &str, name: &str) -> Finding {
        Finding {
            rule: rule.to_string(),
            blocks: false,
            similarity: 0.5,
            message: String::new(),
            new: NewUnit {
                file: file.to_string(),
                line: 1,
                name: name.to_string(),
            },
            existing: Some(ExistingUnit {
                file: "lib.py".to_string(),
                line: 3,
                signature: "def helper(x)".to_string(),
                usages: 2,
            }),
        }
    }

    #[test]
    fn a_unit_reported_as_a_copy_gets_no_note() {
        let mut notes = vec![
            finding(NOTE_RULE, "a.py", "copied"),
            finding(NOTE_RULE, "a.py", "rewritten"),
            finding(NOTE_RULE, "b.py", "copied"),
        ];
        let findings = [
            finding("copy.near", "a.py", "copied"),
            finding(NOTE_RULE, "a.py", "rewritten"),
        ];
        drop_copied(&mut notes, &findings);
        let left: Vec<(&str, &str)> = notes
            .iter()
            .map(|n| (n.new.file.as_str(), n.new.name.as_str()))
            .collect();
        assert_eq!(left, [("a.py", "rewritten"), ("b.py", "copied")]);
    }
}
