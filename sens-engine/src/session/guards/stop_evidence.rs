//! `stop-evidence`: a Stop is a completion candidate when a file edited in this
//! turn is still changed against the turn's checkpoint. A candidate with no
//! test run after its last edit is blocked once with a short checklist. With
//! `stop_hook_active` (the agent continues after a block) the same state is
//! never blocked twice in a row: the block stands for the state (the tree and
//! the last edit), and a Stop on that state passes.

use serde::Deserialize;

use super::{Guard, Kind, Seen};

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Regexes over a Bash command that also count as a test run, besides the
    /// project's test command.
    #[serde(default)]
    pub test_patterns: Vec<String>,
}

#[derive(Default)]
pub struct StopEvidence {
    evidence: Evidence,
}

impl Guard for StopEvidence {
    fn name(&self) -> &'static str {
        "stop-evidence"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        Ok(self.evidence.require(seen, self.name()))
    }
}

/// The evidence check of a Stop, shared with `risk`: it remembers the state it
/// last blocked, so that state is never blocked twice.
#[derive(Default)]
pub(super) struct Evidence {
    blocked: Option<(Option<String>, Option<u64>)>,
}

impl Evidence {
    /// At a Stop of a completion candidate without a test run after its last
    /// edit: a block, or a mark when this state was blocked already.
    pub(super) fn require(&mut self, seen: &Seen<'_>, guard: &str) -> Vec<(Kind, String)> {
        if !seen.is_stop() {
            return Vec::new();
        }
        let candidates = seen.turn.candidates(seen.touched);
        if candidates.is_empty() || seen.turn.tested_after_last_edit(seen.tests) {
            return Vec::new();
        }
        let state = (seen.tree.clone(), seen.turn.last_edit);
        if self.blocked.as_ref() == Some(&state) {
            return vec![(
                Kind::Mark,
                "passed: this state was blocked once already".to_string(),
            )];
        }
        self.blocked = Some(state);
        vec![(Kind::Block, missing_evidence(guard, &candidates))]
    }
}

/// The checklist a completion candidate without a test run gets.
fn missing_evidence(guard: &str, files: &[&str]) -> String {
    format!(
        "Sens ({guard}): you changed {} in this turn and ran no tests after the last edit. \
         Before you finish:\n- run the project's tests and read the result;\n- fix what fails;\n\
         - say what you verified and how.",
        files.join(", ")
    )
}
