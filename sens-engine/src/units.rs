//! One file into units (docs/contract.md, "Vocabulary" and "Fingerprints"): functions,
//! class-likes, and windows of consecutive statements inside one block, each with its
//! fingerprints and facts. This module holds what a file contributes to the index
//! and the calls that produce it: one walk of the syntax tree collects the file's
//! leaf tokens (`walk`); units are ranges of them, fingerprinted afterwards
//! (`fingerprints`).

mod facts;
mod fingerprints;
mod module;
mod names;
mod parse;
mod path;
mod spans;
mod tokens;
mod walk;

use std::ops::Range;
use std::sync::Arc;

use tree_sitter::Tree;

pub use facts::UnitFacts;
pub(crate) use facts::trait_name;
use fingerprints::finish;
pub use fingerprints::{Fingerprinter, LEAVE_OUT_BANDS, LEAVE_OUT_MAX, LEAVE_OUT_MIN};
pub use module::foreign_exports;
pub use parse::{
    DEFAULT_PARSE_BUDGET, OverBudget, changed_range, parse_changed, parse_tree, reparse,
};
pub use spans::{Spans, spans};
pub use walk::WINDOW;
use walk::walk;

use crate::lang::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitKind {
    Function,
    Class,
    Window,
    /// A file's own doc and the names it re-exports: a suggestion item, never
    /// fingerprinted (see [`module`]).
    Module,
}

impl UnitKind {
    /// Fingerprinted, so a copy can be found of it: every kind but a module.
    pub fn has_fingerprints(self) -> bool {
        self != UnitKind::Module
    }

    /// A named symbol of the code (a function or a class): what a name
    /// defines, what a caller calls.
    pub fn is_symbol(self) -> bool {
        matches!(self, UnitKind::Function | UnitKind::Class)
    }
}

/// A unit with its fingerprints, independent of any index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UnitData {
    pub kind: UnitKind,
    pub name: String,
    /// The declaration up to its body, whitespace collapsed.
    pub signature: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Normalized tokens (comments dropped).
    pub tokens: u32,
    pub exact: u64,
    pub renamed: u64,
    /// Sorted, deduplicated k-shingles of normalized tokens.
    /// Shared with the index's probe table (one read per candidate).
    #[serde(with = "crate::shared_slice")]
    pub shingles: Arc<[u32]>,
    /// LSH band keys of the shingles' MinHash signature. Empty in a unit the
    /// index holds: `Index::band_keys` makes them again from the shingles.
    pub bands: Box<[u64]>,
    /// Band keys of the unit's tokens with one statement left out: the first
    /// [`LEAVE_OUT_BANDS`] bands' keys per statement of the size that
    /// [`LEAVE_OUT_MIN`] and [`LEAVE_OUT_MAX`] bound, for functions and classes
    /// of at least `NearRule::min_contained` shingles (none for windows). A copy
    /// with one long statement inserted, whose whole-unit keys may share no
    /// band with the original's, gets the original's keys back. Looked up by
    /// `Index::copies`, never inserted into its LSH table.
    pub leave_one_out: Box<[u64]>,
    /// A window made only of import/use statements: never a blocking copy.
    pub imports_only: bool,
    pub facts: UnitFacts,
}

impl UnitData {
    /// Test code: a function named or marked as a test by the runners'
    /// conventions, or anything inside a test-only module. One definition for
    /// every rule that leaves tests alone (orphans, suggestions).
    pub fn is_test(&self) -> bool {
        self.facts.in_test_module || is_test_function(&self.name, &self.facts.decorators)
    }

    /// A Python protocol method (`__init__`, `__eq__`, `__getitem__`): the
    /// language calls it, never a caller by name. One definition for the rules
    /// that leave it alone (orphans) and the suggestions, which offer its class.
    pub fn is_dunder(&self) -> bool {
        let name = self.name.as_str();
        name.starts_with("__") && name.ends_with("__")
    }
}

/// A test by the runners' conventions: `test_x`, `testX`, `TestX`, or an attribute
/// or decorator naming a test (`#[test]`, `#[tokio::test]`, `@Test`).
pub fn is_test_function(name: &str, decorators: &str) -> bool {
    let after = |prefix: &str| name.strip_prefix(prefix).map(|rest| rest.chars().next());
    let test_name = [after("test"), after("Test")]
        .into_iter()
        .flatten()
        .any(|next| next.is_none_or(|c| c == '_' || c.is_uppercase() || c.is_ascii_digit()));
    test_name
        || decorators
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "test" || w == "Test")
}

/// What one file contributes to the index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParsedFile {
    /// Not stored in the cache: the file's extension names it again.
    #[serde(skip)]
    pub language: &'static str,
    pub units: Vec<UnitData>,
    /// Identifier texts and how often each occurs outside the definitions it names.
    pub identifiers: Vec<(Box<str>, u32)>,
    /// The tree holds ERROR or MISSING nodes (the file is indexed anyway).
    pub parse_errors: bool,
}

/// Parse and extract in one call, within [`DEFAULT_PARSE_BUDGET`].
pub fn parse_file(lang: &Lang, source: &str, fp: &Fingerprinter) -> anyhow::Result<ParsedFile> {
    let tree = parse_tree(lang, source, DEFAULT_PARSE_BUDGET)?;
    Ok(extract(lang, source, &tree, fp, None))
}

/// Walks the tree once: tokens, units, windows and identifier counts, and the
/// file's module item first. With a `focus` byte range, only units touching it
/// are kept (the others are known unchanged; the module item is only ever
/// suggested, so a focused extraction, which feeds the rules, has none) and
/// the identifier counts cover the whole file as always.
pub fn extract(
    lang: &Lang,
    source: &str,
    tree: &Tree,
    fp: &Fingerprinter,
    focus: Option<Range<usize>>,
) -> ParsedFile {
    let walked = walk(lang, source, tree, focus.as_ref());
    let mut parsed = finish(lang, walked, tree.root_node().has_error(), fp);
    if focus.is_none()
        && let Some(item) = module::module_item(lang, source, tree)
    {
        parsed.units.insert(0, item);
    }
    parsed
}

#[cfg(test)]
/// This crate's sources and the near-copy fixtures of its tests, as
/// (path, text) pairs: a real corpus for the fast paths' equality tests.
pub(crate) fn test_corpus() -> anyhow::Result<Vec<(String, String)>> {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "src/session",
        "src/session/guards",
        "src/suggest",
        "src/units",
        "tests/fixtures",
        "tests/fixtures/layout",
    ] {
        for entry in std::fs::read_dir(crate_dir.join(dir))? {
            let path = entry?.path();
            let name = path.to_string_lossy().trim_end_matches(".txt").to_string();
            if path.is_file() && crate::lang::for_path(&name).is_some() {
                files.push((name, std::fs::read_to_string(&path)?));
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::is_test_function;

    #[test]
    fn tests_are_told_by_name_and_attribute() {
        for (name, decorators) in [
            ("test_totals", ""),
            ("testTotals", ""),
            ("TestTotals", ""),
            ("test", ""),
            ("totals_work", "#[test]"),
            ("totals_work", "#[tokio::test]"),
            ("totalsWork", "@Test"),
        ] {
            assert!(is_test_function(name, decorators), "{name} {decorators}");
        }
        for (name, decorators) in [("testable", ""), ("attest", ""), ("latest", "#[inline]")] {
            assert!(!is_test_function(name, decorators), "{name} {decorators}");
        }
    }
}
