//! sens-bench: validates benchmark tasks, runs agents under conditions, and
//! reports what the Sens engine changes. `main.rs` only parses the command line;
//! every command is a function in one of these modules.

pub mod agent;
pub mod conditions;
pub mod engine_bench;
pub mod engine_cli;
pub mod exec;
pub mod fairness;
pub mod gate;
pub mod grade;
pub mod integrity;
pub mod jscpd;
pub mod label;
pub mod loc;
pub mod manifest;
pub mod measure;
pub mod plan;
pub mod proc;
pub mod record;
pub mod report;
pub mod run;
pub mod runlog;
pub mod sequence;
pub mod sequence_run;
pub mod stats;
pub mod stats_bench;
pub mod task;
pub mod validate;
pub mod workspace;
