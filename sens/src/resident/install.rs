//! `sens install DIR` and `sens uninstall DIR`: Sens's command hooks and
//! the query tools' permission merged into the project's
//! `.claude/settings.json`, the tools' stdio server (`sens mcp`) into its
//! `.mcp.json`, and removed again. Both call the binary that installed them
//! (`sens`, or `sens-bench engine`).
//!
//! Install appends one matcher group per event the engine answers (a group whose
//! only hook is Sens's command) and leaves every other key, event and group as
//! written: their text is kept verbatim, and keys keep their order; the same for
//! the rule in `permissions.allow` and the server in `mcpServers`. What it did is
//! recorded in `.sens/install.json` with a backup of each file as it was.
//!
//! Uninstall trusts nothing under `.sens/` (the agent can write there through a
//! script): it restores a backup byte for byte only when install's change of
//! that backup gives the file exactly as it stands (the settings file is
//! protected, so the backup then holds nothing the file does not), and deletes a
//! file the record says install created only when install's change of an empty
//! file gives it. Anything else is refused with a message, and Sens's own
//! entries are removed by what they run (`hook`, `mcp` of `sens` or of an
//! `engine` level), edited or
//! not, record or no record; uninstall fails rather than report success with one
//! left.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use indexmap::IndexMap;
use sens_engine::mcp;
use sens_engine::session::Session;
use sens_engine::session::checkpoint::Checkpoints;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{Project, shell_quoted, write_own};
use crate::invocation::Invocation;

/// The command hook line `install` registers.
#[derive(Debug, Clone)]
pub struct HookCommand {
    /// The binary the hook and the MCP server run (the one installing).
    pub invocation: Invocation,
    pub project: PathBuf,
    pub rules: Option<PathBuf>,
    pub timeout_secs: u32,
    pub idle_secs: u64,
}

impl HookCommand {
    /// The shell line the CLI runs: `BIN [PREFIX] [--rules R] hook DIR ...`.
    pub fn line(&self) -> anyhow::Result<String> {
        let mut words = vec![self.invocation.exe.display().to_string()];
        words.extend(self.args("hook", &[("--timeout-secs", self.timeout_secs.to_string())]));
        shlex::try_join(words.iter().map(String::as_str))
            .context("the hook command holds a NUL byte")
    }

