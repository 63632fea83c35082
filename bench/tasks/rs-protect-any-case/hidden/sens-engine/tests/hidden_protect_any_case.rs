//! The engine's own paths are protected in every letter case: on case-insensitive
//! file systems `.Sens/`, `.Claude/Settings.json` and `.MCP.json` are the engine's
//! files. Driven through the hook session, as the CLI would call it.

// The shared session fixtures; this file uses only some of them.
#[allow(dead_code)]
#[path = "session_common/mod.rs"]
mod common;

use common::*;
use serde_json::json;

const SPELLINGS: &[&str] = &[
    ".SENS/index",
    ".Sens/hooks.jsonl",
    "sub/.sEnS/cache",
    ".Claude/settings.json",
    ".claude/Settings.json",
    ".CLAUDE/SETTINGS.LOCAL.JSON",
    ".MCP.json",
    ".Mcp.Json",
];

#[test]
fn writes_in_any_case_are_denied() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    for rel in SPELLINGS {
        let write = project.handle(&project.pre(
            "Write",
            json!({"file_path": project.path(rel), "content": "{\"disableAllHooks\": true}"}),
        ));
        assert_eq!(decision(&write), Some("deny"), "Write {rel}: {write}");
        assert!(reason(&write).contains(rel), "the reason names the path: {write}");
    }
    Ok(())
}

#[test]
fn shell_commands_in_any_case_are_denied() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    let before = repository_state(&project.root)?;
    for rel in SPELLINGS {
        for command in [
            format!("echo '{{}}' > {rel}"),
            format!("echo '{{}}' | tee {rel}"),
            format!("sed -i 's/a/b/' {rel}"),
            format!("cd src && cp ../README ../{rel}"),
            format!("rm -f {}", project.path(rel)),
        ] {
            let bash = project.handle(&project.bash(&command));
            assert_eq!(decision(&bash), Some("deny"), "`{command}`: {bash}");
        }
    }
    for command in ["rm -rf .Claude", "mv .CLAUDE /tmp/elsewhere"] {
        let bash = project.handle(&project.bash(command));
        assert_eq!(decision(&bash), Some("deny"), "`{command}`: {bash}");
    }
    assert_eq!(repository_state(&project.root)?, before);
    Ok(())
}

#[test]
fn look_alikes_stay_allowed() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    for rel in [
        "src/Sens.rs",
        ".Sensible/notes.txt",
        "MCP.json",
        ".Claude/agents/Reviewer.md",
        "config/Settings.json",
    ] {
        let write = project.handle(&project.pre(
            "Write",
            json!({"file_path": project.path(rel), "content": "notes\n"}),
        ));
        assert_ne!(decision(&write), Some("deny"), "Write {rel}: {write}");
        let command = format!("echo notes > {rel}");
        let bash = project.handle(&project.bash(&command));
        assert_ne!(decision(&bash), Some("deny"), "`{command}`: {bash}");
    }
    Ok(())
}
