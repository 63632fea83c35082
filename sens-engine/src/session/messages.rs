//! The hook outputs the session writes: a PreToolUse deny, an event's
//! additional context, and the texts of a protected-path deny and of
//! suggestions.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::protect::PROTECTED_DESCRIPTION;
use crate::finding::{Finding, Suggestion};

pub(super) fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

pub(super) fn specific_output(event: &str, key: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, key: text}})
}

pub(super) fn protected_reason(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "Sens denied this: it would change {}, which belongs to the engine ({PROTECTED_DESCRIPTION} \
         are protected). Leave these paths alone; no tool may change them.",
        names.join(", ")
    )
}

pub(super) fn suggestions_context(suggestions: &[Suggestion]) -> String {
    let lines: Vec<String> = suggestions
        .iter()
        .map(|s| {
            format!(
                "- `{}` at {}:{} ({} usages)",
                s.signature, s.file, s.line, s.usages
            )
        })
        .collect();
    format!(
        "Sens: the project already has code that may serve this request; reuse it before \
         writing new code:\n{}",
        lines.join("\n")
    )
}

/// The PostToolUse note for the functions a write added that do what existing
/// ones do (rule `reuse.note`): the existing unit where, its signature and
/// usages, and to call it. Additional context, never a denial.
pub(super) fn reuse_context(notes: &[Finding]) -> String {
    let lines: Vec<String> = notes
        .iter()
        .filter_map(|f| {
            let existing = f.existing.as_ref()?;
            Some(format!(
                "- {}:{} `{}` does what {}:{} `{}` ({} usages) already does.",
                f.new.file,
                f.new.line,
                f.new.name,
                existing.file,
                existing.line,
                existing.signature,
                existing.usages
            ))
        })
        .collect();
    format!(
        "Sens: the project already has what this write added (a note, not blocking):\n{}\n\
         Call the existing function instead of keeping a second implementation: read it, \
         and if it does what you need, remove yours and use it.",
        lines.join("\n")
    )
}
