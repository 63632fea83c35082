//! The facts of the current turn that several guards read: the user's prompt,
//! the files edited and how often, the commands that ran, counted in tool
//! calls. A turn starts at a UserPromptSubmit.

use std::collections::BTreeMap;

use serde_json::Value;

/// A Bash command that ran in this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub command: String,
    /// PostToolUse (exit 0) rather than PostToolUseFailure.
    pub passed: bool,
    /// The tool call it was ([`Turn::calls`] after it).
    pub call: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Turn {
    /// The user's prompt that started the turn (a slash command such as
    /// `/compact` is not a new objective and leaves it).
    pub prompt: String,
    /// Tool calls finished in this turn (PostToolUse and PostToolUseFailure).
    pub calls: u64,
    /// File -> how many tool calls of this turn changed it.
    pub edits: BTreeMap<String, u32>,
    /// The call that last changed a file.
    pub last_edit: Option<u64>,
    pub ran: Vec<Ran>,
}

impl Turn {
    /// Takes in one callback. What a test run changes (caches, reports) is not
    /// an edit.
    pub(super) fn observe(
        &mut self,
        event: &str,
        input: &Value,
        touched: &[String],
        tests: &TestCommands,
    ) {
        match event {
            "UserPromptSubmit" => {
                let prompt = input.get("prompt").and_then(Value::as_str).unwrap_or("");
                if !is_command_prompt(prompt) {
                    *self = Turn {
                        prompt: prompt.to_string(),
                        ..Turn::default()
                    };
                }
            }
            "PostToolUse" | "PostToolUseFailure" => {
                self.calls += 1;
                let command = (input.get("tool_name").and_then(Value::as_str) == Some("Bash"))
                    .then(|| input.pointer("/tool_input/command").and_then(Value::as_str))
                    .flatten();
                if let Some(command) = command {
                    self.ran.push(Ran {
                        command: command.to_string(),
                        passed: event == "PostToolUse",
                        call: self.calls,
                    });
                    if tests.matches(command) {
                        return;
                    }
                }
                for file in touched {
                    *self.edits.entry(file.clone()).or_insert(0) += 1;
                }
                if !touched.is_empty() {
                    self.last_edit = Some(self.calls);
                }
            }
            _ => {}
        }
    }

    /// Whether a test run came after the last edit.
    pub fn tested_after_last_edit(&self, tests: &TestCommands) -> bool {
        let Some(last_edit) = self.last_edit else {
            return true;
        };
        self.ran
            .iter()
            .any(|ran| ran.call > last_edit && tests.matches(&ran.command))
    }

    /// Files edited in this turn that `changed` (against the turn's checkpoint)
    /// still holds: the turn's completion candidates.
    pub fn candidates<'a>(&self, changed: &'a [String]) -> Vec<&'a str> {
        changed
            .iter()
            .filter(|file| self.edits.contains_key(*file))
            .map(String::as_str)
            .collect()
    }
}

/// A slash command (`/compact`) rather than a request: it starts no turn.
pub fn is_command_prompt(prompt: &str) -> bool {
    prompt.trim_start().starts_with('/')
}

/// The project's test commands and configured patterns: a command runs the
/// tests when it holds one of the commands or matches one of the patterns.
#[derive(Debug, Clone, Default)]
pub struct TestCommands {
    commands: Vec<String>,
    patterns: Vec<regex::Regex>,
}

impl TestCommands {
    pub fn new(commands: &[String], patterns: &[String]) -> anyhow::Result<Self> {
        let patterns = patterns
            .iter()
            .map(|p| {
                regex::Regex::new(p)
                    .map_err(|e| anyhow::anyhow!("test pattern `{p}` is not a regex: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            commands: commands
                .iter()
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect(),
            patterns,
        })
    }

    pub fn matches(&self, command: &str) -> bool {
        self.commands.iter().any(|c| command.contains(c.as_str()))
            || self.patterns.iter().any(|p| p.is_match(command))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn post(command: &str) -> Value {
        json!({"tool_name": "Bash", "tool_input": {"command": command}})
    }

    #[test]
    fn a_test_run_after_the_last_edit_is_evidence_and_an_edit_after_it_is_not() {
        let tests = TestCommands::new(&["pytest -q".into()], &[]).unwrap();
        let mut turn = Turn::default();
        turn.observe(
            "UserPromptSubmit",
            &json!({"prompt": "add it"}),
            &[],
            &tests,
        );
        assert!(turn.tested_after_last_edit(&tests));
        turn.observe(
            "PostToolUse",
            &json!({"tool_name": "Write"}),
            &["a.py".into()],
            &tests,
        );
        assert!(!turn.tested_after_last_edit(&tests));
        // Its caches are no edit.
        turn.observe(
            "PostToolUseFailure",
            &post("python3 -m pytest -q tests"),
            &["tests/__pycache__/x.pyc".into()],
            &tests,
        );
        assert!(turn.tested_after_last_edit(&tests));
        turn.observe(
            "PostToolUse",
            &json!({"tool_name": "Edit"}),
            &["a.py".into()],
            &tests,
        );
        assert!(!turn.tested_after_last_edit(&tests));
        assert_eq!(turn.edits["a.py"], 2);
        assert_eq!(turn.candidates(&["a.py".into(), "b.py".into()]), ["a.py"]);
    }

    #[test]
    fn a_slash_command_keeps_the_objective_and_a_prompt_starts_a_turn() {
        let tests = TestCommands::new(&[], &[]).unwrap();
        let mut turn = Turn::default();
        turn.observe(
            "UserPromptSubmit",
            &json!({"prompt": "add totals"}),
            &[],
            &tests,
        );
        turn.observe(
            "PostToolUse",
            &json!({"tool_name": "Write"}),
            &["a.py".into()],
            &tests,
        );
        turn.observe(
            "UserPromptSubmit",
            &json!({"prompt": "/compact"}),
            &[],
            &tests,
        );
        assert_eq!((turn.prompt.as_str(), turn.calls), ("add totals", 1));
        turn.observe("UserPromptSubmit", &json!({"prompt": "next"}), &[], &tests);
        assert_eq!((turn.prompt.as_str(), turn.calls), ("next", 0));
        assert!(turn.edits.is_empty());
    }
}
