//! `engine install DIR` and `engine uninstall DIR`: Sens's command hooks and
//! the query tools' permission merged into the project's
//! `.claude/settings.json`, the tools' stdio server (`engine mcp`) into its
//! `.mcp.json`, and removed again.
//!
//! Install appends one matcher group per event the engine answers (a group whose
//! only hook is Sens's command) and leaves every other key, event and group as
//! written: their text is kept verbatim, and keys keep their order; the same for
//! the rule in `permissions.allow` and the server in `mcpServers`. What it did is
//! recorded in `.sens/install.json` with a backup of each file as it was.
//! Uninstall restores a backup byte for byte when the file is still exactly
//! what install wrote; when the person changed it since, it removes only what
//! install added.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use indexmap::IndexMap;
use sens_engine::mcp;
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
        let mut words = vec![self.binary.display().to_string()];
        words.extend(self.args("hook", &[("--timeout-secs", self.timeout_secs.to_string())]));
        shlex::try_join(words.iter().map(String::as_str))
            .context("the hook command holds a NUL byte")
    }

    /// `engine [--rules R] SUBCOMMAND DIR [OPTIONS] --idle-secs N`.
    fn args(&self, subcommand: &str, options: &[(&str, String)]) -> Vec<String> {
        let mut words = vec!["engine".to_string()];
        if let Some(rules) = &self.rules {
            words.extend(["--rules".into(), rules.display().to_string()]);
        }
        words.extend([subcommand.to_string(), self.project.display().to_string()]);
        for (flag, value) in options {
            words.extend([flag.to_string(), value.clone()]);
        }
        words.extend(["--idle-secs".into(), self.idle_secs.to_string()]);
        words
    }

    /// The matcher group added to each event (no matcher: every tool).
    fn group(&self) -> anyhow::Result<Value> {
        Ok(json!({"hooks": [{
            "type": "command",
            "command": self.line()?,
            "timeout": self.timeout_secs,
        }]}))
    }

    /// The `.mcp.json` entry of the query tools' stdio server (`engine mcp`).
    fn server(&self) -> Value {
        json!({
            "type": "stdio",
            "command": self.binary.display().to_string(),
            "args": self.args("mcp", &[]),
        })
    }
}

/// What install did to one file, so that uninstall can undo exactly that.
#[derive(Debug, Serialize, Deserialize)]
struct FileRecord {
    /// There was no such file (nor, when `created_dir`, its folder).
    created_file: bool,
    created_dir: bool,
    /// SHA-256 of the file install wrote.
    written_sha256: String,
}

/// What install did, so that uninstall can undo exactly that.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// The group added to each event.
    group: Value,
    /// The server added to `.mcp.json` as `mcpServers.sens`.
    server: Value,
    /// `permissions.allow` did not hold the tools' rule before.
    added_permission: bool,
    settings: Option<FileRecord>,
    mcp: Option<FileRecord>,
}

/// A settings value kept as its original text, or rebuilt around such values.
#[derive(Serialize)]
#[serde(untagged)]
enum Node {
    Raw(Box<RawValue>),
    Object(Members),
    List(Vec<Node>),
    Value(Value),
}

type RawObject = IndexMap<String, Box<RawValue>>;
type Members = IndexMap<String, Node>;

fn record_path(project: &Project) -> PathBuf {
    project.engine_dir().join("install.json")
}

/// A file as install found it and, when install changes it, as it will be.
struct Planned {
    path: PathBuf,
    backup: PathBuf,
    original: Option<Vec<u8>>,
    merged: Option<String>,
}

impl Planned {
    /// Reads `path` and computes `edit` of its text (`{}` for a missing file);
    /// nothing is written yet, so a refusal leaves every file untouched.
    fn new(
        path: PathBuf,
        project: &Project,
        edit: impl FnOnce(&str, &Path) -> anyhow::Result<Option<String>>,
    ) -> anyhow::Result<Planned> {
        let original = read_optional(&path)?;
        let merged = edit(settings_text(&path, original.as_deref())?, &path)?;
        Ok(Planned {
            backup: backup_path(project, &path),
            path,
            original,
            merged,
        })
    }

