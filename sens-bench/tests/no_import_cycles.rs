//! No import cycle in any crate of the workspace: every `crate::`, `self::` and
//! `super::` path of each `src/**/*.rs` is resolved to the module it names, and
//! modules that depend on each other, directly or around a loop, fail the test with
//! the lines that close the loop.
//!
//! Dependencies are compared between siblings, at every level of the module tree:
//! `crate::a::b` used in `c.rs` is an edge `c -> a` among the crate's top modules,
//! and `super::protect` used in `session/shell.rs` an edge `shell -> protect` inside
//! `session`. A module using its own child or parent is structure, not an edge.
//! A test module (from `#[cfg(test)] mod` to the file's end) is not read: tests
//! may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use regex::Regex;

/// A module's path below its crate root: `[]` for `lib.rs`, `["session", "shell"]`.
type ModPath = Vec<String>;

/// Among the children of one module: from child -> to child -> the lines that use it.
type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// One use of another module: where it is written and the path it names.
#[derive(Debug)]
struct Reference {
    line: usize,
    target: ModPath,
}

/// Modules of one level that depend on each other, with the lines that do it.
#[derive(Debug)]
struct Cycle {
    parent: ModPath,
    members: BTreeSet<String>,
    evidence: Vec<String>,
}

/// The module a file under `src/` defines.
fn module_of(relative: &Path) -> ModPath {
    let mut parts: ModPath = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The paths a file's code (test modules left out) names through `crate::`,
/// `self::` or `super::`, resolved from `module`; `use` groups are expanded.
fn references(module: &[String], text: &str) -> Vec<Reference> {
    let start = Regex::new(r"\b(crate|self|super)((?:::super)*)::").expect("a valid pattern");
    let mut found = Vec::new();
    let mut after_test_attribute = false;
    for (index, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default().trim();
        if after_test_attribute && code.starts_with("mod ") {
            break;
        }
        after_test_attribute = code == "#[cfg(test)]";
        for caps in start.captures_iter(code) {
            let base: ModPath = match &caps[1] {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                _ => {
                    let ups = 1 + caps[2].matches("super").count();
                    module[..module.len().saturating_sub(ups)].to_vec()
                }
            };
            let rest = &code[caps.get(0).map_or(0, |m| m.end())..];
            for tail in use_tree(&mut rest.chars().peekable()) {
                let mut target = base.clone();
                target.extend(tail);
                found.push(Reference {
                    line: index + 1,
                    target,
                });
            }
        }
    }
    found
}

/// The paths of one use tree (`a::b`, `{a, b::{c, d}}`, `*`) at the head of `chars`.
fn use_tree(chars: &mut std::iter::Peekable<std::str::Chars>) -> Vec<ModPath> {
    skip_spaces(chars);
    if chars.peek() == Some(&'{') {
        chars.next();
        let mut paths = Vec::new();
        loop {
            skip_spaces(chars);
            match chars.peek() {
                None => break,
                Some('}') => {
                    chars.next();
                    break;
                }
                Some(',') => {
                    chars.next();
                }
                Some(_) => {
                    let before = paths.len();
                    paths.extend(use_tree(chars));
                    skip_alias(chars);
                    if paths.len() == before {
                        // Not a path (a `*`): step past it.
                        chars.next();
                    }
                }
            }
        }
        return paths;
    }
    let mut ident = String::new();
    while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_') {
        ident.push(c);
        chars.next();
    }
    if ident.is_empty() {
        return Vec::new();
    }
    let mut lookahead = chars.clone();
    if lookahead.next() == Some(':') && lookahead.next() == Some(':') {
        *chars = lookahead;
        let tails = use_tree(chars);
        if !tails.is_empty() {
            return tails
                .into_iter()
                .map(|tail| std::iter::once(ident.clone()).chain(tail).collect())
                .collect();
        }
    }
    if ident == "self" {
        vec![Vec::new()]
    } else {
        vec![vec![ident]]
    }
}

/// Steps past ` as name`, which renames an item and names no module.
fn skip_alias(chars: &mut std::iter::Peekable<std::str::Chars>) {
    skip_spaces(chars);
    let mut lookahead = chars.clone();
    if lookahead.next() == Some('a')
        && lookahead.next() == Some('s')
        && lookahead.peek().is_some_and(|c| c.is_whitespace())
    {
        *chars = lookahead;
        skip_spaces(chars);
        while chars
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            chars.next();
        }
    }
}

fn skip_spaces(chars: &mut std::iter::Peekable<std::str::Chars>) {
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
}

