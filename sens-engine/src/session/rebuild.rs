//! A file as it would be after a Write, Edit or NotebookEdit, rebuilt in memory
//! from the tool's input (shapes as the CLI sends them) and the file on disk.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::protect::{normalize, resolve};

/// The tools whose target path and new content the engine judges.
pub const FILE_TOOLS: &[&str] = &["Write", "Edit", "NotebookEdit"];

fn field<'a>(tool: &str, input: &'a Value, name: &str) -> anyhow::Result<&'a str> {
    input
        .get(name)
        .and_then(Value::as_str)
        .with_context(|| format!("{tool} input has no string field `{name}`"))
}

/// The path a file tool writes as its input spells it.
pub fn spelled_target<'a>(tool: &str, input: &'a Value) -> anyhow::Result<&'a Path> {
    let key = if tool == "NotebookEdit" {
        "notebook_path"
    } else {
        "file_path"
    };
    Ok(Path::new(field(tool, input, key)?))
}

/// The absolute, normalized path a file tool writes.
pub fn target_path(tool: &str, input: &Value, cwd: &Path) -> anyhow::Result<PathBuf> {
    Ok(normalize(cwd, spelled_target(tool, input)?))
}

/// The file a file tool writes as the file system reaches it (links followed).
pub fn real_target(tool: &str, input: &Value, cwd: &Path) -> anyhow::Result<PathBuf> {
    Ok(resolve(cwd, spelled_target(tool, input)?, true))
}

/// The content `path` would hold after the tool ran, reading its current text
/// from disk.
pub fn content_after(tool: &str, input: &Value, path: &Path) -> anyhow::Result<String> {
    let current = if tool == "Write" {
        None
    } else {
        read_optional(path)?
    };
    content_from(tool, input, path, current.as_deref())
}

/// The content `path` would hold after the tool ran, given its current text
/// (`None`: absent). A replay passes the text of a recorded tree.
pub fn content_from(
    tool: &str,
    input: &Value,
    path: &Path,
    current: Option<&str>,
) -> anyhow::Result<String> {
    match tool {
        "Write" => Ok(field(tool, input, "content")?.to_string()),
        "Edit" => {
            let old = field(tool, input, "old_string")?;
            let new = field(tool, input, "new_string")?;
            let replace_all = input
                .get("replace_all")
                .map(|v| {
                    v.as_bool()
                        .context("Edit input field `replace_all` is not a boolean")
                })
                .transpose()?
                .unwrap_or(false);
            // An absent file reads as empty only for an Edit that creates it
            // (empty `old_string`).
            let current = match current {
                Some(text) => text,
                None if old.is_empty() => "",
                None => bail!(
                    "{} does not exist: the Edit has nothing to change",
                    path.display()
                ),
            };
            apply_edit(current, old, new, replace_all)
                .with_context(|| format!("applying the Edit to {}", path.display()))
        }
        "NotebookEdit" => {
            let text = current
                .with_context(|| format!("the notebook {} does not exist", path.display()))?;
            let notebook: Value = serde_json::from_str(text)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            let edited = edit_notebook(notebook, input)
                .with_context(|| format!("applying the NotebookEdit to {}", path.display()))?;
            serde_json::to_string_pretty(&edited).context("encoding the edited notebook")
        }
        other => bail!("{other} is not a file-writing tool"),
    }
}

