//! The hook session driven by hook inputs shaped as the CLI sends them, on real
//! git repositories, with a test judge (see `session_common`).

#[path = "session_common/mod.rs"]
mod common;

use std::sync::atomic::Ordering;

use common::*;
use git2::Repository;
use sens_engine::session::{Session, SessionOptions};
use serde_json::{Value, json};

fn write_input(project: &Project, rel: &str, content: &str) -> Value {
    project.pre(
        "Write",
        json!({"file_path": project.path(rel), "content": content}),
    )
}

fn copy_source() -> String {
    format!("pub fn beta(y: i32) -> i32 {{\n    // {MARKER}\n    y * 2 + 1\n}}\n")
}

#[test]
fn registrations_cover_every_event_for_every_tool() -> anyhow::Result<()> {
    let project = Project::new()?;
    let hooks = project.session.hook_registrations();
    for event in [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
        "SubagentStop",
    ] {
        let matchers = hooks[event]
            .as_array()
            .ok_or_else(|| anyhow::anyhow!("{event} is not registered"))?;
        assert_eq!(matchers.len(), 1);
        assert_eq!(matchers[0]["matcher"], Value::Null);
        assert_eq!(
            matchers[0]["hookCallbackIds"],
            json!([format!("sens_{event}")])
        );
        assert!(matchers[0]["timeout"].as_u64().is_some_and(|t| t > 0));
    }
    Ok(())
}

#[test]
fn a_ledger_inside_the_project_is_refused_unless_under_sens() -> anyhow::Result<()> {
    let project = Project::new()?;
    let judge = || Box::new(MarkerJudge::new(&project.root, project.fail.clone()));
    let inside = SessionOptions::new(project.root.join("hooks.jsonl"));
    let error = Session::new(&project.root, judge(), inside)
        .err()
        .map(|e| e.to_string());
    assert!(error.is_some_and(|e| e.contains("inside the project")));
    let under_sens = SessionOptions::new(project.root.join(".sens/hooks.jsonl"));
    assert!(Session::new(&project.root, judge(), under_sens).is_ok());
    Ok(())
}

#[test]
fn a_session_without_suggestions_answers_a_related_prompt_quietly() -> anyhow::Result<()> {
    let mut project = Project::with_options(|o| o.suggestions = false)?;
    assert_eq!(
        project.handle(&project.prompt("make the total double")),
        json!({})
    );
    let lines = project.ledger_lines()?;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["verdict"], "quiet", "{lines:?}");
    Ok(())
}