    /// Writes the backup (the first time only: a later install keeps the file
    /// as it was before the first) and returns the record of the change.
    fn record(&self, previous: Option<FileRecord>) -> anyhow::Result<Option<FileRecord>> {
        let Some(merged) = &self.merged else {
            return Ok(previous);
        };
        let record = match previous {
            Some(record) => record,
            None => {
                if let Some(original) = &self.original {
                    write(&self.backup, original)?;
                }
                FileRecord {
                    created_file: self.original.is_none(),
                    created_dir: !self.folder()?.exists(),
                    written_sha256: String::new(),
                }
            }
        };
        Ok(Some(FileRecord {
            written_sha256: sha256(merged.as_bytes()),
            ..record
        }))
    }

    fn write(&self) -> anyhow::Result<()> {
        if let Some(merged) = &self.merged {
            let dir = self.folder()?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            write(&self.path, merged.as_bytes())?;
        }
        Ok(())
    }

    fn folder(&self) -> anyhow::Result<&Path> {
        self.path.parent().context("the file's path has no folder")
    }
}

/// Where install keeps the file at `path` as it was: `.sens/NAME.backup`.
fn backup_path(project: &Project, path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(
        || "file".into(),
        |name| name.to_string_lossy().trim_start_matches('.').to_string(),
    );
    project.engine_dir().join(format!("{name}.backup"))
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Registers Sens's hooks and the tools' permission in DIR/.claude/settings.json
/// and the tools' server in DIR/.mcp.json; returns what it did.
pub fn install(project: &Project, command: &HookCommand) -> anyhow::Result<String> {
    let group = command.group()?;
    let server = command.server();
    let record_file = record_path(project);
    let previous = read_record(&record_file)?;
    if let Some(record) = &previous
        && (record.group != group || record.server != server)
    {
        bail!(
            "Sens is installed in {} with another command ({}); run `sens-bench engine \
             uninstall` first",
            project.root.display(),
            record_file.display()
        );
    }
    let mut added_permission = false;
    let settings = Planned::new(project.settings(), project, |text, path| {
        let hooked = with_group(text, path, &group)?;
        let allowed = with_permission(hooked.as_deref().unwrap_or(text), path)?;
        added_permission = allowed.is_some();
        Ok(allowed.or(hooked))
    })?;
    let mcp = Planned::new(project.mcp_config(), project, |text, path| {
        with_server(text, path, &server)
    })?;
    if settings.merged.is_none() && mcp.merged.is_none() {
        return Ok(format!(
            "Sens is already installed in {}; nothing changed",
            project.root.display()
        ));
    }
    project.create_engine_dir()?;
    // Installed before, and the person removed some of it since: the record
    // and the backups still describe the files as they were before the first.
    let (previous_settings, previous_mcp, had_permission) = match previous {
        Some(r) => (r.settings, r.mcp, r.added_permission),
        None => (None, None, false),
    };
    let record = Record {
        group,
        server,
        added_permission: added_permission || had_permission,
        settings: settings.record(previous_settings)?,
        mcp: mcp.record(previous_mcp)?,
    };
    write(&record_file, &serde_json::to_vec_pretty(&record)?)?;
    settings.write()?;
    mcp.write()?;
    Ok(format!(
        "Sens's hooks and tools are registered in {} and {} (backups and record in {})",
        settings.path.display(),
        mcp.path.display(),
        project.engine_dir().display()
    ))
}

/// Removes exactly what [`install`] added; returns what it did.
pub fn uninstall(project: &Project) -> anyhow::Result<String> {
    let record_file = record_path(project);
    let record = read_record(&record_file)?.with_context(|| {
        format!(
            "Sens is not installed in {}: {} is missing",
            project.root.display(),
            record_file.display()
        )
    })?;
    let mut done = Vec::new();
    if let Some(file) = &record.settings {
        done.push(undo(project, &project.settings(), file, |text, path| {
            let unhooked = without_group(text, path, &record.group)?;
            let unallowed = if record.added_permission {
                without_permission(unhooked.as_deref().unwrap_or(text), path)?
            } else {
                None
            };
            Ok(unallowed.or(unhooked))
        })?);
    }
    if let Some(file) = &record.mcp {
        done.push(undo(project, &project.mcp_config(), file, |text, path| {
            without_server(text, path, &record.server)
        })?);
    }
    remove(&record_file)?;
    Ok(done.join("\n"))
}

/// Undoes install's change of `path`: the backup written back byte for byte
/// when the file is exactly what install wrote (or the file, and a folder
/// install made, removed when install created it); else only `remove`'s edit.
fn undo(
    project: &Project,
    path: &Path,
    record: &FileRecord,
    remove_added: impl FnOnce(&str, &Path) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<String> {
    let current = read_optional(path)?;
    let unchanged = current.as_deref().map(sha256) == Some(record.written_sha256.clone());
    let backup = backup_path(project, path);
    let done = if unchanged && record.created_file {
        remove(path)?;
        if record.created_dir {
            // Only if empty: anything else in it is the person's.
            let _ = path.parent().map(std::fs::remove_dir);
        }
        format!("removed {}, which install had created", path.display())
    } else if unchanged {
        let original = std::fs::read(&backup)
            .with_context(|| format!("cannot read the backup {}", backup.display()))?;
        write(path, &original)?;
        format!("restored {} from {}", path.display(), backup.display())
    } else if let Some(current) = current {
        let text = settings_text(path, Some(&current))?;
        if let Some(edited) = remove_added(text, path)? {
            write(path, edited.as_bytes())?;
        }
        format!(
            "{} changed since install: removed only what Sens added to it",
            path.display()
        )
    } else {
        format!("{} is gone already", path.display())
    };
    if backup.exists() {
        remove(&backup)?;
    }
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

fn render(settings: Members) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&settings).context("encoding the settings")?;
    text.push('\n');
    Ok(text)
}

fn into_nodes(object: RawObject) -> Members {
    object.into_iter().map(|(k, v)| (k, Node::Raw(v))).collect()
}

fn is_entry(raw: &RawValue, entry: &Value) -> bool {
    serde_json::from_str::<Value>(raw.get()).is_ok_and(|value| &value == entry)
}

/// The file with its object `key` replaced by `edit` of it (`None`: no change;
/// an object left empty is removed), every other member kept verbatim.
fn edit_object(
    text: &str,
    path: &Path,
    key: &str,
    edit: impl FnOnce(RawObject) -> anyhow::Result<Option<Members>>,
) -> anyhow::Result<Option<String>> {
    let file: RawObject = parse(text, path, "(the whole file)")?;
    let object: RawObject = match file.get(key) {
        Some(object) => parse(object.get(), path, key)?,
        None => RawObject::new(),
    };
    let Some(edited) = edit(object)? else {
        return Ok(None);
    };
    let mut out = into_nodes(file);
    if edited.is_empty() {
        out.shift_remove(key);
    } else {
        out.insert(key.to_string(), Node::Object(edited));
    }
    render(out).map(Some)
}

/// The list `object[key]` with `entry` appended, or `None` when it holds it.
fn with_entry(
    object: &RawObject,
    key: &str,
    entry: &Value,
    path: &Path,
    field: &str,
) -> anyhow::Result<Option<Node>> {
    let items: Vec<Box<RawValue>> = match object.get(key) {
        Some(items) => parse(items.get(), path, field)?,
        None => Vec::new(),
    };
    if items.iter().any(|item| is_entry(item, entry)) {
        return Ok(None);
    }
    let mut nodes: Vec<Node> = items.into_iter().map(Node::Raw).collect();
    nodes.push(Node::Value(entry.clone()));
    Ok(Some(Node::List(nodes)))
}

/// The members, with `entry` taken out of the lists of those `key` selects (a
/// list left empty removed), or `None` when none held it.
fn without_entry(object: RawObject, key: impl Fn(&str) -> bool, entry: &Value) -> Option<Members> {
    let mut changed = false;
    let mut out = Members::new();
    for (name, raw) in object {
        let list = key(&name)
            .then(|| serde_json::from_str::<Vec<Box<RawValue>>>(raw.get()).ok())
            .flatten()
            .filter(|list| list.iter().any(|item| is_entry(item, entry)));
        let Some(list) = list else {
            out.insert(name, Node::Raw(raw));
            continue;
        };
        changed = true;
        let rest: Vec<Node> = list
            .into_iter()
            .filter(|item| !is_entry(item, entry))
            .map(Node::Raw)
            .collect();
        if !rest.is_empty() {
            out.insert(name, Node::List(rest));
        }
    }
    changed.then_some(out)
}

/// The settings with `group` added to every event the engine answers, or `None`
/// when every event has it already.
fn with_group(text: &str, path: &Path, group: &Value) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "hooks", |hooks| {
        let mut merged = into_nodes(hooks.clone());
        let mut changed = false;
        for event in Session::event_names() {
            let field = format!("hooks.{event}");
            if let Some(groups) = with_entry(&hooks, event, group, path, &field)? {
                merged.insert(event.to_string(), groups);
                changed = true;
            }
        }
        Ok(changed.then_some(merged))
    })
}

