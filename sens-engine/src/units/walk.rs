//! One walk of a file's syntax tree: its tokens, and its functions, classes and
//! windows of [`WINDOW`] statements as ranges of them, with the statements at any
//! depth and the identifier counts. What each unit is called and its facts are
//! read where its node closes.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use super::UnitKind;
use super::facts::{UnitFacts, facts, is_docstring};
use super::names::{body_start, signature, unit_name};
use super::path::{Doc, Path, Siblings};
use super::tokens::{is_implied_type, is_key, is_layout, is_name, is_shorthand_key, unindented};
use crate::fingerprint::{self, Token, TokenClass};
use crate::lang::{KindFlags, Lang};

/// Statements per window.
pub const WINDOW: usize = 4;

/// Whether a unit spanning `start..end` touches `focus` (no focus: every unit).
fn in_focus(focus: Option<&Range<usize>>, start: usize, end: usize) -> bool {
    focus.is_none_or(|f| start <= f.end && f.start <= end)
}

struct Stmt {
    bytes: Range<usize>,
    tok_start: usize,
    tok_end: usize,
    start_line: u32,
    end_line: u32,
    import: bool,
}

struct Frame<'t> {
    node: Node<'t>,
    depth: usize,
    tok_start: usize,
    unit: Option<UnitKind>,
    block: bool,
    stmt: bool,
    /// Touches the focus of a focused extraction (always true without one).
    touching: bool,
    /// Statements seen so far, for block frames.
    stmts: Vec<Stmt>,
    /// For unit frames: where the body starts, in bytes, and once reached, in
    /// tokens.
    body: Option<usize>,
    body_tok: Option<usize>,
}

/// What the walk collects besides tokens.
#[derive(Default)]
pub(super) struct Found {
    pub(super) raw: Vec<RawUnit>,
    /// Token ranges of every statement at any depth (for the leave-one-out keys).
    pub(super) statements: Vec<Range<usize>>,
}

pub(super) struct RawUnit {
    pub(super) kind: UnitKind,
    pub(super) name: String,
    pub(super) signature: String,
    pub(super) start_line: u32,
    pub(super) end_line: u32,
    pub(super) tok_start: usize,
    pub(super) tok_end: usize,
    /// The first token of the body: what comes before is the declaration
    /// (`tok_start` for windows, and for units whose body was not found).
    pub(super) body_tok: usize,
    pub(super) imports_only: bool,
    pub(super) facts: UnitFacts,
}

/// What the walk of one file's tree collects.
pub(super) struct Walked<'s> {
    pub(super) tokens: Vec<Token>,
    /// Texts of identifier and string tokens by token index: the body words of
    /// the suggestions.
    pub(super) words: Vec<(usize, &'s str)>,
    pub(super) idents: FxHashMap<&'s str, u32>,
    pub(super) found: Found,
}

pub(super) fn walk<'s>(
    lang: &Lang,
    source: &'s str,
    tree: &Tree,
    focus: Option<&Range<usize>>,
) -> Walked<'s> {
    let root = tree.root_node();
    let mut tokens: Vec<Token> = Vec::new();
    let mut idents: FxHashMap<&str, u32> = FxHashMap::default();
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut found = Found::default();
    let mut frames: Vec<Frame> = Vec::new();
    // Names of enclosing named units, for window names.
    let mut cursor = root.walk();
    let mut depth = 0usize;
    // Whether the current node is its parent's first child, and a cursor to
    // look at its next sibling: `Node::prev_sibling` and `next_sibling` search
    // down from the root each time.
    let mut first_child = true;
    let mut ahead = root.walk();
    // Per depth of the path, the children of its parent visited so far (the
    // path's node last): what `Node::prev_named_sibling` would search for.
    let mut visited: Vec<Vec<Node>> = vec![Vec::new()];
    // The path from the root to the current node: `Node::parent` searches from
    // the root each time, this is free.
    let mut ancestors: Vec<Node> = Vec::new();
    let doc = Doc {
        lang,
        source,
        focus,
    };
    loop {
        let node = cursor.node();
        ancestors.truncate(depth);
        ancestors.push(node);
        visited[depth].push(node);
        let flags = lang.flags(node.kind_id());
        let parent_is_block = frames
            .last()
            .is_some_and(|f| f.block && f.depth + 1 == depth);
        let touching = in_focus(focus, node.start_byte(), node.end_byte());
        // With a focus, a subtree that neither touches it nor lies inside a unit
        // or block that does cannot contribute to a kept unit.
        let unfocused = !touching && !frames.iter().any(|f| f.touching);
        let skip = node.is_error()
            || node.is_missing()
            || flags.contains(KindFlags::COMMENT)
            || unfocused
            || is_shorthand_key(node, &ancestors[..depth], lang, source)
            || is_implied_type(node, &ancestors[..depth], lang);
        let is_stmt = parent_is_block && node.is_named() && !skip;
        let atomic = node.child_count() == 0
            || flags.intersects(KindFlags::STRING | KindFlags::NUMBER | KindFlags::IDENTIFIER);
        let unit = if skip {
            None
        } else if flags.contains(KindFlags::FUNCTION) {
            Some(UnitKind::Function)
        } else if flags.contains(KindFlags::CLASS) {
            Some(UnitKind::Class)
        } else {
            None
        };
        // The body of the unit whose declaration was just walked.
        if let Some(f) = frames.last_mut()
            && f.unit.is_some()
            && f.depth + 1 == depth
            && f.body_tok.is_none()
            && f.body == Some(node.start_byte())
        {
            f.body_tok = Some(tokens.len());
        }
        let tracked = !skip && (unit.is_some() || is_stmt || flags.contains(KindFlags::BLOCK));
        if tracked {
            frames.push(Frame {
                node,
                depth,
                tok_start: tokens.len(),
                unit,
                block: flags.contains(KindFlags::BLOCK),
                stmt: is_stmt,
                touching,
                stmts: Vec::new(),
                body: unit.and_then(|_| body_start(node, lang)),
                body_tok: None,
            });
        }
        let siblings = Siblings {
            first: first_child,
            cursor: &cursor,
            ahead: &mut ahead,
        };
        if !skip && atomic && !is_layout(node, flags, &ancestors[..depth], lang, siblings) {
            let text = &source[node.byte_range()];
            if !text.trim().is_empty() {
                let class = if flags.contains(KindFlags::IDENTIFIER) {
                    *idents.entry(text).or_insert(0) += 1;
                    words.push((tokens.len(), text));
                    TokenClass::Identifier
                } else if flags.contains(KindFlags::STRING) {
                    // A docstring's words are the unit's doc field already.
                    if !is_docstring(&ancestors[..depth]) {
                        words.push((tokens.len(), text));
                    }
                    TokenClass::String
                } else if flags.contains(KindFlags::NUMBER) {
                    TokenClass::Number
                } else {
                    TokenClass::Other
                };
                let literal = fingerprint::literal_text(text.trim(), class);
                let literal = if class == TokenClass::String && literal.contains('\n') {
                    Cow::Owned(unindented(&literal))
                } else {
                    literal
                };
                // A quoted key that is a name is that name (see `Layout::keys`).
                let class = if class == TokenClass::String
                    && is_name(&literal)
                    && is_key(node, &ancestors[..depth], lang)
                {
                    TokenClass::Identifier
                } else {
                    class
                };
                tokens.push(fingerprint::token(&literal, class));
            }
        }
        if !skip && !atomic && cursor.goto_first_child() {
            depth += 1;
            first_child = true;
            match visited.get_mut(depth) {
                Some(children) => children.clear(),
                None => visited.push(Vec::new()),
            }
            continue;
        }
        first_child = false;
        // The current node is done; close it and every ancestor that has no
        // next sibling.
        loop {
            let path = Path {
                ancestors: &ancestors,
                visited: &visited,
            };
            close_frame(&mut frames, &path, depth, &tokens, &mut found, &doc);
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Walked {
                    tokens,
                    words,
                    idents,
                    found,
                };
            }
            depth -= 1;
        }
    }
}