#[test]
fn prompt_checkpoints_without_touching_the_repository() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.write("notes/untracked.txt", "new\n")?;
    project.write("target/build.log", "ignored\n")?;
    project.write(".sens/cache", "engine state\n")?;
    let before = repository_state(&project.root)?;

    let output = project.handle(&project.prompt("make the total double"));
    let context = output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains(ALPHA_SIGNATURE), "{output}");
    assert!(context.contains("src/alpha.rs:3"), "{output}");
    assert_eq!(
        output["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );

    assert_eq!(repository_state(&project.root)?, before);
    let repo = Repository::open(&project.root)?;
    let checkpoint = repo
        .find_reference("refs/sens/checkpoints/1")?
        .peel_to_commit()?;
    let tree = checkpoint.tree()?;
    assert!(
        tree.get_path(std::path::Path::new("notes/untracked.txt"))
            .is_ok()
    );
    assert!(tree.get_path(std::path::Path::new("src/alpha.rs")).is_ok());
    assert!(
        tree.get_path(std::path::Path::new("target/build.log"))
            .is_err()
    );
    assert!(tree.get_path(std::path::Path::new(".sens/cache")).is_err());
    assert_eq!(project.approved_tree(), Some(tree.id()));
    let approved = repo
        .find_reference("refs/sens/approved")?
        .peel_to_commit()?;
    assert_eq!(approved.id(), checkpoint.id());

    let quiet = project.handle(&project.prompt("rename the readme"));
    assert_eq!(quiet, json!({}));
    assert!(repo.find_reference("refs/sens/checkpoints/2").is_ok());
    assert_eq!(
        project.approved_tree(),
        Some(tree.id()),
        "only the first checkpoint is approved"
    );
    Ok(())
}

#[test]
fn a_copy_written_with_write_is_denied_naming_the_original() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    let output = project.handle(&write_input(&project, "src/beta.rs", &copy_source()));
    assert_eq!(decision(&output), Some("deny"), "{output}");
    assert!(reason(&output).contains("src/alpha.rs:3"), "{output}");
    assert!(reason(&output).contains(ALPHA_SIGNATURE), "{output}");
    assert!(reason(&output).contains("src/beta.rs:2"), "{output}");

    let hint = project.handle(&write_input(
        &project,
        "src/hint.rs",
        &format!("// {HINT}\n"),
    ));
    assert_eq!(decision(&hint), None, "a hint does not deny: {hint}");
    let context = hint["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains("src/alpha.rs:3"), "{hint}");

    let clean = project.handle(&write_input(
        &project,
        "src/gamma.rs",
        "pub fn gamma() {}\n",
    ));
    assert_eq!(
        clean,
        json!({}),
        "no opinion leaves the CLI's permissions in charge"
    );
    Ok(())
}

#[test]
fn the_same_content_through_edit_is_denied() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.write("src/gamma.rs", "pub fn gamma() {}\n\npub fn keep() {}\n")?;
    project.handle(&project.prompt("add beta"));
    let edit = project.pre(
        "Edit",
        json!({
            "file_path": project.path("src/gamma.rs"),
            "old_string": "pub fn gamma() {}",
            "new_string": copy_source(),
            "replace_all": false,
        }),
    );
    let output = project.handle(&edit);
    assert_eq!(decision(&output), Some("deny"), "{output}");
    assert!(reason(&output).contains("src/alpha.rs:3"), "{output}");

    let notebook = json!({"cells": [{"id": "c1", "cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}], "nbformat": 4, "nbformat_minor": 5, "metadata": {}});
    project.write("nb/work.ipynb", &notebook.to_string())?;
    let cell = project.pre(
        "NotebookEdit",
        json!({"notebook_path": project.path("nb/work.ipynb"), "cell_id": "c1", "new_source": copy_source()}),
    );
    assert_eq!(decision(&project.handle(&cell)), Some("deny"));
    Ok(())
}

#[test]
fn a_copy_made_through_bash_is_found_after_the_tool_and_blocks_the_stop() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    let command = "cat > src/beta.rs <<'EOF'\n...\nEOF";
    assert_eq!(project.handle(&project.bash(command)), json!({}));
    project.write("src/beta.rs", &copy_source())?; // what the command did
    let post = project.handle(&project.post_bash(command));
    let context = post["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert_eq!(post["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    assert!(context.contains("src/beta.rs:2"), "{post}");
    assert!(context.contains("src/alpha.rs:3"), "{post}");
    assert_eq!(project.session.pending().len(), 1);

    let approved = project.approved_tree();
    let stop = project.handle(&project.stop(false));
    assert_eq!(stop["decision"], "block", "{stop}");
    assert!(
        stop["reason"]
            .as_str()
            .unwrap_or("")
            .contains("src/alpha.rs:3")
    );
    assert_eq!(project.approved_tree(), approved);

    // The agent replaces the copy with a call; the pending finding resolves.
    project.write(
        "src/beta.rs",
        "pub fn beta(y: i32) -> i32 { crate::alpha::alpha(y) }\n",
    )?;
    project.handle(&project.post(
        "Edit",
        json!({"file_path": project.path("src/beta.rs"), "old_string": "a", "new_string": "b"}),
        json!({"filePath": project.path("src/beta.rs")}),
    ));
    assert!(project.session.pending().is_empty());
    let stop = project.handle(&project.stop(true));
    assert_eq!(stop, json!({}), "the audit passes now");
    Ok(())
}

#[test]
fn a_resemblance_found_after_the_tool_is_neither_reported_nor_pending() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add gamma"));
    let command = "echo '// LIKE_ALPHA' > src/gamma.rs";
    project.write("src/gamma.rs", &format!("// {HINT}\n"))?; // what the command did
    let post = project.handle(&project.post_bash(command));
    assert_eq!(post, json!({}), "a hint does not hold the turn");
    assert!(project.session.pending().is_empty());
    assert_eq!(project.handle(&project.stop(false)), json!({}));
    Ok(())
}

#[test]
fn a_relative_path_is_taken_against_the_inputs_cwd() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    let mut write = project.pre(
        "Write",
        json!({"file_path": "beta.rs", "content": copy_source()}),
    );
    write["cwd"] = json!(project.root.join("src").to_string_lossy());
    let answer = project.handle(&write);
    assert_eq!(decision(&answer), Some("deny"), "{answer}");
    assert!(reason(&answer).contains("src/beta.rs"), "{answer}");
    Ok(())
}

#[test]
fn a_subagents_failing_rounds_do_not_count_for_the_main_agent() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("delegate"));
    project.write("src/beta.rs", &copy_source())?;
    project.handle(&project.post_bash("cp x src/beta.rs"));
    for _ in 0..2 {
        let stop = project.handle(&subagent_stop(&project));
        assert_eq!(stop["decision"], "block", "{stop}");
    }
    let main = project.handle(&project.stop(false));
    assert_eq!(
        main["decision"], "block",
        "the main agent's first round: {main}"
    );
    assert!(!project.session.awaiting_human());
    Ok(())
}

