//! Sens in a person's own project: the engine (`sens-engine`) on the command
//! line, and in Claude Code as command hooks and a stdio MCP server answered by
//! a resident engine per project. `main.rs` only parses the command line; the
//! harness (`sens-bench`) runs the same commands as `sens-bench engine ...`.
//!
//! - `cli`: the commands (`sens index|dupes|check|suggest|distill|bench|install|
//!   uninstall|hook|mcp|approve|reject|status|serve`) and their tables.
//! - `bench`: `sens bench DIR`, the engine's speed beside jscpd (with
//!   `measured`, a child process's wall time and peak memory, and `jscpd`).
//! - `resident`: the resident engine: install, the hook and MCP clients, the
//!   server, their socket protocol.
//! - `session`: the engine's hook session opened on a project (also the
//!   harness's in-process handler).
//! - `ledger`: the hook ledger's lines read back.
//! - `invocation`: the binary as invoked, which the hooks call and messages name.
//! - `sync`: the one way a lock is taken.

pub mod bench;
pub mod cli;
pub mod invocation;
pub mod ledger;
pub mod resident;
pub mod session;
pub mod sync;
