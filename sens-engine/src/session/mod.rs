//! The hook session (docs/contract.md, "The hook session"): hook inputs in, hook outputs
//! out, with the approval state, checkpoints and the ledger around a `Judge`.
//!
//! Invariant: a change is unapproved from the moment it exists; only a passing
//! audit or a human approves it. The approved point is the first checkpoint of
//! the session, then the state of every passing audit. `handle` never returns an
//! error: an internal failure is answered with a deny (PreToolUse) or a block
//! (Stop), never an approval, and is written to the ledger.
//!
//! Guards ([`guards`]) add their decisions to every answer. A session without
//! a judge ([`Session::guards_only`]) runs the guards alone: no copy rules, no
//! protected paths, no audit; every Stop passes unless a guard blocks it.

//!
//! `impl Session` is split by concern over the files of this folder: opening
//! (here), answering callbacks (`hooks`), each event's answer (`events`), the
//! guards' part (`guarding`), the human's decisions (`human`), the query tools
//! (`tools`), the approval state and snapshots (`state`), reading hook inputs
//! (`input`); the findings it reports (`findings`) and the hook outputs it writes
//! (`messages`) are their own files.

pub mod checkpoint;
pub mod guards;
pub mod ledger;
pub mod protect;
pub mod rebuild;
pub mod review;
pub mod shell;

mod events;
mod findings;
mod guarding;
mod hooks;
mod human;
mod input;
mod messages;
mod state;
mod tools;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use git2::Oid;
use serde_json::Value;

use crate::finding::{Finding, Suggestion};
use crate::judge::Judge;
use checkpoint::{Checkpoint, Checkpoints};
use guards::{Decision, Guards};
use ledger::{Ledger, Verdict};
use protect::is_protected;

pub(crate) use findings::{protected_finding, same_finding};
use input::agent_key;
use messages::{deny, specific_output};

/// The rule id of a finding that one of the engine's paths changed.
pub const PROTECTED_RULE: &str = "protected";
/// The ledger event of a query tool's call (see [`Session::call_tool`]).
pub const TOOL_CALL_EVENT: &str = "ToolCall";
/// Failing Stop rounds in one turn before the agent may stop, paused.
pub const DEFAULT_MAX_STOP_ROUNDS: u32 = 3;
/// Seconds the CLI waits for an answer before it cancels (and blocks the tool).
pub const DEFAULT_HOOK_TIMEOUT_SECS: u32 = 60;

#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Where the hook ledger is appended (one JSON line per callback, see `ledger`).
    pub ledger: PathBuf,
    pub hook_timeout_secs: u32,
    pub max_stop_rounds: u32,
    /// `RuleConfig::digest` of the judge's rules, written on every ledger line so
    /// a replay knows which rules made each decision (default: the defaults').
    pub rules_digest: String,
    /// Serve the engine's query tools ([`crate::tools`]) to the agent as the MCP
    /// server [`crate::mcp::SERVER_NAME`] (condition option `mcp_tools`).
    pub tools: bool,
    /// How a human decides a paused turn (the commands to run). When set, a
    /// pause also lists the files that differ from the approved point.
    pub human_decision: Option<String>,
    /// The reviewer asked at Stop after the change rules pass (`None`: no review).
    pub review: Option<review::ReviewOptions>,
    /// Patterns (gitignore syntax) that hide files from the snapshots besides
    /// HEAD's `.gitignore` files: a harness's own exclusions, such as what its
    /// set-up created (docs/integrity.md, "Ignore rules that count").
    pub excluded: Vec<String>,
    /// Give the agent the suggestions at each prompt. Off where only the
    /// decisions count (the bench's fairness check): no symbol is embedded then.
    pub suggestions: bool,
}

impl SessionOptions {
    pub fn new(ledger: PathBuf) -> Self {
        Self {
            ledger,
            rules_digest: crate::config::RuleConfig::default().digest(),
            hook_timeout_secs: DEFAULT_HOOK_TIMEOUT_SECS,
            max_stop_rounds: DEFAULT_MAX_STOP_ROUNDS,
            tools: false,
            human_decision: None,
            review: None,
            excluded: Vec::new(),
            suggestions: true,
        }
    }
}

/// The hook events the engine registers, one callback id each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    /// A tool that failed (a Bash command exiting non-zero) may still have
    /// changed files, so it is rescanned like PostToolUse.
    PostToolUseFailure,
    Stop,
    SubagentStop,
    /// Registered only when guards run: the engine itself has nothing to say.
    PreCompact,
}

impl Event {
    const ALL: [Event; 7] = [
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Stop,
        Event::SubagentStop,
        Event::PreCompact,
    ];

