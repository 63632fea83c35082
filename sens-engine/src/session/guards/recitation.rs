//! `recitation`: the turn's original user prompt (verbatim, its first 2,000
//! characters) and the condition's standing constraints, re-injected so the
//! objective survives compaction and long turns: every `every` (50) tool calls
//! of a turn, on that call's PostToolUse, and after a compaction. A PreCompact
//! callback cannot add text to the conversation (its `hookSpecificOutput` has
//! no `additionalContext`), so it arms the recitation, which the next callback
//! that takes `additionalContext` (the next prompt or tool result) carries.

use serde::Deserialize;

use super::{Guard, Kind, Seen};

/// The prompt's first characters that are recited.
const PROMPT_CHARS: usize = 2000;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[serde(default = "default_every")]
    pub every: u64,
    /// The project's standing constraints, recited after the prompt.
    #[serde(default)]
    pub constraints: String,
}

fn default_every() -> u64 {
    50
}

pub struct Recitation {
    every: u64,
    constraints: String,
    /// A compaction happened; the next note-taking callback recites.
    armed: bool,
}

impl Recitation {
    pub fn new(settings: &Settings) -> Self {
        Self {
            every: settings.every.max(1),
            constraints: settings.constraints.clone(),
            armed: false,
        }
    }

    fn recital(&self, seen: &Seen<'_>) -> String {
        let prompt: String = seen.turn.prompt.chars().take(PROMPT_CHARS).collect();
        let mut text = format!(
            "Sens (recitation): the user's request for this turn, verbatim:\n<request>\n{prompt}\n</request>"
        );
        if !self.constraints.is_empty() {
            text.push_str(&format!("\nStanding constraints:\n{}", self.constraints));
        }
        text
    }
}

impl Guard for Recitation {
    fn name(&self) -> &'static str {
        "recitation"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if seen.event == "PreCompact" {
            self.armed = true;
            return Ok(vec![(Kind::Mark, "armed: recite after the compaction".into())]);
        }
        let due = seen.is_after_tool() && seen.turn.calls % self.every == 0;
        let carries = seen.is_after_tool() || seen.event == "UserPromptSubmit";
        if seen.turn.prompt.is_empty() || !(due || (self.armed && carries)) {
            return Ok(Vec::new());
        }
        self.armed = false;
        Ok(vec![(Kind::Note, self.recital(seen))])
    }
}
