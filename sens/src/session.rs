//! The engine's hook session opened on a project: the engine with the
//! project's index (from the on-disk cache where it holds a file) inside a
//! `Session` writing its ledger. The resident engine opens it so, and the
//! harness's in-process hook handler (`sens_bench::agent::engine`) too.

use std::path::Path;

use anyhow::Context;
use sens_engine::Engine;
use sens_engine::cache::IndexCache;
use sens_engine::config::RuleConfig;
use sens_engine::session::{Session, SessionOptions};

/// The engine with the index of `workspace` as it stands, taken from the on-disk
/// `cache` folder where it holds a file.
pub fn open_engine(
    workspace: &Path,
    rules: &RuleConfig,
    cache: Option<&Path>,
) -> anyhow::Result<Engine> {
    let cache = cache.map(|dir| IndexCache::open(dir, rules)).transpose()?;
    Engine::open_with_cache(workspace, rules.clone(), cache.as_ref())
        .with_context(|| format!("indexing the workspace {}", workspace.display()))
}

/// The session's options for a ledger and the rules the engine judges with.
pub fn session_options(ledger: &Path, rules: &RuleConfig) -> SessionOptions {
    let mut options = SessionOptions::new(ledger.to_path_buf());
    options.rules_digest = rules.digest();
    options
}

/// The hook session around `engine` (opened on `workspace`).
pub fn engine_session(
    workspace: &Path,
    engine: Engine,
    options: SessionOptions,
) -> anyhow::Result<Session> {
    Session::new(workspace, Box::new(engine), options).with_context(|| {
        format!(
            "starting the engine's hook session in {}",
            workspace.display()
        )
    })
}