/// The cycles among sibling modules of a crate given as (file under `src/`, text).
fn cycles(files: &[(PathBuf, String)]) -> Vec<Cycle> {
    let modules: BTreeSet<ModPath> = files.iter().map(|(path, _)| module_of(path)).collect();
    let mut levels: BTreeMap<ModPath, Edges> = BTreeMap::new();
    for (path, text) in files {
        let from = module_of(path);
        for reference in references(&from, text) {
            let to = known_prefix(&modules, &reference.target);
            let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if shared < from.len() && shared < to.len() {
                levels
                    .entry(from[..shared].to_vec())
                    .or_default()
                    .entry(from[shared].clone())
                    .or_default()
                    .entry(to[shared].clone())
                    .or_default()
                    .insert(format!(
                        "{}:{} uses {}",
                        path.display(),
                        reference.line,
                        to.join("::")
                    ));
            }
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &levels {
        for members in strongly_connected(edges) {
            let evidence = members
                .iter()
                .flat_map(|from| edges.get(from).into_iter().flatten())
                .filter(|(to, _)| members.contains(*to))
                .flat_map(|(_, lines)| lines.iter().cloned())
                .collect();
            found.push(Cycle {
                parent: parent.clone(),
                members,
                evidence,
            });
        }
    }
    found
}

/// The longest prefix of `target` that is a module of the crate.
fn known_prefix(modules: &BTreeSet<ModPath>, target: &[String]) -> ModPath {
    (0..=target.len())
        .rev()
        .map(|n| target[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

/// Groups of two or more nodes that reach each other (each group found once).
fn strongly_connected(edges: &Edges) -> Vec<BTreeSet<String>> {
    let reach = |start: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.clone()];
        while let Some(node) = stack.pop() {
            for next in edges.get(&node).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|node| (node, reach(node))).collect();
    let mut groups: BTreeSet<BTreeSet<String>> = BTreeSet::new();
    for (node, from_node) in &reached {
        let group: BTreeSet<String> = from_node
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(*node)))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

/// Every `.rs` file under `src` with its path relative to `src`.
fn read_sources(src: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let relative = path.strip_prefix(src)?.to_path_buf();
                files.push((relative, text));
            }
        }
    }
    Ok(files)
}

/// The workspace's members, from the root `Cargo.toml`.
fn workspace_members(root: &Path) -> Result<Vec<String>> {
    let manifest = root.join("Cargo.toml");
    let text =
        fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    let value: toml::Value =
        toml::from_str(&text).with_context(|| format!("parsing {}", manifest.display()))?;
    value
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .context("Cargo.toml: workspace.members is not a list")?
        .iter()
        .map(|m| {
            m.as_str()
                .map(str::to_owned)
                .context("Cargo.toml: a workspace member is not a string")
        })
        .collect()
}

fn describe(crate_name: &str, cycle: &Cycle) -> String {
    let level = if cycle.parent.is_empty() {
        "the crate root".to_owned()
    } else {
        cycle.parent.join("::")
    };
    let members: Vec<&str> = cycle.members.iter().map(String::as_str).collect();
    format!(
        "{crate_name}: in {level}, {} depend on each other:\n    {}",
        members.join(", "),
        cycle.evidence.join("\n    ")
    )
}

#[test]
fn no_crate_of_the_workspace_has_an_import_cycle() -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the crate has no parent folder")?;
    let mut problems = Vec::new();
    for member in workspace_members(root)? {
        let files = read_sources(&root.join(&member).join("src"))?;
        assert!(!files.is_empty(), "{member}/src has no Rust file");
        for cycle in cycles(&files) {
            problems.push(describe(&member, &cycle));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles:\n{}",
        problems.join("\n")
    );
    Ok(())
}

fn in_memory(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
        .collect()
}

fn members_of(found: &[Cycle]) -> Vec<(String, Vec<&str>)> {
    found
        .iter()
        .map(|c| {
            (
                c.parent.join("::"),
                c.members.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

#[test]
fn a_loop_through_three_top_modules_is_a_cycle_naming_its_lines() {
    let files = in_memory(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        ("b/mod.rs", "pub mod inner;\n"),
        ("b/inner.rs", "fn f() { crate::c::g() }\n"),
        ("c.rs", "use crate::{d, a::{self, Other as O}};\n"),
        ("d.rs", "use crate::CONST;\n"),
    ]);
    let found = cycles(&files);
    assert_eq!(members_of(&found), [(String::new(), vec!["a", "b", "c"])]);
    let evidence = found[0].evidence.join("\n");
    for line in ["a.rs:1 uses b", "b/inner.rs:1 uses c", "c.rs:1 uses a"] {
        assert!(evidence.contains(line), "{line} missing from {evidence}");
    }
    assert!(!evidence.contains("uses d"), "{evidence}");
}

#[test]
fn siblings_inside_a_folder_are_checked_and_parents_are_not_edges() {
    let files = in_memory(&[
        (
            "session/mod.rs",
            "use checkpoint::Checkpoint;\nuse self::shell::x;\n",
        ),
        ("session/checkpoint.rs", "use super::Session;\n"),
        ("session/shell.rs", "use super::protect::normalize;\n"),
        (
            "session/protect.rs",
            "use super::super::session::shell::y;\n",
        ),
    ]);
    let found = cycles(&files);
    assert_eq!(
        members_of(&found),
        [("session".to_owned(), vec!["protect", "shell"])]
    );
}

#[test]
fn only_test_modules_and_comments_are_left_out() {
    let files = in_memory(&[
        (
            "a.rs",
            "// see crate::b\nfn f() {}\n#[cfg(test)]\nmod tests { use crate::b::x; }\n",
        ),
        ("b.rs", "use crate::a::f;\n"),
        // A test-only item is not a test module: what follows it counts.
        (
            "c.rs",
            "#[cfg(test)]\nfn helper() {}\nfn g() { crate::d::h() }\n",
        ),
        ("d.rs", "use crate::c::g;\n"),
    ]);
    assert_eq!(
        members_of(&cycles(&files)),
        [(String::new(), vec!["c", "d"])]
    );
}
