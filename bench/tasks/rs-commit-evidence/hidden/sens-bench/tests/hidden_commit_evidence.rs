//! `integrity::git_publishing` lists the Bash commands of a transcript that
//! commit or push with git, however they are spelled, and nothing else.

use sens_bench::integrity::git_publishing;
use serde_json::{Value, json};

fn tool_use(name: &str, input: Value) -> Value {
    json!({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "toolu_1", "name": name, "input": input}]}})
}

fn bash(command: &str) -> Value {
    tool_use(
        "Bash",
        json!({"command": command, "description": "run a command"}),
    )
}

fn found(commands: &[&str]) -> Vec<String> {
    let transcript: Vec<Value> = commands.iter().map(|c| bash(c)).collect();
    git_publishing(&transcript)
}

#[test]
fn every_spelling_of_commit_and_push_is_found() {
    let publishing = [
        "git commit -m 'add totals'",
        "git commit -am wip",
        "git push",
        "git push origin HEAD:main",
        "git -C /tmp/work commit -m x",
        "git -c user.name=agent -c user.email=a@b commit -m x",
        "git --no-pager commit --amend --no-edit",
        "cd src && git add . && git commit -m x",
        "cargo test; git commit -qm done",
        "cargo fmt || git push",
        "GIT_AUTHOR_NAME=agent git commit -m x",
        "sudo git push",
        "env GIT_DIR=.git git commit -m x",
        "/usr/bin/git commit -m x",
        "bash -c 'git commit -m \"from a subshell\"'",
        "sh -lc \"cd src && git push --force\"",
        "echo $(git commit -m x)",
        "if true; then git commit -m x; fi",
    ];
    for command in publishing {
        assert_eq!(found(&[command]), [command], "`{command}` publishes");
    }
}

#[test]
fn other_commands_and_mentions_are_not_found() {
    let quiet = [
        "git status",
        "git add -A && git diff --cached",
        "git log --grep commit",
        "git show HEAD:src/commit.rs",
        "echo 'git commit -m x'",
        "echo \"then git push\"",
        "grep -rn 'git push' docs",
        "cat <<'EOF'\ngit commit -m x\nEOF",
        "cargo test -q",
        "ls commit push",
        "git commit 'unbalanced",
    ];
    for command in quiet {
        assert!(found(&[command]).is_empty(), "`{command}` does not publish");
    }
}

#[test]
fn only_bash_tool_calls_count_and_order_is_kept() {
    let transcript = vec![
        json!({"type": "system", "subtype": "init", "cwd": "/tmp/work"}),
        bash("git commit -m first"),
        tool_use(
            "Write",
            json!({"file_path": "/tmp/work/publish.sh", "content": "git commit -m x\ngit push\n"}),
        ),
        tool_use(
            "Edit",
            json!({"file_path": "/tmp/work/README.md", "old_string": "a", "new_string": "git push"}),
        ),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "run git push to publish"}]}}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "Now I will git commit."},
            {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "cargo test"}},
            {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "git push origin main"}}]}}),
        json!({"type": "result", "subtype": "success", "result": "git commit done"}),
    ];
    assert_eq!(
        git_publishing(&transcript),
        ["git commit -m first", "git push origin main"]
    );
}

#[test]
fn an_empty_transcript_publishes_nothing() {
    assert!(git_publishing(&[]).is_empty());
}
