//! The `script:FILE` scenario format (docs/contract.md, "Agents"; binding): what the
//! scripted model server answers, turn by turn, for the main loop and for subagents, and
//! what it answers to the harness's own decision calls (`decisions`).

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// A scenario: the main loop's turns and the subagents' turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub main: Vec<Turn>,
    #[serde(default)]
    pub agent: Vec<Turn>,
    /// Answers to decision calls (the review's Messages API and decisions
    /// endpoint requests), the first whose `when` the request's text contains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
}

/// One scripted decision answer. `reply` is the answer: a string is sent as the
/// text verbatim (so a script can answer malformed JSON), any other value as its
/// JSON. `delay_ms` holds the answer back (for timeout tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    pub when: String,
    pub reply: serde_json::Value,
    #[serde(default)]
    pub delay_ms: u64,
}

impl Decision {
    /// The answer's text.
    pub fn reply_text(&self) -> String {
        match &self.reply {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    }
}

/// One model answer. `on_error` replaces `blocks` when the request's last tool
/// result is an error (so a script can react to a denial); else `on_context`
/// replaces them when what came back with the last tool result contains its
/// text (so a script can react to a hook's added context, such as a note).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub blocks: Vec<Block>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_error: Vec<Block>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_context: Option<OnContext>,
}

/// The blocks a turn plays when the text since the last assistant message (the
/// tool result and the `<system-reminder>` the CLI adds beside it for a hook's
/// `additionalContext`) contains `contains`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnContext {
    pub contains: String,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    Text {
        text: String,
    },
    ToolUse {
        name: String,
        input: serde_json::Value,
    },
}

impl Turn {
    /// A turn that plays `blocks` whatever the previous tool result was.
    pub fn new(blocks: Vec<Block>) -> Self {
        Turn {
            blocks,
            on_error: Vec::new(),
            on_context: None,
        }
    }
}

impl Block {
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text { text: text.into() }
    }

    pub fn tool(name: impl Into<String>, input: serde_json::Value) -> Self {
        Block::ToolUse {
            name: name.into(),
            input,
        }
    }
}

