//! Guards: mechanisms from the field (SPEC 7) as parts of the hook session,
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

mod command_guard;
mod context;
mod looping;
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
    "command-guard",
    "context",
    "secrets",
];

/// A guard as a condition names it, with its settings checked: built into a
/// [`Guard`] for each session.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardSpec {
    Loop(looping::Settings),
    StopEvidence(stop_evidence::Settings),
    Risk(risk::Settings),
    ReviewerGate,
    CommandGuard(command_guard::Settings),
    Context(context::Settings),
    Secrets(secrets::Settings),
}

impl GuardSpec {
    /// The guard `name` with `settings` (its sub-table, `{}` when none), whose
    /// relative file names are read against `base`. Errors name the guard and the
    /// field; an unknown name lists the known ones.
    pub fn parse(name: &str, settings: Value, base: &Path) -> anyhow::Result<Self> {
        fn read<T: serde::de::DeserializeOwned>(name: &str, settings: Value) -> anyhow::Result<T> {
            serde_json::from_value(settings)
                .with_context(|| format!("settings of guard `{name}`"))
        }
        let spec = match name {
            "loop" => GuardSpec::Loop(read(name, settings)?),
            "stop-evidence" => GuardSpec::StopEvidence(read(name, settings)?),
            "risk" => GuardSpec::Risk(read(name, settings)?),
            "reviewer-gate" => {
                let NoSettings {} = read(name, settings)?;
                GuardSpec::ReviewerGate
            }
            "command-guard" => GuardSpec::CommandGuard(read(name, settings)?),
            "context" => GuardSpec::Context(context::Settings::read(read(name, settings)?, base)?),
            "secrets" => GuardSpec::Secrets(read(name, settings)?),
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
        self.build().map(drop)
    }

    fn build(&self) -> anyhow::Result<Box<dyn Guard>> {
        Ok(match self {
            GuardSpec::Loop(s) => Box::new(looping::LoopGuard::new(s)),
            GuardSpec::StopEvidence(_) => Box::new(stop_evidence::StopEvidence::default()),
            GuardSpec::Risk(s) => Box::new(risk::RiskGuard::new(s)?),
            GuardSpec::ReviewerGate => Box::new(reviewer_gate::ReviewerGate),
            GuardSpec::CommandGuard(s) => Box::new(command_guard::CommandGuard::new(s)?),
            GuardSpec::Context(s) => Box::new(context::ContextGuard::new(s)?),
            GuardSpec::Secrets(s) => Box::new(secrets::SecretsGuard::new(s)?),
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoSettings {}

/// The guards of one session and the turn's facts they share.
pub struct Guards {
    guards: Vec<Box<dyn Guard>>,
    turn: Turn,
    tests: TestCommands,
}

impl Guards {
    /// The session's guards; `test_commands` are the project's test commands
    /// (the task's or sequence's): they and `stop-evidence`'s `test_patterns`
    /// make a test run.
    pub fn new(specs: &[GuardSpec], test_commands: &[String]) -> anyhow::Result<Self> {
        let guards = specs
            .iter()
            .map(GuardSpec::build)
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
    if let Some(note) = texts(Kind::Note).filter(|_| accepts_context(event)) {
        if let Some(object) = output.as_object_mut() {
            let specific = object
                .entry("hookSpecificOutput")
                .or_insert_with(|| json!({"hookEventName": event}));
            let text = match specific.get("additionalContext").and_then(Value::as_str) {
                Some(existing) => format!("{existing}\n\n{note}"),
                None => note,
            };
            specific["additionalContext"] = Value::String(text);
        }
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
