//! sens-bench: validates benchmark tasks, runs agents under conditions, and
//! reports what the Sens engine changes. `main.rs` only parses the command line;
//! every command is a function in one of these modules.

pub mod engine_bench;
pub mod engine_cli;
pub mod proc;