impl Script {
    /// Reads and checks a scenario file; errors name the file and the JSON position.
    pub fn load(path: &Path) -> anyhow::Result<Script> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the script file {}", path.display()))?;
        Script::parse(&text).with_context(|| format!("in the script file {}", path.display()))
    }

    pub fn parse(text: &str) -> anyhow::Result<Script> {
        let script: Script = serde_json::from_str(text).context(
            "not a valid script: expected {\"main\": [{\"blocks\": [...], \"on_error\": [...]}], \"agent\": [...]}",
        )?;
        script.check()?;
        Ok(script)
    }

    /// A turn must say something: an empty `blocks` would make an empty model answer.
    fn check(&self) -> anyhow::Result<()> {
        for (side, turns) in [("main", &self.main), ("agent", &self.agent)] {
            for (i, turn) in turns.iter().enumerate() {
                anyhow::ensure!(
                    !turn.blocks.is_empty(),
                    "{side}[{i}].blocks is empty: give the turn at least one text or tool_use block"
                );
                if let Some(branch) = &turn.on_context {
                    anyhow::ensure!(
                        !branch.contains.is_empty() && !branch.blocks.is_empty(),
                        "{side}[{i}].on_context needs a non-empty `contains` and `blocks`"
                    );
                }
                let branch = turn.on_context.iter().flat_map(|b| &b.blocks);
                for (j, block) in turn
                    .blocks
                    .iter()
                    .chain(&turn.on_error)
                    .chain(branch)
                    .enumerate()
                {
                    if let Block::ToolUse { name, input } = block {
                        anyhow::ensure!(
                            input.is_object(),
                            "{side}[{i}] block {j} ({name}): `input` must be a JSON object"
                        );
                    }
                }
            }
        }
        for (i, decision) in self.decisions.iter().enumerate() {
            anyhow::ensure!(
                !decision.when.is_empty(),
                "decisions[{i}].when is empty: it would answer every decision call"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_binding_format() {
        let script = Script::parse(
            r#"{"main": [{"blocks": [{"type":"tool_use","name":"Write","input":{"file_path":"a.txt","content":"x"}}],
                          "on_error": [{"type":"text","text":"denied"}]},
                         {"blocks": [{"type":"text","text":"done"}]}],
                "agent": [{"blocks": [{"type":"text","text":"sub"}]}]}"#,
        )
        .unwrap();
        assert_eq!(script.main.len(), 2);
        assert_eq!(
            script.main[0].blocks[0],
            Block::tool("Write", json!({"file_path": "a.txt", "content": "x"}))
        );
        assert_eq!(script.main[0].on_error, vec![Block::text("denied")]);
        assert_eq!(script.agent, vec![Turn::new(vec![Block::text("sub")])]);
    }

    #[test]
    fn agent_side_is_optional() {
        let script =
            Script::parse(r#"{"main": [{"blocks": [{"type":"text","text":"hi"}]}]}"#).unwrap();
        assert!(script.agent.is_empty());
    }

    #[test]
    fn rejects_unknown_fields_and_block_types() {
        let err = Script::parse(r#"{"main": [], "mian": []}"#).unwrap_err();
        assert!(
            format!("{err:#}").contains("unknown field `mian`"),
            "{err:#}"
        );
        let err = Script::parse(r#"{"main": [{"blocks": [{"type":"image"}]}]}"#).unwrap_err();
        assert!(format!("{err:#}").contains("image"), "{err:#}");
    }

    #[test]
    fn rejects_empty_turns_and_non_object_inputs() {
        let err = Script::parse(r#"{"main": [{"blocks": []}]}"#).unwrap_err();
        assert!(
            err.to_string().contains("main[0].blocks is empty"),
            "{err:#}"
        );
        let err = Script::parse(
            r#"{"main": [], "agent": [{"blocks": [{"type":"tool_use","name":"Bash","input":"ls"}]}]}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("agent[0] block 0 (Bash)"),
            "{err:#}"
        );
    }

    #[test]
    fn on_context_parses_and_needs_a_text_and_blocks() {
        let script = Script::parse(
            r#"{"main": [{"blocks": [{"type":"text","text":"done"}],
                          "on_context": {"contains": "already has", "blocks": [{"type":"text","text":"reuse"}]}}]}"#,
        )
        .unwrap();
        let branch = script.main[0].on_context.as_ref().unwrap();
        assert_eq!(branch.contains, "already has");
        assert_eq!(branch.blocks, vec![Block::text("reuse")]);
        let err = Script::parse(
            r#"{"main": [{"blocks": [{"type":"text","text":"done"}],
                          "on_context": {"contains": "", "blocks": [{"type":"text","text":"reuse"}]}}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("main[0].on_context"), "{err:#}");
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{").unwrap();
        let err = Script::load(&path).unwrap_err();
        assert!(format!("{err:#}").contains("s.json"), "{err:#}");
        let err = Script::load(&dir.path().join("missing.json")).unwrap_err();
        assert!(format!("{err:#}").contains("missing.json"), "{err:#}");
    }

    #[test]
    fn decisions_parse_and_an_empty_when_is_refused() {
        let script = Script::parse(
            r#"{"main": [], "decisions": [{"when": "rule a", "reply": {"a": 0.9}},
                                          {"when": "slow", "reply": "not json", "delay_ms": 50}]}"#,
        )
        .unwrap();
        assert_eq!(script.decisions[0].reply_text(), r#"{"a":0.9}"#);
        assert_eq!(script.decisions[1].reply_text(), "not json");
        assert_eq!(script.decisions[1].delay_ms, 50);
        let err =
            Script::parse(r#"{"main": [], "decisions": [{"when": "", "reply": 1}]}"#).unwrap_err();
        assert!(err.to_string().contains("decisions[0].when"), "{err:#}");
    }
}
