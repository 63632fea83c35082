//! Evaluations of the engine on labelled cases and corpora, each a `sens-bench engine`
//! command that prints its figures: `suggest` (labelled prompts), `reuse`
//! (re-implementations and new code), `semble` (a public code-search benchmark) and
//! `scale` (cost as a project grows, beside jscpd).

pub mod reuse;
pub mod scale;
pub mod semble;
pub mod suggest;
