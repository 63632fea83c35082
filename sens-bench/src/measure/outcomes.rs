//! Decision outcomes (docs/contract.md, "The viewer and decision outcomes"): for every
//! denial, block and re-implementation note of the engine, what the agent did next. The classes are defined on
//! [`Outcome`]; the record carries their counts ([`OutcomeCounts`]) and the viewer shows
//! each decision's class inline.
//!
//! Classified from the hook ledger alone: its lines hold every hook input, so every
//! tool call of the main loop and of subagents (with `agent_id`), in order, with
//! the engine's verdict; the transcript adds nothing the classes need.

use sens_engine::finding::Finding;
use sens_engine::reuse::NOTE_RULE;
use sens_engine::session::ledger::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ledger::LedgerLine;

/// What the agent did after a denial or a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Denial: the next write to the finding's file by the same agent (main loop or
    /// subagent) no longer holds the copy (not its content, not the copy's
    /// definition line), or calls the existing unit the finding named. Block: the next audit no longer has the
    /// finding and the copy did not move to another file.
    Complied,
    /// Denial: the same content written again (the same file, or a Bash command
    /// holding it), by the same or another tool, whatever the verdict; or written
    /// to another file and denied there too. Block: the next audit blocks on the
    /// same finding again.
    Retried,
    /// The copy landed by another route: an allowed write holding it to another
    /// file, or by another agent (a subagent, for a main-loop denial); for a block,
    /// the next audit finds a copy of the same existing unit in another file.
    WorkedAround,
    /// The session ended with the finding standing: no later call addressed it
    /// (denial), or no later audit, or the next one paused on it (block).
    GaveUp,
    /// A human labelled the decision unjust (`sens-bench label`); never inferred.
    UnjustLabelled,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Complied,
        Outcome::Retried,
        Outcome::WorkedAround,
        Outcome::GaveUp,
        Outcome::UnjustLabelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Complied => "complied",
            Outcome::Retried => "retried",
            Outcome::WorkedAround => "worked-around",
            Outcome::GaveUp => "gave-up",
            Outcome::UnjustLabelled => "unjust-labelled",
        }
    }
}

/// The outcomes of a run's decisions, per class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeCounts {
    pub complied: u64,
    pub retried: u64,
    pub worked_around: u64,
    pub gave_up: u64,
    pub unjust_labelled: u64,
}

impl OutcomeCounts {
    /// The counts of the denials and blocks among `outcomes` (`notes: false`), or
    /// of the re-implementation notes (`notes: true`).
    pub fn of(outcomes: &[Decision], notes: bool) -> Self {
        let mut counts = OutcomeCounts::default();
        for decision in outcomes.iter().filter(|d| d.note == notes) {
            counts.add(decision.outcome, 1);
        }
        counts
    }

    pub fn is_zero(&self) -> bool {
        *self == OutcomeCounts::default()
    }

    pub fn add(&mut self, outcome: Outcome, n: u64) {
        *self.slot(outcome) += n;
    }

    pub fn get(&self, outcome: Outcome) -> u64 {
        match outcome {
            Outcome::Complied => self.complied,
            Outcome::Retried => self.retried,
            Outcome::WorkedAround => self.worked_around,
            Outcome::GaveUp => self.gave_up,
            Outcome::UnjustLabelled => self.unjust_labelled,
        }
    }

    /// Adds every class of `other`.
    pub fn merge(&mut self, other: &OutcomeCounts) {
        for outcome in Outcome::ALL {
            self.add(outcome, other.get(outcome));
        }
    }

    fn slot(&mut self, outcome: Outcome) -> &mut u64 {
        match outcome {
            Outcome::Complied => &mut self.complied,
            Outcome::Retried => &mut self.retried,
            Outcome::WorkedAround => &mut self.worked_around,
            Outcome::GaveUp => &mut self.gave_up,
            Outcome::UnjustLabelled => &mut self.unjust_labelled,
        }
    }
}

/// One classified decision: the ledger line (`seq`) of the denial, block or
/// re-implementation note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub seq: u64,
    pub outcome: Outcome,
    /// A re-implementation note (rule `reuse.note`), not a denial or a block:
    /// counted apart, since the agent was told, not stopped.
    pub note: bool,
}