#[test]
fn every_tree_the_ledger_names_stays_reachable() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add gamma"));
    project.write("src/gamma.rs", "pub fn gamma() {}\n")?;
    project.handle(&project.post_bash("touch src/gamma.rs"));
    project.handle(&project.stop(false));
    let repo = Repository::open(&project.root)?;
    let mut walk = repo.revwalk()?;
    walk.push_ref("refs/sens/trees")?;
    let mut kept = std::collections::HashSet::new();
    for commit in walk {
        kept.insert(repo.find_commit(commit?)?.tree_id().to_string());
    }
    let named: Vec<String> = project
        .ledger_lines()?
        .iter()
        .filter_map(|line| line["tree_before"].as_str().map(str::to_string))
        .collect();
    assert!(named.len() >= 2, "{named:?}");
    for tree in &named {
        assert!(kept.contains(tree), "{tree} is not kept: {kept:?}");
    }
    Ok(())
}

#[test]
fn git_commit_while_unapproved_is_denied_and_changes_nothing() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    project.write("src/beta.rs", &copy_source())?;
    project.handle(&project.post_bash("cp /tmp/x src/beta.rs"));
    let before = repository_state(&project.root)?;
    for command in [
        "git commit -am 'add beta'",
        "git -C . commit -m x",
        "git -c user.name=a -c user.email=b commit -m x",
        "cargo fmt && git add -A && git commit -m x",
        "false || git commit -m x",
        "ls; git push origin HEAD",
        "bash -c 'git commit -m x'",
        "GIT_AUTHOR_NAME=x git commit -m y",
        "git status | cat; git push",
    ] {
        let output = project.handle(&project.bash(command));
        assert_eq!(decision(&output), Some("deny"), "`{command}`: {output}");
        assert!(reason(&output).contains("src/alpha.rs:3"), "{output}");
        assert_eq!(
            repository_state(&project.root)?,
            before,
            "`{command}` changed the repository"
        );
    }
    let harmless = project.handle(&project.bash("echo \"git commit\" && git log --grep commit"));
    assert_eq!(harmless, json!({}));

    std::fs::remove_file(project.root.join("src/beta.rs"))?;
    project.write(
        "src/beta.rs",
        "pub fn beta() -> i32 { crate::alpha::alpha(1) }\n",
    )?;
    project.handle(&project.post_bash("vim src/beta.rs"));
    let output = project.handle(&project.bash("git add -A && git commit -m 'add beta'"));
    assert_eq!(output, json!({}), "a passing audit lets the commit run");
    let repo = Repository::open(&project.root)?;
    let approved = repo
        .find_reference("refs/sens/approved")?
        .peel_to_commit()?;
    assert!(
        approved
            .tree()?
            .get_path(std::path::Path::new("src/beta.rs"))
            .is_ok()
    );

    // The commit runs with the real git, and every object the engine wrote is sound.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&project.root)
            .output()
    };
    assert!(git(&["add", "-A"])?.status.success());
    assert!(git(&["commit", "-qm", "add beta"])?.status.success());
    let head = repo.head()?.peel_to_commit()?;
    assert_eq!(
        head.tree_id(),
        approved.tree_id(),
        "what was committed was approved"
    );
    let fsck = git(&["fsck", "--strict", "--no-dangling"])?;
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    Ok(())
}

