//! The layout tokens of a language: what formatters add, drop and move without
//! changing the code, and the layouts the table's rows share.

/// The layout tokens of a language, by node kind. Formatters add, drop and move
/// them without changing the code, so a copy retyped in another style must
/// fingerprint the same (docs/fingerprints.md, "Layout-free tokens").
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Statement terminators a formatter may add or drop (`;`), and line
    /// continuations: dropped wherever they stand.
    pub terminators: &'static [&'static str],
    /// List separators, dropped when they end their list (a trailing `,` before
    /// the closing bracket, or the last child of its node).
    pub separators: &'static [&'static str],
    /// Named nodes whose own brackets only group or are always written
    /// (`parenthesized_expression`): the brackets are dropped, the content kept.
    pub groupings: &'static [&'static str],
    /// Blocks whose braces a formatter adds or drops around a single statement
    /// (astyle `--add-braces`/`--remove-braces`, clang-format
    /// `RemoveBracesLLVM`, rustfmt wrapping a long match arm or unwrapping a
    /// closure body): the braces of one holding one statement are dropped.
    pub braces: &'static [&'static str],
    /// Key-value nodes whose key may be quoted or not (`{ "a": 1 }` and
    /// `{ a: 1 }`, prettier `--quote-props`): a string key whose content is a
    /// name is that name.
    pub keys: &'static [&'static str],
    /// Key-value nodes written shorthand when the value is a name equal to the
    /// key (`S { x: x }` and `S { x }`, rustfmt `use_field_init_shorthand`,
    /// eslint `object-shorthand`): the key and its `:` are dropped then.
    pub shorthands: &'static [&'static str],
    /// Nodes whose first token is an optional separator (the `|` opening a
    /// Rust or-pattern, rustfmt `match_arm_leading_pipes`): dropped there.
    pub leading: &'static [&'static str],
    /// Tuples that may stand bare, and the nodes where they may
    /// (`return a, b` and `return (a, b)`: black wraps a long one in
    /// brackets): the brackets of such a tuple directly under such a node
    /// are dropped. Elsewhere (`f((a, b))`) they mean something.
    pub tuples: &'static [&'static str],
    pub bare_tuple_places: &'static [&'static str],
    /// Literals whose `type` may be left out where the enclosing literal
    /// implies it, and the nodes where it may (`gofmt -s`: `[]T{T{1}}` and
    /// `[]T{{1}}`): the type of such a literal directly under such a node is
    /// dropped.
    pub implied_types: &'static [&'static str],
    pub implied_type_places: &'static [&'static str],
}

/// The layout of the C family and most others: `;`, trailing `,`, `( expr )`.
pub(super) const C_LAYOUT: Layout = Layout {
    terminators: &[";"],
    separators: &[","],
    groupings: &["parenthesized_expression"],
    braces: &[],
    keys: &[],
    shorthands: &[],
    leading: &[],
    tuples: &[],
    bare_tuple_places: &[],
    implied_types: &[],
    implied_type_places: &[],
};

/// C, C++ and PHP: also optional braces of compound statements.
pub(super) const C_BRACED_LAYOUT: Layout = Layout {
    braces: &["compound_statement"],
    ..C_LAYOUT
};

/// Java and C#: also optional braces of blocks.
pub(super) const BLOCK_BRACED_LAYOUT: Layout = Layout {
    braces: &["block"],
    ..C_LAYOUT
};

/// Go: also the element types `gofmt -s` leaves out.
pub(super) const GO_LAYOUT: Layout = Layout {
    implied_types: &["composite_literal"],
    implied_type_places: &["literal_element"],
    ..C_LAYOUT
};

/// Rust: also the braces of a one-expression block (a match arm's body, a
/// closure's), the field init shorthand and a match arm's leading `|`.
pub(super) const RUST_LAYOUT: Layout = Layout {
    braces: &["block"],
    shorthands: &["field_initializer"],
    leading: &["or_pattern"],
    ..C_LAYOUT
};