    /// `[PREFIX] [--rules R] SUBCOMMAND DIR [OPTIONS] --idle-secs N`.
    fn args(&self, subcommand: &str, options: &[(&str, String)]) -> Vec<String> {
        let mut words = self.invocation.prefix.clone();
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

    /// The `.mcp.json` entry of the query tools' stdio server (`sens mcp`).
    fn server(&self) -> Value {
        json!({
            "type": "stdio",
            "command": self.invocation.exe.display().to_string(),
            "args": self.args("mcp", &[]),
        })
    }
}

/// What install did to one file, so that uninstall can undo exactly that.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct FileRecord {
    /// There was no such file (nor, when `created_dir`, its folder).
    created_file: bool,
    created_dir: bool,
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
        if self.merged.is_none() || previous.is_some() {
            return Ok(previous);
        }
        if let Some(original) = &self.original {
            write_own(&self.backup, original)?;
        }
        Ok(Some(FileRecord {
            created_file: self.original.is_none(),
            created_dir: !self.folder()?.exists(),
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

/// Registers Sens's hooks and the tools' permission in DIR/.claude/settings.json
/// and the tools' server in DIR/.mcp.json; returns what it did.
pub fn install(project: &Project, command: &HookCommand) -> anyhow::Result<String> {
    // The engine keeps its checkpoints in the project's repository: without
    // one every hook would fail, and so block every tool.
    Checkpoints::open(&project.root)?;
    let group = command.group()?;
    let server = command.server();
    let record_file = record_path(project);
    let previous = read_record(&record_file)?;
    if let Some(record) = &previous
        && (record.group != group || record.server != server)
    {
        bail!(
            "Sens is installed in {} with another command ({}); run `{}` first",
            project.root.display(),
            record_file.display(),
            command
                .invocation
                .command(&format!("uninstall {}", shell_quoted(&project.root)))
        );
    }
    let mut added_permission = false;
    let settings = Planned::new(project.settings(), project, |text, path| {
        if let Some(field) = other_sens_hook(text, path, &group)? {
            bail!(
                "{} already holds a hook of Sens other than this install's (field `{field}`, \
                 edited or from another install); run `{}` first",
                path.display(),
                command
                    .invocation
                    .command(&format!("uninstall {}", shell_quoted(&project.root)))
            );
        }
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
    write_own(&record_file, &serde_json::to_vec_pretty(&record)?)?;
    settings.write()?;
    mcp.write()?;
    Ok(format!(
        "Sens's hooks and tools are registered in {} and {} (backups and record in {})",
        settings.path.display(),
        mcp.path.display(),
        project.engine_dir().display()
    ))
}

/// Removes what [`install`] added, restoring a file from its backup only when
/// the backup is verified (see the module documentation); returns what it did.
/// Fails when nothing of Sens's was installed, or one of its hooks is left.
pub fn uninstall(project: &Project) -> anyhow::Result<String> {
    let record_file = record_path(project);
    let mut done = Vec::new();
    let record = read_record(&record_file).unwrap_or_else(|err| {
        done.push(format!("{err:#}: ignored"));
        None
    });
    let settings = Undo::new(
        project,
        project.settings(),
        record.as_ref().and_then(|r| r.settings),
    );
    let settings_found = settings.run(
        &mut done,
        |text, path| match &record {
            Some(record) => {
                let hooked = with_group(text, path, &record.group)?;
                Ok(with_permission(hooked.as_deref().unwrap_or(text), path)?.or(hooked))
            }
            None => Ok(None),
        },
        |text, path| {
            let unhooked = without_sens_hooks(text, path)?;
            // Without a record nothing says the person had the rule before.
            let unallowed = if record.as_ref().is_none_or(|r| r.added_permission) {
                without_permission(unhooked.as_deref().unwrap_or(text), path)?
            } else {
                None
            };
            Ok(unallowed.or(unhooked))
        },
    )?;
    let mcp = Undo::new(
        project,
        project.mcp_config(),
        record.as_ref().and_then(|r| r.mcp),
    );
    let mcp_found = mcp.run(
        &mut done,
        |text, path| match &record {
            Some(record) => with_server(text, path, &record.server),
            None => Ok(None),
        },
        without_sens_server,
    )?;
    if record.is_none() && !settings_found && !mcp_found {
        bail!(
            "Sens is not installed in {}: no hook or server of Sens in {} or {}, and no install \
             record",
            project.root.display(),
            settings.path.display(),
            mcp.path.display()
        );
    }
    if let Some(text) = read_optional(&settings.path)?
        && let Some(left) =
            sens_hook_fields(settings_text(&settings.path, Some(&text))?, &settings.path)?.first()
    {
        bail!(
            "a hook of Sens is still in {} (field `{left}`): remove it by hand",
            settings.path.display()
        );
    }
    remove_if_present(&record_file)?;
    Ok(done.join("\n"))
}

/// Undoing install's change of one file.
struct Undo {
    path: PathBuf,
    backup: PathBuf,
    record: Option<FileRecord>,
}

impl Undo {
    fn new(project: &Project, path: PathBuf, record: Option<FileRecord>) -> Undo {
        Undo {
            backup: backup_path(project, &path),
            path,
            record,
        }
    }

    /// Restores the file as it was before install (its backup, or no file)
    /// when `reinstall`, install's change, makes exactly the file as it stands
    /// of that original; then `remove_ours` takes out whatever of Sens's is
    /// left. Returns whether anything of Sens's was there; says what it did in
    /// `done`.
    fn run(
        &self,
        done: &mut Vec<String>,
        reinstall: impl Fn(&str, &Path) -> anyhow::Result<Option<String>>,
        remove_ours: impl Fn(&str, &Path) -> anyhow::Result<Option<String>>,
    ) -> anyhow::Result<bool> {
        let path = &self.path;
        let backup = read_optional(&self.backup)?;
        let mut found = match (self.record, read_optional(path)?) {
            (Some(record), Some(current)) => {
                let original = if record.created_file {
                    None
                } else {
                    backup.as_deref()
                };
                let verified = (record.created_file || original.is_some())
                    && reinstall(settings_text(path, original)?, path)?
                        .is_some_and(|made| made.as_bytes() == current);
                if verified {
                    self.restore(record, original, done)?;
                } else if backup.is_some() || record.created_file {
                    done.push(format!(
                        "{} is not what install made of its original (it changed since, or {} \
                         is not that original): the original was not restored",
                        path.display(),
                        self.backup.display()
                    ));
                }
                verified
            }
            (Some(_), None) => {
                done.push(format!("{} is gone already", path.display()));
                false
            }
            (None, _) => false,
        };
        if let Some(current) = read_optional(path)?
            && let Some(edited) = remove_ours(settings_text(path, Some(&current))?, path)?
        {
            write(path, edited.as_bytes())?;
            done.push(format!(
                "removed Sens's own entries from {}",
                path.display()
            ));
            found = true;
        }
        remove_if_present(&self.backup)?;
        Ok(found)
    }

    fn restore(
        &self,
        record: FileRecord,
        original: Option<&[u8]>,
        done: &mut Vec<String>,
    ) -> anyhow::Result<()> {
        let path = &self.path;
        match original {
            Some(original) => {
                write(path, original)?;
                done.push(format!(
                    "restored {} from {}",
                    path.display(),
                    self.backup.display()
                ));
            }
            None => {
                remove(path)?;
                if record.created_dir {
                    // Only if empty: anything else in it is the person's.
                    let _ = path.parent().map(std::fs::remove_dir);
                }
                done.push(format!(
                    "removed {}, which install had created",
                    path.display()
                ));
            }
        }
        Ok(())
    }
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
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

/// Whether `binary` with `args` (the command's words after it) runs Sens's
/// `subcommand`, as install writes it or as the person may have edited it
/// (`--rules=R`): `sens [OPTIONS] SUBCOMMAND ...` (a binary named `sens`,
/// wherever it is), or `BIN engine [OPTIONS] SUBCOMMAND ...` (the harness's
/// `sens-bench engine`, under any name).
fn runs_sens(binary: &str, args: &[String], subcommand: &str) -> bool {
    let rest = match args {
        [engine, rest @ ..] if engine == "engine" => rest,
        _ if Path::new(binary)
            .file_name()
            .is_some_and(|name| name == "sens") =>
        {
            args
        }
        _ => return false,
    };
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        if word == "--rules" {
            words.next();
        } else if !word.starts_with('-') {
            return word == subcommand;
        }
    }
    false
}

/// Whether a hook entry runs Sens's hook, whatever else in it was edited.
fn is_sens_hook(hook: &Value) -> bool {
    hook["command"]
        .as_str()
        .and_then(shlex::split)
        .is_some_and(|words| words.len() > 1 && runs_sens(&words[0], &words[1..], "hook"))
}

fn holds_sens_hook(group: &Value) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hooks| hooks.iter().any(is_sens_hook))
}

/// The `hooks.EVENT` fields of the settings and their groups that hold a hook
/// of Sens's.
fn sens_groups(settings: &Value) -> Vec<(String, &Value)> {
    let Some(events) = settings["hooks"].as_object() else {
        return Vec::new();
    };
    events
        .iter()
        .flat_map(|(event, groups)| {
            groups
                .as_array()
                .into_iter()
                .flatten()
                .filter(|group| holds_sens_hook(group))
                .map(move |group| (format!("hooks.{event}"), group))
        })
        .collect()
}

/// The fields of the settings text that hold a hook of Sens's.
fn sens_hook_fields(text: &str, path: &Path) -> anyhow::Result<Vec<String>> {
    let settings: Value = parse(text, path, "(the whole file)")?;
    Ok(sens_groups(&settings)
        .into_iter()
        .map(|(field, _)| field)
        .collect())
}

/// The field of a group of Sens's that is not exactly `group` (edited, or
/// written by another install), if any.
fn other_sens_hook(text: &str, path: &Path, group: &Value) -> anyhow::Result<Option<String>> {
    let settings: Value = parse(text, path, "(the whole file)")?;
    Ok(sens_groups(&settings)
        .into_iter()
        .find(|(_, found)| *found != group)
        .map(|(field, _)| field))
}

/// The settings without any hook of Sens's, edited or not: a group left
/// without hooks is removed, and events and `hooks` left empty by that. Other
/// groups keep their text. `None` when there was none.
fn without_sens_hooks(text: &str, path: &Path) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "hooks", |hooks| {
        let mut changed = false;
        let mut out = Members::new();
        for (event, raw) in hooks {
            let groups = serde_json::from_str::<Vec<Box<RawValue>>>(raw.get()).ok();
            let Some(groups) =
                groups.filter(|groups| groups.iter().any(|g| raw_holds_sens_hook(g)))
            else {
                out.insert(event, Node::Raw(raw));
                continue;
            };
            changed = true;
            let kept: Vec<Node> = groups.into_iter().filter_map(without_sens_hook).collect();
            if !kept.is_empty() {
                out.insert(event, Node::List(kept));
            }
        }
        Ok(changed.then_some(out))
    })
}

fn raw_holds_sens_hook(group: &RawValue) -> bool {
    serde_json::from_str::<Value>(group.get()).is_ok_and(|group| holds_sens_hook(&group))
}

/// The group without its hooks of Sens's (`None`: none left), kept verbatim
/// when it held none.
fn without_sens_hook(group: Box<RawValue>) -> Option<Node> {
    let mut value: Value = match serde_json::from_str(group.get()) {
        Ok(value) if holds_sens_hook(&value) => value,
        _ => return Some(Node::Raw(group)),
    };
    let hooks = value["hooks"].as_array_mut()?;
    hooks.retain(|hook| !is_sens_hook(hook));
    (!hooks.is_empty()).then_some(Node::Value(value))
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

/// `.mcp.json` without every server that runs Sens's `mcp`, under whatever
/// name and however edited; `None` when there is none.
fn without_sens_server(text: &str, path: &Path) -> anyhow::Result<Option<String>> {
    edit_object(text, path, "mcpServers", |servers| {
        let before = servers.len();
        let kept: Members = servers
            .into_iter()
            .filter(|(_, server)| !is_sens_server(server))
            .map(|(name, server)| (name, Node::Raw(server)))
            .collect();
        Ok((kept.len() < before).then_some(kept))
    })
}

fn is_sens_server(server: &RawValue) -> bool {
    let Ok(server) = serde_json::from_str::<Value>(server.get()) else {
        return false;
    };
    let binary = server["command"].as_str().unwrap_or_default();
    serde_json::from_value::<Vec<String>>(server["args"].clone())
        .is_ok_and(|args| runs_sens(binary, &args, "mcp"))
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
        json!({"hooks": [{"type": "command", "command": "sens engine hook /p", "timeout": 60}]})
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
            serde_json::from_str(&without_sens_hooks(&merged, path).unwrap().unwrap()).unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(PERSON).unwrap());
    }

    #[test]
    fn sens_hooks_and_servers_are_found_by_what_they_run_however_written() {
        let path = Path::new("s.json");
        let settings = json!({"hooks": {
            "Stop": [{"hooks": [
                {"type": "command", "command": "/opt/sens-bench engine --rules=/r.toml hook /p"},
                {"type": "command", "command": "./mine.sh"},
            ]}],
            "PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "sens-bench engine --rules /r.toml hook", "timeout": 9},
            ]}],
            "PostToolUse": [{"hooks": [{"type": "command", "command": "my-engine hook"}]}],
            "UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "/home/p/.cargo/bin/sens --rules=/r.toml hook /p"},
                {"type": "command", "command": "sens hook"},
            ]}],
        }});
        let left: Value = serde_json::from_str(
            &without_sens_hooks(&settings.to_string(), path)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            left,
            json!({"hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "./mine.sh"}]}],
                "PostToolUse": [{"hooks": [{"type": "command", "command": "my-engine hook"}]}],
            }})
        );
        let servers = json!({"mcpServers": {
            "tools": {"command": "/opt/sens-bench", "args": ["engine", "--rules=/r", "mcp", "/p"]},
            "mine": {"command": "m", "args": ["engine", "hook"]},
            "installed": {"command": "/usr/local/bin/sens", "args": ["mcp", "/p"]},
            "other": {"command": "m", "args": ["mcp", "/p"]},
        }});
        let left: Value = serde_json::from_str(
            &without_sens_server(&servers.to_string(), path)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            left,
            json!({"mcpServers": {
                "mine": {"command": "m", "args": ["engine", "hook"]},
                "other": {"command": "m", "args": ["mcp", "/p"]},
            }})
        );
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
        let server = json!({"type": "stdio", "command": "sens", "args": ["engine", "mcp", "/p"]});
        let theirs = r#"{"mcpServers": {"mine": {"command": "m"}}}"#;
        let added = with_server(theirs, path, &server).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["mcpServers"]["mine"], json!({"command": "m"}));
        assert_eq!(value["mcpServers"]["sens"], server);
        assert_eq!(with_server(&added, path, &server).unwrap(), None);
        let removed: Value =
            serde_json::from_str(&without_sens_server(&added, path).unwrap().unwrap()).unwrap();
        assert_eq!(removed, serde_json::from_str::<Value>(theirs).unwrap());
        let other = r#"{"mcpServers": {"sens": {"command": "theirs"}}}"#;
        let err = format!("{:#}", with_server(other, path, &server).unwrap_err());
        assert!(
            err.contains("/p/.mcp.json") && err.contains("mcpServers.sens"),
            "{err}"
        );
        assert_eq!(without_sens_server(other, path).unwrap(), None, "not ours");
    }
}
