//! `acceptance`: a checklist built from the user's own words. On a
//! UserPromptSubmit (only there) the words are added to a buffer and a
//! [`PointExtractor`] (a model call, which the harness passes in: the engine
//! makes no HTTP call) turns the buffer into points; a failed extraction keeps
//! the buffer, so a failure never loses the user's words, while an answer with
//! no new points empties it. At a Stop each open point gets its evidence:
//! `ran` (its command ran and passed after the last edit), `diff` (a file the
//! turn changed is named in the point) or `claimed` (the agent only said so);
//! only `ran` proves. A prompt arms the check; the first Stop with an unproved
//! point is blocked and disarms it, so a block loop cannot be built. A point a
//! human decided (`human` set in the checklist file) is never reopened.
//!
//! The checklist is a JSON file (the run folder's `acceptance.json` in the
//! bench), written after every change and read back on each prompt for the
//! human's decisions.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Guard, Kind, Seen};

/// One requirement from the user's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    pub text: String,
    /// How to tell it is met.
    pub acceptance: String,
    /// A command whose passing run proves it, when there is one.
    #[serde(default)]
    pub command: Option<String>,
    /// Not said in so many words: the extractor read it between the lines.
    #[serde(default)]
    pub inferred: bool,
}

/// Turns the user's words into points; an error is a failed extraction, not
/// "no points".
pub trait PointExtractor: Send {
    fn extract(&self, words: &str) -> anyhow::Result<Vec<Point>>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    None,
    Claimed,
    Diff,
    Ran,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    #[serde(flatten)]
    pub point: Point,
    pub evidence: Evidence,
    /// A human's decision (`accepted`, `rejected`): the point is closed.
    #[serde(default)]
    pub human: Option<String>,
}

/// The checklist file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checklist {
    pub points: Vec<Item>,
    /// The user's words not yet turned into points.
    pub buffer: Vec<String>,
    pub failed_extractions: u64,
}

impl Checklist {
    /// Points proved by a passing run.
    pub fn proved(&self) -> usize {
        self.points
            .iter()
            .filter(|i| i.evidence == Evidence::Ran)
            .count()
    }

    /// Reads a checklist file; an error names it.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the acceptance checklist {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("the acceptance checklist {} is not one", path.display()))
    }
}

pub struct AcceptanceGuard {
    extractor: Box<dyn PointExtractor>,
    path: PathBuf,
    checklist: Checklist,
    armed: bool,
}

impl AcceptanceGuard {
    pub fn new(extractor: Box<dyn PointExtractor>, path: PathBuf) -> Self {
        Self {
            extractor,
            path,
            checklist: Checklist::default(),
            armed: false,
        }
    }

    fn save(&self) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(&self.checklist)?;
        std::fs::write(&self.path, text)
            .with_context(|| format!("writing the acceptance checklist {}", self.path.display()))
    }

    /// The human's decisions from the file as it stands.
    fn take_human_decisions(&mut self) -> anyhow::Result<()> {
        if !self.path.exists() {
            return Ok(());
        }
        let on_disk = Checklist::read(&self.path)?;
        for item in &mut self.checklist.points {
            if let Some(decided) = on_disk
                .points
                .iter()
                .find(|d| d.point.text == item.point.text && d.human.is_some())
            {
                item.human.clone_from(&decided.human);
            }
        }
        Ok(())
    }

    fn on_prompt(&mut self, prompt: &str) -> anyhow::Result<Vec<(Kind, String)>> {
        self.take_human_decisions()?;
        self.checklist.buffer.push(prompt.to_string());
        self.armed = true;
        let decision = match self.extractor.extract(&self.checklist.buffer.join("\n\n")) {
            Ok(points) => {
                let known =
                    |p: &Point| self.checklist.points.iter().any(|i| i.point.text == p.text);
                let new: Vec<Point> = points.into_iter().filter(|p| !known(p)).collect();
                let message = format!("extracted {} new point(s)", new.len());
                self.checklist
                    .points
                    .extend(new.into_iter().map(|point| Item {
                        point,
                        evidence: Evidence::None,
                        human: None,
                    }));
                self.checklist.buffer.clear();
                message
            }
            Err(e) => {
                self.checklist.failed_extractions += 1;
                format!("extraction failed, the user's words are kept: {e:#}")
            }
        };
        self.save()?;
        Ok(vec![(Kind::Mark, decision)])
    }

    fn on_stop(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        let said = seen
            .input
            .get("last_assistant_message")
            .and_then(Value::as_str)
            .is_some_and(|m| !m.trim().is_empty());
        for item in &mut self.checklist.points {
            item.evidence = evidence(&item.point, seen, said);
        }
        self.save()?;
        let open: Vec<&Item> = self
            .checklist
            .points
            .iter()
            .filter(|i| i.human.is_none() && i.evidence != Evidence::Ran)
            .collect();
        if !self.armed || open.is_empty() {
            return Ok(Vec::new());
        }
        self.armed = false;
        let lines: Vec<String> = open
            .iter()
            .map(|i| {
                let proof = match &i.point.command {
                    Some(command) => format!("run `{command}`"),
                    None => "show how it is met".to_string(),
                };
                format!(
                    "- {} (evidence: {:?}; accepted when: {}; {proof})",
                    i.point.text, i.evidence, i.point.acceptance
                )
            })
            .collect();
        Ok(vec![(
            Kind::Block,
            format!(
                "Sens (acceptance): these points of the user's request are not proved; only a \
                 passing run of their command proves a point:\n{}",
                lines.join("\n")
            ),
        )])
    }
}

