//! A unit's facts: what the rules need to know about it beyond its fingerprints
//! (exported, decorated, implementing an interface, a callback, in a test module,
//! its doc), read from the tree around its node.

use tree_sitter::Node;

use super::names::{callback_of, collapse, wrapped_binding};
use super::path::{Doc, Path};
use crate::fingerprint::{Token, hash_text};
use crate::lang::KindFlags;
use crate::terms::Terms;

/// What the rules need to know about a unit beyond its fingerprints.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UnitFacts {
    /// Visible outside its module by its declaration: `pub`, `export`, `public`,
    /// a capitalised Go name. (Python's public names depend on the file: the rules.)
    pub exported: bool,
    /// Attributes, decorators and annotations written before the unit.
    pub decorators: String,
    /// A method of a trait implementation or an override, or a method declared
    /// without a body: called through the interface, not by name.
    pub implements: bool,
    /// Doc comments before the unit, or a Python docstring; whitespace collapsed.
    pub doc: String,
    /// Written as an argument of a call (a callback): used where it stands.
    pub callback: bool,
    /// Inside a module compiled for tests only (`#[cfg(test)] mod tests`).
    pub in_test_module: bool,
    /// The words of its name, signature, doc comment and body, for suggestions
    /// (empty for windows).
    pub terms: Terms,
    /// Its distinct string literals (docstrings included), hashed to 32 bits and
    /// sorted: what it says, which a copy keeps and a unit of the same shape
    /// changes (`dictated::says_otherwise`).
    pub strings: Box<[u32]>,
    /// Its distinct names by role, hashed to 16 bits and sorted, the low bit set
    /// for a name it calls or reaches as a member (`f(`, `x.f`, `m::f`, `f!`),
    /// clear for the others (parameters, locals, types): a copy keeps the first
    /// and a renaming copy changes the second (`dictated::names_by_role`).
    pub names: Box<[u16]>,
    /// The trait a method implements (`fmt` in `impl Display for T`), its name
    /// without path and type arguments hashed to 16 bits (never 0); 0 for any
    /// other unit. Methods of different traits have the shape each trait
    /// dictates (`dictated::same_protocol`).
    pub protocol: u16,
    /// How many of its distinct shingles only its declaration holds (its
    /// signature: parameter list, defaults, bounds; not its body); 0 for
    /// windows. The rest are its body's, which a copy carries and a parallel
    /// API with the same long parameter list does not
    /// (`dictated::mostly_declared`).
    pub declared: u16,
}

/// The facts of the unit `node`, the path's node at `depth`, inside the unit
/// `owner` (the nearest enclosing function or class).
pub(super) fn facts(
    node: Node,
    path: &Path,
    depth: usize,
    owner: Option<Node>,
    doc: &Doc,
    name: &str,
    signature: &str,
) -> UnitFacts {
    let (lang, source) = (doc.lang, doc.source);
    let ancestors = &path.ancestors[..depth.min(path.ancestors.len())];
    let text = |n: Node| collapse(&source[n.byte_range()]);
    let is_comment = |n: Node| lang.flags(n.kind_id()).contains(KindFlags::COMMENT);
    let is_decoration = |n: Node| {
        let k = n.kind();
        k.contains("attribute") || k.contains("decorator") || k.contains("annotation")
    };
    let mut decorators = Vec::new();
    let mut doc = Vec::new();
    // Attributes and doc comments stand right before the unit, in any order; before
    // `export function f` or `const f = () => ...` they stand before the statement.
    let anchor_depth = declaration_statement(ancestors).unwrap_or(depth);
    let anchor = ancestors.get(anchor_depth).copied().unwrap_or(node);
    let mut next_row = anchor.start_position().row;
    for p in path.earlier_named(anchor_depth) {
        if p.end_position().row + 1 < next_row {
            break;
        }
        if is_decoration(p) {
            decorators.push(text(p));
        } else if is_comment(p) {
            doc.push(text(p));
        } else if !is_overload_signature(p) {
            // TypeScript overloads stand between an implementation and its doc.
            break;
        }
        next_row = p.start_position().row;
    }
    // Python: `@decorator` lines wrap the definition.
    if let Some(parent) = ancestors.last()
        && parent.kind() == "decorated_definition"
    {
        let mut cursor = parent.walk();
        decorators.extend(
            parent
                .named_children(&mut cursor)
                .filter(|c| is_decoration(*c))
                .map(text),
        );
    }
    doc.reverse();
    if let Some(docstring) = docstring(node, source) {
        doc.push(docstring);
    }
    // Kept whole until its words are counted (`finish`), then truncated.
    let doc = doc.join(" ");
    let decorators = decorators.join(" ");
    let implemented = owner.and_then(|o| o.child_by_field_name("trait"));
    UnitFacts {
        exported: signature.starts_with("pub ")
            || signature.starts_with("public ")
            || signature.contains(" public ")
            || declaration_statement(ancestors)
                .is_some_and(|d| ancestors[d].kind() == "export_statement")
            || (lang.name() == "go" && name.starts_with(|c: char| c.is_uppercase())),
        implements: implemented.is_some()
            || node.kind() == "function_signature_item"
            || signature.split_whitespace().any(|w| w == "override")
            || decorators.contains("Override"),
        decorators,
        doc,
        callback: callback_of(ancestors).is_some() && wrapped_binding(ancestors).is_none(),
        in_test_module: (0..ancestors.len()).any(|d| is_test_module(path, d, source)),
        terms: Terms::default(),
        strings: Box::default(),
        names: Box::default(),
        declared: 0,
        protocol: implemented.map_or(0, |t| protocol(&source[t.byte_range()])),
    }
}