fn close_frame(
    frames: &mut Vec<Frame>,
    path: &Path,
    depth: usize,
    tokens: &[Token],
    found: &mut Found,
    doc: &Doc,
) {
    let Doc {
        lang,
        source,
        focus,
    } = *doc;
    if frames.last().is_none_or(|f| f.depth != depth) {
        return;
    }
    let Some(frame) = frames.pop() else { return };
    let tok_end = tokens.len();
    let start_line = line_of(frame.node.start_position().row);
    let end_line = line_of(frame.node.end_position().row);
    let bytes = frame.node.byte_range();
    // The nearest enclosing function or class.
    let owner = frames.iter().rev().find(|f| f.unit.is_some());
    if let Some(kind) = frame.unit
        && in_focus(focus, bytes.start, bytes.end)
    {
        let above = &path.ancestors[..frame.depth.min(path.ancestors.len())];
        let name = unit_name(frame.node, above, source);
        let signature = signature(frame.node, lang, source);
        let facts = facts(
            frame.node,
            path,
            frame.depth,
            owner.map(|f| f.node),
            doc,
            &name,
            &signature,
        );
        found.raw.push(RawUnit {
            kind,
            name,
            signature,
            start_line,
            end_line,
            tok_start: frame.tok_start,
            tok_end,
            body_tok: frame.body_tok.unwrap_or(frame.tok_start),
            imports_only: false,
            facts,
        });
    }
    if frame.block && frame.stmts.len() >= WINDOW {
        let (owner_name, owner_signature) = owner.map_or_else(
            || ("<top level>".to_string(), String::new()),
            |f| {
                let above = &path.ancestors[..f.depth.min(path.ancestors.len())];
                (
                    unit_name(f.node, above, source),
                    signature(f.node, lang, source),
                )
            },
        );
        for w in frame.stmts.windows(WINDOW) {
            if !in_focus(focus, w[0].bytes.start, w[WINDOW - 1].bytes.end) {
                continue;
            }
            found.raw.push(RawUnit {
                kind: UnitKind::Window,
                name: format!("window in {owner_name}"),
                signature: owner_signature.clone(),
                start_line: w[0].start_line,
                end_line: w[WINDOW - 1].end_line,
                tok_start: w[0].tok_start,
                tok_end: w[WINDOW - 1].tok_end,
                body_tok: w[0].tok_start,
                imports_only: w.iter().all(|s| s.import),
                facts: UnitFacts::default(),
            });
        }
    }
    if frame.stmt
        && tok_end > frame.tok_start
        && let Some(parent) = frames.last_mut()
    {
        found.statements.push(frame.tok_start..tok_end);
        parent.stmts.push(Stmt {
            bytes,
            tok_start: frame.tok_start,
            tok_end,
            start_line,
            end_line,
            import: lang.flags(frame.node.kind_id()).contains(KindFlags::IMPORT),
        });
    }
}

fn line_of(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}
