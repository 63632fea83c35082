//! `engine install DIR` and `engine uninstall DIR`: Sens's command hooks merged
//! into the project's `.claude/settings.json`, and removed again.
//!
//! Install appends one matcher group per event the engine answers (a group whose
//! only hook is Sens's command) and leaves every other key, event and group as
//! written: their text is kept verbatim, and keys keep their order. What it did
//! is recorded in `.sens/install.json` with a backup of the file as it was.
//! Uninstall restores that backup byte for byte when the file is still exactly
//! what install wrote; when the person changed it since, it removes only the
//! groups install added.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use indexmap::IndexMap;
use sens_engine::session::Session;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Project;

/// The command hook line `install` registers.
#[derive(Debug, Clone)]
pub struct HookCommand {
    pub binary: PathBuf,
    pub project: PathBuf,
    pub rules: Option<PathBuf>,
    pub timeout_secs: u32,
    pub idle_secs: u64,
}

impl HookCommand {
    /// The shell line the CLI runs: `BIN engine [--rules R] hook DIR ...`.
    pub fn line(&self) -> anyhow::Result<String> {
        let mut words = vec![self.binary.display().to_string(), "engine".into()];
        if let Some(rules) = &self.rules {
            words.extend(["--rules".into(), rules.display().to_string()]);
        }
        words.extend([
            "hook".into(),
            self.project.display().to_string(),
            "--timeout-secs".into(),
            self.timeout_secs.to_string(),
            "--idle-secs".into(),
            self.idle_secs.to_string(),
        ]);
        shlex::try_join(words.iter().map(String::as_str))
            .context("the hook command holds a NUL byte")
    }

    /// The matcher group added to each event (no matcher: every tool).
    fn group(&self) -> anyhow::Result<Value> {
        Ok(json!({"hooks": [{
            "type": "command",
            "command": self.line()?,
            "timeout": self.timeout_secs,
        }]}))
    }
}

/// What install did, so that uninstall can undo exactly that.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// The group added to each event.
    group: Value,
    /// There was no settings file (nor, when `created_dir`, a `.claude/`).
    created_file: bool,
    created_dir: bool,
    /// SHA-256 of the settings file install wrote.
    written_sha256: String,
}

/// A settings value kept as its original text, or rebuilt around such values.
#[derive(Serialize)]
#[serde(untagged)]
enum Node {
    Raw(Box<RawValue>),
    Object(IndexMap<String, Node>),
    List(Vec<Node>),
    Value(Value),
}

type RawObject = IndexMap<String, Box<RawValue>>;

fn record_path(project: &Project) -> PathBuf {
    project.engine_dir().join("install.json")
}