/// The strongest evidence a point has at this Stop.
fn evidence(point: &Point, seen: &Seen<'_>, said: bool) -> Evidence {
    let after = seen.turn.last_edit.unwrap_or(0);
    let ran = point.command.as_deref().is_some_and(|command| {
        seen.turn
            .ran
            .iter()
            .any(|r| r.passed && r.call > after && r.command.contains(command))
    });
    let named = |file: &String| {
        point.text.contains(file.as_str()) || point.acceptance.contains(file.as_str())
    };
    if ran {
        Evidence::Ran
    } else if seen.touched.iter().any(named) {
        Evidence::Diff
    } else if said {
        Evidence::Claimed
    } else {
        Evidence::None
    }
}

impl Guard for AcceptanceGuard {
    fn name(&self) -> &'static str {
        "acceptance"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        match seen.event {
            "UserPromptSubmit" => {
                let prompt = seen
                    .input
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if super::is_command_prompt(prompt) {
                    return Ok(Vec::new());
                }
                self.on_prompt(prompt)
            }
            "Stop" => self.on_stop(seen),
            _ => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{TestCommands, Turn};
    use super::*;
    use serde_json::json;

    fn point(text: &str, command: Option<&str>) -> Point {
        Point {
            text: text.into(),
            acceptance: "it works".into(),
            command: command.map(str::to_string),
            inferred: false,
        }
    }

    #[test]
    fn only_a_passing_run_after_the_last_edit_is_proof() {
        let tests = TestCommands::default();
        let mut turn = Turn::default();
        let bash = |command: &str| json!({"tool_name": "Bash", "tool_input": {"command": command}});
        turn.observe(
            "UserPromptSubmit",
            &json!({"prompt": "add it"}),
            &[],
            &tests,
        );
        turn.observe("PostToolUse", &bash("pytest -q"), &[], &tests);
        turn.observe(
            "PostToolUse",
            &json!({"tool_name": "Write"}),
            &["src/a.py".into()],
            &tests,
        );
        turn.observe("PostToolUseFailure", &bash("pytest -q"), &[], &tests);
        let changed = ["src/a.py".to_string()];
        let input = json!({});
        fn seen<'a>(
            turn: &'a Turn,
            input: &'a Value,
            changed: &'a [String],
            tests: &'a TestCommands,
        ) -> Seen<'a> {
            Seen {
                event: "Stop",
                input,
                touched: changed,
                tree: None,
                turn,
                tests,
                root: Path::new("/ws"),
            }
        }
        let tested = point("totals", Some("pytest -q"));
        let named = point("a new src/a.py", None);
        // The run before the edit passed, the one after failed: no proof.
        assert_eq!(
            evidence(&tested, &seen(&turn, &input, &changed, &tests), true),
            Evidence::Claimed
        );
        assert_eq!(
            evidence(&tested, &seen(&turn, &input, &changed, &tests), false),
            Evidence::None
        );
        assert_eq!(
            evidence(&named, &seen(&turn, &input, &changed, &tests), true),
            Evidence::Diff
        );
        turn.observe("PostToolUse", &bash("pytest -q"), &[], &tests);
        assert_eq!(
            evidence(&tested, &seen(&turn, &input, &changed, &tests), true),
            Evidence::Ran
        );
    }
}
