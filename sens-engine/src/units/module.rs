//! A file's module item (docs/suggestions.md, "Modules"): its own doc (Rust's
//! `//!`, a Python module docstring) and the names it re-exports (`pub use`,
//! `__all__`, a Python package's relative imports, `export … from`). A module
//! file that only documents and re-exports (`extract/mod.rs`, `__init__.py`)
//! holds no function or class, yet it is where a reader is sent for what it
//! exports. A suggestion item only: it has no tokens, so it has no fingerprint
//! and is never a copy.

use tree_sitter::{Node, Tree};

use super::names::{collapse, truncate};
use super::{UnitData, UnitFacts, UnitKind};
use crate::lang::Lang;
use crate::terms::Terms;

/// Doc text kept for the module (for suggestions), in bytes; its words are
/// all counted.
const DOC_MAX: usize = 400;
/// Exported names kept in the signature, in bytes.
const EXPORTS_MAX: usize = 1000;
/// Before the names a module exports of the project's own ...
const EXPORTS: &str = "exports ";
/// ... and before those it re-exports from the project's dependencies.
const FOREIGN: &str = "from dependencies ";

/// The names a module item re-exports from the project's dependencies (`pub
/// use axum_core::extract::FromRequest`, `export { x } from "pkg"`), as its
/// signature lists them (see [`module_item`]): the project defines them
/// nowhere else.
pub fn foreign_exports(signature: &str) -> impl Iterator<Item = &str> {
    let foreign = signature.split_once(FOREIGN).map_or("", |(_, f)| f);
    foreign
        .split(", ")
        .map(|n| n.trim_end_matches('…'))
        .filter(|n| !n.is_empty())
}

/// A name a module exports, and whether it comes from a dependency.
struct Export {
    name: String,
    foreign: bool,
}

/// The signature of a module exporting `names`: its own names after
/// [`EXPORTS`], then its dependencies' after [`FOREIGN`].
fn signature(names: &[Export]) -> String {
    let list = |foreign: bool| {
        let names: Vec<&str> = names
            .iter()
            .filter(|n| n.foreign == foreign)
            .map(|n| n.name.as_str())
            .collect();
        names.join(", ")
    };
    let parts: Vec<String> = [(EXPORTS, list(false)), (FOREIGN, list(true))]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(label, names)| format!("{label}{names}"))
        .collect();
    parts.join("; ")
}

/// The module item of a parsed file, or `None` when it has no doc and exports
/// nothing. Its name is the file's path, which the index sets (the same
/// content may stand at several paths).
pub(super) fn module_item(lang: &Lang, source: &str, tree: &Tree) -> Option<UnitData> {
    let root = tree.root_node();
    let text = |n: Node| &source[n.byte_range()];
    let mut doc = Vec::new();
    let mut names: Vec<Export> = Vec::new();
    let mut last_line = 0;
    let mut defines = false;
    let mut relative = Vec::new();
    let mut statements = 0;
    let mut cursor = root.walk();
    let top: Vec<Node> = root.named_children(&mut cursor).collect();
    // A Rust path from a module this file declares is the project's own.
    let local_modules: Vec<&str> = top
        .iter()
        .filter(|n| n.kind() == "mod_item")
        .filter_map(|n| n.child_by_field_name("name").map(text))
        .collect();
    for &node in &top {
        let first = statements == 0;
        if !node.kind().ends_with("comment") {
            statements += 1;
        }
        let before = (doc.len(), names.len());
        let mut add = |found: Vec<String>, foreign: bool| {
            names.extend(found.into_iter().map(|name| Export { name, foreign }));
        };
        match (lang.spec.name, node.kind()) {
            ("rust", "line_comment") if text(node).starts_with("//!") => {
                doc.push(text(node).trim_start_matches("//!").trim().to_string());
            }
            ("rust", "block_comment") if text(node).starts_with("/*!") => {
                let inner = text(node).trim_start_matches("/*!").trim_end_matches("*/");
                doc.push(collapse(inner));
            }
            ("rust", "use_declaration") if is_pub(node) => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    let root = text(arg).trim_start_matches("::");
                    let root = root.split([':', '{', ' ']).next().unwrap_or("");
                    let own =
                        ["crate", "self", "super"].contains(&root) || local_modules.contains(&root);
                    let mut found = Vec::new();
                    rust_use_names(arg, source, &mut found);
                    add(found, !own);
                }
            }
            ("rust", "mod_item") if is_pub(node) => {
                if let Some(name) = node.child_by_field_name("name") {
                    add(vec![text(name).to_string()], false);
                }
            }
            ("python", "expression_statement") if first => {
                if let Some(s) = node.named_child(0).filter(|s| s.kind() == "string") {
                    doc.push(collapse(python_string(text(s))));
                }
            }
            ("python", "expression_statement") => {
                let mut found = Vec::new();
                python_all(node, source, &mut found);
                add(found, false);
            }
            ("python", "import_from_statement") => {
                python_relative_import(node, source, &mut relative);
            }
            ("python", "function_definition" | "class_definition" | "decorated_definition") => {
                defines = true;
            }
            ("javascript" | "typescript" | "tsx", "export_statement") => {
                if let Some(from) = node.child_by_field_name("source") {
                    let own = text(from).trim_matches(['"', '\'', '`']).starts_with('.');
                    let mut found = Vec::new();
                    js_export_names(node, source, &mut found);
                    add(found, !own);
                }
            }
            _ => {}
        }
        if (doc.len(), names.len()) != before {
            last_line = node.end_position().row + 1;
        }
    }
    // A Python module that defines nothing and imports from its own package
    // re-exports what it imports (a package's `__init__.py`).
    if !defines && names.is_empty() {
        names.extend(relative.into_iter().map(|name| Export {
            name,
            foreign: false,
        }));
    }
    let mut seen = rustc_hash::FxHashSet::default();
    names.retain(|n| seen.insert(n.name.clone()));
    if doc.is_empty() && names.is_empty() {
        return None;
    }
    let mut doc = doc.join(" ");
    let mut signature = signature(&names);
    let terms = Terms::new("", &signature, &doc, std::iter::empty());
    truncate(&mut doc, DOC_MAX);
    truncate(&mut signature, EXPORTS_MAX);
    Some(UnitData {
        kind: UnitKind::Module,
        name: String::new(),
        signature,
        start_line: 1,
        end_line: u32::try_from(last_line.max(1)).unwrap_or(u32::MAX),
        tokens: 0,
        exact: 0,
        renamed: 0,
        shingles: Vec::new().into(),
        bands: Box::default(),
        leave_one_out: Box::default(),
        imports_only: false,
        facts: UnitFacts {
            exported: true,
            doc,
            terms,
            ..UnitFacts::default()
        },
    })
}

