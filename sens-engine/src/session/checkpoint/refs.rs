//! Checkpoints as commits under `refs/sens/checkpoints/N`, the approved one, the
//! rejected states, and the chain that keeps every tree reachable.

use anyhow::Context;
use git2::{Oid, Repository, Signature};

use super::{
    APPROVED_REF, CHECKPOINT_MESSAGE, CHECKPOINT_PREFIX, Checkpoint, Checkpoints, REJECTED_PREFIX,
    TREES_REF,
};

impl Checkpoints {
    /// Records `tree` as checkpoint N (the next free number) under
    /// `refs/sens/checkpoints/N`, its parent the previous checkpoint.
    pub fn checkpoint(&mut self, tree: Oid) -> anyhow::Result<Checkpoint> {
        let number = self.next_number;
        let message = format!("{CHECKPOINT_MESSAGE}{number}");
        let commit = self.commit_tree(tree, self.last_checkpoint, &message)?;
        let name = format!("{CHECKPOINT_PREFIX}{number}");
        self.repo
            .reference(&name, commit, false, &message)
            .with_context(|| format!("creating {name}"))?;
        self.next_number += 1;
        self.last_checkpoint = Some(commit);
        Ok(Checkpoint {
            number,
            commit,
            tree,
        })
    }

    /// Points `refs/sens/approved` at `checkpoint`.
    pub fn mark_approved(&self, checkpoint: &Checkpoint) -> anyhow::Result<()> {
        let message = format!("sens approved checkpoint {}", checkpoint.number);
        self.repo
            .reference(APPROVED_REF, checkpoint.commit, true, &message)
            .with_context(|| format!("moving {APPROVED_REF}"))?;
        Ok(())
    }

    /// The approved checkpoint an earlier process recorded, if any.
    pub fn approved(&self) -> anyhow::Result<Option<Checkpoint>> {
        let reference = match self.repo.find_reference(APPROVED_REF) {
            Ok(reference) => reference,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {APPROVED_REF}")),
        };
        let commit = reference.peel_to_commit().with_context(|| {
            format!("{APPROVED_REF} does not point at a commit: delete it with `git update-ref -d {APPROVED_REF}`")
        })?;
        let number = commit
            .message()
            .ok()
            .and_then(|m| m.strip_prefix(CHECKPOINT_MESSAGE))
            .and_then(|n| n.parse().ok())
            .with_context(|| {
                format!(
                    "{APPROVED_REF} points at {}, which is no sens checkpoint",
                    commit.id()
                )
            })?;
        Ok(Some(Checkpoint {
            number,
            commit: commit.id(),
            tree: commit.tree_id(),
        }))
    }

    /// Keeps `tree` under a new `refs/sens/rejected/N` and returns that ref's name.
    pub fn keep_rejected(&mut self, tree: Oid) -> anyhow::Result<String> {
        let taken = self
            .repo
            .references_glob(&format!("{REJECTED_PREFIX}*"))
            .context("listing rejected states")?
            .count();
        let name = format!("{REJECTED_PREFIX}{}", taken + 1);
        let commit = self.commit_tree(tree, None, "sens rejected state")?;
        self.repo
            .reference(&name, commit, false, "sens rejected state")
            .with_context(|| format!("creating {name}"))?;
        Ok(name)
    }

    /// Keeps `tree` reachable from `refs/sens/trees` (one commit per new tree).
    pub fn keep(&mut self, tree: Oid) -> anyhow::Result<()> {
        if self.last_kept.is_some_and(|(kept, _)| kept == tree) {
            return Ok(());
        }
        let parent = self.last_kept.map(|(_, commit)| commit);
        let commit = self.commit_tree(tree, parent, "sens ledger tree")?;
        self.repo
            .reference(TREES_REF, commit, true, "sens ledger tree")
            .with_context(|| format!("moving {TREES_REF}"))?;
        self.last_kept = Some((tree, commit));
        Ok(())
    }

    fn commit_tree(&self, tree: Oid, parent: Option<Oid>, message: &str) -> anyhow::Result<Oid> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("finding a snapshot tree")?;
        let parent = parent
            .map(|id| self.repo.find_commit(id))
            .transpose()
            .context("finding the previous sens commit")?;
        let signature = Signature::now("sens", "sens@localhost").context("making a signature")?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(None, &signature, &signature, message, &tree, &parents)
            .context("writing a sens commit")
    }
}

/// The next free checkpoint number and the newest checkpoint commit, so that a
/// new session in the same repository continues the numbering.
pub(super) fn latest_checkpoint(repo: &Repository) -> anyhow::Result<(u64, Option<Oid>)> {
    let mut best: Option<(u64, Oid)> = None;
    let references = repo
        .references_glob(&format!("{CHECKPOINT_PREFIX}*"))
        .context("listing sens checkpoints")?;
    for reference in references {
        let reference = reference.context("reading a sens checkpoint ref")?;
        let Ok(name) = reference.name() else {
            continue;
        };
        let Ok(number) = name[CHECKPOINT_PREFIX.len()..].parse::<u64>() else {
            continue;
        };
        let Some(target) = reference.target() else {
            continue;
        };
        if best.is_none_or(|(n, _)| number > n) {
            best = Some((number, target));
        }
    }
    Ok(match best {
        Some((n, id)) => (n + 1, Some(id)),
        None => (1, None),
    })
}
