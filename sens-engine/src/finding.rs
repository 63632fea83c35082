//! What the change rules report. Field names are binding: `engine check --json` prints
//! these as they are (docs/contract.md, "The engine on the command line"), and the hook
//! ledger records them.

use serde::{Deserialize, Serialize};

/// One rule's verdict on one unit that a write adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `copy.exact`, `copy.renamed`, `copy.near` or `orphan`.
    pub rule: String,
    /// Whether this finding denies the write (or fails the audit); otherwise a hint.
    pub blocks: bool,
    /// 1.0 for exact and renamed copies; the exact Jaccard for near copies.
    pub similarity: f64,
    /// One sentence saying what to do instead.
    pub message: String,
    /// The unit the write adds.
    pub new: NewUnit,
    /// The existing unit it copies; `None` for rules without one (`orphan`).
    pub existing: Option<ExistingUnit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewUnit {
    /// Project-relative path, `/`-separated.
    pub file: String,
    /// 1-based line of the unit's first line.
    pub line: usize,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExistingUnit {
    /// Project-relative path, `/`-separated.
    pub file: String,
    /// 1-based line of the unit's first line.
    pub line: usize,
    /// The declaration up to its body.
    pub signature: String,
    /// References to the unit's name outside its definition.
    pub usages: usize,
}

/// One existing symbol offered for a user prompt (docs/contract.md, "Suggestions").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub name: String,
    pub signature: String,
    /// Project-relative path, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    pub usages: usize,
    pub score: f64,
}
