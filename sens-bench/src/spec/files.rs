//! File sets and probes as sequence files name them: globs over
//! project-relative paths, and concept probes (a regex over some files' text, or a
//! tree-sitter query over their syntax trees).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;
use sens_engine::ignores::Ignores;
use sens_engine::lang::Lang;
use tree_sitter::{Query, QueryCursor, StreamingIterator};

/// Project-relative files chosen by globs (`/`-separated; `*` stays within one
/// folder, `**` crosses folders), minus exclusions.
#[derive(Debug, Clone)]
pub struct FileSet {
    include: GlobSet,
    exclude: GlobSet,
}

impl FileSet {
    /// Compiles the globs; the error names the glob that is not valid.
    pub fn new(include: &[String], exclude: &[String]) -> Result<FileSet> {
        Ok(FileSet {
            include: glob_set(include)?,
            exclude: glob_set(exclude)?,
        })
    }

    pub fn matches(&self, relative: &Path) -> bool {
        self.include.is_match(relative) && !self.exclude.is_match(relative)
    }

    /// The matching files under `root`, sorted, as paths relative to `root`.
    /// Files the ignore rules that count hide (the baseline's `.gitignore`, the
    /// harness's set-up products) and hidden files are skipped, so
    /// `node_modules` or build output never count.
    pub fn files(&self, root: &Path, rules: &Ignores) -> Result<Vec<PathBuf>> {
        relative_files(rules.walk(root).build(), root, |relative| {
            self.matches(relative)
        })
    }
}

/// The files (not folders) `walk` finds under `root` that `keep` accepts, as
/// paths relative to `root`, sorted.
pub fn relative_files(
    walk: ignore::Walk,
    root: &Path,
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in walk {
        let entry = entry.with_context(|| format!("cannot list files under {}", root.display()))?;
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .with_context(|| format!("{} is outside {}", entry.path().display(), root.display()))?;
        if keep(relative) {
            found.push(relative.to_path_buf());
        }
    }
    found.sort();
    Ok(found)
}

fn glob_set(globs: &[String]) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let compiled = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .with_context(|| format!("`{glob}` is not a valid glob"))?;
        set.add(compiled);
    }
    set.build().context("cannot compile the globs")
}

/// One concept's probe: the constructs `matcher` finds count its implementations.
#[derive(Debug, Clone)]
pub struct Probe {
    pub concept: String,
    pub matcher: Matcher,
    /// `None`: the project's size files.
    pub files: Option<FileSet>,
}

/// How a probe finds a concept's constructs in one file.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Non-overlapping matches of a regex over the file's text.
    Regex(Regex),
    /// Syntax nodes a tree-sitter query captures as `@probe`, each node once.
    Query(Arc<SyntaxQuery>),
}

/// A tree-sitter query compiled against one of the engine's languages.
pub struct SyntaxQuery {
    lang: &'static Lang,
    query: Query,
    /// The index of the `@probe` capture.
    probe: u32,
}

/// The capture every probe query marks its construct with.
const PROBE_CAPTURE: &str = "probe";

impl SyntaxQuery {
    /// Compiles `source` for the engine's language `language`; the error says
    /// where the query is wrong, or that it captures no `@probe`.
    pub fn new(language: &str, source: &str) -> Result<SyntaxQuery> {
        let lang = sens_engine::lang::all()
            .iter()
            .find(|lang| lang.name() == language)
            .with_context(|| format!("the engine has no grammar for `{language}`"))?;
        let query = Query::new(&lang.language, source).map_err(|err| {
            anyhow::anyhow!(
                "not a valid {language} query at line {}, column {}: {}",
                err.row + 1,
                err.column + 1,
                err.message
            )
        })?;
        let probe = query
            .capture_index_for_name(PROBE_CAPTURE)
            .with_context(|| format!("the query captures no `@{PROBE_CAPTURE}` node"))?;
        Ok(SyntaxQuery { lang, query, probe })
    }

    /// The distinct nodes captured as `@probe` in `text`, a file of the query's language.
    fn count(&self, path: &Path, text: &str) -> Result<u64> {
        let name = path.to_string_lossy();
        let file_lang = sens_engine::lang::for_path(&name).map(|lang| lang.name());
        if file_lang != Some(self.lang.name()) {
            bail!(
                "{name}: a {} probe query cannot read this file; narrow the probe's files",
                self.lang.name()
            );
        }
        let source = self.lang.prepare(text);
        let tree = sens_engine::units::parse_tree(
            self.lang,
            &source,
            sens_engine::units::DEFAULT_PARSE_BUDGET,
        )
        .with_context(|| format!("cannot parse {name}"))?;
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(&self.query, tree.root_node(), source.as_bytes());
        let mut nodes = BTreeSet::new();
        while let Some(found) = matches.next() {
            for capture in found.captures().iter().filter(|c| c.index == self.probe) {
                nodes.insert((capture.node.start_byte(), capture.node.end_byte()));
            }
        }
        Ok(nodes.len() as u64)
    }
}

impl std::fmt::Debug for SyntaxQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntaxQuery")
            .field("lang", &self.lang.name())
            .finish()
    }
}

impl Probe {
    /// The concept's constructs in one file (`path` names it in errors and picks
    /// its language).
    pub fn count(&self, path: &Path, text: &str) -> Result<u64> {
        match &self.matcher {
            Matcher::Regex(regex) => Ok(regex.find_iter(text).count() as u64),
            Matcher::Query(query) => query.count(path, text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIVMOD: &str = r#"((call function: (identifier) @f) @probe (#eq? @f "divmod"))"#;

    #[test]
    fn a_query_counts_each_captured_node_once_and_never_a_comment() {
        let twice = format!("{DIVMOD}\n{DIVMOD}");
        let probe = Probe {
            concept: "durations".into(),
            matcher: Matcher::Query(Arc::new(SyntaxQuery::new("python", &twice).expect("query"))),
            files: None,
        };
        let text = "# divmod(m, 60)\nh, m = divmod(m, 60)\nx = 'divmod(1, 2)'\n";
        assert_eq!(probe.count(Path::new("a.py"), text).expect("counted"), 1);
        let err = probe
            .count(Path::new("a.ts"), "divmod(1, 2);")
            .expect_err("another language");
        assert!(format!("{err:#}").contains("a.ts"), "{err:#}");
    }
}