#[test]
fn protected_paths_are_denied_through_every_tool() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    let before = repository_state(&project.root)?;
    for rel in [
        ".sens/index",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mcp.json",
    ] {
        let write = project.handle(&write_input(&project, rel, "{\"disableAllHooks\": true}"));
        assert_eq!(decision(&write), Some("deny"), "Write {rel}: {write}");
        assert!(reason(&write).contains(rel), "{write}");
        let edit = project.handle(&project.pre(
            "Edit",
            json!({"file_path": project.path(rel), "old_string": "{}", "new_string": "{\"disableAllHooks\": true}"}),
        ));
        assert_eq!(decision(&edit), Some("deny"), "Edit {rel}: {edit}");
        for command in [
            format!("echo '{{}}' > {rel}"),
            format!("sed -i 's/a/b/' {rel}"),
            format!("cd src && cp ../README ../{rel}"),
            format!("rm -f {}", project.path(rel)),
        ] {
            let bash = project.handle(&project.bash(&command));
            assert_eq!(decision(&bash), Some("deny"), "`{command}`: {bash}");
        }
    }
    assert_eq!(repository_state(&project.root)?, before);
    Ok(())
}

#[test]
fn protected_paths_are_denied_under_links_the_agent_made() -> anyhow::Result<()> {
    use std::os::unix::fs::symlink;
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    std::fs::create_dir_all(project.root.join(".claude"))?;
    std::fs::create_dir_all(project.root.join(".sens"))?;
    // As `ln -s .claude cfg && ln -s .sens s` through Bash would leave them.
    symlink(".claude", project.root.join("cfg"))?;
    symlink(".sens", project.root.join("s"))?;
    symlink("../.mcp.json", project.root.join("src/servers.json"))?;
    for rel in ["cfg/settings.json", "s/x", "src/servers.json"] {
        // Removing `src/servers.json` takes the link alone, which is allowed.
        let removal = (!rel.starts_with("src/")).then(|| format!("rm -f {}", project.path(rel)));
        let write = project.handle(&write_input(&project, rel, "{\"disableAllHooks\": true}"));
        assert_eq!(decision(&write), Some("deny"), "Write {rel}: {write}");
        let relative =
            project.handle(&project.pre("Write", json!({"file_path": rel, "content": "{}"})));
        assert_eq!(
            decision(&relative),
            Some("deny"),
            "Write {rel} (relative): {relative}"
        );
        for command in [
            format!("echo '{{}}' > {rel}"),
            format!("cd src && cp ../README ../{rel}"),
        ]
        .into_iter()
        .chain(removal)
        {
            let bash = project.handle(&project.bash(&command));
            assert_eq!(decision(&bash), Some("deny"), "`{command}`: {bash}");
        }
    }
    for command in [
        "ln -s .sens s2",
        "ln -sf .claude cfg2",
        "cd src && ln -s ../.claude/settings.json s.json",
        "ln .claude/settings.json hard.json",
        "ln -s /abs/.sens/index idx",
        "ln -s -t src ../.claude",
    ] {
        let bash = project.handle(&project.bash(command));
        assert_eq!(decision(&bash), Some("deny"), "`{command}`: {bash}");
    }
    for command in [
        "ln -s src/lib.rs lib.rs",
        "ln -s ../README src/README",
        "rm -f src/servers.json",
    ] {
        let bash = project.handle(&project.bash(command));
        assert_eq!(bash, json!({}), "`{command}` links to a plain file");
    }
    let plain = project.handle(&write_input(&project, "cfg/agents/a.md", "notes\n"));
    assert_eq!(
        plain,
        json!({}),
        "a file beside the settings is no engine file"
    );
    Ok(())
}

