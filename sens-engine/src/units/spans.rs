//! The names, literals and statements of a text by byte range, for tools that
//! rewrite code consistently.

use std::ops::Range;

use tree_sitter::Node;

use super::parse::{DEFAULT_PARSE_BUDGET, parse_tree};
use crate::fingerprint::TokenClass;
use crate::lang::{KindFlags, Lang};

/// The names, literals and statements of a text, by byte range: what a tool
/// that rewrites code consistently (renames, inserts a statement) needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spans {
    /// Identifiers, strings and numbers, in source order.
    pub leaves: Vec<(Range<usize>, TokenClass)>,
    /// Statements of blocks, each with the index of its block.
    pub statements: Vec<(Range<usize>, usize)>,
}

/// Parses `source` and lists its [`Spans`].
pub fn spans(lang: &Lang, source: &str) -> anyhow::Result<Spans> {
    let tree = parse_tree(lang, source, DEFAULT_PARSE_BUDGET)?;
    let mut spans = Spans::default();
    let mut blocks = 0usize;
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        let flags = lang.flags(node.kind_id());
        let class = if flags.contains(KindFlags::IDENTIFIER) {
            Some(TokenClass::Identifier)
        } else if flags.contains(KindFlags::STRING) {
            Some(TokenClass::String)
        } else if flags.contains(KindFlags::NUMBER) {
            Some(TokenClass::Number)
        } else {
            None
        };
        if let Some(class) = class {
            spans.leaves.push((node.byte_range(), class));
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        if flags.contains(KindFlags::BLOCK) {
            let statements = children
                .iter()
                .filter(|c| c.is_named() && !lang.flags(c.kind_id()).contains(KindFlags::COMMENT));
            spans
                .statements
                .extend(statements.map(|c| (c.byte_range(), blocks)));
            blocks += 1;
        }
        stack.extend(children.into_iter().rev());
    }
    spans.leaves.sort_by_key(|(r, _)| r.start);
    spans.statements.sort_by_key(|(r, _)| r.start);
    Ok(spans)
}
