//! What a human sees and decides: the approved point, a paused turn, pending
//! findings, and approving or rejecting the change as it stands.

use std::time::Instant;

use anyhow::Context;
use serde_json::json;

use super::checkpoint::Checkpoint;
use super::ledger::Verdict;
use super::{Outcome, Session};
use crate::finding::Finding;

impl Session {
    /// The approved point: `None` until the first UserPromptSubmit.
    pub fn approved(&self) -> Option<&Checkpoint> {
        self.approved.as_ref()
    }

    /// Whether a turn ended paused (its audit failed every allowed round) and no
    /// audit or human has approved since.
    pub fn awaiting_human(&self) -> bool {
        self.awaiting_human
    }

    /// Blocking findings from tool runs that no later change has resolved.
    pub fn pending(&self) -> &[Finding] {
        &self.pending
    }

    /// A human approves the project as it stands: the approved point moves there
    /// and pending findings are dropped. Written to the ledger.
    pub fn approve_by_human(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let approved_before = self.approved.map(|c| c.tree);
        let tree = self.look_without_rescan()?;
        self.approve(tree)?;
        let input = json!({"hook_event_name": "HumanApproval"});
        let outcome = Outcome::new(Verdict::Approved, json!({}), Some(tree));
        self.write_ledger("HumanApproval", &input, approved_before, &outcome, started)
    }

    /// Continues from the approved point an earlier process recorded under
    /// `refs/sens/approved`, if any, instead of taking the state at the first
    /// prompt. Returns whether there was one.
    pub fn resume(&mut self) -> anyhow::Result<bool> {
        self.approved = self.checkpoints.approved()?;
        Ok(self.approved.is_some())
    }

    /// The paths that differ between the approved point and the project as it
    /// stands (empty before the first approved point).
    pub fn unapproved_paths(&mut self) -> anyhow::Result<Vec<String>> {
        let Some(approved) = self.approved else {
            return Ok(Vec::new());
        };
        let tree = self.look_without_rescan()?;
        self.checkpoints.changed_paths(approved.tree, tree)
    }

    /// A human rejects the unapproved change: the project's files are restored
    /// to the approved point, the rejected state is kept under
    /// `refs/sens/rejected/N` (returned; `None` when nothing differed), and the
    /// index is brought up to date. Written to the ledger.
    pub fn reject_by_human(&mut self) -> anyhow::Result<Option<String>> {
        let started = Instant::now();
        let approved = self
            .approved
            .context("there is no approved point yet, so there is nothing to restore")?;
        let tree = self.look_without_rescan()?;
        if tree == approved.tree {
            return Ok(None);
        }
        let kept = self.checkpoints.keep_rejected(tree)?;
        self.checkpoints.restore(tree, approved.tree)?;
        let restored = self.look_with_rescan()?.0;
        self.pending.clear();
        self.stop_rounds.clear();
        self.awaiting_human = false;
        let input = json!({"hook_event_name": "HumanRejection", "kept": kept});
        let outcome = Outcome::new(Verdict::Rejected, json!({}), Some(restored));
        self.write_ledger(
            "HumanRejection",
            &input,
            Some(approved.tree),
            &outcome,
            started,
        )?;
        Ok(Some(kept))
    }
}