    fn name(self) -> &'static str {
        match self {
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Stop => "Stop",
            Event::SubagentStop => "SubagentStop",
            Event::PreCompact => "PreCompact",
        }
    }

    fn callback_id(self) -> String {
        format!("sens_{}", self.name())
    }

    fn from_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    fn from_callback_id(id: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.callback_id() == id)
    }
}

/// What one callback decided, before it is written to the ledger.
struct Outcome {
    verdict: Verdict,
    output: Value,
    findings: Vec<Finding>,
    suggestions: Vec<Suggestion>,
    guards: Vec<Decision>,
    /// The engine's verdict when the guards changed it.
    engine_verdict: Option<Verdict>,
    tree: Option<Oid>,
    error: Option<String>,
    review: Option<review::ReviewRecord>,
}

impl Outcome {
    fn new(verdict: Verdict, output: Value, tree: Option<Oid>) -> Self {
        Self {
            verdict,
            output,
            findings: Vec::new(),
            suggestions: Vec::new(),
            guards: Vec::new(),
            engine_verdict: None,
            tree,
            error: None,
            review: None,
        }
    }

    fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self
    }
}

pub struct Session {
    root: PathBuf,
    /// The root as the file system spells it, for tool paths given that way.
    canonical_root: PathBuf,
    /// `None`: the guards alone, without the engine's copy rules.
    judge: Option<Box<dyn Judge>>,
    guards: Guards,
    checkpoints: Checkpoints,
    ledger: Ledger,
    options: SessionOptions,
    approved: Option<Checkpoint>,
    /// The tree of the last rescan: the state the judge's index holds.
    last_look: Option<Oid>,
    /// Blocking findings seen after tools ran, not yet resolved.
    pending: Vec<Finding>,
    /// Failing Stop rounds in this turn, per agent (`None` is the main agent).
    stop_rounds: HashMap<Option<String>, u32>,
    awaiting_human: bool,
    /// The tree at the turn's UserPromptSubmit: what a Stop's changes are against.
    turn_start: Option<Oid>,
    /// Files the last rescan found changed since the one before.
    last_changed: Vec<String>,
}

impl Session {
    /// A session for the git repository at `root`; the ledger is opened now.
    pub fn new(
        root: &Path,
        judge: Box<dyn Judge>,
        options: SessionOptions,
    ) -> anyhow::Result<Self> {
        Self::open(root, Some(judge), Guards::none(), options)
    }

    /// A session that runs the guards alone (no copy rules, see the module
    /// documentation).
    pub fn guards_only(
        root: &Path,
        guards: Guards,
        options: SessionOptions,
    ) -> anyhow::Result<Self> {
        Self::open(root, None, guards, options)
    }

    /// The session with `guards` added to its answers.
    pub fn with_guards(mut self, guards: Guards) -> Self {
        self.guards = guards;
        self
    }

    fn open(
        root: &Path,
        judge: Option<Box<dyn Judge>>,
        guards: Guards,
        options: SessionOptions,
    ) -> anyhow::Result<Self> {
        let ignores = crate::ignores::Ignores::of_head(root, &options.excluded)?;
        let checkpoints = Checkpoints::open_with(root, ignores)?;
        let canonical_root = root
            .canonicalize()
            .with_context(|| format!("resolving the project root {}", root.display()))?;
        let cwd = std::env::current_dir().context("reading the current folder")?;
        let ledger_path = protect::normalize(&cwd, &options.ledger);
        let inside = [root, canonical_root.as_path()]
            .iter()
            .any(|r| ledger_path.starts_with(protect::normalize(&cwd, r)));
        if inside && !is_protected(&ledger_path) {
            bail!(
                "the hook ledger {} is inside the project {}: every callback would change the \
                 project the engine audits; put it outside the project or under .sens/",
                options.ledger.display(),
                root.display()
            );
        }
        let ledger = Ledger::open(&options.ledger)?;
        if ledger.torn_bytes() > 0 {
            eprintln!(
                "sens: the hook ledger {} ended in a torn line ({} bytes, from a writer that \
                 died mid-line); it was ended there, and the next decision starts a line of its own",
                options.ledger.display(),
                ledger.torn_bytes()
            );
        }
        Ok(Self {
            root: root.to_path_buf(),
            canonical_root,
            judge,
            guards,
            checkpoints,
            ledger,
            options,
            approved: None,
            last_look: None,
            pending: Vec::new(),
            stop_rounds: HashMap::new(),
            awaiting_human: false,
            turn_start: None,
            last_changed: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_can_move_to_another_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Session>();
    }

    #[test]
    fn callback_ids_round_trip() {
        for event in Event::ALL {
            assert_eq!(Event::from_callback_id(&event.callback_id()), Some(event));
            assert_eq!(Event::from_name(event.name()), Some(event));
        }
        assert_eq!(Event::from_callback_id("sens_Notification"), None);
    }
}
