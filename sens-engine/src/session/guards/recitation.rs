//! `recitation`: the turn's original user prompt (verbatim, its first 2,000
//! characters) and the condition's standing constraints, re-injected so the
//! objective survives compaction and long turns: every `every` (50) tool calls
//! of a turn, on that call's PostToolUse, and after a compaction. A PreCompact
//! callback cannot add text to the conversation (its `hookSpecificOutput` has
//! no `additionalContext`), so it arms the recitation, which the next callback
//! that takes `additionalContext` (the next prompt or tool result) carries,
//! with the prompt of the turn that was compacted (a `/compact` between turns
//! is followed by the next turn's prompt, which is no loss).

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
    /// A compaction happened during the turn of this prompt; the next
    /// note-taking callback recites it.
    armed: Option<String>,
}

impl Recitation {
    pub fn new(settings: &Settings) -> Self {
        Self {
            every: settings.every.max(1),
            constraints: settings.constraints.clone(),
            armed: None,
        }
    }

    fn recital(&self, prompt: &str) -> String {
        let prompt: String = prompt.chars().take(PROMPT_CHARS).collect();
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
            self.armed = Some(seen.turn.prompt.clone());
            return Ok(vec![(
                Kind::Mark,
                "armed: recite after the compaction".into(),
            )]);
        }
        let carries = seen.is_after_tool() || seen.event == "UserPromptSubmit";
        let prompt = match self.armed.take_if(|_| carries) {
            Some(compacted) => compacted,
            None if seen.is_after_tool() && seen.turn.calls.is_multiple_of(self.every) => {
                seen.turn.prompt.clone()
            }
            None => return Ok(Vec::new()),
        };
        if prompt.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![(Kind::Note, self.recital(&prompt))])
    }
}
