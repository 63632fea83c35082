//! The format version of what a batch writes (every `runs.jsonl` record and
//! `manifest.toml`, docs/runs.md, "Format versions"): a reader refuses a version
//! it does not know, by name, rather than misread fields whose meaning changed.
//! It is the first key written, so it is read before any field a newer version
//! may have added. Files written before versions existed read as version 1.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

/// The version this build writes, and the newest it reads.
pub const FORMAT: u32 = 1;

/// The version of a file that states none: written before versions existed.
pub fn unstated() -> u32 {
    1
}

/// Reads a `format` field, refusing a version this build does not know.
pub fn known<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if (1..=FORMAT).contains(&version) {
        Ok(version)
    } else {
        Err(D::Error::custom(format!(
            "`format` is {version}, but this sens-bench reads formats 1 to {FORMAT}: \
             read it with the sens-bench that wrote it, or a newer one"
        )))
    }
}