/// The file's text, `None` when it does not exist.
fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Edit's rule: `old` -> `new`, every occurrence with `replace_all`, else the
/// first. An empty `old` on an empty file creates it with `new`.
pub fn apply_edit(
    current: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> anyhow::Result<String> {
    if old.is_empty() {
        if current.is_empty() {
            return Ok(new.to_string());
        }
        bail!("old_string is empty but the file is not");
    }
    if !current.contains(old) {
        bail!("old_string does not occur in the file");
    }
    Ok(if replace_all {
        current.replace(old, new)
    } else {
        current.replacen(old, new, 1)
    })
}

/// NotebookEdit's rule on the notebook JSON: `edit_mode` `replace` (default),
/// `insert` (after `cell_id`, or first) or `delete`; `cell_id` is a cell's `id`
/// or `cell-N` (N the 0-based position).
pub fn edit_notebook(mut notebook: Value, input: &Value) -> anyhow::Result<Value> {
    let tool = "NotebookEdit";
    let mode = input
        .get("edit_mode")
        .and_then(Value::as_str)
        .unwrap_or("replace");
    let cell_id = input.get("cell_id").and_then(Value::as_str);
    let cell_type = input.get("cell_type").and_then(Value::as_str);
    let cells = notebook
        .get_mut("cells")
        .and_then(Value::as_array_mut)
        .context("the notebook has no `cells` array")?;
    let position = cell_id.map(|id| find_cell(cells, id)).transpose()?;
    match mode {
        "replace" => {
            let index = position.context("a replace needs `cell_id`")?;
            let cell = &mut cells[index];
            cell["source"] = json!(field(tool, input, "new_source")?);
            if let Some(kind) = cell_type {
                cell["cell_type"] = json!(kind);
            }
        }
        "insert" => {
            let kind = cell_type.unwrap_or("code");
            let mut cell = json!({
                "cell_type": kind,
                "metadata": {},
                "source": field(tool, input, "new_source")?,
            });
            if kind == "code" {
                cell["outputs"] = json!([]);
                cell["execution_count"] = Value::Null;
            }
            cells.insert(position.map_or(0, |i| i + 1), cell);
        }
        "delete" => {
            let index = position.context("a delete needs `cell_id`")?;
            cells.remove(index);
        }
        other => bail!("unknown edit_mode `{other}` (expected replace, insert or delete)"),
    }
    Ok(notebook)
}

fn find_cell(cells: &[Value], id: &str) -> anyhow::Result<usize> {
    if let Some(i) = cells
        .iter()
        .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
    {
        return Ok(i);
    }
    id.strip_prefix("cell-")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < cells.len())
        .with_context(|| format!("the notebook has no cell `{id}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_replaces_first_or_all() -> anyhow::Result<()> {
        assert_eq!(apply_edit("a b a", "a", "x", false)?, "x b a");
        assert_eq!(apply_edit("a b a", "a", "x", true)?, "x b x");
        assert_eq!(apply_edit("", "", "new", false)?, "new");
        assert!(apply_edit("abc", "zz", "x", false).is_err());
        assert!(apply_edit("abc", "", "x", false).is_err());
        Ok(())
    }

    #[test]
    fn notebook_cells_are_replaced_inserted_and_deleted() -> anyhow::Result<()> {
        let nb = json!({"cells": [
            {"id": "a1", "cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []},
            {"id": "b2", "cell_type": "markdown", "source": "# t", "metadata": {}},
        ], "nbformat": 4});
        let replaced = edit_notebook(nb.clone(), &json!({"cell_id": "b2", "new_source": "# new"}))?;
        assert_eq!(replaced["cells"][1]["source"], "# new");
        let by_index = edit_notebook(nb.clone(), &json!({"cell_id": "cell-0", "new_source": "y"}))?;
        assert_eq!(by_index["cells"][0]["source"], "y");
        let inserted = edit_notebook(
            nb.clone(),
            &json!({"cell_id": "a1", "new_source": "z = 2", "edit_mode": "insert"}),
        )?;
        assert_eq!(inserted["cells"][1]["source"], "z = 2");
        assert_eq!(inserted["cells"].as_array().map(Vec::len), Some(3));
        let deleted = edit_notebook(nb.clone(), &json!({"cell_id": "a1", "edit_mode": "delete"}))?;
        assert_eq!(deleted["cells"][0]["id"], "b2");
        assert!(edit_notebook(nb, &json!({"cell_id": "zz", "new_source": "q"})).is_err());
        Ok(())
    }
}
