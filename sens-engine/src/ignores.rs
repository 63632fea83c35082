//! The ignore rules that count (docs/integrity.md, "Ignore rules that count"): those of
//! the baseline, i.e. the `.gitignore` files of a tree the run started from, plus the
//! caller's own fixed patterns (`.sens/`, the harness's set-up products). Never
//! `.git/info/exclude`, `core.excludesFile`, or a `.gitignore` written or edited since:
//! those are the agent's to change, and a file they hide still runs.

use anyhow::{Context, Result};
use git2::{ObjectType, Repository, Tree, TreeWalkMode, TreeWalkResult};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::Path;

/// The engine's own folder: never part of the agent's work.
pub const ENGINE_DIR: &str = ".sens/";

#[derive(Clone)]
pub struct Ignores {
    /// Patterns that always hide, whatever the ignore files say.
    fixed: Gitignore,
    /// Each `.gitignore` of the baseline with its folder (`""` or `a/b/`),
    /// deepest first: as in git, a deeper file overrides a shallower one.
    files: Vec<(String, Gitignore)>,
}

impl Ignores {
    /// Only the `fixed` patterns (gitignore syntax, rooted at the top) and
    /// `.sens/`: the rules of a folder without a baseline.
    pub fn fixed(fixed: &[String]) -> Result<Self> {
        let fixed = matcher("", fixed.iter().map(String::as_str).chain([ENGINE_DIR]))
            .context("cannot read the fixed ignore patterns")?;
        Ok(Self {
            fixed,
            files: Vec::new(),
        })
    }

    /// The rules of `tree`'s `.gitignore` files (their content in the tree, not
    /// on disk) and the `fixed` patterns.
    pub fn of_tree(repo: &Repository, tree: &Tree<'_>, fixed: &[String]) -> Result<Self> {
        let mut found = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.name_bytes() == b".gitignore" && entry.kind() == Some(ObjectType::Blob) {
                found.push((dir.to_string(), entry.id()));
            }
            TreeWalkResult::Ok
        })
        .context("cannot list the baseline's .gitignore files")?;
        let mut files = Vec::with_capacity(found.len());
        for (dir, id) in found {
            let blob = repo
                .find_blob(id)
                .with_context(|| format!("cannot read the baseline's {dir}.gitignore"))?;
            let text = String::from_utf8_lossy(blob.content());
            let matcher = matcher(&dir, text.lines())
                .with_context(|| format!("cannot read the baseline's {dir}.gitignore"))?;
            files.push((dir, matcher));
        }
        files.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.matches('/').count()));
        Ok(Self {
            files,
            ..Self::fixed(fixed)?
        })
    }

    /// The engine's baseline: the `.gitignore` files of HEAD in the repository
    /// whose top is `root`, and the `fixed` patterns; `None` when there is no
    /// repository or no commit yet.
    pub fn of_head(root: &Path, fixed: &[String]) -> Result<Option<Self>> {
        let Ok(repo) = Repository::open(root) else {
            return Ok(None);
        };
        let Ok(head) = repo.head().and_then(|h| h.peel_to_tree()) else {
            return Ok(None);
        };
        Self::of_tree(&repo, &head, fixed).map(Some)
    }

    /// A walk of `root` that reads no ignore file and skips hidden files and what
    /// these rules hide.
    pub fn walk(&self, root: &Path) -> ignore::WalkBuilder {
        let mut builder = ignore::WalkBuilder::new(root);
        let (rules, top) = (self.clone(), root.to_path_buf());
        builder
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .ignore(false)
            .parents(false)
            .filter_entry(move |entry| {
                let dir = entry.file_type().is_some_and(|t| t.is_dir());
                let rel = entry.path().strip_prefix(&top).ok().and_then(Path::to_str);
                rel.is_none_or(|rel| rel.is_empty() || !rules.is_ignored(rel, dir))
            });
        builder
    }

    /// Whether the project-relative `/`-separated `rel` is ignored: itself, or a
    /// folder it is in.
    pub fn is_ignored(&self, rel: &str, is_dir: bool) -> bool {
        let rel = rel.trim_end_matches('/');
        let folders = rel.match_indices('/').map(|(i, _)| (&rel[..i], true));
        folders
            .chain([(rel, is_dir)])
            .any(|(path, dir)| self.hides(path, dir))
    }

    fn hides(&self, path: &str, is_dir: bool) -> bool {
        if self.fixed.matched(path, is_dir).is_ignore() {
            return true;
        }
        for (dir, matcher) in &self.files {
            if !path.starts_with(dir.as_str()) {
                continue;
            }
            match matcher.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

fn matcher<'a>(dir: &str, lines: impl IntoIterator<Item = &'a str>) -> Result<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    for line in lines {
        builder.add_line(None, line)?;
    }
    Ok(builder.build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_baseline_files_count_deeper_first_and_fixed_patterns_always() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".gitignore", "build/\n*.log\n");
        write(root, "pkg/.gitignore", "!keep.log\ngen_*.py\n");
        let repo = Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        // Edits on disk after the baseline do not count.
        write(root, ".gitignore", "*\n");
        write(root, "src/.gitignore", "*.py\n");
        let rules = Ignores::of_tree(&repo, &tree, &["/.venv/".to_string()]).unwrap();
        assert!(rules.is_ignored("build/out.py", false));
        assert!(rules.is_ignored("build", true));
        assert!(rules.is_ignored("a.log", false));
        assert!(!rules.is_ignored("pkg/keep.log", false));
        assert!(rules.is_ignored("pkg/gen_x.py", false));
        assert!(!rules.is_ignored("gen_x.py", false));
        assert!(rules.is_ignored(".venv/lib/site.py", false));
        assert!(rules.is_ignored(".sens/ledger.jsonl", false));
        assert!(!rules.is_ignored("src/main.py", false));
    }
}
