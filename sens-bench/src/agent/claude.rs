//! The Claude Code driver: one CLI process per session, spoken to over
//! stream-json (protocol doc sections 1, 2, 5).
//!
//! Three tasks share the process: a reader (stdout -> transcript, control
//! requests, results), a writer (the only owner of stdin), and a hook worker
//! thread that answers `hook_callback`s and `mcp_message`s (the handler's
//! in-process MCP servers) in arrival order with the session's [`HookHandler`].
//!
//! Decisions where the contract (docs/contract.md) is silent:
//! - `--safe-mode` exists in 2.1.197 and is kept for every condition: it turns
//!   off file-based customizations (settings hooks, CLAUDE.md, plugins), while
//!   hooks registered through `initialize` still fire (the integration tests
//!   run with it).
//! - Several user messages may go to one process ([`ClaudeSession::turn`]); the
//!   time limit applies to each turn. The CLI's `modelUsage` and cost add up over
//!   a session, so the driver reports each turn's share.
//! - A hook callback the handler cannot answer (it panicked) stays unanswered:
//!   the CLI then blocks the tool at the callback timeout, where an error answer
//!   would let it run. The turn fails as a harness error.
//! - On a timeout and at the end, everything the CLI started is killed,
//!   including the Bash commands it detaches into their own sessions. After a
//!   crash only its process group can be ended: the orphans' parent links are gone.

//!
//! Each part is a file of `claude/`: the options and the CLI's command line
//! (`options`), how a session fails (`error`), the turn's `result` (`result`)
//! and the usage figures in the CLI's names (`usage`), the stream-json messages
//! (`protocol`), the process's pipes (`stream`), the hook worker (`hooks`), and
//! the running process (`session`).

use std::time::Duration;

mod error;
mod hooks;
mod options;
mod protocol;
mod result;
mod session;
mod stream;
mod usage;

pub use error::AgentError;
pub use options::{ApiEndpoint, ClaudeOptions, pinned_claude_bin};
pub use result::TurnResult;
pub use session::{ClaudeSession, run_once};
pub use usage::ModelUsage;

/// How long the CLI gets to answer `initialize`, at most: a shorter time limit
/// of the run bounds it too.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// The file beside the transcript that keeps everything the CLI writes to stderr.
pub const STDERR_LOG: &str = "agent.stderr.log";
/// After an interrupt, how long the turn gets to close with its `result`.
const INTERRUPT_GRACE: Duration = Duration::from_secs(10);
/// After stdin closes (or the stream ends), how long the CLI gets to exit.
const EXIT_GRACE: Duration = Duration::from_secs(10);
/// After a turn's result, how long a callback still in the handler (the CLI gave
/// up waiting for it) may take before the turn fails as a harness error.
const HOOK_SETTLE: Duration = Duration::from_secs(60);
/// How much of the CLI's stderr a crash report quotes.
const STDERR_TAIL: usize = 4000;
