//! Play, the second stage of an attempt: the agent's session on the prepared
//! copy (C1/C2/C3: the Canon appended to the system prompt; C2/C3: the engine
//! answers the hooks; C3: it serves its query tools too; `oracle` and `script:`
//! agents: the scripted model server).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use super::BatchFolder;
use super::stage::Attempt;
use crate::agent::acceptance::MessagesExtractor;
use crate::agent::claude::{AgentError, ApiEndpoint, ClaudeOptions, TurnResult, run_once};
use crate::agent::decider;
use crate::agent::engine::{HandlerOptions, condition_handler};
use crate::agent::messages::MessagesClient;
use crate::agent::model_server::ModelServer;
use crate::agent::oracle::oracle_script;
use crate::agent::review::BenchReviewer;
use crate::agent::script::Script;
use crate::agent::{AgentKind, HookHandler};
use crate::exec;
use crate::measure::ledger::ACCEPTANCE_FILE;
use crate::sandbox::View;
use crate::spec::conditions::Condition;
use crate::workspace::named_folders;
use sens_engine::session::guards::Acceptance;
use sens_engine::session::review::{DEFAULT_BLOCK_AT, ReviewOptions};

impl BatchFolder {
    /// Runs the agent on the copy; `None` when Ctrl-C came first (the CLI and
    /// everything it started are ended with the session).
    pub(super) fn play(
        &self,
        input: &Attempt<'_>,
        condition: &Condition,
        prompt: &str,
        ledger: &Path,
        engine_start: &mut f64,
    ) -> Option<Result<TurnResult, AgentError>> {
        self.runtime.block_on(async {
            let session = self.session(input, condition, prompt, ledger, engine_start);
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
        engine_start: &mut f64,
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
        let sandbox = match self.sandbox {
            true => Some(self.view(input, home.path())?),
            false => None,
        };
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
            append_system_prompt: condition
                .canon
                .then(|| sens_engine::canon(condition.mcp_tools)),
            env: input.env.to_vec(),
            transcript: input.dir.join("transcript.jsonl"),
            sandbox,
            limits: self.budgets.run,
        };
        let tests = [input.commands.test.clone()];
        let acceptance = if condition.guards.iter().any(|g| g == "acceptance") {
            Some(self.acceptance(&options, input.dir)?)
        } else {
            None
        };
        // Every run shares one index cache: a copy of the same task or step
        // parses only the files its set-up or the earlier steps changed.
        let cache = match condition.engine {
            true => Some(self.cache.engine_index()?),
            false => None,
        };
        let handler = HandlerOptions {
            rules: condition.rule_config.clone(),
            tools: condition.mcp_tools,
            cache: cache.as_deref(),
            review: review_options(input.root, condition, options.api.as_ref())?,
            excluded: input.excluded,
            without_suggestions: false,
        };
        let started = std::time::Instant::now();
        let handler =
            condition_handler(input.root, ledger, condition, handler, &tests, acceptance)?
                .map(|session| Box::new(session) as Box<dyn HookHandler>);
        if condition.engine {
            *engine_start = started.elapsed().as_secs_f64();
        }
        run_once(&options, handler, prompt).await
    }
}

/// The Stop audit's reviewer a condition asks for, against the scripted model
/// server when the agent has one (else the environment's API): the review rules'
/// decision model and the reviewer model answer where the agent's model does.
fn review_options(
    root: &Path,
    condition: &Condition,
    api: Option<&ApiEndpoint>,
) -> anyhow::Result<Option<ReviewOptions>> {
    let Some(mode) = condition.review else {
        return Ok(None);
    };
    let model = condition
        .review_model
        .as_deref()
        .unwrap_or(decider::DEFAULT_MODEL);
    let client = match api {
        Some(api) => {
            MessagesClient::new(&api.base_url, &api.api_key, model, decider::DEFAULT_TIMEOUT)
        }
        None => MessagesClient::from_env(model, decider::DEFAULT_TIMEOUT)?,
    };
    let decider: Box<dyn decider::Decider> = match api {
        Some(_) => Box::new(decider::Messages(client.clone())),
        None => decider::from_env(model, decider::DEFAULT_TIMEOUT)?,
    };
    let reviewer = BenchReviewer::new(root, mode, decider, client)?;
    Ok(Some(ReviewOptions {
        reviewer: Arc::new(reviewer),
        block_at: condition.review_block_at.unwrap_or(DEFAULT_BLOCK_AT),
    }))
}

impl BatchFolder {
    /// The `acceptance` guard's extractor: the run's model at the session's
    /// endpoint (the scripted server for `oracle` and `script:` agents), and the
    /// checklist in the run folder.
    fn acceptance(&self, options: &ClaudeOptions, dir: &Path) -> anyhow::Result<Acceptance> {
        let client = match &options.api {
            Some(api) => {
                let model = self.model.as_deref().unwrap_or("scripted");
                MessagesClient::new(&api.base_url, &api.api_key, model, EXTRACTION_TIMEOUT)
            }
            None => {
                let model = self.model.as_deref().context(
                    "the acceptance guard calls the run's model through the Messages API: give --model",
                )?;
                MessagesClient::from_env(model, EXTRACTION_TIMEOUT)?
            }
        };
        Ok(Acceptance {
            extractor: Box::new(MessagesExtractor::new(client)),
            checklist: dir.join(ACCEPTANCE_FILE),
        })
    }
}

/// Within the CLI's wait for a hook answer (`DEFAULT_HOOK_TIMEOUT_SECS`).
const EXTRACTION_TIMEOUT: Duration = Duration::from_secs(45);

impl BatchFolder {
    /// What the agent's sandbox shows: the copy, the private HOME and the
    /// folders the copy's commands build into (every folder its variables name,
    /// a Rust task's leased `CARGO_TARGET_DIR`), the CLI's install and the
    /// interpreters on `PATH`.
    fn view(&self, input: &Attempt<'_>, home: &Path) -> anyhow::Result<View> {
        let mut writable = vec![input.root.to_path_buf(), home.to_path_buf()];
        writable.extend(named_folders(input.env));
        let path = std::env::var_os("PATH").unwrap_or_default();
        View::for_session(writable, &self.claude_bin, &path)
    }
}

/// Resolves once Ctrl-C (or SIGTERM) has been received.
async fn interrupted() {
    while !exec::interrupted() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
