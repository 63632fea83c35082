//! Sens in a person's own Claude Code: the engine's hook session kept in a
//! resident process per project, reached by `sens hook` (the command hook
//! `sens install` registers) over a unix socket under `.sens/`.
//!
//! - `install`: merging the hook registrations into `.claude/settings.json` and
//!   the query tools' server into `.mcp.json`, and removing exactly them again.
//! - `protocol`: one JSON request line, one JSON reply line per connection.
//! - `server`: the resident process (`sens serve DIR`): the `Session`, one per
//!   project (a lock file), exiting after an idle time.
//! - `client`: connecting, starting the server on first use, and the hook's
//!   fail-closed answer when the engine cannot be reached in time.
//!
//! The session's state that matters across processes is on disk: the approved
//! point and checkpoints under `refs/sens/`, the ledger in `.sens/hooks.jsonl`.
//! A new process resumes from `refs/sens/approved`; what lives only in memory
//! (pending findings, the Stop rounds of the running turn) starts afresh, and
//! the next audit finds again what still stands.

pub mod client;
pub mod install;
pub mod protocol;
pub mod server;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};

/// The engine's folder in the project (protected, never in a snapshot).
const ENGINE_DIR: &str = ".sens";
/// `sun_path` holds 108 bytes, the final NUL included.
const MAX_SOCKET_PATH: usize = 107;

/// Where the resident engine of one project keeps its files.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    /// The project at `dir` (made absolute, so that the paths it gives are the
    /// same from any working folder).
    pub fn new(dir: &Path) -> anyhow::Result<Project> {
        let root = dir
            .canonicalize()
            .with_context(|| format!("the project folder {} does not exist", dir.display()))?;
        ensure!(root.is_dir(), "{} is not a folder", root.display());
        Ok(Project { root })
    }

    pub fn engine_dir(&self) -> PathBuf {
        self.root.join(ENGINE_DIR)
    }

    /// The engine's on-disk index cache, which also keeps the suggestions'
    /// symbol vectors: the resident engine's and `sens suggest`'s.
    pub fn index_cache(&self) -> PathBuf {
        self.engine_dir().join("index-cache")
    }

    pub fn socket(&self) -> anyhow::Result<PathBuf> {
        let socket = self.engine_dir().join("engine.sock");
        ensure!(
            socket.as_os_str().len() <= MAX_SOCKET_PATH,
            "the engine's socket path {} is longer than the {MAX_SOCKET_PATH} bytes a unix \
             socket allows: use Sens in a project whose path is shorter",
            socket.display()
        );
        Ok(socket)
    }

    /// Held by the running engine: at most one per project.
    pub fn lock(&self) -> PathBuf {
        self.engine_dir().join("engine.lock")
    }

    pub fn pid_file(&self) -> PathBuf {
        self.engine_dir().join("engine.pid")
    }

    /// The engine process's stderr.
    pub fn log(&self) -> PathBuf {
        self.engine_dir().join("engine.log")
    }

    pub fn ledger(&self) -> PathBuf {
        self.engine_dir().join("hooks.jsonl")
    }

    pub fn settings(&self) -> PathBuf {
        self.root.join(".claude").join("settings.json")
    }

    /// The project's MCP servers, where `install` registers the query tools.
    pub fn mcp_config(&self) -> PathBuf {
        self.root.join(".mcp.json")
    }

    /// Creates `.sens/` with a `.gitignore` that ignores the whole folder, so
    /// the person's `git status` does not list the engine's files. A link at
    /// the folder's place is removed, not followed (see [`open_own`]).
    pub fn create_engine_dir(&self) -> anyhow::Result<PathBuf> {
        let dir = self.engine_dir();
        remove_planted_link(&dir)?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the engine's folder {}", dir.display()))?;
        let ignore = dir.join(".gitignore");
        if !ignore.is_file() {
            write_own(&ignore, b"*\n")?;
        }
        Ok(dir)
    }
}

/// Opens one of the engine's own files under `.sens/` as `options` say, never
/// through a symlink: the agent can plant one there with a script, aimed at a
/// file of the person's that the engine would then truncate or append to. A
/// link at the file's place is removed first, and the open refuses to follow
/// one planted meanwhile.
pub(crate) fn open_own(path: &Path, options: &mut OpenOptions) -> anyhow::Result<File> {
    remove_planted_link(path)?;
    options
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| {
            format!(
                "cannot open {} (a link there is not followed)",
                path.display()
            )
        })
}

/// Replaces the content of one of the engine's own files (see [`open_own`]).
pub(crate) fn write_own(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    open_own(
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )?
    .write_all(bytes)
    .with_context(|| format!("cannot write {}", path.display()))
}

/// Removes a symlink at `path` (never what it points at), saying so in the
/// engine's log.
pub(crate) fn remove_planted_link(path: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        std::fs::remove_file(path)
            .with_context(|| format!("cannot remove the link {}", path.display()))?;
        eprintln!(
            "sens: {} was a symlink, not the engine's own; it was removed, not followed",
            path.display()
        );
    }
    Ok(())
}

/// `path` as one shell word, for the commands the engine tells the person to run.
fn shell_quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text).map_or_else(|_| text.to_string(), |q| q.into_owned())
}