fn backup_path(project: &Project) -> PathBuf {
    project.engine_dir().join("settings.json.backup")
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Registers Sens's hooks in DIR/.claude/settings.json; returns what it did.
pub fn install(project: &Project, command: &HookCommand) -> anyhow::Result<String> {
    let path = project.settings();
    let original = read_optional(&path)?;
    let text = settings_text(&path, original.as_deref())?;
    let group = command.group()?;
    let record_file = record_path(project);
    let record = read_record(&record_file)?;
    if let Some(record) = &record
        && record.group != group
    {
        bail!(
            "Sens is installed in {} with another hook ({}); run `sens-bench engine uninstall` \
             first",
            project.root.display(),
            record_file.display()
        );
    }
    let Some(merged) = with_group(text, &path, &group)? else {
        return Ok(format!(
            "Sens is already installed in {}; nothing changed",
            path.display()
        ));
    };
    project.create_engine_dir()?;
    let record = match record {
        // Installed before, and the person removed the hooks since: the backup
        // still holds the file as it was before the first install.
        Some(record) => record,
        None => {
            if let Some(original) = &original {
                write(&backup_path(project), original)?;
            }
            let dir = path.parent().context("the settings path has no folder")?;
            Record {
                group,
                created_file: original.is_none(),
                created_dir: !dir.exists(),
                written_sha256: String::new(),
            }
        }
    };
    let record = Record {
        written_sha256: sha256(merged.as_bytes()),
        ..record
    };
    write(&record_file, &serde_json::to_vec_pretty(&record)?)?;
    let dir = path.parent().context("the settings path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write(&path, merged.as_bytes())?;
    Ok(format!(
        "Sens's hooks are registered in {} (backup and record in {})",
        path.display(),
        project.engine_dir().display()
    ))
}

/// Removes exactly what [`install`] added; returns what it did.
pub fn uninstall(project: &Project) -> anyhow::Result<String> {
    let path = project.settings();
    let record_file = record_path(project);
    let record = read_record(&record_file)?.with_context(|| {
        format!(
            "Sens is not installed in {}: {} is missing",
            project.root.display(),
            record_file.display()
        )
    })?;
    let current = read_optional(&path)?;
    let unchanged = current.as_deref().map(sha256) == Some(record.written_sha256.clone());
    let backup = backup_path(project);
    let done = if unchanged && record.created_file {
        remove(&path)?;
        if record.created_dir {
            // Only if empty: anything else in it is the person's.
            let _ = path.parent().map(std::fs::remove_dir);
        }
        format!("removed {}, which install had created", path.display())
    } else if unchanged {
        let original = std::fs::read(&backup)
            .with_context(|| format!("cannot read the backup {}", backup.display()))?;
        write(&path, &original)?;
        format!("restored {} from {}", path.display(), backup.display())
    } else if let Some(current) = current {
        let text = settings_text(&path, Some(&current))?;
        write(&path, without_group(text, &path, &record.group)?.as_bytes())?;
        format!(
            "{} changed since install: removed only Sens's hooks from it",
            path.display()
        )
    } else {
        format!("{} is gone already", path.display())
    };
    if backup.exists() {
        remove(&backup)?;
    }
    remove(&record_file)?;
    Ok(done)
}

fn read_optional(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn read_record(path: &Path) -> anyhow::Result<Option<Record>> {
    read_optional(path)?
        .map(|bytes| {
            serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not Sens's install record", path.display()))
        })
        .transpose()
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn remove(path: &Path) -> anyhow::Result<()> {
    std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
}

fn settings_text<'a>(path: &Path, bytes: Option<&'a [u8]>) -> anyhow::Result<&'a str> {
    match bytes {
        Some(bytes) => std::str::from_utf8(bytes)
            .with_context(|| format!("{} is not valid JSON: it is not UTF-8", path.display())),
        None => Ok("{}"),
    }
}

fn parse<'a, T: Deserialize<'a>>(text: &'a str, path: &Path, field: &str) -> anyhow::Result<T> {
    serde_json::from_str(text).with_context(|| {
        format!(
            "{} is not valid settings JSON (field `{field}`); it was left untouched",
            path.display()
        )
    })
}

fn render(settings: IndexMap<String, Node>) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&settings).context("encoding the settings")?;
    text.push('\n');
    Ok(text)
}

fn into_nodes(object: RawObject) -> IndexMap<String, Node> {
    object.into_iter().map(|(k, v)| (k, Node::Raw(v))).collect()
}

fn is_group(raw: &RawValue, group: &Value) -> bool {
    serde_json::from_str::<Value>(raw.get()).is_ok_and(|value| &value == group)
}

