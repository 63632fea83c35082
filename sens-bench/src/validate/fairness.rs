//! Fair to correct work (docs/contract.md, "Validation"): a task's own reference solution
//! must pass the engine. `validate` plays the reference under the engine's hook session
//! the way the oracle does under C2, without the CLI: the task's prompt, a PreToolUse for
//! every tool call of the oracle's scenario (each Write with the file's whole new
//! content), the patch applied, one PostToolUse rescan, and a Stop. Every denial, block
//! or pause is an unjust decision by construction, reported with its rule; the task is
//! invalid then. The prompt gets no suggestions: they decide nothing, and ranking them
//! would embed every symbol.

use std::path::Path;

use anyhow::{Context, bail};
use sens_engine::session::Session;
use serde_json::{Value, json};

use crate::agent::engine::{HandlerOptions, engine_handler};
use crate::agent::oracle::oracle_script;
use crate::agent::script::Block;

/// A session playing one reference, started before the patch is applied.
pub struct FairPlay {
    session: Session,
    root: String,
    _ledger: tempfile::TempDir,
    unjust: Vec<String>,
}

impl FairPlay {
    /// [`FairPlay::start`] with the task's prompt, reference and test command.
    pub fn for_task(root: &Path, task: &crate::spec::task::Task) -> anyhow::Result<Self> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
        };
        let prompt = read(&task.prompt)?;
        let patch = read(&task.reference)?;
        Self::start(root, &prompt, &patch, &task.commands.test)
    }

    /// Starts the engine on `root` (the start state, after set-up), sends the
    /// prompt, and judges every tool call the oracle would make for `patch`.
    pub fn start(root: &Path, prompt: &str, patch: &str, test: &str) -> anyhow::Result<Self> {
        let script = oracle_script(root, patch, test)?;
        let ledger = tempfile::Builder::new()
            .prefix("sens-fairness-")
            .tempdir()
            .context("creating a folder for the fairness check's ledger")?;
        let session = engine_handler(
            root,
            &ledger.path().join(crate::measure::ledger::LEDGER_FILE),
            HandlerOptions {
                without_suggestions: true,
                ..HandlerOptions::default()
            },
        )?;
        let mut play = Self {
            session,
            root: root.display().to_string(),
            _ledger: ledger,
            unjust: Vec::new(),
        };
        play.send("UserPromptSubmit", json!({"prompt": prompt}))?;
        for block in script.main.iter().flat_map(|turn| &turn.blocks) {
            if let Block::ToolUse { name, input } = block {
                play.send(
                    "PreToolUse",
                    json!({"tool_name": name, "tool_input": input}),
                )?;
            }
        }
        Ok(play)
    }

    /// After the patch is on disk: the rescan and the Stop audit. `Ok` when the
    /// engine objected to nothing, else an error naming each unjust decision.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.send(
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {}, "tool_response": {}}),
        )?;
        self.send("Stop", json!({"stop_hook_active": false}))?;
        if self.unjust.is_empty() {
            return Ok(());
        }
        bail!(
            "the engine objects to the reference solution: {}",
            self.unjust.join("; ")
        )
    }

    fn send(&mut self, event: &str, mut input: Value) -> anyhow::Result<()> {
        input["hook_event_name"] = json!(event);
        input["cwd"] = json!(self.root);
        input["session_id"] = json!("fairness");
        let callback = callback_id(&self.session.hook_registrations(), event)?;
        let output = self.session.handle(&callback, &input);
        if let Some(objection) = objection(event, &output) {
            self.unjust.push(objection);
        }
        Ok(())
    }
}

/// The callback id the session registered for `event`.
fn callback_id(registrations: &Value, event: &str) -> anyhow::Result<String> {
    registrations[event][0]["hookCallbackIds"][0]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("the engine registers no callback for {event}"))
}

/// What an answer objects to: a deny, a block, a pause or new blocking findings
/// after a tool, with the reason the agent would read (it names the rules).
fn objection(event: &str, output: &Value) -> Option<String> {
    let specific = &output["hookSpecificOutput"];
    let reason = if specific["permissionDecision"] == "deny" {
        specific["permissionDecisionReason"].as_str()
    } else if output["decision"] == "block" {
        output["reason"].as_str()
    } else if event == "PostToolUse" {
        specific["additionalContext"].as_str()
    } else {
        output["systemMessage"].as_str()
    }?;
    Some(format!("{event}: {}", reason.replace('\n', " ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_blocks_pauses_and_pending_findings_are_objections() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "a (copy.exact)"}});
        assert_eq!(
            objection("PreToolUse", &deny).as_deref(),
            Some("PreToolUse: a (copy.exact)")
        );
        let block = json!({"decision": "block", "reason": "x (orphan)\ny"});
        assert_eq!(
            objection("Stop", &block).as_deref(),
            Some("Stop: x (orphan) y")
        );
        let paused = json!({"systemMessage": "paused (orphan)"});
        assert!(objection("Stop", &paused).is_some());
        let pending = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
            "additionalContext": "copies (copy.near)"}});
        assert!(objection("PostToolUse", &pending).is_some());
        let hint = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "additionalContext": "resembles"}});
        assert_eq!(objection("PreToolUse", &hint), None);
        assert_eq!(objection("Stop", &json!({})), None);
    }
}
