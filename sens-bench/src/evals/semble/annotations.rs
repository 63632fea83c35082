//! semble's benchmark data as stored under `bench/semble/`: `repos.toml` (each
//! repository's language, semble's pinned revision, the release fetched in its
//! place and semble's published figures) and `annotations/<repo>.json` (semble's
//! format: a list of queries with `relevant` and `secondary` targets, a path or
//! `{path, start_line, end_line}`, and an optional `category`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// `repos.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repos {
    pub repos: BTreeMap<String, Repo>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repo {
    pub language: String,
    /// semble's pinned commit of the upstream repository.
    pub revision: String,
    /// What `scripts/semble-corpus.sh` fetches in its place.
    pub release: String,
    /// semble hybrid's published NDCG@10 on this repository.
    pub semble: Published,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub ndcg10: f64,
    #[serde(default)]
    pub architecture: Option<f64>,
    #[serde(default)]
    pub semantic: Option<f64>,
    #[serde(default)]
    pub symbol: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Architecture,
    Semantic,
    Symbol,
}

impl Category {
    pub const ALL: [Category; 3] = [Self::Architecture, Self::Semantic, Self::Symbol];

    pub fn label(self) -> &'static str {
        match self {
            Self::Architecture => "architecture",
            Self::Semantic => "semantic",
            Self::Symbol => "symbol",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.label() == s)
    }

    /// semble's rule for a query without one: a single word names a symbol,
    /// `how ...` asks about architecture, anything else is semantic.
    fn inferred(query: &str) -> Self {
        let q = query.trim();
        if !q.contains(' ') {
            Self::Symbol
        } else if q.to_lowercase().starts_with("how ") {
            Self::Architecture
        } else {
            Self::Semantic
        }
    }
}

/// One annotated query; `targets` are the relevant and secondary paths.
#[derive(Debug, Clone)]
pub struct Query {
    pub query: String,
    pub targets: Vec<String>,
    pub category: Category,
}

#[derive(Deserialize)]
struct RawQuery {
    query: String,
    relevant: Vec<RawTarget>,
    #[serde(default)]
    secondary: Vec<RawTarget>,
    #[serde(default)]
    category: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawTarget {
    Path(String),
    Span { path: String },
}

pub fn load_repos(path: &Path) -> Result<Repos> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("{}: malformed", path.display()))
}

/// The queries of one annotation file; an error names the file, the query's
/// index and the field.
pub fn load_queries(path: &Path) -> Result<Vec<Query>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let items: Vec<serde_json::Value> = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a JSON list of queries", path.display()))?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let raw: RawQuery = serde_json::from_value(item)
                .with_context(|| format!("{}: query {i}", path.display()))?;
            let category = match raw.category.as_deref() {
                None => Category::inferred(&raw.query),
                Some(c) => Category::parse(c).with_context(|| {
                    format!(
                        "{}: query {i}: field `category`: unknown `{c}`",
                        path.display()
                    )
                })?,
            };
            if raw.relevant.is_empty() {
                bail!("{}: query {i}: field `relevant` is empty", path.display());
            }
            let targets = raw
                .relevant
                .into_iter()
                .chain(raw.secondary)
                .map(|t| match t {
                    RawTarget::Path(p) | RawTarget::Span { path: p } => p,
                })
                .collect();
            Ok(Query {
                query: raw.query,
                targets,
                category,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    #[test]
    fn queries_read_paths_spans_and_inferred_categories() {
        let f = write(
            r#"[{"query": "Session", "relevant": [{"path": "s.py", "start_line": 3, "end_line": 9}]},
                {"query": "how redirects work", "relevant": ["a.py"], "secondary": ["b.py"], "seed": {}},
                {"query": "cookie jar", "relevant": ["c.py"], "category": "architecture"}]"#,
        );
        let q = load_queries(f.path()).unwrap();
        assert_eq!(q[0].category, Category::Symbol);
        assert_eq!(q[0].targets, vec!["s.py"]);
        assert_eq!(q[1].category, Category::Architecture);
        assert_eq!(q[1].targets, vec!["a.py", "b.py"]);
        assert_eq!(q[2].category, Category::Architecture);
    }

    #[test]
    fn a_malformed_query_names_the_file_the_query_and_the_field() {
        let f = write(r#"[{"query": "x", "relevant": ["a.py"]}, {"relevant": ["a.py"]}]"#);
        let err = format!("{:#}", load_queries(f.path()).unwrap_err());
        assert!(err.contains(&f.path().display().to_string()), "{err}");
        assert!(err.contains("query 1") && err.contains("`query`"), "{err}");
        let f = write(r#"[{"query": "x", "relevant": ["a.py"], "category": "misc"}]"#);
        let err = format!("{:#}", load_queries(f.path()).unwrap_err());
        assert!(err.contains("field `category`"), "{err}");
    }
}