/// Every denial, block and re-implementation note of a ledger, classified.
pub fn classify(lines: &[LedgerLine]) -> Vec<Decision> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let later = &lines[i + 1..];
            let (outcome, note) = match (line.event.as_str(), line.verdict) {
                ("PreToolUse", Verdict::Deny) => (after_denial(line, later), false),
                (_, Verdict::Block) => (after_block(line, later), false),
                ("PostToolUse", _) if notes(line).next().is_some() => {
                    (after_note(line, later), true)
                }
                _ => return None,
            };
            Some(Decision {
                seq: line.seq,
                outcome,
                note,
            })
        })
        .collect()
}

/// The re-implementation notes of a ledger line.
fn notes(line: &LedgerLine) -> impl Iterator<Item = &Finding> {
    line.findings.iter().filter(|f| f.rule == NOTE_RULE)
}

/// The text a tool call writes: a Write's content, an Edit's new string, a
/// MultiEdit's new strings, a Bash command.
fn written_text(input: &Value) -> String {
    let tool_input = &input["tool_input"];
    let field = |name: &str| tool_input[name].as_str().map(str::to_string);
    field("content")
        .or_else(|| field("new_string"))
        .or_else(|| field("command"))
        .or_else(|| {
            tool_input["edits"].as_array().map(|edits| {
                edits
                    .iter()
                    .filter_map(|e| e["new_string"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
        .unwrap_or_default()
}

/// The file a tool call writes, project-relative when it lies under `cwd`.
fn target_file(input: &Value) -> Option<String> {
    let path = input["tool_input"]["file_path"]
        .as_str()
        .or_else(|| input["tool_input"]["notebook_path"].as_str())?;
    let cwd = input["cwd"].as_str().unwrap_or_default();
    let relative = path
        .strip_prefix(cwd)
        .map(|rest| rest.trim_start_matches('/'))
        .unwrap_or(path);
    Some(relative.to_string())
}

/// Text with every run of white space made one space: a rewrite that only
/// re-indents is the same content.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The existing unit's name: the identifier before the signature's first `(`.
fn existing_name(finding: &Finding) -> Option<String> {
    let signature = &finding.existing.as_ref()?.signature;
    let head = signature.split('(').next()?;
    let name: String = head
        .chars()
        .rev()
        .skip_while(|c| c.is_whitespace())
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The line of `content` that defines the new unit (the first line naming it).
fn definition_line(content: &str, name: &str) -> Option<String> {
    content
        .lines()
        .map(str::trim)
        .find(|line| line.contains(name))
        .map(str::to_string)
}

fn is_write(line: &LedgerLine) -> bool {
    line.event == "PreToolUse" && !written_text(&line.input).is_empty()
}

fn after_denial(denied: &LedgerLine, later: &[LedgerLine]) -> Outcome {
    let content = squeeze(&written_text(&denied.input));
    let file = target_file(&denied.input);
    let copies: Vec<&Finding> = denied.findings.iter().filter(|f| f.blocks).collect();
    let definitions: Vec<String> = copies
        .iter()
        .filter_map(|f| definition_line(&written_text(&denied.input), &f.new.name))
        .collect();
    let existing: Vec<String> = copies.iter().filter_map(|f| existing_name(f)).collect();
    for line in later.iter().filter(|l| is_write(l)) {
        let text = written_text(&line.input);
        let same = !content.is_empty() && squeeze(&text).contains(&content);
        let holds = same || definitions.iter().any(|d| text.contains(d.as_str()));
        let target = target_file(&line.input);
        let other_route = line.agent_id != denied.agent_id || (target.is_some() && target != file);
        let allowed = line.verdict != Verdict::Deny;
        if same && (!other_route || !allowed) {
            return Outcome::Retried;
        }
        if holds && other_route && allowed {
            return Outcome::WorkedAround;
        }
        if target.is_some() && target == file && line.agent_id == denied.agent_id {
            let calls = existing.iter().any(|name| text.contains(name.as_str()));
            if calls || !holds {
                return Outcome::Complied;
            }
        }
    }
    Outcome::GaveUp
}

/// After a note at PostToolUse (the re-implementation landed): complied when the
/// same agent's next write to the file calls the unit the note named or takes
/// the new unit's definition out (a Write without it, an Edit replacing it);
/// retried when that write puts the definition back without the call; worked
/// around when the definition lands in another file; gave up when nothing
/// addresses it.
fn after_note(noted: &LedgerLine, later: &[LedgerLine]) -> Outcome {
    let file = target_file(&noted.input);
    let written = written_text(&noted.input);
    let findings: Vec<&Finding> = notes(noted).collect();
    let definitions: Vec<String> = findings
        .iter()
        .filter_map(|f| definition_line(&written, &f.new.name))
        .collect();
    let existing: Vec<String> = findings.iter().filter_map(|f| existing_name(f)).collect();
    let holds = |text: &str| definitions.iter().any(|d| text.contains(d.as_str()));
    // An Edit that deletes writes no text, and still addresses the note.
    let touches = |l: &&LedgerLine| {
        is_write(l) || (l.event == "PreToolUse" && target_file(&l.input).is_some())
    };
    for line in later.iter().filter(touches) {
        let text = written_text(&line.input);
        let target = target_file(&line.input);
        if target.is_some() && target != file && holds(&text) {
            return Outcome::WorkedAround;
        }
        if target != file || line.agent_id != noted.agent_id {
            continue;
        }
        if existing.iter().any(|name| text.contains(name.as_str())) {
            return Outcome::Complied;
        }
        let replaced = line.input["tool_input"]["old_string"]
            .as_str()
            .is_some_and(&holds);
        let rewritten = line.input["tool_input"]["content"].is_string();
        if holds(&text) {
            return Outcome::Retried;
        }
        if replaced || rewritten {
            return Outcome::Complied;
        }
    }
    Outcome::GaveUp
}

/// The finding's identity across audits: the new unit and the unit it copies.
fn same_finding(a: &Finding, b: &Finding) -> bool {
    a.rule == b.rule && a.new.file == b.new.file && a.new.name == b.new.name
}

fn same_existing(a: &Finding, b: &Finding) -> bool {
    match (&a.existing, &b.existing) {
        (Some(x), Some(y)) => x.file == y.file && x.line == y.line,
        _ => false,
    }
}

fn after_block(block: &LedgerLine, later: &[LedgerLine]) -> Outcome {
    let Some(next) = later
        .iter()
        .find(|l| l.event == block.event && l.agent_id == block.agent_id)
    else {
        return Outcome::GaveUp;
    };
    let standing: Vec<&Finding> = block.findings.iter().filter(|f| f.blocks).collect();
    let stands = standing
        .iter()
        .any(|f| next.findings.iter().any(|g| same_finding(f, g)));
    if stands {
        return if next.verdict == Verdict::Block {
            Outcome::Retried
        } else {
            Outcome::GaveUp
        };
    }
    let moved = standing.iter().any(|f| {
        next.findings
            .iter()
            .any(|g| same_existing(f, g) && g.new.file != f.new.file)
    });
    if moved {
        Outcome::WorkedAround
    } else {
        Outcome::Complied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CWD: &str = "/w";
    const COPY: &str = "def to_cents(raw):\n    return int(raw) * 100\n";

    fn finding(file: &str, name: &str) -> Value {
        json!({
            "rule": "copy.renamed", "blocks": true, "similarity": 1.0,
            "message": "call parse_amount", "new": {"file": file, "line": 1, "name": name},
            "existing": {"file": "src/util.py", "line": 4,
                         "signature": "def parse_amount(text, currency=\"EUR\")", "usages": 1}
        })
    }

    fn line(
        seq: u64,
        event: &str,
        verdict: &str,
        input: Value,
        findings: Vec<Value>,
    ) -> LedgerLine {
        serde_json::from_value(json!({
            "seq": seq, "event": event, "verdict": verdict, "findings": findings,
            "input": input,
        }))
        .unwrap()
    }

    fn write(file: &str, content: &str) -> Value {
        json!({"cwd": CWD, "tool_input": {"file_path": format!("{CWD}/{file}"), "content": content}})
    }

    fn bash(command: &str) -> Value {
        json!({"cwd": CWD, "tool_input": {"command": command}})
    }

    fn denial() -> LedgerLine {
        line(
            2,
            "PreToolUse",
            "deny",
            write("src/main.py", COPY),
            vec![finding("src/main.py", "to_cents")],
        )
    }

    fn outcome_of(lines: Vec<LedgerLine>) -> Vec<Outcome> {
        classify(&lines).into_iter().map(|d| d.outcome).collect()
    }

    #[test]
    fn a_denial_then_a_write_that_calls_the_existing_unit_complied() {
        let reuse = "from util import parse_amount\nprint(parse_amount('1'))\n";
        let lines = vec![
            denial(),
            line(
                3,
                "PreToolUse",
                "allow",
                write("src/main.py", reuse),
                vec![],
            ),
            line(4, "Stop", "pass", json!({}), vec![]),
        ];
        assert_eq!(outcome_of(lines), [Outcome::Complied]);
    }

    #[test]
    fn the_same_content_through_bash_is_a_retry() {
        let command = format!("cat > src/main.py <<'EOF'\n{COPY}EOF");
        let lines = vec![
            denial(),
            line(3, "PreToolUse", "allow", bash(&command), vec![]),
        ];
        assert_eq!(outcome_of(lines), [Outcome::Retried]);
    }

    #[test]
    fn the_copy_allowed_in_another_file_or_by_a_subagent_worked_around() {
        let lines = vec![
            denial(),
            line(
                3,
                "PreToolUse",
                "allow",
                write("src/money.py", COPY),
                vec![],
            ),
        ];
        assert_eq!(outcome_of(lines), [Outcome::WorkedAround]);
        let mut by_agent = line(3, "PreToolUse", "allow", write("src/main.py", COPY), vec![]);
        by_agent.agent_id = Some("a1".into());
        assert_eq!(
            outcome_of(vec![denial(), by_agent]),
            [Outcome::WorkedAround]
        );
    }

    #[test]
    fn a_denial_nothing_addresses_gave_up() {
        let lines = vec![
            denial(),
            line(3, "PreToolUse", "allow", bash("ls"), vec![]),
            line(4, "Stop", "pass", json!({}), vec![]),
        ];
        assert_eq!(outcome_of(lines), [Outcome::GaveUp]);
    }

    fn note_line(seq: u64, content: &str) -> LedgerLine {
        let mut note = finding("src/main.py", "to_cents");
        note["rule"] = json!(NOTE_RULE);
        note["blocks"] = json!(false);
        line(
            seq,
            "PostToolUse",
            "context",
            write("src/main.py", content),
            vec![note],
        )
    }

    fn edit(file: &str, old: &str, new: &str) -> Value {
        json!({"cwd": CWD, "tool_input": {"file_path": format!("{CWD}/{file}"),
               "old_string": old, "new_string": new}})
    }

    #[test]
    fn a_note_is_classified_by_what_the_next_writes_do_with_the_definition() {
        let noted = || note_line(2, COPY);
        let next = |input| line(3, "PreToolUse", "allow", input, vec![]);
        let calls = edit("src/main.py", COPY, "from util import parse_amount\n");
        assert_eq!(outcome_of(vec![noted(), next(calls)]), [Outcome::Complied]);
        let removed = edit("src/main.py", COPY, "");
        assert_eq!(
            outcome_of(vec![noted(), next(removed)]),
            [Outcome::Complied]
        );
        // An edit elsewhere in the file leaves the re-implementation standing.
        let elsewhere = edit("src/main.py", "x = 1", "x = 2");
        assert_eq!(
            outcome_of(vec![noted(), next(elsewhere)]),
            [Outcome::GaveUp]
        );
        let again = write("src/main.py", &format!("{COPY}\nprint(to_cents('2'))\n"));
        assert_eq!(outcome_of(vec![noted(), next(again)]), [Outcome::Retried]);
        let moved = write("src/money.py", COPY);
        assert_eq!(
            outcome_of(vec![noted(), next(moved)]),
            [Outcome::WorkedAround]
        );
        let decisions = classify(&[noted()]);
        assert!(decisions[0].note && decisions[0].outcome == Outcome::GaveUp);
        // Context without a note (a guard's, say) is no decision.
        let plain = line(
            2,
            "PostToolUse",
            "context",
            write("src/main.py", COPY),
            vec![],
        );
        assert!(classify(&[plain]).is_empty());
    }

    #[test]
    fn blocks_are_classified_by_the_next_audit() {
        let block = |seq, verdict, file: &str| {
            line(
                seq,
                "Stop",
                verdict,
                json!({}),
                vec![finding(file, "to_cents")],
            )
        };
        let pass = line(9, "Stop", "pass", json!({}), vec![]);
        assert_eq!(
            outcome_of(vec![block(1, "block", "src/main.py"), pass.clone()]),
            [Outcome::Complied]
        );
        assert_eq!(
            outcome_of(vec![
                block(1, "block", "src/main.py"),
                block(2, "block", "src/main.py")
            ]),
            [Outcome::Retried, Outcome::GaveUp]
        );
        assert_eq!(
            outcome_of(vec![
                block(1, "block", "src/main.py"),
                block(2, "paused", "src/main.py")
            ]),
            [Outcome::GaveUp]
        );
        assert_eq!(
            outcome_of(vec![
                block(1, "block", "src/main.py"),
                block(2, "block", "src/other.py")
            ]),
            [Outcome::WorkedAround, Outcome::GaveUp]
        );
        let counts = OutcomeCounts::of(&classify(&[block(1, "block", "src/main.py")]), false);
        assert_eq!(counts.gave_up, 1);
    }
}