#[test]
fn a_hard_link_to_a_protected_file_is_denied_like_the_file() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    project.write(".claude/settings.json", "{}\n")?;
    project.write(".sens/install.json", "{}\n")?;
    // As `python3 -c "import os; os.link(...)"` would leave them.
    std::fs::hard_link(
        project.root.join(".claude/settings.json"),
        project.root.join("notes.json"),
    )?;
    std::fs::hard_link(
        project.root.join(".sens/install.json"),
        project.root.join("src/r.json"),
    )?;
    for rel in ["notes.json", "src/r.json"] {
        let write = project.handle(&write_input(&project, rel, "{\"disableAllHooks\": true}"));
        assert_eq!(decision(&write), Some("deny"), "Write {rel}: {write}");
        let bash = project.handle(&project.bash(&format!("echo '{{}}' > {rel}")));
        assert_eq!(decision(&bash), Some("deny"), "Bash to {rel}: {bash}");
    }
    project.write("src/plain.json", "{}\n")?;
    let plain = project.handle(&write_input(&project, "src/plain.json", "[]\n"));
    assert_eq!(plain, json!({}));
    Ok(())
}

#[test]
fn a_link_to_a_protected_path_made_by_a_script_blocks_the_stop() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    std::fs::create_dir_all(project.root.join(".sens"))?;
    let command = "python3 -c \"import os; os.symlink('.sens', 's')\"";
    assert_eq!(project.handle(&project.bash(command)), json!({}));
    std::os::unix::fs::symlink(".sens", project.root.join("s"))?;
    let post = project.handle(&project.post_bash(command));
    let context = post["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(
        context.contains("s:1") && context.contains("(protected)"),
        "{post}"
    );
    let stop = project.handle(&project.stop(false));
    assert_eq!(stop["decision"], "block", "{stop}");
    Ok(())
}

#[test]
fn a_protected_file_changed_by_a_script_blocks_until_a_human_decides() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("configure"));
    // The shell analysis cannot read what a script writes, so the command runs.
    let command = "python3 -c \"open('.claude/settings.json', 'w').write('{}')\"";
    assert_eq!(project.handle(&project.bash(command)), json!({}));
    project.write(".claude/settings.json", "{\"disableAllHooks\": true}\n")?;
    let post = project.handle(&project.post_bash(command));
    let context = post["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains(".claude/settings.json:1"), "{post}");
    assert!(context.contains("(protected)"), "{post}");

    let approved = project.approved_tree();
    let commit = project.handle(&project.bash("git commit -am settings"));
    assert_eq!(decision(&commit), Some("deny"), "{commit}");
    assert!(
        reason(&commit).contains(".claude/settings.json"),
        "{commit}"
    );
    for round in 1..=3 {
        let stop = project.handle(&project.stop(round > 1));
        let text = stop.to_string();
        assert!(
            text.contains(".claude/settings.json"),
            "round {round}: {stop}"
        );
    }
    assert!(project.session.awaiting_human());
    assert_eq!(project.approved_tree(), approved, "nothing was approved");

    // A human approves the change; the next audit passes.
    project.session.approve_by_human()?;
    assert_eq!(project.handle(&project.stop(false)), json!({}));
    Ok(())
}

#[test]
fn three_failing_stops_pause_the_turn_with_nothing_approved() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    let approved = project.approved_tree();
    project.write("src/beta.rs", &copy_source())?;
    project.handle(&project.post_bash("cp x src/beta.rs"));
    let first = project.handle(&project.stop(false));
    let second = project.handle(&project.stop(true));
    let third = project.handle(&project.stop(true));
    assert_eq!(first["decision"], "block");
    assert_eq!(second["decision"], "block");
    assert_eq!(
        third.get("decision"),
        None,
        "the third round lets it stop: {third}"
    );
    assert!(
        third["systemMessage"]
            .as_str()
            .unwrap_or("")
            .contains("paused")
    );
    assert!(project.session.awaiting_human());
    assert_eq!(project.approved_tree(), approved, "nothing approved");
    let verdicts: Vec<Value> = project
        .ledger_lines()?
        .iter()
        .map(|l| l["verdict"].clone())
        .collect();
    assert_eq!(
        verdicts[verdicts.len() - 3..],
        [json!("block"), json!("block"), json!("paused")]
    );

    // The next turn counts its own rounds.
    project.handle(&project.prompt("go on"));
    assert_eq!(project.handle(&project.stop(false))["decision"], "block");

    project.session.approve_by_human()?;
    assert!(!project.session.awaiting_human());
    assert_ne!(project.approved_tree(), approved);
    let last = project.ledger_lines()?.pop().unwrap_or_default();
    assert_eq!(last["event"], "HumanApproval");
    assert_eq!(last["verdict"], "approved");
    assert_eq!(project.handle(&project.stop(false)), json!({}));
    Ok(())
}

