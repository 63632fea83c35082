//! sens-bench: validates benchmark tasks, runs agents under conditions, and
//! reports what the Sens engine changes. `main.rs` only parses the command line;
//! every command is a function in one of these modules.

pub mod exec;
pub mod loc;
pub mod proc;
pub mod sequence;
pub mod task;
pub mod validate;
pub mod workspace;