/// The settings without any `group` in any event; events and `hooks` left
/// empty by that are removed. `None` when no event held it.
fn without_group(text: &str, path: &Path, group: &Value) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "hooks", |hooks| {
        Ok(without_entry(hooks, |_| true, group))
    })
}

/// The settings with the tools' rule in `permissions.allow` (the CLI asks, and
/// in `-p` mode refuses, a tool call without it), or `None` when it is there.
fn with_permission(text: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let rule = json!(mcp::permission_rule());
    edit_object(text, path, "permissions", |permissions| {
        let allow = with_entry(&permissions, "allow", &rule, path, "permissions.allow")?;
        Ok(allow.map(|allow| {
            let mut merged = into_nodes(permissions);
            merged.insert("allow".into(), allow);
            merged
        }))
    })
}

fn without_permission(text: &str, path: &Path) -> anyhow::Result<Option<String>> {
    let rule = json!(mcp::permission_rule());
    edit_object(text, path, "permissions", |permissions| {
        Ok(without_entry(permissions, |key| key == "allow", &rule))
    })
}

/// `.mcp.json` with `server` as `mcpServers.sens`, or `None` when it is there;
/// another server of that name is refused.
fn with_server(text: &str, path: &Path, server: &Value) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "mcpServers", |servers| {
        match servers.get(mcp::SERVER_NAME) {
            Some(existing) if is_entry(existing, server) => Ok(None),
            Some(_) => bail!(
                "{} already has another MCP server named `{name}` (field `mcpServers.{name}`); \
                 it was left untouched",
                path.display(),
                name = mcp::SERVER_NAME
            ),
            None => {
                let mut merged = into_nodes(servers);
                merged.insert(mcp::SERVER_NAME.into(), Node::Value(server.clone()));
                Ok(Some(merged))
            }
        }
    })
}

