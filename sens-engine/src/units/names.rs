//! What a unit is called: its name, from its own fields, the name it is bound to
//! or the call it is an argument of, and its signature (the declaration up to its
//! body), both shortened for messages.

use tree_sitter::Node;

use crate::lang::{KindFlags, Lang};

/// Signatures longer than this are cut (with an ellipsis) to keep messages short.
const SIGNATURE_MAX: usize = 240;

/// Fields that name a definition, tried in order; `declarator` chains reach the
/// name in C-like declarations, `pattern` the bound name in OCaml, `signature` the
/// name in Dart methods.
const NAME_FIELDS: &[&str] = &["name", "declarator", "pattern", "signature"];

pub(super) fn unit_name(node: Node, ancestors: &[Node], source: &str) -> String {
    let text = |n: Node| collapse(&source[n.byte_range()]);
    // `var f = curry(function g(a, b) {...})`: callers say `f`.
    if let Some(bound) = wrapped_binding(ancestors).and_then(|b| binding_name(ancestors[b])) {
        return text(bound);
    }
    if let Some(name) = name_node(node, false) {
        return text(name);
    }
    // Rust impls: `impl Trait for Type` is named after both.
    if let Some(ty) = node.child_by_field_name("type") {
        return match node.child_by_field_name("trait") {
            Some(tr) => format!("{} for {}", text(tr), text(ty)),
            None => text(ty),
        };
    }
    // Go `type X struct`: the name sits on the spec inside the declaration.
    if let Some(name) = child_name(node) {
        return text(name);
    }
    // Anonymous functions bound to a name: `const f = () => ...`, `obj = { f() {} }`.
    if let Some(parent) = ancestors.last() {
        for field in ["name", "left", "key", "property"] {
            if let Some(n) = parent.child_by_field_name(field)
                && n.id() != node.id()
            {
                return text(n);
            }
        }
    }
    // Callbacks: `it("adds totals", () => ...)` is named after its call.
    if let Some((callee, args)) = callback_of(ancestors) {
        let first_string = args
            .named_child(0)
            .filter(|a| a.id() != node.id() && a.kind().contains("string"))
            .map(|a| format!("({})", text(a)))
            .unwrap_or_default();
        let mut name = format!("{}{first_string} callback", text(callee));
        truncate(&mut name, SIGNATURE_MAX / 2);
        return name;
    }
    "<anonymous>".to_string()
}

/// A function written as the argument of calls whose result a module binds to a
/// name (`var splitEvery = _curry2(function splitEvery(n, list) {...})`,
/// `export const Button = memo((props) => ...)`) is that name's definition, not
/// a callback: the depth in `ancestors` of the binding (a variable declarator
/// or an assignment). Only at the top of a module: inside a function, `const
/// [first, last] = dates.map((d) => ...)` binds the call's value, not the
/// function.
pub(super) fn wrapped_binding(ancestors: &[Node]) -> Option<usize> {
    let mut end = ancestors.len();
    while end >= 2 && callback_of(&ancestors[..end]).is_some() {
        end -= 2;
    }
    // Not an argument of a call: the common case, decided by one lookup.
    if end == ancestors.len() {
        return None;
    }
    let binding = end.checked_sub(1)?;
    let at_module_top = || {
        ancestors[..binding].iter().all(|n| {
            matches!(
                n.kind(),
                "program"
                    | "export_statement"
                    | "lexical_declaration"
                    | "variable_declaration"
                    | "expression_statement"
            )
        })
    };
    (matches!(
        ancestors[binding].kind(),
        "variable_declarator" | "assignment_expression"
    ) && binding_name(ancestors[binding]).is_some_and(|n| n.kind() == "identifier")
        && at_module_top())
    .then_some(binding)
}

/// The name a declarator or an assignment binds.
fn binding_name(binding: Node) -> Option<Node> {
    binding
        .child_by_field_name("name")
        .or_else(|| binding.child_by_field_name("left"))
}

/// The callee and argument list when the unit is an argument of a call.
pub(super) fn callback_of<'t>(ancestors: &[Node<'t>]) -> Option<(Node<'t>, Node<'t>)> {
    let [.., call, args] = ancestors else {
        return None;
    };
    let callee = call.child_by_field_name("function")?;
    call.child_by_field_name("arguments")
        .is_some_and(|a| a.id() == args.id())
        .then_some((callee, *args))
}

/// Follows the naming fields down to the name; `nested` also looks one level into
/// named children (a declaration wrapping a signature that holds the name).
fn name_node(node: Node, nested: bool) -> Option<Node> {
    for field in NAME_FIELDS {
        if let Some(child) = node.child_by_field_name(field) {
            return Some(name_node(child, true).unwrap_or(child));
        }
    }
    if nested { child_name(node) } else { None }
}

fn child_name(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .find_map(|child| child.child_by_field_name("name"))
}

/// Where a unit's body starts, in bytes: its `body` field, else its first
/// block child. What comes before is its declaration.
pub(super) fn body_start(node: Node, lang: &Lang) -> Option<usize> {
    node.child_by_field_name("body")
        .map(|b| b.start_byte())
        .or_else(|| {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| lang.flags(c.kind_id()).contains(KindFlags::BLOCK))
                .map(|b| b.start_byte())
        })
}

/// The declaration up to the body ([`body_start`]), else the first line.
pub(super) fn signature(node: Node, lang: &Lang, source: &str) -> String {
    let body_start = body_start(node, lang);
    let text = &source[node.byte_range()];
    let head = match body_start {
        Some(end) if end > node.start_byte() => &source[node.start_byte()..end],
        _ => text.lines().next().unwrap_or(""),
    };
    let mut sig = collapse(head);
    let sig_trimmed = sig.trim_end_matches(['{', ':', ' ', '=']).len();
    sig.truncate(sig_trimmed);
    truncate(&mut sig, SIGNATURE_MAX);
    sig
}

pub(super) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
        // The index keeps the text: not the room the whole one took.
        text.shrink_to_fit();
    }
}
