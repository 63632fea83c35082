//! Every citation of the docs in the repository's sources names a page that
//! exists and a heading that page has: `(docs/runs.md, "Format versions")` or
//! `docs/runs.md#format-versions`. A citation of a document outside the
//! repository (`SPEC 3.5`) is refused: the docs are the one place the contract
//! is written (docs/contract.md). A heading of another Markdown page
//! (`sequences/cuentas/README.md, "Running the hidden tests"`) is checked too.
//!
//! Comments wrap, so a citation may run over lines: each source's comment
//! markers at the start of a line are joined away before matching.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// The folders holding sources that may cite the docs, below the repository.
const SOURCES: &[&str] = &[
    "sens-engine/src",
    "sens-engine/tests",
    "sens/src",
    "sens/tests",
    "sens-bench/src",
    "sens-bench/tests",
    "sens-bench/benches",
    "scripts",
    "bench/conditions.toml",
    ".ci",
];

/// What the sources are written in, by extension.
const EXTENSIONS: &[&str] = &["rs", "sh", "py", "toml", "yaml", "js", "css", "md"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the repository")
        .to_path_buf()
}

/// Every file below `path` (or `path` itself) with one of [`EXTENSIONS`].
fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if EXTENSIONS.contains(&ext)
            || path.parent().and_then(Path::file_name) == Some(".ci".as_ref())
        {
            out.push(path.to_path_buf());
        }
        return;
    }
    let Ok(entries) = fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        // Expected outputs hold what the tools print, not citations.
        if entry.file_name() != "fixtures" {
            files(&entry.path(), out);
        }
    }
}

/// The text with each line's leading comment markers (`//!`, `///`, `//`, `#`,
/// ` *`) and indentation joined into one space, so wrapped citations read whole.
fn joined(text: &str) -> String {
    let markers = Regex::new(r"\n[ \t]*(?://[/!]?|#|\*)?[ \t]*").unwrap();
    markers.replace_all(text, " ").into_owned()
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The headings of a Markdown page, as written (a `#` line inside a fenced
/// block is code).
fn headings(page: &Path) -> Option<BTreeSet<String>> {
    let text = fs::read_to_string(page).ok()?;
    let mut fenced = false;
    let mut heads = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            heads.insert(line.trim_start_matches('#').trim().to_string());
        }
    }
    Some(heads)
}

/// What is wrong with each citation in `text` (of the file `name`), against the
/// docs below `root`.
fn broken(root: &Path, name: &str, text: &str) -> Vec<String> {
    // A page starts after a space, a bracket or a backquote: a path in a string
    // (`"docs/x.md"`) is data, not a citation.
    let citation = Regex::new(
        r#"(?:^|[\s(\[`])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)(?:,\s+"([^"]+)"|#([A-Za-z0-9_-]+))?"#,
    )
    .unwrap();
    let outside = Regex::new(r"\bSPEC \d").unwrap();
    let text = joined(text);
    let mut wrong = Vec::new();
    for found in outside.find_iter(&text) {
        wrong.push(format!(
            "{name}: `{}` cites a document outside docs/",
            found.as_str()
        ));
    }
    for found in citation.captures_iter(&text) {
        let page = &found[1];
        // Other pages are named in passing (a task's README.md); they are checked
        // when a heading is cited.
        if !page.starts_with("docs/") && found.get(2).is_none() && found.get(3).is_none() {
            continue;
        }
        let Some(heads) = headings(&root.join(page)) else {
            wrong.push(format!("{name}: {page} does not exist"));
            continue;
        };
        if let Some(heading) = found.get(2)
            && !heads.contains(heading.as_str())
        {
            wrong.push(format!(
                "{name}: {page} has no heading \"{}\"",
                heading.as_str()
            ));
        }
        if let Some(target) = found.get(3)
            && !heads.iter().any(|h| anchor(h) == target.as_str())
        {
            wrong.push(format!(
                "{name}: {page} has no heading with anchor #{}",
                target.as_str()
            ));
        }
    }
    wrong
}

#[test]
fn every_citation_names_a_page_and_heading_that_exist() {
    let root = repository();
    let mut sources = Vec::new();
    for source in SOURCES {
        files(&root.join(source), &mut sources);
    }
    assert!(sources.len() > 100, "only {} sources found", sources.len());
    let mut wrong = Vec::new();
    let mut cited = 0;
    for path in &sources {
        let text = fs::read_to_string(path).unwrap_or_default();
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        // This file's own cases are wrong on purpose.
        if name.ends_with("tests/doc_citations.rs") {
            continue;
        }
        cited += text.matches("docs/").count();
        wrong.extend(broken(&root, &name, &text));
    }
    assert!(
        cited > 50,
        "only {cited} citations found: is the pattern right?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_missing_heading_a_missing_page_and_an_outside_document_are_each_named() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join("docs")).unwrap();
    fs::write(
        root.path().join("docs/runs.md"),
        "# Runs\n\n## Format versions\n\ntext\n",
    )
    .unwrap();
    let source = "//! Kept as (docs/runs.md,\n//! \"Format versions\") and docs/runs.md#format-versions;\n\
                  /// (docs/runs.md, \"Formats\"), docs/runs.md#formats, docs/gone.md,\n\
                  /// see SPEC 3.5; \"docs/data.md\" is a string.\n";
    let wrong = broken(root.path(), "a.rs", source);
    assert_eq!(
        wrong,
        [
            "a.rs: `SPEC 3` cites a document outside docs/",
            "a.rs: docs/runs.md has no heading \"Formats\"",
            "a.rs: docs/runs.md has no heading with anchor #formats",
            "a.rs: docs/gone.md does not exist",
        ],
        "{wrong:#?}"
    );
}
