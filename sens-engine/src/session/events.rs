//! Each hook event's answer: the prompt (checkpoint and suggestions), a tool
//! call about to run (a file write or a command), a tool that ran (the rescan),
//! and a Stop (the audit, with its failing rounds).

use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};

use super::findings::{blocking_of, describe_all, same_finding};
use super::input::{agent_key, str_field};
use super::ledger::Verdict;
use super::messages::{
    deny, protected_reason, reuse_context, specific_output, suggestions_context,
};
use super::{Event, Outcome, Session, guards, protect, rebuild, shell};
use crate::finding::Finding;

impl Session {
    pub(super) fn on_prompt(&mut self, input: &Value) -> anyhow::Result<Outcome> {
        let prompt = str_field(input, "prompt")?;
        // Findings from edits made between turns are left to the Stop audit; the
        // rescan only brings the index up to date for the suggestions.
        let tree = self.look_with_rescan()?.0;
        let checkpoint = self.checkpoints.checkpoint(tree)?;
        if self.approved.is_none() {
            self.checkpoints.mark_approved(&checkpoint)?;
            self.approved = Some(checkpoint);
        }
        if self.turn_start.is_none() || !guards::is_command_prompt(prompt) {
            self.turn_start = Some(tree);
        }
        self.stop_rounds.clear();
        let suggestions = match &mut self.judge {
            Some(judge) => {
                judge.note_prompt(prompt);
                if self.options.suggestions {
                    judge.suggest(prompt)?
                } else {
                    Vec::new()
                }
            }
            None => Vec::new(),
        };
        let mut outcome = if suggestions.is_empty() {
            Outcome::new(Verdict::Quiet, json!({}), Some(tree))
        } else {
            let context = suggestions_context(&suggestions);
            Outcome::new(
                Verdict::Context,
                specific_output("UserPromptSubmit", "additionalContext", &context),
                Some(tree),
            )
        };
        outcome.suggestions = suggestions;
        Ok(outcome)
    }

    pub(super) fn on_pre_tool(&mut self, input: &Value) -> anyhow::Result<Outcome> {
        let tool = str_field(input, "tool_name")?;
        let tool_input = input
            .get("tool_input")
            .filter(|v| v.is_object())
            .context("PreToolUse input has no `tool_input` object")?;
        let cwd = self.cwd(input)?;
        if self.judge.is_none() {
            Ok(Outcome::new(Verdict::Allow, json!({}), self.judged_tree()?))
        } else if rebuild::FILE_TOOLS.contains(&tool) {
            self.on_file_write(tool, tool_input, &cwd)
        } else if tool == "Bash" {
            self.on_bash(tool_input, &cwd)
        } else {
            Ok(Outcome::new(Verdict::Allow, json!({}), self.judged_tree()?))
        }
    }

    fn on_file_write(
        &mut self,
        tool: &str,
        tool_input: &Value,
        cwd: &Path,
    ) -> anyhow::Result<Outcome> {
        let spelled = rebuild::spelled_target(tool, tool_input)?;
        let tree = self.judged_tree()?;
        if let Some(reached) = protect::written_protected(cwd, spelled, &self.root) {
            return Ok(Outcome::new(
                Verdict::Deny,
                deny(&protected_reason(&[reached])),
                tree,
            ));
        }
        // Judged as the file it reaches: a link out of the project is outside.
        let path = rebuild::real_target(tool, tool_input, cwd)?;
        let Some(relative) = self.relative(&path) else {
            // Outside the project: not code the engine judges.
            return Ok(Outcome::new(Verdict::Allow, json!({}), tree));
        };
        let content = rebuild::content_after(tool, tool_input, &path)?;
        let findings = match &mut self.judge {
            Some(judge) => judge.check_write(Path::new(&relative), &content)?,
            None => Vec::new(),
        };
        let (blocking, hints): (Vec<&Finding>, Vec<&Finding>) =
            findings.iter().partition(|f| f.blocks);
        let outcome = if !blocking.is_empty() {
            let reason = format!(
                "Sens denied this {tool} of {relative}: it copies code the project already has.\n{}\n\
                 Reuse what exists: call it, or extract it once and call it from both places. \
                 Writing the same code through another tool is caught as well.",
                describe_all(&blocking)
            );
            Outcome::new(Verdict::Deny, deny(&reason), tree)
        } else if !hints.is_empty() {
            let context = format!(
                "Sens: this write resembles existing code (not blocking):\n{}",
                describe_all(&hints)
            );
            Outcome::new(
                Verdict::Allow,
                specific_output("PreToolUse", "additionalContext", &context),
                tree,
            )
        } else {
            Outcome::new(Verdict::Allow, json!({}), tree)
        };
        Ok(outcome.with_findings(findings))
    }