/// The settings with `group` added to every event the engine answers, or `None`
/// when every event has it already.
fn with_group(text: &str, path: &Path, group: &Value) -> anyhow::Result<Option<String>> {
    let settings: RawObject = parse(text, path, "(the whole file)")?;
    let hooks: RawObject = match settings.get("hooks") {
        Some(hooks) => parse(hooks.get(), path, "hooks")?,
        None => RawObject::new(),
    };
    let mut merged = into_nodes(hooks.clone());
    for event in Session::event_names() {
        let groups: Vec<Box<RawValue>> = match hooks.get(event) {
            Some(groups) => parse(groups.get(), path, &format!("hooks.{event}"))?,
            None => Vec::new(),
        };
        if groups.iter().any(|g| is_group(g, group)) {
            continue;
        }
        let mut nodes: Vec<Node> = groups.into_iter().map(Node::Raw).collect();
        nodes.push(Node::Value(group.clone()));
        merged.insert(event.to_string(), Node::List(nodes));
    }
    let untouched = merged.values().all(|node| matches!(node, Node::Raw(_)));
    if untouched && settings.contains_key("hooks") {
        return Ok(None);
    }
    let mut out = into_nodes(settings);
    out.insert("hooks".into(), Node::Object(merged));
    render(out).map(Some)
}

/// The settings without any `group` in any event; events and `hooks` left
/// empty by that are removed.
fn without_group(text: &str, path: &Path, group: &Value) -> anyhow::Result<String> {
    let mut settings: RawObject = parse(text, path, "(the whole file)")?;
    let Some(hooks) = settings.get("hooks") else {
        return Ok(text.to_string());
    };
    let hooks: RawObject = parse(hooks.get(), path, "hooks")?;
    let mut kept = IndexMap::new();
    for (event, groups) in hooks {
        let Ok(list) = serde_json::from_str::<Vec<Box<RawValue>>>(groups.get()) else {
            kept.insert(event, Node::Raw(groups));
            continue;
        };
        let before = list.len();
        let rest: Vec<Node> = list
            .into_iter()
            .filter(|g| !is_group(g, group))
            .map(Node::Raw)
            .collect();
        if rest.len() == before {
            kept.insert(event, Node::Raw(groups));
        } else if !rest.is_empty() {
            kept.insert(event, Node::List(rest));
        }
    }
    let mut out: IndexMap<String, Node> = IndexMap::new();
    for (key, value) in settings.drain(..) {
        if key != "hooks" {
            out.insert(key, Node::Raw(value));
        } else if !kept.is_empty() {
            out.insert(key, Node::Object(std::mem::take(&mut kept)));
        }
    }
    render(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERSON: &str = r#"{
  "model": "sonnet",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "./my-check.sh" }]
      }
    ]
  },
  "env": { "A": "1" }
}
"#;

    fn group() -> Value {
        json!({"hooks": [{"type": "command", "command": "sens hook", "timeout": 60}]})
    }

    #[test]
    fn merging_keeps_the_persons_keys_in_order_and_their_hooks_verbatim() {
        let path = Path::new("s.json");
        let merged = with_group(PERSON, path, &group()).unwrap().unwrap();
        assert!(
            merged.contains(r#"{ "type": "command", "command": "./my-check.sh" }"#),
            "{merged}"
        );
        let (model, hooks, env) = (
            merged.find("\"model\"").unwrap(),
            merged.find("\"hooks\"").unwrap(),
            merged.find("\"env\"").unwrap(),
        );
        assert!(model < hooks && hooks < env, "{merged}");
        let value: Value = serde_json::from_str(&merged).unwrap();
        for event in Session::event_names() {
            let groups = value["hooks"][event].as_array().unwrap();
            assert_eq!(groups.last(), Some(&group()), "{event}");
        }
        assert_eq!(value["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(with_group(&merged, path, &group()).unwrap(), None);
    }

    #[test]
    fn removing_takes_out_only_the_added_groups() {
        let path = Path::new("s.json");
        let merged = with_group(PERSON, path, &group()).unwrap().unwrap();
        let removed: Value =
            serde_json::from_str(&without_group(&merged, path, &group()).unwrap()).unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(PERSON).unwrap());
    }

    #[test]
    fn a_hooks_field_that_is_not_an_object_is_refused_naming_it() {
        let err = with_group(r#"{"hooks": []}"#, Path::new("/p/s.json"), &group()).unwrap_err();
        assert!(format!("{err:#}").contains("/p/s.json"), "{err:#}");
        assert!(format!("{err:#}").contains("field `hooks`"), "{err:#}");
    }
}
