//! Where the walk stands: the file it walks, the path from the root to the current
//! node, the siblings visited before each node of it, and the current node's next
//! sibling. Kept by the walk because `Node::parent` and `Node::prev_sibling` search
//! down from the root each time.

use std::ops::Range;

use tree_sitter::{Node, TreeCursor};

use crate::lang::Lang;

/// The file being walked.
pub(super) struct Doc<'a> {
    pub(super) lang: &'a Lang,
    pub(super) source: &'a str,
    /// Only units touching this byte range are kept (none: every unit).
    pub(super) focus: Option<&'a Range<usize>>,
}

/// The walk's path from the root to the current node.
pub(super) struct Path<'p, 't> {
    /// The nodes of the path by depth (entries past the current depth stale).
    pub(super) ancestors: &'p [Node<'t>],
    pub(super) visited: &'p [Vec<Node<'t>>],
}

impl<'t> Path<'_, 't> {
    /// The named siblings before the path's node at `depth`, nearest first.
    pub(super) fn earlier_named(&self, depth: usize) -> impl Iterator<Item = Node<'t>> + '_ {
        let visited = self.visited.get(depth).map_or(&[][..], Vec::as_slice);
        let before = visited.split_last().map_or(&[][..], |(_, before)| before);
        before.iter().rev().copied().filter(|n| n.is_named())
    }
}

/// The current node's siblings, as the walk knows them.
pub(super) struct Siblings<'c, 't> {
    /// The node is its parent's first child.
    pub(super) first: bool,
    /// The walk's cursor, at the node.
    pub(super) cursor: &'c TreeCursor<'t>,
    /// Scratch cursor, moved to the node's next sibling.
    pub(super) ahead: &'c mut TreeCursor<'t>,
}

impl<'t> Siblings<'_, 't> {
    pub(super) fn next(&mut self) -> Option<Node<'t>> {
        self.ahead.reset_to(self.cursor);
        self.ahead.goto_next_sibling().then(|| self.ahead.node())
    }
}