/// `pub` or `pub(crate)` before a Rust item.
fn is_pub(node: Node) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|c| c.kind() == "visibility_modifier")
}

/// The names a Rust `use` tree brings in: each path's last part or its alias;
/// a glob brings none by name.
fn rust_use_names(node: Node, source: &str, names: &mut Vec<String>) {
    let text = |n: Node| source[n.byte_range()].to_string();
    match node.kind() {
        "identifier" | "type_identifier" => names.push(text(node)),
        "scoped_identifier" => {
            if let Some(name) = node
                .child_by_field_name("name")
                .filter(|n| text(*n) != "self")
            {
                names.push(text(name));
            }
        }
        "use_as_clause" => {
            if let Some(alias) = node.child_by_field_name("alias") {
                names.push(text(alias));
            }
        }
        "scoped_use_list" => {
            if let Some(list) = node.child_by_field_name("list") {
                rust_use_names(list, source, names);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                rust_use_names(child, source, names);
            }
        }
        _ => {}
    }
}

/// A Python string literal's text without its prefix and quotes.
fn python_string(literal: &str) -> &str {
    let body = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let quotes = ["\"\"\"", "'''", "\"", "'"];
    quotes
        .iter()
        .find_map(|q| body.strip_prefix(q).and_then(|b| b.strip_suffix(q)))
        .unwrap_or(body)
}

/// `__all__ = [...]` (or a tuple): the names a Python module exports.
fn python_all(node: Node, source: &str, names: &mut Vec<String>) {
    let Some(assign) = node.named_child(0).filter(|a| a.kind() == "assignment") else {
        return;
    };
    let left = assign.child_by_field_name("left");
    if left.is_none_or(|l| &source[l.byte_range()] != "__all__") {
        return;
    }
    let Some(list) = assign.child_by_field_name("right") else {
        return;
    };
    let mut cursor = list.walk();
    for item in list.named_children(&mut cursor) {
        if item.kind() == "string" {
            names.push(python_string(&source[item.byte_range()]).to_string());
        }
    }
}

/// The names of `from .x import a, b as c` (a relative import only).
fn python_relative_import(node: Node, source: &str, names: &mut Vec<String>) {
    let relative = node
        .child_by_field_name("module_name")
        .is_some_and(|m| m.kind() == "relative_import");
    if !relative {
        return;
    }
    let mut cursor = node.walk();
    for name in node.children_by_field_name("name", &mut cursor) {
        let shown = match name.kind() {
            "aliased_import" => name.child_by_field_name("alias"),
            _ => name.child_by_field_name("name").or(Some(name)),
        };
        if let Some(shown) = shown {
            let text = &source[shown.byte_range()];
            names.push(text.rsplit('.').next().unwrap_or(text).to_string());
        }
    }
}

