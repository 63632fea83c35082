//! The approval state and the project's snapshots: the audit since the approved
//! point, the protected paths' changes, approving, and looking at the project
//! with or without a rescan.

use std::path::Path;

use anyhow::Context;
use git2::Oid;

use super::Session;
use super::findings::protected_finding;
use super::protect::{self, is_protected};
use crate::finding::Finding;

impl Session {
    /// The full audit: every change since the approved point, judged as a whole.
    pub(super) fn audit(&mut self) -> anyhow::Result<(Oid, Vec<Finding>)> {
        let approved = self
            .approved
            .context("there is no approved point yet: no UserPromptSubmit reached the engine")?;
        let tree = self.look_without_rescan()?;
        let changes = self.checkpoints.changes(approved.tree, tree)?;
        let mut findings = match &mut self.judge {
            Some(judge) => judge.audit(&changes)?,
            None => Vec::new(),
        };
        findings.extend(self.protected_changes(approved.tree, tree)?);
        Ok((tree, findings))
    }

    /// The engine's paths that changed between two states, and links made to
    /// them (another name for them). No tool call that names them is allowed, so
    /// such a change came through a command the shell analysis cannot read (a
    /// script writing the file): it blocks until a human decides, like any
    /// unapproved change. `.sens/` is never in a snapshot.
    pub(super) fn protected_changes(&self, from: Oid, to: Oid) -> anyhow::Result<Vec<Finding>> {
        Ok(self
            .checkpoints
            .changed_paths(from, to)?
            .into_iter()
            .filter(|path| {
                is_protected(Path::new(path))
                    || protect::is_link_to_protected(&self.root.join(path))
            })
            .map(protected_finding)
            .collect())
    }

    /// Moves the approved point to `tree` (a new checkpoint unless unchanged).
    pub(super) fn approve(&mut self, tree: Oid) -> anyhow::Result<()> {
        if self.approved.is_none_or(|a| a.tree != tree) {
            let checkpoint = self.checkpoints.checkpoint(tree)?;
            self.checkpoints.mark_approved(&checkpoint)?;
            self.approved = Some(checkpoint);
        }
        self.pending.clear();
        self.awaiting_human = false;
        Ok(())
    }

    /// Snapshots the project and lets the judge re-read what changed. Pending
    /// findings in files that changed since the last look are dropped: the
    /// rescan reports them again if they still stand.
    pub(super) fn look_with_rescan(&mut self) -> anyhow::Result<(Oid, Vec<Finding>)> {
        let tree = self.look_without_rescan()?;
        self.last_changed = match self.last_look.filter(|p| *p != tree) {
            Some(previous) => self.checkpoints.changed_paths(previous, tree)?,
            None => Vec::new(),
        };
        let changed = &self.last_changed;
        self.pending.retain(|f| !changed.contains(&f.new.file));
        self.last_look = Some(tree);
        let findings = match &mut self.judge {
            Some(judge) => judge.rescan()?,
            None => Vec::new(),
        };
        Ok((tree, findings))
    }

    pub(super) fn look_without_rescan(&mut self) -> anyhow::Result<Oid> {
        let tree = self.checkpoints.snapshot()?;
        self.checkpoints.keep(tree)?;
        Ok(tree)
    }

    /// The state the judge's index holds (the last rescan); a fresh snapshot
    /// only before the first one.
    pub(super) fn judged_tree(&mut self) -> anyhow::Result<Option<Oid>> {
        match self.last_look {
            Some(tree) => Ok(Some(tree)),
            None => self.look_without_rescan().map(Some),
        }
    }
}
