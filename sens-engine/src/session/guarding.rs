//! The guards' part of every answer: their decisions added to the session's,
//! with the files the event touched.

use serde_json::Value;

use super::guards::{self, Kind};
use super::ledger::Verdict;
use super::rebuild;
use super::{Event, Outcome, Session};

impl Session {
    /// Adds the guards' decisions to the session's answer (see `guards`). At a
    /// paused Stop a guard's block is kept as a mark: the turn already waits
    /// for a human.
    pub(super) fn guard(
        &mut self,
        event: Option<Event>,
        input: &Value,
        mut outcome: Outcome,
    ) -> anyhow::Result<Outcome> {
        let Some(event) = event.filter(|_| !self.guards.is_empty()) else {
            return Ok(outcome);
        };
        let touched = match event {
            Event::PostToolUse | Event::PostToolUseFailure => {
                let mut touched = self.last_changed.clone();
                if let Some(file) = self.file_tool_target(input)?
                    && !touched.contains(&file)
                {
                    touched.push(file);
                }
                touched
            }
            Event::Stop | Event::SubagentStop => match (self.turn_start, outcome.tree) {
                (Some(start), Some(tree)) => self.checkpoints.changed_paths(start, tree)?,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let tree = outcome.tree.map(|t| t.to_string());
        let mut decisions = self
            .guards
            .decide(event.name(), input, &touched, tree, &self.root)?;
        if outcome.verdict == Verdict::Paused {
            for decision in decisions.iter_mut().filter(|d| d.decision == Kind::Block) {
                decision.decision = Kind::Mark;
                decision.message =
                    format!("not applied (the turn is paused): {}", decision.message);
            }
        }
        if guards::merge(event.name(), &mut outcome.output, &decisions) {
            let verdict = match event {
                Event::Stop | Event::SubagentStop => Verdict::Block,
                _ => Verdict::Deny,
            };
            if outcome.verdict != verdict {
                outcome.engine_verdict = Some(outcome.verdict);
                outcome.verdict = verdict;
            }
        } else if outcome.verdict == Verdict::Quiet
            && outcome
                .output
                .pointer("/hookSpecificOutput/additionalContext")
                .is_some()
        {
            outcome.verdict = Verdict::Context;
        }
        outcome.guards = decisions;
        Ok(outcome)
    }

    /// The project-relative file a Write/Edit/NotebookEdit callback names.
    fn file_tool_target(&self, input: &Value) -> anyhow::Result<Option<String>> {
        let tool = input.get("tool_name").and_then(Value::as_str);
        let (Some(tool), Some(tool_input)) = (tool, input.get("tool_input")) else {
            return Ok(None);
        };
        if !rebuild::FILE_TOOLS.contains(&tool) {
            return Ok(None);
        }
        let path = rebuild::real_target(tool, tool_input, &self.cwd(input)?)?;
        Ok(self.relative(&path))
    }
}
