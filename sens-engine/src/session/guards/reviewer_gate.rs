//! `reviewer-gate`: a reviewer subagent must be read-only. On a PreToolUse of
//! the subagent tool (`Agent`, `Task` in older CLIs) whose agent type or
//! description says "review", the agent's tool list must exclude Write, Edit,
//! NotebookEdit and Bash, or the spawn is denied with the reason. The tool list
//! is the agent definition's (`.claude/agents/<type>.md`, its `tools:` line);
//! an agent without one inherits every tool, and a type with no definition in
//! the project (`general-purpose` and other built-ins) is not known to be
//! read-only, so it is denied too: the decision is never made on the prompt's
//! words. Inside a reviewer subagent (`agent_type` says review), a call of one
//! of those tools is denied as well.

use std::path::Path;

use serde_json::Value;

use super::{Guard, Kind, Seen};

/// Tools a reviewer may not have.
const WRITING_TOOLS: [&str; 4] = ["Write", "Edit", "NotebookEdit", "Bash"];

pub struct ReviewerGate;

impl Guard for ReviewerGate {
    fn name(&self) -> &'static str {
        "reviewer-gate"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if seen.event != "PreToolUse" {
            return Ok(Vec::new());
        }
        let Some(tool) = seen.tool() else {
            return Ok(Vec::new());
        };
        let inside = seen.input.get("agent_type").and_then(Value::as_str);
        if inside.is_some_and(says_review) && WRITING_TOOLS.contains(&tool) {
            return Ok(vec![(
                Kind::Deny,
                format!("Sens (reviewer-gate): a reviewer is read-only; it may not call {tool}."),
            )]);
        }
        if !matches!(tool, "Agent" | "Task") {
            return Ok(Vec::new());
        }
        let input = seen.tool_input();
        let field = |name: &str| input.get(name).and_then(Value::as_str).unwrap_or("");
        let agent_type = match field("subagent_type") {
            "" => "general-purpose",
            named => named,
        };
        if !says_review(agent_type) && !says_review(field("description")) {
            return Ok(Vec::new());
        }
        let writing = match agent_tools(seen.root, agent_type)? {
            Some(tools) => {
                let writing: Vec<&str> = WRITING_TOOLS
                    .into_iter()
                    .filter(|w| tools.iter().any(|t| t == w))
                    .collect();
                if writing.is_empty() {
                    return Ok(Vec::new());
                }
                format!("its tools include {}", writing.join(", "))
            }
            None => "its tools are not limited (no `tools:` list in .claude/agents/)".into(),
        };
        Ok(vec![(
            Kind::Deny,
            format!(
                "Sens (reviewer-gate): the reviewer subagent `{agent_type}` must be read-only, \
                 but {writing}. Spawn a reviewer whose tools exclude {}.",
                WRITING_TOOLS.join(", ")
            ),
        )])
    }
}

fn says_review(text: &str) -> bool {
    text.to_lowercase().contains("review")
}

/// The `tools:` list of `.claude/agents/<agent_type>.md` under `root`; `None`
/// when there is no such definition or it lists no tools (every tool).
fn agent_tools(root: &Path, agent_type: &str) -> anyhow::Result<Option<Vec<String>>> {
    if agent_type.contains(['/', '\\']) || agent_type.starts_with('.') {
        return Ok(None);
    }
    let path = root.join(".claude/agents").join(format!("{agent_type}.md"));
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow::anyhow!("reading {}: {e}", path.display())),
    };
    Ok(frontmatter_tools(&text))
}

/// The `tools:` field of a definition's front matter (`---` lines), comma- or
/// space-separated, with or without YAML list brackets.
fn frontmatter_tools(text: &str) -> Option<Vec<String>> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "---" {
        return None;
    }
    let tools = lines
        .take_while(|l| l.trim() != "---")
        .find_map(|l| l.trim().strip_prefix("tools:"))?;
    let tools: Vec<String> = tools
        .split(|c: char| c == ',' || c.is_whitespace() || c == '[' || c == ']')
        .map(|t| t.trim_matches(['"', '\'']))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    (!tools.is_empty()).then_some(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_tool_list() {
        let text = "---\nname: code-reviewer\ntools: Read, Grep, Glob\n---\nReview it.\n";
        assert_eq!(
            frontmatter_tools(text),
            Some(vec!["Read".into(), "Grep".into(), "Glob".into()])
        );
        assert_eq!(
            frontmatter_tools("---\ntools: [Read, \"Write\"]\n---\n").unwrap()[1],
            "Write"
        );
        assert_eq!(frontmatter_tools("---\nname: x\n---\ntools: Read\n"), None);
        assert_eq!(frontmatter_tools("no front matter"), None);
    }
}
