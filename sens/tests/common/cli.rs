//! A real Claude Code CLI session on a copy of a scenario project, against the
//! harness's scripted model server: the project, the CLI's own HOME (the
//! project trusted) and one `-p` run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sens_bench::agent::claude::pinned_claude_bin;
use sens_bench::agent::model_server::{ModelServer, RecordedRequest};
use sens_bench::agent::script::{Block, Script};
use sens_bench::exec::{self, CommandLine};
use serde_json::json;

const CLI_LIMIT: Duration = Duration::from_secs(240);

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Marks `root` trusted in the CLI's config under `config_dir`, as accepting
/// the trust dialog once does: CLI 2.1.197 ignores a project's
/// `permissions.allow` in a workspace that is not trusted.
pub fn trust(config_dir: &Path, root: &Path) {
    std::fs::create_dir_all(config_dir).unwrap();
    let config =
        json!({"projects": {root.display().to_string(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(config_dir.join(".claude.json"), config.to_string()).unwrap();
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The scenario's first write: `to_cents`, a renamed copy of `parse_amount`.
pub fn copied_report() -> String {
    let scenario = Script::load(&repo_root().join("bench/scenarios/copy-then-reuse.json")).unwrap();
    scenario.main[0]
        .blocks
        .iter()
        .find_map(|block| match block {
            Block::ToolUse { name, input } if name == "Write" => {
                input["content"].as_str().map(str::to_string)
            }
            _ => None,
        })
        .unwrap()
}

pub fn write_report(content: &str) -> Block {
    Block::tool(
        "Write",
        json!({"file_path": "src/report.py", "content": content}),
    )
}

/// A copy of the scenario project `amounts` (its `parse_amount`) at `root`,
/// committed in a new git repository.
pub fn amounts_project(root: &Path) {
    copy_dir(&repo_root().join("bench/scenarios/projects/amounts"), root);
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "start"]);
}

/// The CLI's environment: HOME and the config folder under `home`, where `root`
/// is trusted, no traffic but the model's, and `bin` first on PATH (a plugin's
/// hooks call `sens` by name).
pub fn cli_env(home: &Path, root: &Path, bin: &Path) -> Vec<(String, String)> {
    trust(&home.join(".claude"), root);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    [
        ("HOME", home.display().to_string()),
        (
            "CLAUDE_CONFIG_DIR",
            home.join(".claude").display().to_string(),
        ),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("PATH", path),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Runs the pinned CLI once in `-p` mode in `root` with `env`, against
/// `script`, its log at `log`; returns the requests the model server received.
pub async fn play(
    root: &Path,
    mut env: Vec<(String, String)>,
    log: PathBuf,
    script: Script,
) -> Vec<RecordedRequest> {
    let binary = pinned_claude_bin(&repo_root()).unwrap_or_else(|err| panic!("{err:#}"));
    let server = ModelServer::start(script, root).await.unwrap();
    env.extend(
        [
            ("ANTHROPIC_BASE_URL", server.base_url()),
            ("ANTHROPIC_API_KEY", "scripted".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let line = format!(
        "{} -p 'Add a total of typed amounts.' --permission-mode acceptEdits --allowedTools Bash",
        binary.display()
    );
    let root = root.to_path_buf();
    let outcome = tokio::task::spawn_blocking(move || {
        exec::run(&CommandLine {
            line: &line,
            dir: &root,
            env: &env,
            timeout: CLI_LIMIT,
            log: &log,
            sandbox: None,
        })
    })
    .await
    .unwrap()
    .unwrap();
    let log = std::fs::read_to_string(&outcome.log).unwrap();
    eprintln!("{log}");
    assert!(outcome.status.passed(), "the CLI {}: {log}", outcome.status);
    server.requests()
}