/// The names of `export { a, b as c } from "./x"` and `export * as ns from "./x"`.
fn js_export_names(node: Node, source: &str, names: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "export_clause" => {
                let mut inner = child.walk();
                for spec in child.named_children(&mut inner) {
                    let shown = spec
                        .child_by_field_name("alias")
                        .or_else(|| spec.child_by_field_name("name"));
                    if let Some(shown) = shown {
                        names.push(source[shown.byte_range()].to_string());
                    }
                }
            }
            "namespace_export" => {
                if let Some(name) = child.named_child(0) {
                    names.push(source[name.byte_range()].to_string());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::foreign_exports;
    use crate::config::RuleConfig;
    use crate::units::{Fingerprinter, UnitData, UnitKind, parse_file};

    fn module(path: &str, source: &str) -> Option<UnitData> {
        let lang = crate::lang::for_path(path).unwrap();
        let fp = Fingerprinter::new(&RuleConfig::default());
        let parsed = parse_file(lang, source, &fp).unwrap();
        let modules: Vec<&UnitData> = parsed
            .units
            .iter()
            .filter(|u| u.kind == UnitKind::Module)
            .collect();
        assert!(modules.len() <= 1, "{modules:?}");
        assert!(
            parsed
                .units
                .iter()
                .skip(1)
                .all(|u| u.kind != UnitKind::Module)
        );
        modules.first().map(|u| (*u).clone())
    }

    #[test]
    fn a_rust_module_item_holds_its_inner_doc_and_what_it_re_exports() {
        let m = module(
            "src/extract/mod.rs",
            "//! Types and traits for extracting data\n//! from requests.\n\nmod form;\npub mod path;\nuse std::fmt;\npub use axum_core::extract::{FromRequest, FromRequestParts as Parts};\npub use self::form::Form;\npub use form::RawForm;\npub use http::*;\n\npub fn helper() {}\n",
        )
        .unwrap();
        assert_eq!(
            m.facts.doc,
            "Types and traits for extracting data from requests."
        );
        assert_eq!(
            m.signature,
            "exports path, Form, RawForm; from dependencies FromRequest, Parts"
        );
        assert_eq!(
            foreign_exports(&m.signature).collect::<Vec<_>>(),
            ["FromRequest", "Parts"]
        );
        assert_eq!((m.tokens, m.shingles.len()), (0, 0));
        assert!(module("src/lib.rs", "use std::fmt;\nfn private() {}\n").is_none());
    }

    #[test]
    fn a_python_package_re_exports_its_relative_imports_and_a_module_its_all() {
        let init = module(
            "pkg/__init__.py",
            "# comment\n\"\"\"A web framework.\"\"\"\nfrom .app import Flask as Flask\nfrom .globals import g, request\nimport os\n",
        )
        .unwrap();
        assert_eq!(init.facts.doc, "A web framework.");
        assert_eq!(init.signature, "exports Flask, g, request");
        // A module that defines functions imports what it uses: no exports
        // but those `__all__` names.
        let m = module(
            "pkg/util.py",
            "from .app import Flask\n__all__ = ['helper']\n\ndef helper():\n    return Flask\n",
        )
        .unwrap();
        assert_eq!(m.signature, "exports helper");
        assert!(
            module(
                "pkg/util.py",
                "from .app import Flask\n\ndef helper():\n    return Flask\n"
            )
            .is_none()
        );
    }

    #[test]
    fn a_module_item_is_never_a_copy_nor_a_symbol() {
        let text = "//! The same doc, word for word.\npub use dep::{Alpha, Beta};\n";
        let mut index = crate::index::Index::new(RuleConfig::default()).unwrap();
        index.update_file("a/mod.rs", text).unwrap();
        index.update_file("b/mod.rs", text).unwrap();
        let modules: Vec<_> = index
            .units()
            .filter(|(_, u)| u.data.kind == UnitKind::Module)
            .collect();
        assert_eq!(modules.len(), 2);
        for (id, unit) in modules {
            assert_eq!(&*unit.data.name, &*unit.file, "named by its path");
            assert!(index.copies(&unit.data, |other, _| other == id).is_empty());
        }
        assert!(crate::dupes::groups(&index, 0).is_empty());
        assert_eq!(index.definitions("Alpha").count(), 0);
    }

    #[test]
    fn a_javascript_index_re_exports_from_its_files_and_its_packages() {
        let m = module(
            "src/index.ts",
            "export { createStore, compose as pipe } from './store';\nexport * as utils from \"./utils\";\nexport { z } from 'zod';\nexport const local = 1;\n",
        )
        .unwrap();
        assert_eq!(
            m.signature,
            "exports createStore, pipe, utils; from dependencies z"
        );
    }
}
