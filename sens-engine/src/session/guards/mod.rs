//! Guards: mechanisms from the field (docs/guards.md) as parts of the hook session,
//! switched on per condition. After the session has answered a callback, every
//! guard of the set sees the event with the turn's facts ([`Turn`]) and may add
//! to the answer: a note (`additionalContext`), a deny (PreToolUse), a block
//! (Stop/SubagentStop) or a mark (written to the ledger only, e.g. a risk level).
//! Each decision is kept on the callback's ledger line under `guards`, with the
//! guard's name, so the counts and a replay read them from the ledger.
//!
//! A guard never approves anything: a deny or block of the engine stands, a
//! guard's is added to it. A guard that fails fails the callback (the session
//! answers with a deny or block).

pub mod acceptance;
mod command_guard;
mod context;
mod looping;
mod recitation;
mod reviewer_gate;
mod risk;
mod secrets;
mod stop_evidence;
mod turn;

use std::path::Path;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use turn::{Ran, TestCommands, Turn, is_command_prompt};

/// What one guard decided on one callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Text for the agent (`additionalContext`).
    Note,
    /// The tool call is denied (PreToolUse).
    Deny,
    /// The agent may not stop yet (Stop/SubagentStop).
    Block,
    /// Kept in the ledger only; the agent is told nothing.
    Mark,
}

/// One guard decision as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub guard: String,
    pub decision: Kind,
    pub message: String,
}

/// What a guard sees of one callback.
pub struct Seen<'a> {
    /// `hook_event_name`.
    pub event: &'a str,
    pub input: &'a Value,
    /// Project-relative files: for PostToolUse(Failure) those the call changed
    /// (its file tool's target and what the rescan found changed); for
    /// Stop/SubagentStop those changed against the turn's checkpoint; else none.
    pub touched: &'a [String],
    /// The project state the session judged (hex tree id).
    pub tree: Option<String>,
    pub turn: &'a Turn,
    /// What counts as a run of the project's tests.
    pub tests: &'a TestCommands,
    pub root: &'a Path,
}

impl Seen<'_> {
    pub fn tool(&self) -> Option<&str> {
        self.input.get("tool_name").and_then(Value::as_str)
    }

    pub fn tool_input(&self) -> &Value {
        self.input.get("tool_input").unwrap_or(&Value::Null)
    }

    pub fn is_stop(&self) -> bool {
        matches!(self.event, "Stop" | "SubagentStop")
    }

    pub fn is_after_tool(&self) -> bool {
        matches!(self.event, "PostToolUse" | "PostToolUseFailure")
    }
}

/// One guard: its name as conditions write it, and its decisions.
pub trait Guard: Send {
    fn name(&self) -> &'static str;

    /// The guard's decisions on one callback, as `(kind, message)`.
    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>>;
}

/// Every guard name a condition may list, in the order they are documented.
pub const GUARD_NAMES: &[&str] = &[
    "loop",
    "stop-evidence",
    "risk",
    "reviewer-gate",
    "recitation",
    "command-guard",
    "context",
    "secrets",
    "acceptance",
];

/// A guard as a condition names it, with its settings checked: built into a
/// [`Guard`] for each session.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardSpec {
    Loop(looping::Settings),
    StopEvidence(stop_evidence::Settings),
    Risk(risk::Settings),
    ReviewerGate,
    Recitation(recitation::Settings),
    CommandGuard(command_guard::Settings),
    Context(context::Settings),
    Secrets(secrets::Settings),
    Acceptance,
}

impl GuardSpec {
    /// The guard `name` with `settings` (its sub-table, `{}` when none), whose
    /// relative file names are read against `base`. Errors name the guard and the
    /// field; an unknown name lists the known ones.
    pub fn parse(name: &str, settings: Value, base: &Path) -> anyhow::Result<Self> {
        fn read<T: serde::de::DeserializeOwned>(name: &str, settings: Value) -> anyhow::Result<T> {
            serde_json::from_value(settings).with_context(|| format!("settings of guard `{name}`"))
        }
        let spec = match name {
            "loop" => GuardSpec::Loop(read(name, settings)?),
            "stop-evidence" => GuardSpec::StopEvidence(read(name, settings)?),
            "risk" => GuardSpec::Risk(read(name, settings)?),
            "reviewer-gate" => {
                let NoSettings {} = read(name, settings)?;
                GuardSpec::ReviewerGate
            }
            "recitation" => GuardSpec::Recitation(read(name, settings)?),
            "command-guard" => GuardSpec::CommandGuard(read(name, settings)?),
            "context" => GuardSpec::Context(context::Settings::read(read(name, settings)?, base)?),
            "secrets" => GuardSpec::Secrets(read(name, settings)?),
            "acceptance" => {
                let NoSettings {} = read(name, settings)?;
                GuardSpec::Acceptance
            }
            other => bail!(
                "unknown guard `{other}`; known guards: {}",
                GUARD_NAMES.join(", ")
            ),
        };
        spec.check()?;
        Ok(spec)
    }

