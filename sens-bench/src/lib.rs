//! sens-bench: validates benchmark tasks, runs agents under conditions, and
//! reports what the Sens engine changes. `main.rs` only parses the command line;
//! every command is a function in one of these modules.
//!
//! The rooms follow the flow of a run, and each uses only rooms before it:
//! `spec` (task, sequence, conditions files) -> `sandbox` (what a command sees)
//! -> `exec` (commands, process groups) -> `workspace` (copies, hidden files, the agent's diff) -> `agent`
//! (the CLI session) -> `measure` -> `record` -> `batch` (the batch folder and
//! one attempt) -> `stats` -> `report`. The commands over them: `run`,
//! `sequence_run`, `merge`, `validate`, `gate`, `review`, `label`, `calibrate`,
//! `suggest_eval`, `semble_eval`, `reuse_eval`, `engine_scale`, `engine_commands` (the
//! `engine` level: the `sens` crate's commands, the engine in a person's own Claude
//! Code, beside these evaluations), `stats_bench`.

pub mod agent;
pub mod batch;
pub mod calibrate;
pub mod engine_commands;
pub mod engine_scale;
pub mod exec;
pub mod gate;
pub mod jsonl;
pub mod label;
pub mod measure;
pub mod merge;
pub mod record;
pub mod report;
pub mod reuse_eval;
pub mod review;
pub mod run;
pub mod sandbox;
pub mod semble_eval;
pub mod sequence_run;
pub mod spec;
pub mod stats;
pub mod stats_bench;
pub mod suggest_eval;
pub mod validate;
pub mod workspace;

/// The one way the bench takes a lock (shared with the resident engine).
pub use sens::sync;
