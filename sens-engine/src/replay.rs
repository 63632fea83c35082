//! Replaying a recorded hook session (docs/contract.md, "The hook ledger" and
//! "Rules as data, the gate and calibration"): the engine's decisions judged again, with
//! any rules, on the trees the ledger names, after the project's copy is gone.
//!
//! - **Material.** [`save_material`] packs the git objects of every `refs/sens/*`
//!   ref (checkpoints, the approved point, and the chain keeping every ledger
//!   tree) into `sens-objects/pack/` (a git pack, zlib-compressed and deltified,
//!   with its index) and lists the refs in `sens.refs`. [`Material::open`] reads
//!   the pack in place: no copy, no re-indexing.
//! - **What is replayed.** PreToolUse Write/Edit/NotebookEdit (the write judged
//!   against the index of its recorded tree), PreToolUse Bash that commits or
//!   pushes (the audit) or writes a protected path, PostToolUse and
//!   PostToolUseFailure rescans (the change from the previous rescan's tree), and
//!   Stop/SubagentStop audits (the change from the recorded approved tree). Other
//!   lines are not decisions of the rules and are skipped.
//! - **What is held as recorded.** The agent's actions, the trees and the
//!   approved point of every line: a replay judges what the agent did, not what it
//!   would have done after another answer. The pending findings and the Stop
//!   rounds are replayed, since they follow from the verdicts.
//! - **The index of a tree** holds every blob the walk would index (hidden paths
//!   and the walk's skips left out); it moves from tree to tree by their diff,
//!   and parses are cached by blob id, so each distinct file is parsed once per
//!   rule set however many runs share it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use git2::{Oid, Repository};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::config::RuleConfig;
use crate::engine::{audit_findings, reuse_notes, units_of, write_findings};
use crate::finding::Finding;
use crate::index::Index;
use crate::judge::FileChange;
use crate::reuse;
use crate::rules;
use crate::session::checkpoint::{tree_changes, tree_deltas};
use crate::session::ledger::Verdict;
use crate::session::protect::is_protected;
use crate::session::{DEFAULT_MAX_STOP_ROUNDS, protected_finding, rebuild, same_finding, shell};
use crate::units::ParsedFile;
use crate::walk::{self, WalkOptions};

/// The object folder (`pack/` inside) of a run's `refs/sens/*` objects.
pub const OBJECTS_DIR: &str = "sens-objects";
/// `<oid> <ref name>` per line: the refs the pack was made from.
pub const REFS_FILE: &str = "sens.refs";

/// Writes the replay material of the repository at `workspace` into `dir`;
/// returns the size of the pack and its index in bytes.
pub fn save_material(workspace: &Path, dir: &Path) -> Result<u64> {
    let repo = Repository::open(workspace)
        .with_context(|| format!("opening the git repository {}", workspace.display()))?;
    let mut walk = repo.revwalk().context("starting a revision walk")?;
    let mut refs = String::new();
    for reference in repo
        .references_glob("refs/sens/*")
        .context("listing refs/sens/*")?
    {
        let reference = reference.context("reading a refs/sens/* ref")?;
        let (Some(name), Some(target)) = (reference.name().ok(), reference.target()) else {
            continue;
        };
        walk.push(target)
            .with_context(|| format!("walking {name}"))?;
        refs.push_str(&format!("{target} {name}\n"));
    }
    let mut builder = repo.packbuilder().context("starting a pack")?;
    builder
        .insert_walk(&mut walk)
        .context("adding the sens commits, trees and blobs to the pack")?;
    let pack_dir = dir.join(OBJECTS_DIR).join("pack");
    std::fs::create_dir_all(&pack_dir)
        .with_context(|| format!("creating {}", pack_dir.display()))?;
    builder
        .write(&pack_dir, 0o644)
        .with_context(|| format!("writing the pack into {}", pack_dir.display()))?;
    let refs_path = dir.join(REFS_FILE);
    std::fs::write(&refs_path, refs).with_context(|| format!("writing {}", refs_path.display()))?;
    let mut bytes = 0;
    for entry in
        std::fs::read_dir(&pack_dir).with_context(|| format!("listing {}", pack_dir.display()))?
    {
        bytes += entry
            .and_then(|e| e.metadata())
            .with_context(|| format!("listing {}", pack_dir.display()))?
            .len();
    }
    Ok(bytes)
}

/// A run's replay material, read in place.
pub struct Material {
    repo: Repository,
}