    /// Patterns and globs compile now, so a bad one stops the batch before
    /// anything runs.
    fn check(&self) -> anyhow::Result<()> {
        if let GuardSpec::StopEvidence(s) = self {
            TestCommands::new(&[], &s.test_patterns)?;
        }
        if *self == GuardSpec::Acceptance {
            return Ok(());
        }
        self.build(&mut None).map(drop)
    }

    /// The guard; `acceptance` takes the project's extractor (there is one).
    fn build(&self, acceptance: &mut Option<Acceptance>) -> anyhow::Result<Box<dyn Guard>> {
        Ok(match self {
            GuardSpec::Loop(s) => Box::new(looping::LoopGuard::new(s)),
            GuardSpec::StopEvidence(_) => Box::new(stop_evidence::StopEvidence::default()),
            GuardSpec::Risk(s) => Box::new(risk::RiskGuard::new(s)?),
            GuardSpec::ReviewerGate => Box::new(reviewer_gate::ReviewerGate),
            GuardSpec::Recitation(s) => Box::new(recitation::Recitation::new(s)),
            GuardSpec::CommandGuard(s) => Box::new(command_guard::CommandGuard::new(s)?),
            GuardSpec::Context(s) => Box::new(context::ContextGuard::new(s)?),
            GuardSpec::Secrets(s) => Box::new(secrets::SecretsGuard::new(s)?),
            GuardSpec::Acceptance => {
                let Acceptance {
                    extractor,
                    checklist,
                } = acceptance
                    .take()
                    .context("guard `acceptance` needs a point extractor, and none was given")?;
                Box::new(acceptance::AcceptanceGuard::new(extractor, checklist))
            }
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoSettings {}

/// What the `acceptance` guard needs from the harness: the extractor (a model
/// call) and where the checklist file is kept.
pub struct Acceptance {
    pub extractor: Box<dyn acceptance::PointExtractor>,
    pub checklist: std::path::PathBuf,
}

/// The guards of one session and the turn's facts they share.
pub struct Guards {
    guards: Vec<Box<dyn Guard>>,
    turn: Turn,
    tests: TestCommands,
}

impl Guards {
    /// The session's guards; `test_commands` are the project's test commands
    /// (the task's or sequence's): they and `stop-evidence`'s `test_patterns`
    /// make a test run. `acceptance` is what the guard of that name needs.
    pub fn new(
        specs: &[GuardSpec],
        test_commands: &[String],
        mut acceptance: Option<Acceptance>,
    ) -> anyhow::Result<Self> {
        let guards = specs
            .iter()
            .map(|spec| spec.build(&mut acceptance))
            .collect::<anyhow::Result<_>>()?;
        let patterns: Vec<String> = specs
            .iter()
            .filter_map(|spec| match spec {
                GuardSpec::StopEvidence(s) => Some(s.test_patterns.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        Ok(Self {
            guards,
            turn: Turn::default(),
            tests: TestCommands::new(test_commands, &patterns)?,
        })
    }

    /// No guard: the engine alone.
    pub fn none() -> Self {
        Self {
            guards: Vec::new(),
            turn: Turn::default(),
            tests: TestCommands::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.guards.is_empty()
    }

    /// Brings the turn's facts up to date with the callback, then asks every
    /// guard, in the condition's order.
    pub fn decide(
        &mut self,
        event: &str,
        input: &Value,
        touched: &[String],
        tree: Option<String>,
        root: &Path,
    ) -> anyhow::Result<Vec<Decision>> {
        if self.guards.is_empty() {
            return Ok(Vec::new());
        }
        self.turn.observe(event, input, touched, &self.tests);
        let seen = Seen {
            event,
            input,
            touched,
            tree,
            turn: &self.turn,
            tests: &self.tests,
            root,
        };
        let mut decisions = Vec::new();
        for guard in &mut self.guards {
            for (kind, message) in guard.decide(&seen)? {
                decisions.push(Decision {
                    guard: guard.name().to_string(),
                    decision: kind,
                    message,
                });
            }
        }
        Ok(decisions)
    }
}

/// The session's answer with the guards' decisions added: notes become
/// `additionalContext` (after the engine's own), a deny or block replaces an
/// allow or pass, and joins an engine deny or block as a further reason. A
/// Stop takes no notes: there `additionalContext` would continue the turn.
/// Returns whether the guards objected (denied or blocked).
pub fn merge(event: &str, output: &mut Value, decisions: &[Decision]) -> bool {
    let texts = |kind: Kind| -> Option<String> {
        let texts: Vec<&str> = decisions
            .iter()
            .filter(|d| d.decision == kind)
            .map(|d| d.message.as_str())
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n\n"))
    };
    let stop = matches!(event, "Stop" | "SubagentStop");
    let objection = texts(if stop { Kind::Block } else { Kind::Deny });
    if let Some(reason) = &objection {
        let field = if stop {
            "/reason"
        } else {
            "/hookSpecificOutput/permissionDecisionReason"
        };
        match output.pointer_mut(field) {
            Some(Value::String(existing)) => {
                existing.push_str("\n\n");
                existing.push_str(reason);
            }
            _ if stop => *output = json!({"decision": "block", "reason": reason}),
            _ => *output = super::deny(reason),
        }
    }
    if let Some(note) = texts(Kind::Note).filter(|_| accepts_context(event))
        && let Some(object) = output.as_object_mut()
    {
        let specific = object
            .entry("hookSpecificOutput")
            .or_insert_with(|| json!({"hookEventName": event}));
        let text = match specific.get("additionalContext").and_then(Value::as_str) {
            Some(existing) => format!("{existing}\n\n{note}"),
            None => note,
        };
        specific["additionalContext"] = Value::String(text);
    }
    objection.is_some()
}

/// Events whose `hookSpecificOutput` takes `additionalContext` (and does not
/// continue a turn with it).
fn accepts_context(event: &str) -> bool {
    matches!(
        event,
        "UserPromptSubmit" | "PreToolUse" | "PostToolUse" | "PostToolUseFailure"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recitation(every: u64) -> Guards {
        let settings = json!({"every": every, "constraints": "Never edit tests/."});
        let spec = GuardSpec::parse("recitation", settings, Path::new(".")).unwrap();
        Guards::new(&[spec], &[], None).unwrap()
    }

    fn decide(guards: &mut Guards, input: Value) -> Vec<Decision> {
        let event = input["hook_event_name"].as_str().unwrap_or("").to_string();
        guards
            .decide(&event, &input, &[], None, Path::new("/ws"))
            .unwrap()
    }

    #[test]
    fn a_compaction_arms_the_recitation_for_the_next_callback_that_takes_context() {
        let mut guards = recitation(50);
        let prompt = format!("Add total(items). {}", "x".repeat(3000));
        decide(
            &mut guards,
            json!({"hook_event_name": "UserPromptSubmit", "prompt": prompt}),
        );
        // As the pinned CLI's schema has it: `trigger`, `custom_instructions`.
        let compact = json!({
            "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/ws",
            "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": null,
        });
        let armed = decide(&mut guards, compact);
        assert_eq!(armed[0].decision, Kind::Mark);
        let mut output = json!({});
        assert!(!merge("PreCompact", &mut output, &armed));
        assert_eq!(output, json!({}));
        let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}});
        let recited = decide(&mut guards, post.clone());
        assert_eq!(recited.len(), 1);
        let text = &recited[0].message;
        assert!(text.contains("Add total(items).") && text.contains("Never edit tests/."));
        let recited_chars = text.matches('x').count();
        assert_eq!(
            recited_chars,
            2000 - "Add total(items). ".len(),
            "the first 2,000 characters"
        );
        let mut output = json!({});
        merge("PostToolUse", &mut output, &recited);
        let context = output["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.contains("Add total(items)."));
        assert!(decide(&mut guards, post).is_empty(), "recited once");
    }

    #[test]
    fn guards_add_to_the_engines_answer_and_never_replace_its_objection() {
        let decision = |kind, message: &str| Decision {
            guard: "g".into(),
            decision: kind,
            message: message.into(),
        };
        let mut denied = super::super::deny("copies parse_amount");
        assert!(merge(
            "PreToolUse",
            &mut denied,
            &[decision(Kind::Deny, "no force-push")]
        ));
        let reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert_eq!(reason, "copies parse_amount\n\nno force-push");
        let mut allowed = json!({});
        assert!(merge(
            "Stop",
            &mut allowed,
            &[decision(Kind::Block, "run the tests")]
        ));
        assert_eq!(
            allowed,
            json!({"decision": "block", "reason": "run the tests"})
        );
        let mut quiet = json!({});
        assert!(!merge(
            "Stop",
            &mut quiet,
            &[decision(Kind::Note, "would continue the turn")]
        ));
        assert_eq!(quiet, json!({}));
    }
}
