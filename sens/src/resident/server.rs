//! The resident engine (`sens serve DIR`): one hook session per
//! project, answering requests on `.sens/engine.sock` one at a time, and
//! exiting once no request came for the idle time, or once its socket is gone.

use std::fs::{OpenOptions, TryLockError};
use std::io::BufReader;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use sens_engine::config::RuleConfig;
use sens_engine::session::Session;
use serde_json::{Value, json};

use super::protocol::{Reply, Request, receive, send};
use super::{Project, open_own, remove_planted_link, shell_quoted, write_own};
use crate::invocation::Invocation;
use crate::session::{engine_session, open_engine, session_options};
use crate::sync::lock;

/// How long a connected client may take to send its request.
const REQUEST_READ_LIMIT: Duration = Duration::from_secs(10);
/// How often the engine checks that its socket is still there and its own.
const SOCKET_CHECK: Duration = Duration::from_millis(500);

struct Resident {
    project: Project,
    session: Session,
    /// Files and units indexed when the engine started.
    index_files: usize,
    index_units: usize,
    last_request: Instant,
}

/// Serves `project` until it has been idle for `idle`. Exits at once (success)
/// when another engine already serves it. A paused turn's note names the
/// commands of `invocation`.
pub fn serve(
    project: &Project,
    rules: &RuleConfig,
    invocation: &Invocation,
    idle: Duration,
) -> anyhow::Result<ExitCode> {
    // A client whose hook timed out has hung up; writing to it must fail, not
    // end the engine.
    // SAFETY: setting a signal's disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    project.create_engine_dir()?;
    let lock_path = project.lock();
    let lock_file = open_own(&lock_path, OpenOptions::new().write(true).create(true))
        .with_context(|| format!("cannot open the engine's lock {}", lock_path.display()))?;
    match lock_file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            eprintln!(
                "sens: another engine already serves {}",
                project.root.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Err(TryLockError::Error(err)) => {
            return Err(err).with_context(|| format!("cannot lock {}", lock_path.display()));
        }
    }
    let socket = project.socket()?;
    // The index cache under `.sens/` makes a restarted engine's start cheap.
    let engine = open_engine(&project.root, rules, Some(&project.index_cache()))?;
    let index_files = engine.index().files().count();
    let index_units = engine.index().units().count();
    // The ledger is opened by the session, which follows a link at its place.
    remove_planted_link(&project.ledger())?;
    let mut options = session_options(&project.ledger(), rules);
    options.human_decision = Some(decision_note(invocation, &project.root));
    // `sens mcp` serves them from this session (registered in `.mcp.json`).
    options.tools = true;
    let mut session = engine_session(&project.root, engine, options)?;
    session.resume()?;
    // Left by an engine that was killed: the lock says none is running.
    remove_if_present(&socket)?;
    let listener = UnixListener::bind(&socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    // Only the person may connect: a connection can approve.
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot restrict {}", socket.display()))?;
    let pid_file = project.pid_file();
    write_own(&pid_file, format!("{}\n", std::process::id()).as_bytes())?;
    let resident = Arc::new(Mutex::new(Resident {
        project: project.clone(),
        session,
        index_files,
        index_units,
        last_request: Instant::now(),
    }));
    let bound = SocketId::of(&socket)?;
    let watched = Arc::clone(&resident);
    std::thread::spawn(move || exit_when_idle_or_replaced(&watched, idle, bound));
    for stream in listener.incoming() {
        let served = stream
            .context("accepting a connection")
            .and_then(|stream| serve_one(&resident, &stream));
        if let Err(err) = served {
            eprintln!("sens: {err:#}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn serve_one(resident: &Mutex<Resident>, stream: &UnixStream) -> anyhow::Result<()> {
    stream.set_read_timeout(Some(REQUEST_READ_LIMIT))?;
    let request: Request = receive(&mut BufReader::new(stream))?;
    let reply = {
        let mut resident = lock(resident);
        let reply = resident.answer(request);
        resident.last_request = Instant::now();
        reply
    };
    send(&mut &*stream, &reply).context("answering a client that hung up")
}

/// Which file a socket path names (device and inode), to tell the engine's
/// own socket from one a later engine bound at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SocketId(u64, u64);

impl SocketId {
    fn of(path: &Path) -> anyhow::Result<SocketId> {
        let meta = std::fs::symlink_metadata(path)
            .with_context(|| format!("cannot stat {}", path.display()))?;
        Ok(SocketId(meta.dev(), meta.ino()))
    }
}

/// Exits, holding the session so that no request is half answered, once no
/// request came for `idle`, or at once when its socket is gone or another's
/// (`.sens/` deleted, as `git clean -fdx` does): no client can reach it then,
/// and the next hook starts a fresh engine, which must be the only one.
fn exit_when_idle_or_replaced(resident: &Mutex<Resident>, idle: Duration, bound: SocketId) {
    loop {
        let guard = lock(resident);
        let socket = guard.project.socket();
        let ours = socket
            .as_ref()
            .is_ok_and(|socket| SocketId::of(socket).ok() == Some(bound));
        if !ours {
            eprintln!(
                "sens: the engine's socket under {} is gone or another's (was .sens/ deleted?); \
                 exiting, the next hook starts a fresh engine",
                guard.project.engine_dir().display()
            );
            std::process::exit(0);
        }
        let quiet = guard.last_request.elapsed();
        if quiet >= idle {
            if let Ok(socket) = socket {
                let _ = std::fs::remove_file(socket);
            }
            let _ = std::fs::remove_file(guard.project.pid_file());
            std::process::exit(0);
        }
        drop(guard);
        std::thread::sleep((idle - quiet).min(SOCKET_CHECK));
    }
}

impl Resident {
    fn answer(&mut self, request: Request) -> Reply {
        let result = match request {
            Request::Hook { input } => Ok(self.session.handle_input(&input)),
            Request::Mcp { message } => {
                Ok(self.session.mcp_message(&message).unwrap_or(Value::Null))
            }
            Request::Approve => self.session.approve_by_human().and_then(|()| self.status()),
            Request::Reject => self
                .session
                .reject_by_human()
                .map(|kept| json!({ "kept": kept })),
            Request::Status => self.status(),
        };
        result.map_err(|err| format!("{err:#}"))
    }

    fn status(&mut self) -> anyhow::Result<Value> {
        let unapproved = self.session.unapproved_paths()?;
        Ok(json!({
            "pid": std::process::id(),
            "index_files": self.index_files,
            "index_units": self.index_units,
            "approved": self.session.approved().map(|c| json!({
                "number": c.number,
                "commit": c.commit.to_string(),
            })),
            "awaiting_human": self.session.awaiting_human(),
            "pending": self.session.pending(),
            "unapproved": unapproved,
        }))
    }
}

/// How the person decides a paused turn: the two commands, for this project.
fn decision_note(invocation: &Invocation, root: &Path) -> String {
    let dir = shell_quoted(root);
    format!(
        "Decide: `{}` makes it the approved state; `{}` restores the approved state (after \
         asking; the rejected state is kept under refs/sens/rejected/).",
        invocation.command(&format!("approve {dir}")),
        invocation.command(&format!("reject {dir}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_names_both_commands_with_the_folder_quoted() {
        let sens = Invocation {
            exe: "/usr/local/bin/sens".into(),
            prefix: Vec::new(),
        };
        let note = decision_note(&sens, Path::new("/tmp/my project"));
        assert!(note.contains("`sens approve '/tmp/my project'`"), "{note}");
        assert!(note.contains("`sens reject '/tmp/my project'`"), "{note}");
    }
}