#[test]
fn a_passing_stop_moves_the_approved_point() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add gamma"));
    let first = project.approved_tree();
    project.write("src/gamma.rs", "pub fn gamma() -> i32 { 3 }\n")?;
    project.handle(&project.post(
        "Write",
        json!({"file_path": project.path("src/gamma.rs"), "content": "pub fn gamma() -> i32 { 3 }\n"}),
        json!({"type": "create", "filePath": project.path("src/gamma.rs")}),
    ));
    assert_eq!(project.handle(&project.stop(false)), json!({}));
    let moved = project.approved_tree();
    assert_ne!(moved, first);
    let repo = Repository::open(&project.root)?;
    let approved = repo
        .find_reference("refs/sens/approved")?
        .peel_to_commit()?;
    assert_eq!(Some(approved.tree_id()), moved);
    assert!(
        approved
            .tree()?
            .get_path(std::path::Path::new("src/gamma.rs"))
            .is_ok()
    );
    // A copy written after the approval is judged against the new point.
    project.write("src/beta.rs", &copy_source())?;
    assert_eq!(project.handle(&project.stop(false))["decision"], "block");
    Ok(())
}

#[test]
fn a_subagents_events_get_the_same_verdicts() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("delegate"));
    let write = project.handle(&as_subagent(write_input(
        &project,
        "src/beta.rs",
        &copy_source(),
    )));
    assert_eq!(decision(&write), Some("deny"), "{write}");
    let settings = project.handle(&as_subagent(
        project.bash("echo '{}' > .claude/settings.json"),
    ));
    assert_eq!(decision(&settings), Some("deny"), "{settings}");
    project.write("src/beta.rs", &copy_source())?;
    let post = project.handle(&as_subagent(project.post_bash("cp a src/beta.rs")));
    assert!(
        post["hookSpecificOutput"]["additionalContext"].is_string(),
        "{post}"
    );
    let stop = project.handle(&subagent_stop(&project));
    assert_eq!(stop["decision"], "block", "{stop}");
    let lines = project.ledger_lines()?;
    let agent_lines = lines
        .iter()
        .filter(|l| l["agent_id"] == "a1b2c3d4e5f6")
        .count();
    assert_eq!(agent_lines, 4);
    assert_eq!(
        lines.last().map(|l| l["event"].clone()),
        Some(json!("SubagentStop"))
    );
    Ok(())
}

#[test]
fn an_erroring_judge_never_yields_an_approval() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add gamma"));
    let approved = project.approved_tree();
    project.fail.store(true, Ordering::SeqCst);
    project.write("src/gamma.rs", "pub fn gamma() {}\n")?;

    let write = project.handle(&write_input(
        &project,
        "src/delta.rs",
        "pub fn delta() {}\n",
    ));
    assert_eq!(decision(&write), Some("deny"), "{write}");
    assert!(reason(&write).contains("engine failure"), "{write}");
    let commit = project.handle(&project.bash("git commit -am x"));
    assert_eq!(decision(&commit), Some("deny"), "{commit}");
    assert_eq!(project.handle(&project.post_bash("ls")), json!({}));
    assert_eq!(project.handle(&project.stop(false))["decision"], "block");
    assert_eq!(project.handle(&project.stop(true))["decision"], "block");
    let third = project.handle(&project.stop(true));
    assert!(
        third["systemMessage"]
            .as_str()
            .unwrap_or("")
            .contains("paused"),
        "{third}"
    );
    assert_eq!(project.approved_tree(), approved);

    // A hook input the engine cannot read is an error, answered with a deny.
    let mut broken = project.pre("Write", json!({"content": "x"}));
    broken["tool_input"] = json!("not an object");
    assert_eq!(decision(&project.handle(&broken)), Some("deny"));
    let unknown = project
        .session
        .handle("someone_else", &json!({"hook_event_name": "PreToolUse"}));
    assert_eq!(decision(&unknown), Some("deny"));

    let lines = project.ledger_lines()?;
    let after_failure = &lines[1..];
    assert!(
        after_failure.iter().all(|l| l["verdict"] == "error"),
        "{after_failure:?}"
    );
    assert!(after_failure.iter().all(|l| l["error"].is_string()));
    Ok(())
}

