//! Sens: an engine that sits in a coding agent's loop and makes reuse the path of
//! least resistance. It indexes a project with tree-sitter, tells the agent what
//! already exists, denies writes that copy existing code, and audits every turn.

/// The Canon: the rules text an agent is given alongside the engine
/// (docs/contract.md, "The Canon").
pub const CANON: &str = include_str!("canon.md");
/// What the Canon adds for an agent that has the engine's query tools.
const CANON_TOOLS: &str = include_str!("canon-tools.md");

/// The Canon for a session: the tools' section only where they are served, so
/// the agent is never told to call a tool that does not exist.
pub fn canon(tools: bool) -> String {
    if tools {
        format!("{CANON}{CANON_TOOLS}")
    } else {
        CANON.to_string()
    }
}

pub mod buckets;
pub mod cache;
pub mod config;
pub mod dictated;
pub mod dupes;
pub mod engine;
pub mod finding;
pub mod fingerprint;
pub mod ignores;
pub mod index;
pub mod judge;
pub mod lang;
pub mod mcp;
pub mod paths;
pub mod replay;
pub mod reuse;
pub mod rules;
pub mod session;
pub mod shared_lines;
mod shared_slice;
pub mod suggest;
pub mod terms;
pub mod tools;
pub mod units;
pub mod walk;
pub mod words;

pub use engine::Engine;
