//! Reading a hook input: its fields, its agent, its working folder, and paths
//! relative to the project.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use super::Session;

impl Session {
    pub(super) fn cwd(&self, input: &Value) -> anyhow::Result<PathBuf> {
        match input.get("cwd") {
            None => Ok(self.root.clone()),
            Some(value) => value
                .as_str()
                .map(PathBuf::from)
                .context("hook input field `cwd` is not a string"),
        }
    }

    /// `path` relative to the project root (`/`-separated), if inside it.
    pub(super) fn relative(&self, path: &Path) -> Option<String> {
        let inside = path
            .strip_prefix(&self.root)
            .or_else(|_| path.strip_prefix(&self.canonical_root))
            .ok()?;
        let parts: Vec<&str> = inside.iter().filter_map(|c| c.to_str()).collect();
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

pub(super) fn str_field<'a>(input: &'a Value, name: &str) -> anyhow::Result<&'a str> {
    input
        .get(name)
        .and_then(Value::as_str)
        .with_context(|| format!("hook input has no string field `{name}`"))
}

pub(super) fn agent_key(input: &Value) -> Option<String> {
    input
        .get("agent_id")
        .and_then(Value::as_str)
        .map(str::to_string)
}
