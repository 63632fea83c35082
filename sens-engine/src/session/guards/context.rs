//! `context`: path globs mapped to context fragments (files beside the
//! conditions file, read when it is loaded). The first time a turn changes or
//! reads a matching file, the fragment is injected as a note on that call's
//! PostToolUse, once per session per fragment.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use globset::{Glob, GlobMatcher};
use serde::Deserialize;
use serde_json::Value;

use super::super::rebuild::target_path;
use super::{Guard, Kind, Seen};

/// The settings as written: a fragment's file, relative to the conditions file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Written {
    pub fragments: Vec<WrittenFragment>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrittenFragment {
    pub glob: String,
    pub file: PathBuf,
}

/// The settings with each fragment's text read.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    fragments: Vec<(String, String)>,
}

impl Settings {
    pub fn read(written: Written, base: &Path) -> anyhow::Result<Self> {
        let fragments = written
            .fragments
            .into_iter()
            .map(|f| {
                let path = base.join(&f.file);
                std::fs::read_to_string(&path)
                    .with_context(|| format!("field `fragments`: reading {}", path.display()))
                    .map(|text| (f.glob, text))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { fragments })
    }
}

pub struct ContextGuard {
    fragments: Vec<(GlobMatcher, String)>,
    /// Which fragments were injected in this session.
    given: Vec<bool>,
}

impl ContextGuard {
    pub fn new(settings: &Settings) -> anyhow::Result<Self> {
        let fragments: Vec<(GlobMatcher, String)> = settings
            .fragments
            .iter()
            .map(|(glob, text)| {
                Glob::new(glob)
                    .map(|g| (g.compile_matcher(), text.clone()))
                    .map_err(|e| anyhow::anyhow!("field `fragments`: `{glob}` is not a glob: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            given: vec![false; fragments.len()],
            fragments,
        })
    }
}

impl Guard for ContextGuard {
    fn name(&self) -> &'static str {
        "context"
    }

    fn decide(&mut self, seen: &Seen<'_>) -> anyhow::Result<Vec<(Kind, String)>> {
        if !seen.is_after_tool() {
            return Ok(Vec::new());
        }
        let mut files: Vec<String> = seen.touched.to_vec();
        files.extend(read_file(seen));
        let mut notes = Vec::new();
        for (i, (glob, text)) in self.fragments.iter().enumerate() {
            if let Some(file) = files.iter().find(|f| glob.is_match(f.as_str()))
                && !self.given[i]
            {
                self.given[i] = true;
                notes.push((Kind::Note, format!("Sens (context) on {file}:\n{text}")));
            }
        }
        Ok(notes)
    }
}

/// The project-relative file a Read names.
fn read_file(seen: &Seen<'_>) -> Option<String> {
    if seen.tool() != Some("Read") {
        return None;
    }
    let cwd = seen.input.get("cwd").and_then(Value::as_str).map(Path::new);
    let path = target_path("Read", seen.tool_input(), cwd.unwrap_or(seen.root)).ok()?;
    let relative = path.strip_prefix(seen.root).ok()?;
    Some(relative.to_string_lossy().replace('\\', "/"))
}
