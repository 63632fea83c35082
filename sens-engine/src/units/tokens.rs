//! Which leaves of the tree are tokens, and of which class: what a formatter may
//! add, drop or move is no token, so a reformatted copy keeps its fingerprints
//! (docs/contract.md, "Fingerprints"; the kinds come from [`crate::lang::Layout`]).

use tree_sitter::Node;

use super::path::Siblings;
use crate::lang::{KindFlags, Lang};

/// A token a formatter may add, drop or move (see [`crate::lang::Layout`]): a
/// terminator, a separator that ends its list or opens a leading-separator
/// node, a delimiter of a grouping node, a bracket of a tuple where it may
/// stand bare, or a brace of a block holding one statement. `above` is the
/// path from the root to the node's parent.
pub(super) fn is_layout(
    node: Node,
    flags: KindFlags,
    above: &[Node],
    lang: &Lang,
    mut siblings: Siblings,
) -> bool {
    if flags.contains(KindFlags::TERMINATOR) {
        return true;
    }
    if flags.contains(KindFlags::SEPARATOR) {
        return siblings
            .next()
            .is_none_or(|next| !next.is_named() && is_bracket(next.kind()));
    }
    if node.is_named() {
        return false;
    }
    let parent_flags = |parent: &Node| lang.flags(parent.kind_id());
    let [.., grandparent, parent] = above else {
        return false;
    };
    let flags = parent_flags(parent);
    if flags.contains(KindFlags::LEADING) && siblings.first {
        return true;
    }
    // A grouping node's delimiters, whatever they are: `(` `)`, and in Bash
    // `$(` `)` or the backquotes shfmt rewrites into them.
    if flags.contains(KindFlags::GROUPING) {
        return siblings.first || siblings.next().is_none();
    }
    is_bracket(node.kind())
        && ((flags.contains(KindFlags::BRACES) && holds_one_statement(*parent, lang))
            || (flags.contains(KindFlags::TUPLE)
                && parent_flags(grandparent).contains(KindFlags::BARE_TUPLE_PLACE)))
}

/// A multi-line string without the whitespace around its lines: a formatter
/// re-indenting a docstring (ruff `indent-style = "tab"`, black stripping
/// trailing spaces) changes only that.
pub(super) fn unindented(text: &str) -> String {
    text.lines().map(str::trim).collect::<Vec<_>>().join("\n")
}

/// A block with exactly one named child other than comments.
fn holds_one_statement(block: Node, lang: &Lang) -> bool {
    let mut cursor = block.walk();
    let mut statements = block
        .named_children(&mut cursor)
        .filter(|c| !lang.flags(c.kind_id()).contains(KindFlags::COMMENT));
    statements.next().is_some() && statements.next().is_none()
}

/// The key of a key-value node whose key may be quoted or not (`"a"` in
/// `{ "a": 1 }`). `above` is the path to the node's parent.
pub(super) fn is_key(node: Node, above: &[Node], lang: &Lang) -> bool {
    above.last().is_some_and(|parent| {
        lang.flags(parent.kind_id()).contains(KindFlags::KEYS)
            && parent
                .child_by_field_name("key")
                .or_else(|| parent.child_by_field_name("name"))
                == Some(node)
    })
}

pub(super) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The type of a literal that the enclosing literal implies (`T` in
/// `[]T{T{1}}`, see `Layout::implied_types`). `above` is the path to the
/// node's parent.
pub(super) fn is_implied_type(node: Node, above: &[Node], lang: &Lang) -> bool {
    let [.., place, literal] = above else {
        return false;
    };
    lang.flags(literal.kind_id())
        .contains(KindFlags::IMPLIED_TYPE)
        && lang
            .flags(place.kind_id())
            .contains(KindFlags::IMPLIED_TYPE_PLACE)
        && literal.child_by_field_name("type") == Some(node)
}

/// A part of a key-value node before its value when the value is a name
/// equal to the key (`x:` in `S { x: x }`): what the shorthand `S { x }`
/// leaves out. `above` is the path to the node's parent.
pub(super) fn is_shorthand_key(node: Node, above: &[Node], lang: &Lang, source: &str) -> bool {
    let Some(parent) = above.last() else {
        return false;
    };
    if !lang.flags(parent.kind_id()).contains(KindFlags::SHORTHAND)
        || parent.named_child_count() != 2
    {
        return false;
    }
    let (Some(key), Some(value)) = (parent.named_child(0), parent.named_child(1)) else {
        return false;
    };
    value != node
        && value.child_count() == 0
        && lang.flags(value.kind_id()).contains(KindFlags::IDENTIFIER)
        && source[key.byte_range()] == source[value.byte_range()]
}

/// Brackets, and the angle brackets of generic arguments (`Vec<\n T,\n>`
/// ends its list as a `)` does).
fn is_bracket(kind: &str) -> bool {
    matches!(kind, "(" | ")" | "[" | "]" | "{" | "}" | "<" | ">")
}
