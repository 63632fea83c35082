//! The hook session: hook events in, verdicts out, with the approval state,
//! checkpoints and the ledger around a `Judge`.

pub mod protect;
pub mod shell;