#[test]
fn every_callback_lands_in_the_ledger_with_what_a_replay_needs() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    let inputs = vec![
        project.prompt("make it double"),
        write_input(&project, "src/beta.rs", &copy_source()),
        write_input(&project, "src/gamma.rs", "pub fn gamma() {}\n"),
        project.bash("ls"),
        project.post_bash("ls"),
        project.stop(false),
    ];
    let mut outputs = Vec::new();
    for input in &inputs {
        outputs.push(project.handle(input));
    }
    let lines = project.ledger_lines()?;
    assert_eq!(lines.len(), inputs.len());
    let repo = Repository::open(&project.root)?;
    for (i, ((line, input), output)) in lines.iter().zip(&inputs).zip(&outputs).enumerate() {
        assert_eq!(line["seq"], json!(i + 1));
        assert_eq!(&line["input"], input);
        assert_eq!(&line["output"], output);
        assert_eq!(line["event"], input["hook_event_name"]);
        assert_eq!(
            line["tool"],
            input.get("tool_name").cloned().unwrap_or(Value::Null)
        );
        assert_eq!(line["input_digest"].as_str().map(str::len), Some(64));
        assert!(line["latency_us"].is_u64());
        assert!(line["findings"].is_array());
        let tree = line["tree_before"].as_str().unwrap_or("");
        assert!(
            repo.find_tree(git2::Oid::from_str(tree)?).is_ok(),
            "line {i}: {line}"
        );
    }
    let verdicts: Vec<&str> = lines.iter().filter_map(|l| l["verdict"].as_str()).collect();
    assert_eq!(
        verdicts,
        ["context", "deny", "allow", "allow", "quiet", "pass"]
    );
    assert_eq!(lines[0]["suggestions"][0]["name"], "alpha");
    assert_eq!(lines[1]["findings"][0]["existing"]["file"], "src/alpha.rs");
    assert_eq!(lines[1]["findings"][0]["new"]["line"], 2);
    assert_ne!(lines[1]["input_digest"], lines[2]["input_digest"]);
    // Every tree named in the ledger stays reachable from refs/sens/trees.
    let mut kept = std::collections::HashSet::new();
    let mut walk = repo.revwalk()?;
    walk.push_ref("refs/sens/trees")?;
    for commit in walk {
        kept.insert(repo.find_commit(commit?)?.tree_id().to_string());
    }
    for line in &lines {
        assert!(kept.contains(line["tree_before"].as_str().unwrap_or("")));
    }
    Ok(())
}

#[test]
fn a_failed_command_that_wrote_a_copy_is_found_too() -> anyhow::Result<()> {
    let mut project = Project::new()?;
    project.handle(&project.prompt("add beta"));
    project.write("src/beta.rs", &copy_source())?;
    let mut failure = project.pre("Bash", json!({"command": "cp x src/beta.rs && false"}));
    failure["hook_event_name"] = json!("PostToolUseFailure");
    failure["error"] = json!("Exit code 1");
    failure["is_interrupt"] = json!(false);
    failure["duration_ms"] = json!(5);
    let output = project.handle(&failure);
    assert_eq!(
        output["hookSpecificOutput"]["hookEventName"],
        "PostToolUseFailure"
    );
    let context = output["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("");
    assert!(context.contains("src/alpha.rs:3"), "{output}");
    assert_eq!(project.session.pending().len(), 1);
    Ok(())
}
