//! The findings the session reports: a change to the engine's paths, blocking
//! findings merged once, and each finding as the agent reads it.

use super::PROTECTED_RULE;
use super::protect::PROTECTED_DESCRIPTION;
use crate::finding::{Finding, NewUnit};

/// A change to one of the engine's paths (see [`Session::protected_changes`]).
pub(crate) fn protected_finding(path: String) -> Finding {
    let name = path.rsplit('/').next().unwrap_or(&path).to_string();
    Finding {
        rule: PROTECTED_RULE.into(),
        blocks: true,
        similarity: 1.0,
        message: format!(
            "the engine's own file changed, which no tool may do; do not change it again \
             and tell the user, who alone can restore or approve it ({PROTECTED_DESCRIPTION} \
             are protected)"
        ),
        new: NewUnit {
            file: path,
            line: 1,
            name,
        },
        existing: None,
    }
}

/// Blocking audit findings plus pending ones, without duplicates.
pub(super) fn blocking_of<'a>(audit: &'a [Finding], pending: &'a [Finding]) -> Vec<&'a Finding> {
    let mut out: Vec<&Finding> = Vec::new();
    for finding in audit.iter().chain(pending).filter(|f| f.blocks) {
        if !out.iter().any(|seen| same_finding(seen, finding)) {
            out.push(finding);
        }
    }
    out
}

pub(crate) fn same_finding(a: &Finding, b: &Finding) -> bool {
    a.rule == b.rule && a.new == b.new && a.existing == b.existing
}

pub(super) fn describe_all(findings: &[&Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("- {}", describe(f)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One finding as the agent reads it: the new unit, what it copies, what to do.
fn describe(finding: &Finding) -> String {
    let new = &finding.new;
    match &finding.existing {
        Some(existing) => format!(
            "{}:{} `{}` copies {}:{} `{}` ({}, similarity {:.2}, {} usages): {}",
            new.file,
            new.line,
            new.name,
            existing.file,
            existing.line,
            existing.signature,
            finding.rule,
            finding.similarity,
            existing.usages,
            finding.message
        ),
        None => format!(
            "{}:{} `{}` ({}): {}",
            new.file, new.line, new.name, finding.rule, finding.message
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::ExistingUnit;

    fn finding(file: &str, blocks: bool, existing: bool) -> Finding {
        Finding {
            rule: if existing { "copy.near" } else { "orphan" }.into(),
            blocks,
            similarity: 0.875,
            message: "Call it.".into(),
            new: NewUnit {
                file: file.into(),
                line: 7,
                name: "dup".into(),
            },
            existing: existing.then(|| ExistingUnit {
                file: "lib/orig.py".into(),
                line: 12,
                signature: "def orig(a, b)".into(),
                usages: 3,
            }),
        }
    }

    #[test]
    fn a_finding_reads_as_what_to_reuse() {
        assert_eq!(
            describe(&finding("app/new.py", true, true)),
            "app/new.py:7 `dup` copies lib/orig.py:12 `def orig(a, b)` (copy.near, similarity 0.88, 3 usages): Call it."
        );
        assert_eq!(
            describe(&finding("app/new.py", true, false)),
            "app/new.py:7 `dup` (orphan): Call it."
        );
    }

    #[test]
    fn blocking_findings_merge_audit_and_pending_once() {
        let audit = [finding("a.py", true, true), finding("b.py", false, true)];
        let pending = [finding("a.py", true, true), finding("c.py", true, true)];
        let files: Vec<&str> = blocking_of(&audit, &pending)
            .iter()
            .map(|f| f.new.file.as_str())
            .collect();
        assert_eq!(files, ["a.py", "c.py"]);
    }
}
