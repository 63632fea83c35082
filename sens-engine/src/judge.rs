//! The seam between the hook session (approval state, checkpoints, ledger) and
//! the project's code knowledge (index, change rules, suggestions). The session
//! decides *when* to judge; a `Judge` decides *what* a change copies.

use std::path::Path;

use serde_json::Value;

use crate::finding::{Finding, Suggestion};
use crate::tools::ToolError;

/// A file as it stood at the approved point and as it stands now.
/// `None` means absent (added or deleted). Paths are project-relative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

pub trait Judge: Send {
    /// The PreToolUse verdict's findings: `path` (project-relative) would hold
    /// `content` after the write; judged against the index of everything else.
    /// Only units the write adds are judged. Does not change the index.
    fn check_write(&mut self, path: &Path, content: &str) -> anyhow::Result<Vec<Finding>>;

    /// Re-reads files changed on disk since the last look (by any tool), updates
    /// the index, and returns findings for the units those changes added.
    fn rescan(&mut self) -> anyhow::Result<Vec<Finding>>;

    /// The turn audit: every rule (copies and orphans) over the changes since the
    /// approved point.
    fn audit(&mut self, changes: &[FileChange]) -> anyhow::Result<Vec<Finding>>;

    /// The existing units that the units `changes` add may do again (the
    /// re-implementation finder's first candidates), as hints naming them: the
    /// Stop reviewer reads them beside the diff. Judges without an index have none.
    fn reuse_candidates(&self, _changes: &[FileChange]) -> anyhow::Result<Vec<Finding>> {
        Ok(Vec::new())
    }

    /// The notes for the units `changes` add that do what an existing unit
    /// does (the re-implementation finder's decision, rule `reuse.note`): told
    /// to the agent at PostToolUse, never blocking. None when the rules turn
    /// the note off (`reuse_notes = false`); judges without an index have none.
    fn reuse_notes(&self, _changes: &[FileChange]) -> anyhow::Result<Vec<Finding>> {
        Ok(Vec::new())
    }

    /// Hears a user prompt: what the person asks for (a function it names is
    /// not an orphan). Judges that do not need it ignore it.
    fn note_prompt(&mut self, _prompt: &str) {}

    /// Up to 8 existing symbols relevant to a user prompt; none below the floor.
    fn suggest(&self, prompt: &str) -> anyhow::Result<Vec<Suggestion>>;

    /// Answers one of the engine's query tools ([`crate::tools`]) on what the
    /// judge knows now (its index after the last rescan). A judge without an
    /// index knows no tool.
    fn tool(&self, name: &str, _input: &Value) -> Result<Value, ToolError> {
        Err(ToolError::Unknown(name.to_string()))
    }
}