fn without_server(text: &str, path: &Path, server: &Value) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "mcpServers", |servers| {
        let ours = servers
            .get(mcp::SERVER_NAME)
            .is_some_and(|existing| is_entry(existing, server));
        Ok(ours.then(|| {
            let mut kept = into_nodes(servers);
            kept.shift_remove(mcp::SERVER_NAME);
            kept
        }))
    })
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
            serde_json::from_str(&without_group(&merged, path, &group()).unwrap().unwrap())
                .unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(PERSON).unwrap());
    }

    #[test]
    fn a_hooks_field_that_is_not_an_object_is_refused_naming_it() {
        let err = with_group(r#"{"hooks": []}"#, Path::new("/p/s.json"), &group()).unwrap_err();
        assert!(format!("{err:#}").contains("/p/s.json"), "{err:#}");
        assert!(format!("{err:#}").contains("field `hooks`"), "{err:#}");
    }

    #[test]
    fn the_tools_rule_is_added_once_and_removed_leaving_the_persons_rules() {
        let path = Path::new("s.json");
        let added = with_permission(PERSON, path).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["permissions"]["allow"], json!(["mcp__sens"]));
        assert_eq!(with_permission(&added, path).unwrap(), None);
        let removed: Value =
            serde_json::from_str(&without_permission(&added, path).unwrap().unwrap()).unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(PERSON).unwrap());
        let theirs = r#"{"permissions": {"allow": ["Bash(ls)"], "deny": ["Read"]}}"#;
        let removed: Value = serde_json::from_str(
            &without_permission(&with_permission(theirs, path).unwrap().unwrap(), path)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(theirs).unwrap());
    }

    #[test]
    fn the_server_joins_the_persons_servers_and_another_named_sens_is_refused() {
        let path = Path::new("/p/.mcp.json");
        let server = json!({"type": "stdio", "command": "sens", "args": ["engine", "mcp"]});
        let theirs = r#"{"mcpServers": {"mine": {"command": "m"}}}"#;
        let added = with_server(theirs, path, &server).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["mcpServers"]["mine"], json!({"command": "m"}));
        assert_eq!(value["mcpServers"]["sens"], server);
        assert_eq!(with_server(&added, path, &server).unwrap(), None);
        let removed: Value =
            serde_json::from_str(&without_server(&added, path, &server).unwrap().unwrap()).unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(theirs).unwrap());
        let other = r#"{"mcpServers": {"sens": {"command": "theirs"}}}"#;
        let err = format!("{:#}", with_server(other, path, &server).unwrap_err());
        assert!(
            err.contains("/p/.mcp.json") && err.contains("mcpServers.sens"),
            "{err}"
        );
        assert_eq!(
            without_server(other, path, &server).unwrap(),
            None,
            "not ours"
        );
    }
}
