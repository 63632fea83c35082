//! What the `sens` crate's integration tests share: a real CLI session on a
//! scenario project, and waiting for processes (the harness's own test module,
//! one definition for both crates).
//! Each test binary compiles this module whole and uses a part of it, so the
//! parts another binary uses are not dead code.
#![allow(dead_code)]

pub mod cli;
#[path = "../../../sens-bench/tests/common/processes.rs"]
pub mod processes;
