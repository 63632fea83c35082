//! Answering hook callbacks: the registrations the CLI is given, one callback
//! dispatched to its event, an engine failure answered without approving, and
//! every answer written to the ledger.

use std::time::Instant;

use anyhow::bail;
use git2::Oid;
use serde_json::{Value, json};

use super::ledger::{self, Entry, Verdict};
use super::messages::deny;
use super::{Event, Outcome, Session};

impl Session {
    /// The `hooks` object of the CLI's `initialize` request: every event the
    /// engine answers, for every tool (matcher `null`).
    pub fn hook_registrations(&self) -> Value {
        let mut hooks = serde_json::Map::new();
        let guarded = !self.guards.is_empty();
        for event in Event::ALL
            .into_iter()
            .filter(|e| guarded || *e != Event::PreCompact)
        {
            hooks.insert(
                event.name().to_string(),
                json!([{
                    "matcher": null,
                    "hookCallbackIds": [event.callback_id()],
                    "timeout": self.options.hook_timeout_secs,
                }]),
            );
        }
        Value::Object(hooks)
    }

    /// The hook events the engine answers, by the CLI's names.
    pub fn event_names() -> impl Iterator<Item = &'static str> {
        Event::ALL.into_iter().map(Event::name)
    }

    /// Answers a hook input by its own `hook_event_name`, for callers without
    /// callback ids (command hooks). Never fails, as [`Session::handle`].
    pub fn handle_input(&mut self, input: &Value) -> Value {
        let callback_id = input
            .get("hook_event_name")
            .and_then(Value::as_str)
            .and_then(Event::from_name)
            .map(Event::callback_id)
            .unwrap_or_default();
        self.handle(&callback_id, input)
    }

    /// Answers one hook callback. Never fails: see the module documentation.
    pub fn handle(&mut self, callback_id: &str, input: &Value) -> Value {
        let started = Instant::now();
        let approved_before = self.approved.map(|c| c.tree);
        let event = input
            .get("hook_event_name")
            .and_then(Value::as_str)
            .and_then(Event::from_name)
            .or_else(|| Event::from_callback_id(callback_id));
        let decided = self
            .dispatch(event, callback_id, input)
            .and_then(|outcome| self.guard(event, input, outcome));
        let outcome = match decided {
            Ok(outcome) => outcome,
            Err(e) => self.failure(event, input, &format!("{e:#}")),
        };
        let event_name = event.map_or("unknown", Event::name);
        match self.write_ledger(event_name, input, approved_before, &outcome, started) {
            Ok(()) => outcome.output,
            Err(e) => {
                let message = format!("{e:#}");
                eprintln!("sens: {message}");
                self.failure(event, input, &message).output
            }
        }
    }

    pub(super) fn write_ledger(
        &mut self,
        event: &str,
        input: &Value,
        approved_tree: Option<Oid>,
        outcome: &Outcome,
        started: Instant,
    ) -> anyhow::Result<()> {
        let entry = Entry {
            seq: self.ledger.next_seq(),
            event,
            tool: input.get("tool_name").and_then(Value::as_str),
            agent_id: input.get("agent_id").and_then(Value::as_str),
            input_digest: ledger::digest(input),
            rules_digest: &self.options.rules_digest,
            tree_before: outcome.tree.map(|t| t.to_string()),
            approved_tree: approved_tree.map(|t| t.to_string()),
            verdict: outcome.verdict,
            engine_verdict: outcome.engine_verdict,
            guards_only: self.judge.is_none(),
            findings: &outcome.findings,
            suggestions: &outcome.suggestions,
            guards: &outcome.guards,
            error: outcome.error.as_deref(),
            review: outcome.review.as_ref(),
            latency_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            output: &outcome.output,
            input,
        };
        self.ledger.append(&entry)
    }

    fn dispatch(
        &mut self,
        event: Option<Event>,
        callback_id: &str,
        input: &Value,
    ) -> anyhow::Result<Outcome> {
        let Some(event) = event else {
            bail!("callback `{callback_id}` names no event this engine registered");
        };
        if Event::from_callback_id(callback_id) != Some(event) {
            bail!(
                "callback `{callback_id}` was registered for another event than {}",
                event.name()
            );
        }
        match event {
            Event::UserPromptSubmit => self.on_prompt(input),
            Event::PreToolUse => self.on_pre_tool(input),
            Event::PostToolUse | Event::PostToolUseFailure => self.on_post_tool(event),
            Event::Stop | Event::SubagentStop => self.on_stop(event, input),
            Event::PreCompact => Ok(Outcome::new(Verdict::Quiet, json!({}), self.last_look)),
        }
    }

    /// The answer when the engine failed: never an approval.
    fn failure(&mut self, event: Option<Event>, input: &Value, error: &str) -> Outcome {
        let output = match event {
            Some(Event::PreToolUse) => deny(&format!(
                "Sens could not judge this tool call, so it was not run (engine failure: {error}). \
                 Retry it; if it keeps failing, stop and tell the user."
            )),
            Some(event @ (Event::Stop | Event::SubagentStop)) => {
                let reason = format!(
                    "Sens could not audit the change (engine failure: {error}). Nothing was approved."
                );
                self.failed_round(event, input, reason).1
            }
            _ => json!({}),
        };
        let mut outcome = Outcome::new(Verdict::Error, output, self.last_look);
        outcome.error = Some(error.to_string());
        outcome
    }
}
