//! `loop`: the same file changed by `threshold` (5) or more tool calls of one
//! turn (Write, Edit, NotebookEdit, or a command changing it on disk) gets a
//! note on that PostToolUse: the file, the count, and "consider another
//! approach". Once per file per turn.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::{Guard, Kind, Seen};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[serde(default = "default_threshold")]
    pub threshold: u32,
}

fn default_threshold() -> u32 {
    5
}

pub struct LoopGuard {
    threshold: u32,
    /// Files already noted in this turn.
    noted: BTreeSet<String>,
}

impl LoopGuard {
    pub fn new(settings: &Settings) -> Self {
        Self {
            threshold: settings.threshold.max(1),
            noted: BTreeSet::new(),
        }
    }
}

impl Guard for LoopGuard {
    fn name(&self) -> &'static str {
        "loop"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if seen.event == "UserPromptSubmit" && seen.turn.calls == 0 {
            self.noted.clear();
        }
        if !seen.is_after_tool() {
            return Ok(Vec::new());
        }
        let mut notes = Vec::new();
        for file in seen.touched {
            let count = seen.turn.edits.get(file).copied().unwrap_or(0);
            if count >= self.threshold && self.noted.insert(file.clone()) {
                notes.push((
                    Kind::Note,
                    format!(
                        "Sens (loop): {file} has been changed {count} times in this turn. \
                         Repeated edits of one file rarely converge: consider another approach \
                         (re-read the requirement, the error, and the code this file calls)."
                    ),
                ));
            }
        }
        Ok(notes)
    }
}
