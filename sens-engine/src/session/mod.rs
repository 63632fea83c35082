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

pub mod checkpoint;
pub mod guards;
pub mod ledger;
pub mod protect;
pub mod rebuild;
pub mod review;
pub mod shell;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use git2::Oid;
use serde_json::{Value, json};

use crate::finding::{Finding, NewUnit, Suggestion};
use crate::judge::Judge;
use crate::mcp;
use crate::tools::ToolError;
use checkpoint::{Checkpoint, Checkpoints};
use guards::{Decision, Guards, Kind};
use ledger::{Entry, Ledger, Verdict};
use protect::{PROTECTED_DESCRIPTION, is_protected};

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

    /// The approved point: `None` until the first UserPromptSubmit.
    pub fn approved(&self) -> Option<&Checkpoint> {
        self.approved.as_ref()
    }

    /// Whether a turn ended paused (its audit failed every allowed round) and no
    /// audit or human has approved since.
    pub fn awaiting_human(&self) -> bool {
        self.awaiting_human
    }

    /// Blocking findings from tool runs that no later change has resolved.
    pub fn pending(&self) -> &[Finding] {
        &self.pending
    }

    /// A human approves the project as it stands: the approved point moves there
    /// and pending findings are dropped. Written to the ledger.
    pub fn approve_by_human(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let approved_before = self.approved.map(|c| c.tree);
        let tree = self.look_without_rescan()?;
        self.approve(tree)?;
        let input = json!({"hook_event_name": "HumanApproval"});
        let outcome = Outcome::new(Verdict::Approved, json!({}), Some(tree));
        self.write_ledger("HumanApproval", &input, approved_before, &outcome, started)
    }

    /// Continues from the approved point an earlier process recorded under
    /// `refs/sens/approved`, if any, instead of taking the state at the first
    /// prompt. Returns whether there was one.
    pub fn resume(&mut self) -> anyhow::Result<bool> {
        self.approved = self.checkpoints.approved()?;
        Ok(self.approved.is_some())
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

    /// The paths that differ between the approved point and the project as it
    /// stands (empty before the first approved point).
    pub fn unapproved_paths(&mut self) -> anyhow::Result<Vec<String>> {
        let Some(approved) = self.approved else {
            return Ok(Vec::new());
        };
        let tree = self.look_without_rescan()?;
        self.checkpoints.changed_paths(approved.tree, tree)
    }

    /// A human rejects the unapproved change: the project's files are restored
    /// to the approved point, the rejected state is kept under
    /// `refs/sens/rejected/N` (returned; `None` when nothing differed), and the
    /// index is brought up to date. Written to the ledger.
    pub fn reject_by_human(&mut self) -> anyhow::Result<Option<String>> {
        let started = Instant::now();
        let approved = self
            .approved
            .context("there is no approved point yet, so there is nothing to restore")?;
        let tree = self.look_without_rescan()?;
        if tree == approved.tree {
            return Ok(None);
        }
        let kept = self.checkpoints.keep_rejected(tree)?;
        self.checkpoints.restore(tree, approved.tree)?;
        let restored = self.look_with_rescan()?.0;
        self.pending.clear();
        self.stop_rounds.clear();
        self.awaiting_human = false;
        let input = json!({"hook_event_name": "HumanRejection", "kept": kept});
        let outcome = Outcome::new(Verdict::Rejected, json!({}), Some(restored));
        self.write_ledger(
            "HumanRejection",
            &input,
            Some(approved.tree),
            &outcome,
            started,
        )?;
        Ok(Some(kept))
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

    /// The in-process MCP servers the session answers (the `sdkMcpServers` of
    /// the CLI's `initialize`): [`mcp::SERVER_NAME`] when it serves its tools.
    pub fn mcp_servers(&self) -> Vec<String> {
        if self.options.tools {
            vec![mcp::SERVER_NAME.to_string()]
        } else {
            Vec::new()
        }
    }

    /// Answers one JSON-RPC message to the session's MCP server; `None` for a
    /// notification.
    pub fn mcp_message(&mut self, message: &Value) -> Option<Value> {
        mcp::respond(message, |name, arguments, tool_use_id| {
            self.call_tool(name, arguments, tool_use_id)
        })
    }

    /// Answers one call of the engine's query tools on the judge's index as the
    /// last rescan left it, written to the ledger (event [`TOOL_CALL_EVENT`],
    /// verdict `answer`, or `error` with why) like every callback, with the
    /// agent's `tool_use_id` when the CLI gave it. A session that does not serve
    /// its tools knows none.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &Value,
        tool_use_id: Option<&str>,
    ) -> Result<Value, ToolError> {
        let started = Instant::now();
        let approved_before = self.approved.map(|c| c.tree);
        let mut input = json!({"tool_name": name, "tool_input": arguments});
        if let Some(id) = tool_use_id {
            input["tool_use_id"] = json!(id);
        }
        let answered = if self.options.tools {
            self.judged_tree()
                .map_err(ToolError::Engine)
                .and_then(|tree| match &self.judge {
                    Some(judge) => Ok((tree, judge.tool(name, arguments)?)),
                    // A session of guards alone has no judge, so it knows no tool.
                    None => Err(ToolError::Unknown(name.to_string())),
                })
        } else {
            Err(ToolError::Unknown(name.to_string()))
        };
        let outcome = match &answered {
            Ok((tree, answer)) => Outcome::new(Verdict::Answer, answer.clone(), *tree),
            Err(e) => {
                let mut outcome = Outcome::new(Verdict::Error, json!({}), self.last_look);
                outcome.error = Some(e.to_string());
                outcome
            }
        };
        self.write_ledger(TOOL_CALL_EVENT, &input, approved_before, &outcome, started)?;
        answered.map(|(_, answer)| answer)
    }

    fn write_ledger(
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

    fn on_prompt(&mut self, input: &Value) -> anyhow::Result<Outcome> {
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

    fn on_pre_tool(&mut self, input: &Value) -> anyhow::Result<Outcome> {
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

    fn on_post_tool(&mut self, event: Event) -> anyhow::Result<Outcome> {
        let (tree, mut findings) = self.look_with_rescan()?;
        if self.judge.is_none() {
            return Ok(Outcome::new(Verdict::Quiet, json!({}), Some(tree)));
        }
        if let Some(approved) = self.approved {
            findings.extend(self.protected_changes(approved.tree, tree)?);
        }
        let fresh: Vec<Finding> = findings
            .iter()
            .filter(|f| f.blocks && !self.pending.iter().any(|p| same_finding(p, f)))
            .cloned()
            .collect();
        if fresh.is_empty() {
            return Ok(Outcome::new(Verdict::Quiet, json!({}), Some(tree)).with_findings(findings));
        }
        let context = format!(
            "Sens found changes on disk that the turn cannot end with:\n{}\n\
             Replace a copy with a call to the existing code before you finish; \
             the turn cannot end while they stand.",
            describe_all(&fresh.iter().collect::<Vec<_>>())
        );
        self.pending.extend(fresh);
        Ok(Outcome::new(
            Verdict::Context,
            specific_output(event.name(), "additionalContext", &context),
            Some(tree),
        )
        .with_findings(findings))
    }

    fn on_stop(&mut self, event: Event, input: &Value) -> anyhow::Result<Outcome> {
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

    /// Adds the guards' decisions to the session's answer (see `guards`). At a
    /// paused Stop a guard's block is kept as a mark: the turn already waits
    /// for a human.
    fn guard(
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

    /// Counts a failing Stop round: a block while rounds remain, then a pause
    /// that lets the agent stop with nothing approved.
    fn failed_round(&mut self, event: Event, input: &Value, reason: String) -> (Verdict, Value) {
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

    /// The full audit: every change since the approved point, judged as a whole.
    fn audit(&mut self) -> anyhow::Result<(Oid, Vec<Finding>)> {
        let approved = self
            .approved
            .context("there is no approved point yet: no UserPromptSubmit reached the engine")?;
        let tree = self.look_without_rescan()?;
        let changes = self.checkpoints.changes(approved.tree, tree)?;
        let mut findings = match &mut self.judge {
            Some(judge) => judge.audit(&changes)?,
            None => Vec::new(),
        };
        findings.extend(self.protected_changes(approved.tree, tree)?);
        Ok((tree, findings))
    }

    /// The engine's paths that changed between two states, and links made to
    /// them (another name for them). No tool call that names them is allowed, so
    /// such a change came through a command the shell analysis cannot read (a
    /// script writing the file): it blocks until a human decides, like any
    /// unapproved change. `.sens/` is never in a snapshot.
    fn protected_changes(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<Finding>> {
        Ok(self
            .checkpoints
            .changed_paths(from, to)?
            .into_iter()
            .filter(|path| {
                is_protected(Path::new(path))
                    || protect::is_link_to_protected(&self.root.join(path))
            })
            .map(protected_finding)
            .collect())
    }

    /// Moves the approved point to `tree` (a new checkpoint unless unchanged).
    fn approve(&mut self, tree: Oid) -> anyhow::Result<()> {
        if self.approved.is_none_or(|a| a.tree != tree) {
            let checkpoint = self.checkpoints.checkpoint(tree)?;
            self.checkpoints.mark_approved(&checkpoint)?;
            self.approved = Some(checkpoint);
        }
        self.pending.clear();
        self.awaiting_human = false;
        Ok(())
    }

    /// Snapshots the project and lets the judge re-read what changed. Pending
    /// findings in files that changed since the last look are dropped: the
    /// rescan reports them again if they still stand.
    fn look_with_rescan(&mut self) -> anyhow::Result<(Oid, Vec<Finding>)> {
        let tree = self.look_without_rescan()?;
        self.last_changed = match self.last_look.filter(|p| *p != tree) {
            Some(previous) => self.checkpoints.changed_paths(previous, tree)?,
            None => Vec::new(),
        };
        let changed = &self.last_changed;
        self.pending.retain(|f| !changed.contains(&f.new.file));
        self.last_look = Some(tree);
        let findings = match &mut self.judge {
            Some(judge) => judge.rescan()?,
            None => Vec::new(),
        };
        Ok((tree, findings))
    }

    fn look_without_rescan(&mut self) -> anyhow::Result<Oid> {
        let tree = self.checkpoints.snapshot()?;
        self.checkpoints.keep(tree)?;
        Ok(tree)
    }

    /// The state the judge's index holds (the last rescan); a fresh snapshot
    /// only before the first one.
    fn judged_tree(&mut self) -> anyhow::Result<Option<Oid>> {
        match self.last_look {
            Some(tree) => Ok(Some(tree)),
            None => self.look_without_rescan().map(Some),
        }
    }

    fn cwd(&self, input: &Value) -> anyhow::Result<PathBuf> {
        match input.get("cwd") {
            None => Ok(self.root.clone()),
            Some(value) => value
                .as_str()
                .map(PathBuf::from)
                .context("hook input field `cwd` is not a string"),
        }
    }

    /// `path` relative to the project root (`/`-separated), if inside it.
    fn relative(&self, path: &Path) -> Option<String> {
        let inside = path
            .strip_prefix(&self.root)
            .or_else(|_| path.strip_prefix(&self.canonical_root))
            .ok()?;
        let parts: Vec<&str> = inside.iter().filter_map(|c| c.to_str()).collect();
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

fn str_field<'a>(input: &'a Value, name: &str) -> anyhow::Result<&'a str> {
    input
        .get(name)
        .and_then(Value::as_str)
        .with_context(|| format!("hook input has no string field `{name}`"))
}

fn agent_key(input: &Value) -> Option<String> {
    input
        .get("agent_id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

fn specific_output(event: &str, key: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, key: text}})
}

fn protected_reason(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!(
        "Sens denied this: it would change {}, which belongs to the engine ({PROTECTED_DESCRIPTION} \
         are protected). Leave these paths alone; no tool may change them.",
        names.join(", ")
    )
}

/// A change to one of the engine's paths (see [`Session::protected_changes`]).
pub(crate) fn protected_finding(path: String) -> Finding {
    let name = path.rsplit('/').next().unwrap_or(&path).to_string();
    Finding {
        rule: PROTECTED_RULE.into(),
        blocks: true,
        similarity: 1.0,
        message: format!(
            "the engine's own file changed, which no tool may do; do not change it again \
             and tell the user, who alone can restore or approve it ({PROTECTED_DESCRIPTION} \
             are protected)"
        ),
        new: NewUnit {
            file: path,
            line: 1,
            name,
        },
        existing: None,
    }
}

/// Blocking audit findings plus pending ones, without duplicates.
fn blocking_of<'a>(audit: &'a [Finding], pending: &'a [Finding]) -> Vec<&'a Finding> {
    let mut out: Vec<&Finding> = Vec::new();
    for finding in audit.iter().chain(pending).filter(|f| f.blocks) {
        if !out.iter().any(|seen| same_finding(seen, finding)) {
            out.push(finding);
        }
    }
    out
}

pub(crate) fn same_finding(a: &Finding, b: &Finding) -> bool {
    a.rule == b.rule && a.new == b.new && a.existing == b.existing
}

fn describe_all(findings: &[&Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("- {}", describe(f)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One finding as the agent reads it: the new unit, what it copies, what to do.
fn describe(finding: &Finding) -> String {
    let new = &finding.new;
    match &finding.existing {
        Some(existing) => format!(
            "{}:{} `{}` copies {}:{} `{}` ({}, similarity {:.2}, {} usages): {}",
            new.file,
            new.line,
            new.name,
            existing.file,
            existing.line,
            existing.signature,
            finding.rule,
            finding.similarity,
            existing.usages,
            finding.message
        ),
        None => format!(
            "{}:{} `{}` ({}): {}",
            new.file, new.line, new.name, finding.rule, finding.message
        ),
    }
}

fn suggestions_context(suggestions: &[Suggestion]) -> String {
    let lines: Vec<String> = suggestions
        .iter()
        .map(|s| {
            format!(
                "- `{}` at {}:{} ({} usages)",
                s.signature, s.file, s.line, s.usages
            )
        })
        .collect();
    format!(
        "Sens: the project already has code that may serve this request; reuse it before \
         writing new code:\n{}",
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::ExistingUnit;

    fn finding(file: &str, blocks: bool, existing: bool) -> Finding {
        Finding {
            rule: if existing { "copy.near" } else { "orphan" }.into(),
            blocks,
            similarity: 0.875,
            message: "Call it.".into(),
            new: NewUnit {
                file: file.into(),
                line: 7,
                name: "dup".into(),
            },
            existing: existing.then(|| ExistingUnit {
                file: "lib/orig.py".into(),
                line: 12,
                signature: "def orig(a, b)".into(),
                usages: 3,
            }),
        }
    }

    #[test]
    fn the_session_can_move_to_another_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Session>();
    }

    #[test]
    fn a_finding_reads_as_what_to_reuse() {
        assert_eq!(
            describe(&finding("app/new.py", true, true)),
            "app/new.py:7 `dup` copies lib/orig.py:12 `def orig(a, b)` (copy.near, similarity 0.88, 3 usages): Call it."
        );
        assert_eq!(
            describe(&finding("app/new.py", true, false)),
            "app/new.py:7 `dup` (orphan): Call it."
        );
    }

    #[test]
    fn blocking_findings_merge_audit_and_pending_once() {
        let audit = [finding("a.py", true, true), finding("b.py", false, true)];
        let pending = [finding("a.py", true, true), finding("c.py", true, true)];
        let files: Vec<&str> = blocking_of(&audit, &pending)
            .iter()
            .map(|f| f.new.file.as_str())
            .collect();
        assert_eq!(files, ["a.py", "c.py"]);
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
