//! What one session is given before it starts: the options, the CLI's command
//! line, and where the pinned CLI is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent::budget::RunLimits;
use crate::sandbox::View;

/// The model API the CLI talks to instead of its default (the scripted server).
#[derive(Debug, Clone)]
pub struct ApiEndpoint {
    pub base_url: String,
    pub api_key: String,
}

/// Everything one session needs, decided before it starts.
#[derive(Debug, Clone)]
pub struct ClaudeOptions {
    pub binary: PathBuf,
    /// The project the agent works in (the CLI's cwd).
    pub workdir: PathBuf,
    /// A private HOME: the CLI keeps its config and transcripts there.
    pub home: PathBuf,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The limit for each turn, from sending the prompt to its `result`.
    pub timeout: Duration,
    /// `None`: the CLI uses the API settings of the environment.
    pub api: Option<ApiEndpoint>,
    /// Given with `--append-system-prompt` (C1, C2: the Canon).
    pub append_system_prompt: Option<String>,
    pub env: Vec<(String, String)>,
    /// Every line the CLI writes, in order; its stderr goes to [`STDERR_LOG`] in
    /// the same folder.
    pub transcript: PathBuf,
    /// The bubblewrap sandbox the CLI runs in; `None` with `--no-sandbox`.
    pub sandbox: Option<View>,
    /// Each turn's spending limits (see [`super::budget`]).
    pub limits: RunLimits,
}

impl ClaudeOptions {
    /// The command line; the same permissions for every condition (protocol doc 8).
    /// The engine's MCP server is allowed too: without it 2.1.197 refuses its tools
    /// ("requested permissions ... you haven't granted it yet"); where the
    /// condition does not serve them, the rule names nothing.
    pub(super) fn args(&self) -> Vec<String> {
        let allowed = format!("Bash,{}", sens_engine::mcp::permission_rule());
        let mut args: Vec<String> = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            &allowed,
            "--safe-mode",
        ]
        .map(String::from)
        .to_vec();
        let optional = [
            ("--model", &self.model),
            ("--effort", &self.effort),
            ("--append-system-prompt", &self.append_system_prompt),
        ];
        for (flag, value) in optional {
            if let Some(value) = value {
                args.extend([flag.to_string(), value.clone()]);
            }
        }
        args
    }
}

/// Where the pinned CLI is: `SENS_CLAUDE_BIN`, else `.tools/node_modules/.bin/claude`
/// under the workspace root (installed by `scripts/setup.sh`).
pub fn pinned_claude_bin(workspace_root: &Path) -> anyhow::Result<PathBuf> {
    let from_env = std::env::var_os("SENS_CLAUDE_BIN").map(PathBuf::from);
    claude_bin(from_env, workspace_root)
}

fn claude_bin(from_env: Option<PathBuf>, workspace_root: &Path) -> anyhow::Result<PathBuf> {
    let path = from_env.unwrap_or_else(|| workspace_root.join(".tools/node_modules/.bin/claude"));
    anyhow::ensure!(
        path.is_file(),
        "the Claude Code CLI is missing at {}: run scripts/setup.sh (or set SENS_CLAUDE_BIN)",
        path.display()
    );
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ClaudeOptions {
        ClaudeOptions {
            binary: PathBuf::from("claude"),
            workdir: PathBuf::from("/w"),
            home: PathBuf::from("/h"),
            model: Some("claude-sonnet-4-5".into()),
            effort: None,
            timeout: Duration::from_secs(1),
            api: None,
            append_system_prompt: Some("CANON".into()),
            env: Vec::new(),
            transcript: PathBuf::from("/t"),
            sandbox: None,
            limits: Default::default(),
        }
    }

    #[test]
    fn args_carry_the_fixed_permissions_and_the_condition() {
        let args = options().args();
        let joined = args.join(" ");
        assert!(joined.starts_with(
            "-p --input-format stream-json --output-format stream-json --verbose \
             --permission-mode acceptEdits --allowedTools Bash,mcp__sens --safe-mode"
        ));
        assert!(joined.contains("--model claude-sonnet-4-5"));
        assert!(!joined.contains("--effort"));
        assert_eq!(&args[args.len() - 2..], ["--append-system-prompt", "CANON"]);
    }

    #[test]
    fn the_cli_is_found_in_the_environment_or_under_tools() {
        let dir = tempfile::tempdir().unwrap();
        let err = claude_bin(None, dir.path()).unwrap_err();
        assert!(err.to_string().contains("run scripts/setup.sh"), "{err}");
        assert!(
            err.to_string().contains(".tools/node_modules/.bin/claude"),
            "{err}"
        );
        let bin = dir.path().join(".tools/node_modules/.bin/claude");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "").unwrap();
        assert_eq!(claude_bin(None, dir.path()).unwrap(), bin);
        let other = dir.path().join("other");
        assert!(claude_bin(Some(other.clone()), dir.path()).is_err());
        std::fs::write(&other, "").unwrap();
        assert_eq!(claude_bin(Some(other.clone()), dir.path()).unwrap(), other);
    }
}
