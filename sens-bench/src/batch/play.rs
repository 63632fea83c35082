//! Play, the second stage of an attempt: the agent's session on the prepared
//! copy (C1/C2: the Canon appended to the system prompt; C2: the engine answers
//! the hooks; `oracle` and `script:` agents: the scripted model server).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use super::BatchFolder;
use super::stage::Attempt;
use crate::agent::claude::{AgentError, ApiEndpoint, ClaudeOptions, TurnResult, run_once};
use crate::agent::engine::engine_handler;
use crate::agent::model_server::ModelServer;
use crate::agent::oracle::oracle_script;
use crate::agent::script::Script;
use crate::agent::{AgentKind, HookHandler};
use crate::exec;
use crate::spec::conditions::Condition;

impl BatchFolder {
    /// Runs the agent on the copy; `None` when Ctrl-C came first (the CLI and
    /// everything it started are ended with the session).
    pub(super) fn play(
        &self,
        input: &Attempt<'_>,
        condition: &Condition,
        prompt: &str,
        ledger: &Path,
    ) -> Option<Result<TurnResult, AgentError>> {
        self.runtime.block_on(async {
            let session = self.session(input, condition, prompt, ledger);
            tokio::select! {
                outcome = session => Some(outcome),
                () = interrupted() => None,
            }
        })
    }

    async fn session(
        &self,
        input: &Attempt<'_>,
        condition: &Condition,
        prompt: &str,
        ledger: &Path,
    ) -> Result<TurnResult, AgentError> {
        let script = match &self.agent {
            AgentKind::Claude => None,
            AgentKind::Oracle => {
                let patch = std::fs::read_to_string(input.reference).with_context(|| {
                    format!("cannot read the reference {}", input.reference.display())
                })?;
                Some(oracle_script(input.root, &patch, &input.commands.test)?)
            }
            AgentKind::Script(file) => Some(Script::load(file)?),
        };
        let server = match script {
            Some(script) => Some(ModelServer::start(script, input.root).await?),
            None => None,
        };
        let home = tempfile::Builder::new()
            .prefix("sens-bench-home-")
            .tempdir()
            .context("cannot create a private HOME for the CLI")?;
        self.leftovers.note(home.path())?;
        let options = ClaudeOptions {
            binary: self.claude_bin.clone(),
            workdir: input.root.to_path_buf(),
            home: home.path().to_path_buf(),
            model: self.model.clone(),
            effort: self.effort.clone(),
            timeout: input.timeout,
            api: server.as_ref().map(|server| ApiEndpoint {
                base_url: server.base_url(),
                api_key: "scripted".into(),
            }),
            append_system_prompt: condition.canon.then(|| sens_engine::CANON.to_string()),
            env: input.env.to_vec(),
            transcript: input.dir.join("transcript.jsonl"),
        };
        let handler: Option<Box<dyn HookHandler>> = if condition.engine {
            let session = engine_handler(input.root, ledger, condition.rule_config.clone())?;
            Some(Box::new(session))
        } else {
            None
        };
        run_once(&options, handler, prompt).await
    }
}

/// Resolves once Ctrl-C (or SIGTERM) has been received.
async fn interrupted() {
    while !exec::interrupted() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