impl Material {
    /// Opens `dir`'s pack; an error names the missing or broken folder.
    pub fn open(dir: &Path) -> Result<Self> {
        let objects = dir.join(OBJECTS_DIR);
        let pack_dir = objects.join("pack");
        let has_pack = std::fs::read_dir(&pack_dir).is_ok_and(|entries| {
            entries
                .filter_map(|e| e.ok())
                .any(|e| e.path().extension().is_some_and(|x| x == "pack"))
        });
        if !has_pack {
            bail!(
                "the replay pack is missing: {} holds no .pack file",
                pack_dir.display()
            );
        }
        let odb = git2::Odb::new().context("creating an object database")?;
        odb.add_disk_alternate(
            objects
                .to_str()
                .with_context(|| format!("{} is not UTF-8", objects.display()))?,
        )
        .with_context(|| format!("{} is not a git object folder", objects.display()))?;
        let repo = Repository::from_odb(odb).context("opening the replay objects")?;
        Ok(Self { repo })
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }
}

/// Parses by (blob id, language); `None` where no grammar knows the file.
type Parses = FxHashMap<(Oid, &'static str), Option<Arc<ParsedFile>>>;

/// Parses by blob id, shared by every replay with the same rules.
pub struct ParseCache {
    proto: Index,
    parsed: Mutex<Parses>,
}

impl ParseCache {
    pub fn new(cfg: RuleConfig) -> Result<Self> {
        Ok(Self {
            proto: Index::new(cfg)?,
            parsed: Mutex::new(FxHashMap::default()),
        })
    }

    pub fn config(&self) -> &RuleConfig {
        self.proto.config()
    }

    fn parse(&self, id: Oid, rel: &str, text: &str) -> Result<Option<Arc<ParsedFile>>> {
        // Keyed by language too: the same bytes under another extension parse differently.
        let language = crate::lang::for_path(rel).map_or("", |l| l.spec.name);
        let key = (id, language);
        if let Some(hit) = self.lock().get(&key) {
            return Ok(hit.clone());
        }
        let parsed = self.proto.parse(rel, text)?.map(Arc::new);
        self.lock().insert(key, parsed.clone());
        Ok(parsed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Parses> {
        // A panic elsewhere cannot leave a half-written entry: inserts are whole.
        self.parsed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A decision judged again.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
}

/// One run's ledger replayed line by line, in order.
pub struct Replay<'a> {
    repo: &'a Repository,
    cache: &'a ParseCache,
    index: Index,
    /// The tree the index holds.
    current: Option<Oid>,
    /// The tree of the last rescan (UserPromptSubmit, PostToolUse).
    last_look: Option<Oid>,
    /// The project root the hook inputs name (the first `cwd`).
    root: Option<PathBuf>,
    pending: Vec<Finding>,
    stop_rounds: HashMap<Option<String>, u32>,
    /// Every prompt so far, as the engine heard them.
    prompts: String,
}

impl<'a> Replay<'a> {
    pub fn new(repo: &'a Repository, cache: &'a ParseCache) -> Result<Self> {
        Ok(Self {
            repo,
            cache,
            index: Index::new(cache.config().clone())?,
            current: None,
            last_look: None,
            root: None,
            pending: Vec::new(),
            stop_rounds: HashMap::new(),
            prompts: String::new(),
        })
    }

    /// Judges one ledger line again; `None` for lines that are no decision of the
    /// rules. An error means the line cannot be replayed (its tree is missing).
    pub fn line(&mut self, line: &Value) -> Result<Option<Replayed>> {
        let event = line.get("event").and_then(Value::as_str).unwrap_or("");
        let input = line.get("input").unwrap_or(&Value::Null);
        if self.root.is_none() {
            self.root = input.get("cwd").and_then(Value::as_str).map(PathBuf::from);
        }
        let tree = oid_field(line, "tree_before")?;
        let approved = oid_field(line, "approved_tree")?;
        match event {
            "UserPromptSubmit" => {
                self.look(need(tree, "tree_before")?, false)?;
                self.stop_rounds.clear();
                if let Some(prompt) = input.get("prompt").and_then(Value::as_str) {
                    self.prompts.push_str(prompt);
                    self.prompts.push('\n');
                }
                Ok(None)
            }
            "PreToolUse" => self.pre_tool(input, tree, approved),
            "PostToolUse" | "PostToolUseFailure" => {
                let tree = need(tree, "tree_before")?;
                let mut findings = self.look(tree, true)?;
                if let Some(approved) = approved {
                    findings.extend(self.protected_changes(approved, tree)?);
                }
                let fresh: Vec<Finding> = findings
                    .iter()
                    .filter(|f| f.blocks && !self.pending.iter().any(|p| same_finding(p, f)))
                    .cloned()
                    .collect();
                let noted = findings.iter().any(|f| f.rule == reuse::NOTE_RULE);
                let verdict = if fresh.is_empty() && !noted {
                    Verdict::Quiet
                } else {
                    Verdict::Context
                };
                self.pending.extend(fresh);
                Ok(Some(Replayed { verdict, findings }))
            }
            "Stop" | "SubagentStop" => {
                let tree = need(tree, "tree_before")?;
                let findings = self.audit(tree, need(approved, "approved_tree")?)?;
                let key = input
                    .get("agent_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let verdict = if self.blocking(&findings) {
                    let rounds = self.stop_rounds.entry(key).or_insert(0);
                    *rounds += 1;
                    if *rounds < DEFAULT_MAX_STOP_ROUNDS {
                        Verdict::Block
                    } else {
                        Verdict::Paused
                    }
                } else {
                    self.stop_rounds.remove(&key);
                    self.pending.clear();
                    Verdict::Pass
                };
                Ok(Some(Replayed { verdict, findings }))
            }
            _ => Ok(None),
        }
    }

    fn pre_tool(
        &mut self,
        input: &Value,
        tree: Option<Oid>,
        approved: Option<Oid>,
    ) -> Result<Option<Replayed>> {
        let tool = input.get("tool_name").and_then(Value::as_str).unwrap_or("");
        let Some(tool_input) = input.get("tool_input").filter(|v| v.is_object()) else {
            return Ok(None);
        };
        let root = self.root.clone().unwrap_or_default();
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .map_or_else(|| root.clone(), PathBuf::from);
        let replayed = |verdict, findings| Ok(Some(Replayed { verdict, findings }));
        if rebuild::FILE_TOOLS.contains(&tool) {
            let tree = need(tree, "tree_before")?;
            let path = rebuild::target_path(tool, tool_input, &cwd)?;
            if is_protected(&path) {
                return replayed(Verdict::Deny, Vec::new());
            }
            let Some(rel) = relative(&root, &path) else {
                return replayed(Verdict::Allow, Vec::new());
            };
            self.move_to(tree)?;
            let current = self.text_at(tree, &rel)?;
            let content = rebuild::content_from(tool, tool_input, &path, current.as_deref())?;
            let findings =
                write_findings(&self.index, WalkOptions::default(), &rel, &content, None)?;
            let verdict = if findings.iter().any(|f| f.blocks) {
                Verdict::Deny
            } else {
                Verdict::Allow
            };
            return replayed(verdict, findings);
        }
        if tool != "Bash" {
            return Ok(None);
        }
        let command = tool_input
            .get("command")
            .and_then(Value::as_str)
            .context("Bash input has no string field `command`")?;
        let analysis = shell::analyze(command, &cwd, &root)?;
        if !analysis.protected_writes.is_empty() {
            return replayed(Verdict::Deny, Vec::new());
        }
        if analysis.turn_ending.is_empty() {
            return Ok(None);
        }
        let tree = need(tree, "tree_before")?;
        let findings = self.audit(tree, need(approved, "approved_tree")?)?;
        let verdict = if self.blocking(&findings) {
            Verdict::Deny
        } else {
            self.pending.clear();
            Verdict::Allow
        };
        replayed(verdict, findings)
    }

    /// Whether the audit's findings or the pending ones block.
    fn blocking(&self, findings: &[Finding]) -> bool {
        findings.iter().chain(&self.pending).any(|f| f.blocks)
    }

    /// The audit of every change from `approved` to `tree`, as a whole.
    fn audit(&mut self, tree: Oid, approved: Oid) -> Result<Vec<Finding>> {
        self.move_to(tree)?;
        let changes = tree_changes(self.repo, approved, tree)?;
        let mut findings = audit_findings(&self.index, &changes, &self.prompts)?;
        findings.extend(self.protected_changes(approved, tree)?);
        Ok(findings)
    }

    /// A rescan to `tree`: pending findings in changed files are dropped, and
    /// (when `judge`) the copies the change from the last rescan adds are found.
    fn look(&mut self, tree: Oid, judge: bool) -> Result<Vec<Finding>> {
        let previous = self.last_look.replace(tree);
        self.move_to(tree)?;
        let Some(previous) = previous.filter(|p| *p != tree) else {
            return Ok(Vec::new());
        };
        let deltas = tree_deltas(self.repo, previous, tree)?;
        self.pending
            .retain(|f| !deltas.iter().any(|(path, _, _)| *path == f.new.file));
        let mut findings = Vec::new();
        if !judge {
            return Ok(findings);
        }
        let mut changes = Vec::new();
        for (rel, before, after) in deltas {
            let Some(after) = after else { continue };
            let Some(text) = self.blob_text(after)? else {
                continue;
            };
            let Some(parsed) = self
                .index
                .file(&rel)
                .and(self.cache.parse(after, &rel, &text)?)
            else {
                continue;
            };
            let old = match before {
                Some(id) => self.blob_text(id)?,
                None => None,
            };
            let before = match (before, &old) {
                (Some(id), Some(old)) => self.cache.parse(id, &rel, old)?,
                _ => None,
            };
            findings.extend(rules::copy_findings(
                &self.index,
                &rel,
                &text,
                &parsed,
                &units_of(before.as_deref()),
            ));
            changes.push(FileChange {
                path: rel,
                before: old,
                after: Some(text),
            });
        }
        // The notes after the copies, as the session records them.
        let mut notes = reuse_notes(&self.index, &changes, usize::MAX);
        reuse::drop_copied(&mut notes, &findings);
        findings.extend(notes);
        Ok(findings)
    }

    fn protected_changes(&self, from: Oid, to: Oid) -> Result<Vec<Finding>> {
        Ok(tree_deltas(self.repo, from, to)?
            .into_iter()
            .map(|(path, _, _)| path)
            .filter(|path| is_protected(Path::new(path)))
            .map(protected_finding)
            .collect())
    }

    /// Brings the index to `tree`: the whole tree the first time, then the diff.
    fn move_to(&mut self, tree: Oid) -> Result<()> {
        if self.current == Some(tree) {
            return Ok(());
        }
        let files: Vec<(String, Option<Oid>)> = match self.current {
            None => self.files_of(tree)?,
            Some(current) => tree_deltas(self.repo, current, tree)?
                .into_iter()
                .map(|(path, _, after)| (path, after))
                .collect(),
        };
        for (rel, blob) in files {
            match blob {
                Some(id) => self.index_blob(&rel, id)?,
                None => {
                    self.index.remove_file(&rel);
                }
            }
        }
        self.current = Some(tree);
        Ok(())
    }

    /// Indexes `rel` as blob `id`, or drops it where the walk would skip it.
    fn index_blob(&mut self, rel: &str, id: Oid) -> Result<()> {
        let blob = self.repo.find_blob(id).context("reading a blob")?;
        let size = blob.size() as u64;
        let hidden = rel.split('/').any(|part| part.starts_with('.'));
        let text = if hidden || walk::path_verdict(rel, size, WalkOptions::default()).is_err() {
            None
        } else {
            walk::content_verdict(blob.content().to_vec()).ok()
        };
        let parsed = match text {
            Some(text) => self.cache.parse(id, rel, &text)?,
            None => None,
        };
        match parsed {
            Some(parsed) => self.index.insert_parsed(Arc::from(rel), (*parsed).clone()),
            None => {
                self.index.remove_file(rel);
            }
        }
        Ok(())
    }

    /// Every blob of `tree`, by path.
    fn files_of(&self, tree: Oid) -> Result<Vec<(String, Option<Oid>)>> {
        let tree = self.find_tree(tree)?;
        let mut files = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                files.push((format!("{dir}{name}"), Some(entry.id())));
            }
            git2::TreeWalkResult::Ok
        })
        .context("walking a recorded tree")?;
        Ok(files)
    }

    fn find_tree(&self, tree: Oid) -> Result<git2::Tree<'a>> {
        self.repo
            .find_tree(tree)
            .with_context(|| format!("the recorded tree {tree} is not in the replay pack"))
    }

    /// The text of `rel` in `tree`; `None` when absent or not text.
    fn text_at(&self, tree: Oid, rel: &str) -> Result<Option<String>> {
        match self.find_tree(tree)?.get_path(Path::new(rel)) {
            Ok(entry) => self.blob_text(entry.id()),
            Err(_) => Ok(None),
        }
    }

    fn blob_text(&self, id: Oid) -> Result<Option<String>> {
        let blob = self.repo.find_blob(id).context("reading a blob")?;
        Ok(String::from_utf8(blob.content().to_vec()).ok())
    }
}

fn oid_field(line: &Value, name: &str) -> Result<Option<Oid>> {
    match line.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(hex)) => Oid::from_str(hex)
            .map(Some)
            .with_context(|| format!("ledger field `{name}` is not a git object id: {hex}")),
        Some(other) => bail!("ledger field `{name}` is not a string: {other}"),
    }
}

fn need(tree: Option<Oid>, name: &str) -> Result<Oid> {
    tree.with_context(|| format!("the ledger line has no `{name}`"))
}

/// `path` relative to `root`, `/`-separated; `None` outside it.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let inside = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = inside.iter().filter_map(|c| c.to_str()).collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}