/// A trait's [`UnitFacts::protocol`]: `fmt::Display` and `Display` are one
/// trait, `From<u8>` and `From<u16>` too.
fn protocol(path: &str) -> u16 {
    (hash_text(trait_name(path)) as u16).max(1)
}

/// A trait's name without its path and type arguments (`fmt::Display` ->
/// `Display`, `From<u8>` -> `From`): what tells two traits apart.
pub(crate) fn trait_name(path: &str) -> &str {
    let path = path.split('<').next().unwrap_or(path);
    path.rsplit("::").next().unwrap_or(path).trim()
}

/// JS/TS: the statement that declares the unit, `export function f`, `export const
/// f = () => ...`, `export class C` or `const f = () => ...`: the outermost of the
/// export statement and the variable declaration around the unit, by its index
/// in `ancestors`.
fn declaration_statement(ancestors: &[Node]) -> Option<usize> {
    // A wrapped definition is declared by the statement around its binding.
    let ancestors = match wrapped_binding(ancestors) {
        Some(binding) => &ancestors[..=binding],
        None => ancestors,
    };
    let mut outer = None;
    for (i, n) in ancestors.iter().enumerate().rev().take(3) {
        match n.kind() {
            "export_statement" => return Some(i),
            "lexical_declaration" | "variable_declaration" => outer = Some(i),
            "variable_declarator" => {}
            _ => break,
        }
    }
    outer
}

/// A TypeScript overload signature, `export function f(x: A): B` without a body.
fn is_overload_signature(node: Node) -> bool {
    let declaration = match node.kind() {
        "export_statement" => node.named_child(0),
        _ => Some(node),
    };
    declaration.is_some_and(|d| d.kind() == "function_signature")
}

/// Whether the path's node at `depth` is a Rust module under `#[cfg(test)]`.
fn is_test_module(path: &Path, depth: usize, source: &str) -> bool {
    path.ancestors[depth].kind() == "mod_item"
        && path
            .earlier_named(depth)
            .next()
            .filter(|p| p.kind() == "attribute_item")
            .is_some_and(|p| {
                source[p.byte_range()]
                    .replace(' ', "")
                    .contains("cfg(test)")
            })
}

/// The string statement that opens a function's or class's body (a Python
/// docstring), given the ancestors of a string token, its parent last.
pub(super) fn is_docstring(ancestors: &[Node]) -> bool {
    let [.., def, body, stmt] = ancestors else {
        return false;
    };
    stmt.kind() == "expression_statement"
        && stmt.named_child_count() == 1
        && body.named_child(0) == Some(*stmt)
        && def.child_by_field_name("body") == Some(*body)
}

/// Python: the string that opens a function's or class's body.
fn docstring(node: Node, source: &str) -> Option<String> {
    let body = node.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    let string = first.named_child(0)?;
    (first.kind() == "expression_statement" && string.kind() == "string")
        .then(|| collapse(&source[string.byte_range()]))
}

/// A unit's distinct names by role ([`UnitFacts::names`]): each
/// identifier's text hashed to 16 bits, the low bit set when it is called or
/// reached as a member (after `.`, `?.`, `::` or `->`, or before `(` or `!`).
pub(crate) fn names_by_role(toks: &[Token]) -> Box<[u16]> {
    let [dot, optional, path, arrow, open, bang] = [".", "?.", "::", "->", "(", "!"].map(hash_text);
    let mut names: Vec<u16> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.identifier)
        .map(|(i, t)| {
            let before = i.checked_sub(1).map(|j| toks[j].text);
            let after = toks.get(i + 1).map(|t| t.text);
            let called = before.is_some_and(|b| [dot, optional, path, arrow].contains(&b))
                || after.is_some_and(|a| a == open || a == bang);
            (t.text as u16 & !1) | u16::from(called)
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_boxed_slice()
}