    fn on_bash(&mut self, tool_input: &Value, cwd: &Path) -> anyhow::Result<Outcome> {
        let command = str_field(tool_input, "command")?;
        let analysis = shell::analyze(command, cwd, &self.root)?;
        if !analysis.protected_writes.is_empty() {
            let tree = self.judged_tree()?;
            return Ok(Outcome::new(
                Verdict::Deny,
                deny(&protected_reason(&analysis.protected_writes)),
                tree,
            ));
        }
        if analysis.turn_ending.is_empty() {
            return Ok(Outcome::new(Verdict::Allow, json!({}), self.judged_tree()?));
        }
        let (tree, findings) = self.audit()?;
        let blocking = blocking_of(&findings, &self.pending);
        if blocking.is_empty() {
            self.approve(tree)?;
            return Ok(Outcome::new(Verdict::Allow, json!({}), Some(tree)).with_findings(findings));
        }
        let reason = format!(
            "Sens refused `{}`: the change since the last approved state fails the audit.\n{}\n\
             Fix these first (reuse what exists instead of copying it), then commit.",
            analysis.turn_ending.join("`, `"),
            describe_all(&blocking)
        );
        Ok(Outcome::new(Verdict::Deny, deny(&reason), Some(tree)).with_findings(findings))
    }

    pub(super) fn on_post_tool(&mut self, event: Event) -> anyhow::Result<Outcome> {
        let previous = self.last_look;
        let (tree, mut findings) = self.look_with_rescan()?;
        if self.judge.is_none() {
            return Ok(Outcome::new(Verdict::Quiet, json!({}), Some(tree)));
        }
        if let Some(approved) = self.approved {
            findings.extend(self.protected_changes(approved.tree, tree)?);
        }
        let mut notes = self.reuse_notes(previous, tree)?;
        crate::reuse::drop_copied(&mut notes, &findings);
        let fresh: Vec<Finding> = findings
            .iter()
            .filter(|f| f.blocks && !self.pending.iter().any(|p| same_finding(p, f)))
            .cloned()
            .collect();
        let mut parts = Vec::new();
        if !fresh.is_empty() {
            parts.push(format!(
                "Sens found changes on disk that the turn cannot end with:\n{}\n\
                 Replace a copy with a call to the existing code before you finish; \
                 the turn cannot end while they stand.",
                describe_all(&fresh.iter().collect::<Vec<_>>())
            ));
        }
        if !notes.is_empty() {
            parts.push(reuse_context(&notes));
        }
        findings.extend(notes);
        if parts.is_empty() {
            return Ok(Outcome::new(Verdict::Quiet, json!({}), Some(tree)).with_findings(findings));
        }
        self.pending.extend(fresh);
        Ok(Outcome::new(
            Verdict::Context,
            specific_output(event.name(), "additionalContext", &parts.join("\n\n")),
            Some(tree),
        )
        .with_findings(findings))
    }

    /// The re-implementation notes for what changed from the previous rescan's
    /// tree to `tree` (nothing before the first rescan).
    fn reuse_notes(
        &self,
        previous: Option<git2::Oid>,
        tree: git2::Oid,
    ) -> anyhow::Result<Vec<Finding>> {
        let (Some(judge), Some(previous)) = (&self.judge, previous.filter(|p| *p != tree)) else {
            return Ok(Vec::new());
        };
        let changes = self.checkpoints.changes(previous, tree)?;
        judge.reuse_notes(&changes)
    }

    pub(super) fn on_stop(&mut self, event: Event, input: &Value) -> anyhow::Result<Outcome> {
        if self.judge.is_none() {
            let tree = self.look_without_rescan()?;
            return Ok(Outcome::new(Verdict::Pass, json!({}), Some(tree)));
        }
        let (tree, findings) = self.audit()?;
        let blocking = blocking_of(&findings, &self.pending);
        if blocking.is_empty() {
            if let Some(outcome) = self.review_at_stop(event, input, tree, &findings)? {
                return Ok(outcome.with_findings(findings));
            }
            self.approve(tree)?;
            self.stop_rounds.remove(&agent_key(input));
            return Ok(Outcome::new(Verdict::Pass, json!({}), Some(tree)).with_findings(findings));
        }
        let reason = format!(
            "Sens audit of the change since the last approved state:\n{}\n\
             Reuse what exists instead of copying it (call it, or extract it once), \
             remove what nothing uses, then finish.",
            describe_all(&blocking)
        );
        let (verdict, output) = self.failed_round(event, input, reason);
        Ok(Outcome::new(verdict, output, Some(tree)).with_findings(findings))
    }

    /// Counts a failing Stop round: a block while rounds remain, then a pause
    /// that lets the agent stop with nothing approved.
    pub(super) fn failed_round(
        &mut self,
        event: Event,
        input: &Value,
        reason: String,
    ) -> (Verdict, Value) {
        let rounds = self.stop_rounds.entry(agent_key(input)).or_insert(0);
        *rounds += 1;
        let rounds = *rounds;
        if rounds < self.options.max_stop_rounds {
            return (
                Verdict::Block,
                json!({"decision": "block", "reason": reason}),
            );
        }
        self.awaiting_human = true;
        let mut message = format!(
            "Sens: the {} audit failed {rounds} times in this turn; the turn is paused, awaiting \
             a human decision. Nothing was approved.\n{reason}",
            event.name()
        );
        if let Some(decide) = self.options.human_decision.clone() {
            let unapproved = self
                .unapproved_paths()
                .map(|paths| paths.join(", "))
                .unwrap_or_else(|e| format!("(cannot list them: {e:#})"));
            message.push_str(&format!(
                "\nUnapproved since the last approved state: {unapproved}.\n{decide}"
            ));
        }
        (Verdict::Paused, json!({"systemMessage": message}))
    }
}
