//! sens-bench: validates benchmark tasks, runs agents under conditions, and
//! reports what the Sens engine changes. `main.rs` only parses the command line;
//! every command is a function in one of these modules.
//!
//! The rooms follow the flow of a run, and each uses only rooms before it:
//! `spec` (task, sequence, conditions files) -> `sandbox` (what a command sees)
//! -> `exec` (commands, process groups) -> `workspace` (copies, hidden files, the agent's diff) -> `agent`
//! (the CLI session) -> `measure` -> `record` -> `batch` (the batch folder and
//! one attempt) -> `stats` -> `report`. The commands over them: `commands` (run,
//! sequence run, merge, label, stats-bench, and the `engine` level: the `sens` crate's
//! commands, the engine in a person's own Claude Code, beside `evals`, the engine's
//! evaluations), `validate`, `gate`, `review`, `calibrate`. `jsonl` is the one reader
//! and appender of JSON-lines files, which every room from `measure` on shares.

pub mod agent;
pub mod batch;
pub mod calibrate;
pub mod commands;
pub mod evals;
pub mod exec;
pub mod gate;
pub mod jsonl;
pub mod measure;
pub mod record;
pub mod report;
pub mod review;
pub mod sandbox;
pub mod spec;
pub mod stats;
pub mod validate;
pub mod workspace;

/// The one way the bench takes a lock (shared with the resident engine).
pub use sens::sync;
