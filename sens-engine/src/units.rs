//! One file into units (docs/contract.md, "Vocabulary" and "Fingerprints"): functions,
//! class-likes, and windows of 4 consecutive statements inside one block, each with its
//! fingerprints. One walk of the syntax tree collects the file's leaf tokens; units are
//! ranges of them.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, Node, ParseOptions, Parser, Point, Tree, TreeCursor};

use crate::config::RuleConfig;
use crate::fingerprint::{self, MinHasher, NearRule, Token, TokenClass};
use crate::lang::{KindFlags, Lang};
use crate::terms::{BodyWords, Terms};

/// Statements per window.
pub const WINDOW: usize = 4;
/// A statement of a whole unit is left out once for [`UnitData::leave_one_out`]
/// when its tokens are at least this share of the unit's distinct shingles: a
/// statement of s tokens brings at most s + k - 1 shingles the rest lacks, so a
/// shorter one leaves the Jaccard with the rest at about 0.8 or more, where the
/// whole-unit bands find the pair (20 x 6 bands: 99.8 % of the time). Shingles,
/// not tokens: a repetitive unit has few distinct shingles, and a short
/// statement of new structure lowers its Jaccard a lot.
pub const LEAVE_OUT_MIN: f64 = 0.2;
/// ... and at most this share of the unit's tokens: the rest of a longer one is
/// mostly too small for containment (`NearRule`: the new unit at most half again
/// the existing one's shingles). Tokens repeat shingles, so a statement of half
/// the tokens often adds only a third of the shingles.
pub const LEAVE_OUT_MAX: f64 = 0.5;
/// Bands per left-out statement (of the index's 20): leaving out exactly the
/// inserted statement gives the original's tokens back, so every band matches
/// and one would do; a few more keep a candidate when a second statement was
/// inserted too. A quarter of the bands costs a quarter of the memory and of
/// the bucket reads of all of them.
pub const LEAVE_OUT_BANDS: usize = 5;
/// Signatures longer than this are cut (with an ellipsis) to keep messages short.
const SIGNATURE_MAX: usize = 240;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitKind {
    Function,
    Class,
    Window,
}

/// A unit with its fingerprints, independent of any index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UnitData {
    pub kind: UnitKind,
    pub name: String,
    /// The declaration up to its body, whitespace collapsed.
    pub signature: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Normalized tokens (comments dropped).
    pub tokens: u32,
    pub exact: u64,
    pub renamed: u64,
    /// Sorted, deduplicated k-shingles of normalized tokens.
    /// Shared with the index's probe table (one read per candidate).
    #[serde(with = "crate::shared_slice")]
    pub shingles: Arc<[u32]>,
    /// LSH band keys of the shingles' MinHash signature.
    pub bands: Box<[u64]>,
    /// Band keys of the unit's tokens with one statement left out: the first
    /// [`LEAVE_OUT_BANDS`] bands' keys per statement of the size that
    /// [`LEAVE_OUT_MIN`] and [`LEAVE_OUT_MAX`] bound, for functions and classes
    /// of at least `NearRule::min_contained` shingles (none for windows). A copy
    /// with one long statement inserted, whose whole-unit keys may share no
    /// band with the original's, gets the original's keys back. Looked up by
    /// `Index::copies`, never inserted into its LSH table.
    pub leave_one_out: Box<[u64]>,
    /// A window made only of import/use statements: never a blocking copy.
    pub imports_only: bool,
    pub facts: UnitFacts,
}

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
}

impl UnitData {
    /// Test code: a function named or marked as a test by the runners'
    /// conventions, or anything inside a test-only module. One definition for
    /// every rule that leaves tests alone (orphans, suggestions).
    pub fn is_test(&self) -> bool {
        self.facts.in_test_module || is_test_function(&self.name, &self.facts.decorators)
    }

    /// A Python protocol method (`__init__`, `__eq__`, `__getitem__`): the
    /// language calls it, never a caller by name. One definition for the rules
    /// that leave it alone (orphans) and the suggestions, which offer its class.
    pub fn is_dunder(&self) -> bool {
        let name = self.name.as_str();
        name.starts_with("__") && name.ends_with("__")
    }
}

/// A test by the runners' conventions: `test_x`, `testX`, `TestX`, or an attribute
/// or decorator naming a test (`#[test]`, `#[tokio::test]`, `@Test`).
pub fn is_test_function(name: &str, decorators: &str) -> bool {
    let after = |prefix: &str| name.strip_prefix(prefix).map(|rest| rest.chars().next());
    let test_name = [after("test"), after("Test")]
        .into_iter()
        .flatten()
        .any(|next| next.is_none_or(|c| c == '_' || c.is_uppercase() || c.is_ascii_digit()));
    test_name
        || decorators
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "test" || w == "Test")
}

/// Doc text kept per unit (for suggestions), in bytes.
const DOC_MAX: usize = 400;

/// What one file contributes to the index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParsedFile {
    /// Not stored in the cache: the file's extension names it again.
    #[serde(skip)]
    pub language: &'static str,
    pub units: Vec<UnitData>,
    /// Identifier texts and how often each occurs outside the definitions it names.
    pub identifiers: Vec<(Box<str>, u32)>,
    /// The tree holds ERROR or MISSING nodes (the file is indexed anyway).
    pub parse_errors: bool,
}

/// The fixed parts of fingerprinting, shared by every file of an index.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    pub k: usize,
    pub minhash: MinHasher,
    /// Distinct shingles a unit needs for leave-one-out keys: a smaller one is
    /// never contained nor a blocking near copy (`NearRule`, `rules`).
    pub leave_out_from: usize,
}

impl Fingerprinter {
    pub fn new(cfg: &RuleConfig) -> Self {
        Self {
            k: cfg.k,
            minhash: MinHasher::new(cfg),
            leave_out_from: NearRule::new(cfg).min_contained,
        }
    }
}

/// How long one file's parse may take. Linear grammars parse megabytes in that
/// time; a file that does not is not judged (a blocking `unjudged` finding)
/// rather than holding a hook past the CLI's callback timeout.
pub const DEFAULT_PARSE_BUDGET: Duration = Duration::from_secs(2);

/// A parse stopped at its budget: tree-sitter's progress callback ended it, so
/// no work is left running.
#[derive(Debug, thiserror::Error)]
#[error("the {language} parser did not finish within its budget of {} ms", budget.as_millis())]
pub struct OverBudget {
    pub language: &'static str,
    pub budget: Duration,
}

thread_local! {
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
}

/// Parses `source` with the language's grammar, reusing one parser per thread.
/// Extraction reads token texts from `source` itself: preparing (blanking what is
/// not code) keeps every offset.
/// Fails with [`OverBudget`] when the parse takes longer than `budget`.
pub fn parse_tree(lang: &Lang, source: &str, budget: Duration) -> anyhow::Result<Tree> {
    parse_with(lang, &lang.prepare(source), None, budget)
}

fn parse_with(
    lang: &Lang,
    text: &str,
    old: Option<&Tree>,
    budget: Duration,
) -> anyhow::Result<Tree> {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser
            .set_language(&lang.language)
            .map_err(|e| anyhow::anyhow!("grammar of {} cannot be loaded: {e}", lang.name()))?;
        let started = Instant::now();
        let mut within_budget = |_: &tree_sitter::ParseState| {
            if started.elapsed() < budget {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        };
        let bytes = text.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            old,
            Some(ParseOptions::new().progress_callback(&mut within_budget)),
        );
        match tree {
            Some(tree) => Ok(tree),
            None if started.elapsed() >= budget => {
                // A cancelled parser would resume this parse on its next call.
                parser.reset();
                Err(OverBudget {
                    language: lang.name(),
                    budget,
                }
                .into())
            }
            None => Err(anyhow::anyhow!("the {} parser gave up", lang.name())),
        }
    })
}

/// Parse and extract in one call, within [`DEFAULT_PARSE_BUDGET`].
pub fn parse_file(lang: &Lang, source: &str, fp: &Fingerprinter) -> anyhow::Result<ParsedFile> {
    let tree = parse_tree(lang, source, DEFAULT_PARSE_BUDGET)?;
    Ok(extract(lang, source, &tree, fp, None))
}

/// Parses `new` reusing the tree of `old` (tree-sitter re-parses only what the
/// edit touched), within `budget`. Returns the new tree and the byte range of
/// `new` that differs from `old`.
pub fn reparse(
    lang: &Lang,
    old: &str,
    old_tree: &Tree,
    new: &str,
    budget: Duration,
) -> anyhow::Result<(Tree, Range<usize>)> {
    let (old, new) = (lang.prepare(old), lang.prepare(new));
    let changed = changed_range(&old, &new);
    let old_end = old.len() - (new.len() - changed.end);
    let mut tree = old_tree.clone();
    tree.edit(&InputEdit {
        start_byte: changed.start,
        old_end_byte: old_end,
        new_end_byte: changed.end,
        start_position: point(&old, changed.start),
        old_end_position: point(&old, old_end),
        new_end_position: point(&new, changed.end),
    });
    let tree = parse_with(lang, &new, Some(&tree), budget)?;
    Ok((tree, changed))
}

/// The byte range of `new` between the longest common prefix and suffix of the
/// two texts, on character boundaries.
pub fn changed_range(old: &str, new: &str) -> Range<usize> {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !new.is_char_boundary(prefix) || !old.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let room = a.len().min(b.len()) - prefix;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    while !new.is_char_boundary(new.len() - suffix) || !old.is_char_boundary(old.len() - suffix) {
        suffix -= 1;
    }
    prefix..new.len() - suffix
}

fn point(text: &str, byte: usize) -> Point {
    let head = &text.as_bytes()[..byte];
    let row = head.iter().filter(|&&c| c == b'\n').count();
    let column = head.iter().rev().take_while(|&&c| c != b'\n').count();
    Point { row, column }
}

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
}

/// What the walk collects besides tokens.
#[derive(Default)]
struct Found {
    raw: Vec<RawUnit>,
    /// Token ranges of every statement at any depth (for the leave-one-out keys).
    statements: Vec<Range<usize>>,
}

struct RawUnit {
    kind: UnitKind,
    name: String,
    signature: String,
    start_line: u32,
    end_line: u32,
    tok_start: usize,
    tok_end: usize,
    imports_only: bool,
    facts: UnitFacts,
}

/// Walks the tree once: tokens, units, windows and identifier counts. With a
/// `focus` byte range, only units touching it are kept (the others are known
/// unchanged) and the identifier counts cover the whole file as always.
pub fn extract(
    lang: &Lang,
    source: &str,
    tree: &Tree,
    fp: &Fingerprinter,
    focus: Option<Range<usize>>,
) -> ParsedFile {
    let walked = walk(lang, source, tree, focus.as_ref());
    finish(lang, walked, tree.root_node().has_error(), fp)
}

/// What the walk of one file's tree collects.
struct Walked<'s> {
    tokens: Vec<Token>,
    /// Texts of identifier and string tokens by token index: the body words of
    /// the suggestions.
    words: Vec<(usize, &'s str)>,
    idents: FxHashMap<&'s str, u32>,
    found: Found,
}

fn walk<'s>(lang: &Lang, source: &'s str, tree: &Tree, focus: Option<&Range<usize>>) -> Walked<'s> {
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

/// A token a formatter may add, drop or move (see [`crate::lang::Layout`]): a
/// terminator, a separator that ends its list or opens a leading-separator
/// node, a delimiter of a grouping node, a bracket of a tuple where it may
/// stand bare, or a brace of a block holding one statement. `above` is the
/// path from the root to the node's parent.
fn is_layout(
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

/// The current node's siblings, as the walk knows them.
struct Siblings<'c, 't> {
    /// The node is its parent's first child.
    first: bool,
    /// The walk's cursor, at the node.
    cursor: &'c TreeCursor<'t>,
    /// Scratch cursor, moved to the node's next sibling.
    ahead: &'c mut TreeCursor<'t>,
}

impl<'t> Siblings<'_, 't> {
    fn next(&mut self) -> Option<Node<'t>> {
        self.ahead.reset_to(self.cursor);
        self.ahead.goto_next_sibling().then(|| self.ahead.node())
    }
}

/// A multi-line string without the whitespace around its lines: a formatter
/// re-indenting a docstring (ruff `indent-style = "tab"`, black stripping
/// trailing spaces) changes only that.
fn unindented(text: &str) -> String {
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
fn is_key(node: Node, above: &[Node], lang: &Lang) -> bool {
    above.last().is_some_and(|parent| {
        lang.flags(parent.kind_id()).contains(KindFlags::KEYS)
            && parent
                .child_by_field_name("key")
                .or_else(|| parent.child_by_field_name("name"))
                == Some(node)
    })
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// The type of a literal that the enclosing literal implies (`T` in
/// `[]T{T{1}}`, see `Layout::implied_types`). `above` is the path to the
/// node's parent.
fn is_implied_type(node: Node, above: &[Node], lang: &Lang) -> bool {
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
fn is_shorthand_key(node: Node, above: &[Node], lang: &Lang, source: &str) -> bool {
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

/// The walk's path from the root to the current node.
struct Path<'p, 't> {
    /// The nodes of the path by depth (entries past the current depth stale).
    ancestors: &'p [Node<'t>],
    visited: &'p [Vec<Node<'t>>],
}

impl<'t> Path<'_, 't> {
    /// The named siblings before the path's node at `depth`, nearest first.
    fn earlier_named(&self, depth: usize) -> impl Iterator<Item = Node<'t>> + '_ {
        let visited = self.visited.get(depth).map_or(&[][..], Vec::as_slice);
        let before = visited.split_last().map_or(&[][..], |(_, before)| before);
        before.iter().rev().copied().filter(|n| n.is_named())
    }
}

/// The file being extracted.
struct Doc<'a> {
    lang: &'a Lang,
    source: &'a str,
    focus: Option<&'a Range<usize>>,
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
            frames,
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
            imports_only: false,
            facts,
        });
    }
    if frame.block && frame.stmts.len() >= WINDOW {
        let owner = frames.iter().rev().find(|f| f.unit.is_some());
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

/// The facts of the unit `node`, the path's node at `depth`.
fn facts(
    node: Node,
    path: &Path,
    depth: usize,
    frames: &[Frame],
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
    let in_trait_impl = frames
        .iter()
        .rev()
        .find(|f| f.unit.is_some())
        .is_some_and(|f| f.node.child_by_field_name("trait").is_some());
    UnitFacts {
        exported: signature.starts_with("pub ")
            || signature.starts_with("public ")
            || signature.contains(" public ")
            || declaration_statement(ancestors)
                .is_some_and(|d| ancestors[d].kind() == "export_statement")
            || (lang.name() == "go" && name.starts_with(|c: char| c.is_uppercase())),
        implements: in_trait_impl
            || node.kind() == "function_signature_item"
            || signature.split_whitespace().any(|w| w == "override")
            || decorators.contains("Override"),
        decorators,
        doc,
        callback: callback_of(ancestors).is_some() && wrapped_binding(ancestors).is_none(),
        in_test_module: (0..ancestors.len()).any(|d| is_test_module(path, d, source)),
        terms: Terms::default(),
        strings: Box::default(),
    }
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
fn is_docstring(ancestors: &[Node]) -> bool {
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

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
}

fn finish(lang: &Lang, walked: Walked, parse_errors: bool, fp: &Fingerprinter) -> ParsedFile {
    let Walked {
        tokens,
        words,
        mut idents,
        found: Found {
            raw,
            mut statements,
        },
    } = walked;
    statements.sort_unstable_by_key(|r| (r.start, r.end));
    statements.dedup();
    let windows = fingerprint::window_hashes(&tokens, fp.k);
    let body_words = BodyWords::new(&words);
    let mut rest = Vec::new();
    let mut units = Vec::with_capacity(raw.len());
    for mut r in raw {
        let toks = &tokens[r.tok_start..r.tok_end];
        if toks.is_empty() {
            continue;
        }
        let unit_windows = windows_within(&windows, r.tok_start..r.tok_end, fp.k);
        let shingles = fingerprint::shingle_set(unit_windows);
        let mut leave_one_out = Vec::new();
        if r.kind != UnitKind::Window {
            if shingles.len() >= fp.leave_out_from {
                let unit = r.tok_start..r.tok_end;
                for left_out in left_out_statements(unit, shingles.len(), &statements) {
                    shingles_without(unit_windows, toks, left_out, fp.k, &mut rest);
                    let keys = fp.minhash.first_band_keys(&rest, LEAVE_OUT_BANDS);
                    leave_one_out.extend(keys);
                }
            }
            let body = body_words.within(r.tok_start..r.tok_end);
            r.facts.terms = Terms::new(&r.name, &r.signature, &r.facts.doc, body);
            truncate(&mut r.facts.doc, DOC_MAX);
            // A definition's own name and its recursive calls are not usages.
            let name_hash = fingerprint::hash_text(&r.name);
            let own = toks
                .iter()
                .filter(|t| t.identifier && t.text == name_hash)
                .count();
            if let Some(count) = idents.get_mut(r.name.as_str()) {
                *count = count.saturating_sub(u32::try_from(own).unwrap_or(u32::MAX));
            }
        }
        let mut strings: Vec<u32> = toks
            .iter()
            .filter(|t| t.is_string())
            .map(|t| t.text as u32)
            .collect();
        strings.sort_unstable();
        strings.dedup();
        r.facts.strings = strings.into_boxed_slice();
        let bands = fp.minhash.band_keys(&shingles);
        units.push(UnitData {
            kind: r.kind,
            name: r.name,
            signature: r.signature,
            start_line: r.start_line,
            end_line: r.end_line,
            tokens: u32::try_from(toks.len()).unwrap_or(u32::MAX),
            exact: fingerprint::exact_hash(toks),
            renamed: fingerprint::renamed_hash(toks),
            shingles: shingles.into(),
            bands: bands.into_boxed_slice(),
            leave_one_out: leave_one_out.into_boxed_slice(),
            imports_only: r.imports_only,
            facts: r.facts,
        });
    }
    // Units in source order (the walk closes inner units first).
    units.sort_by_key(|u| (u.start_line, std::cmp::Reverse(u.end_line), u.kind as u8));
    let mut identifiers: Vec<(Box<str>, u32)> = idents
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(name, n)| (Box::from(name), n))
        .collect();
    identifiers.sort_unstable();
    ParsedFile {
        language: lang.name(),
        units,
        identifiers,
        parse_errors,
    }
}

/// The windows of a file's `windows` (by start position) that lie inside the
/// tokens `unit`.
fn windows_within(windows: &[u32], unit: Range<usize>, k: usize) -> &[u32] {
    match (unit.end + 1).checked_sub(k) {
        Some(end) if end > unit.start => &windows[unit.start..end],
        _ => &[],
    }
}

/// Into `out`, the shingles of `toks` with the tokens `left_out` removed, from
/// `windows`, the windows of `toks`: those before and after the gap are the
/// unit's own, and only the few crossing it are hashed (what
/// `fingerprint::shingles` of the concatenated rest gives, without building it).
fn shingles_without(
    windows: &[u32],
    toks: &[Token],
    left_out: Range<usize>,
    k: usize,
    out: &mut Vec<u32>,
) {
    out.clear();
    let (a, b) = (left_out.start, left_out.end);
    if k == 0 || toks.len() - (b - a) < k {
        return;
    }
    out.extend_from_slice(&windows[..(a + 1).saturating_sub(k)]);
    out.extend_from_slice(&windows[b.min(windows.len())..]);
    let gap = [
        &toks[a.saturating_sub(k - 1)..a],
        &toks[b..(b + k - 1).min(toks.len())],
    ]
    .concat();
    out.extend(fingerprint::window_hashes(&gap, k));
    out.sort_unstable();
    out.dedup();
}

/// The statements of the unit spanning `unit` (token indices), of `shingles`
/// distinct shingles, that [`LEAVE_OUT_MIN`] and [`LEAVE_OUT_MAX`] admit, as
/// ranges relative to the unit's start; `statements` sorted by start.
fn left_out_statements<'s>(
    unit: Range<usize>,
    shingles: usize,
    statements: &'s [Range<usize>],
) -> impl Iterator<Item = Range<usize>> + 's {
    let first = statements.partition_point(|s| s.start < unit.start);
    let last = statements.partition_point(|s| s.start < unit.end);
    let (min, max) = (
        LEAVE_OUT_MIN * shingles as f64,
        LEAVE_OUT_MAX * unit.len() as f64,
    );
    statements[first..last]
        .iter()
        .filter(move |s| s.end <= unit.end && (min..=max).contains(&(s.len() as f64)))
        .map(move |s| s.start - unit.start..s.end - unit.start)
}

/// Fields that name a definition, tried in order; `declarator` chains reach the
/// name in C-like declarations, `pattern` the bound name in OCaml, `signature` the
/// name in Dart methods.
const NAME_FIELDS: &[&str] = &["name", "declarator", "pattern", "signature"];

fn unit_name(node: Node, ancestors: &[Node], source: &str) -> String {
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
fn wrapped_binding(ancestors: &[Node]) -> Option<usize> {
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
fn callback_of<'t>(ancestors: &[Node<'t>]) -> Option<(Node<'t>, Node<'t>)> {
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

/// The declaration up to the body: `body` field, else the first block child,
/// else the first line.
fn signature(node: Node, lang: &Lang, source: &str) -> String {
    let body_start = node
        .child_by_field_name("body")
        .map(|b| b.start_byte())
        .or_else(|| {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| lang.flags(c.kind_id()).contains(KindFlags::BLOCK))
                .map(|b| b.start_byte())
        });
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

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

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

#[cfg(test)]
/// This crate's sources and the near-copy fixtures of its tests, as
/// (path, text) pairs: a real corpus for the fast paths' equality tests.
pub(crate) fn test_corpus() -> anyhow::Result<Vec<(String, String)>> {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "src/session",
        "src/session/guards",
        "src/suggest",
        "tests/fixtures",
        "tests/fixtures/layout",
    ] {
        for entry in std::fs::read_dir(crate_dir.join(dir))? {
            let path = entry?.path();
            let name = path.to_string_lossy().trim_end_matches(".txt").to_string();
            if path.is_file() && crate::lang::for_path(&name).is_some() {
                files.push((name, std::fs::read_to_string(&path)?));
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn tests_are_told_by_name_and_attribute() {
        for (name, decorators) in [
            ("test_totals", ""),
            ("testTotals", ""),
            ("TestTotals", ""),
            ("test", ""),
            ("totals_work", "#[test]"),
            ("totals_work", "#[tokio::test]"),
            ("totalsWork", "@Test"),
        ] {
            assert!(is_test_function(name, decorators), "{name} {decorators}");
        }
        for (name, decorators) in [("testable", ""), ("attest", ""), ("latest", "#[inline]")] {
            assert!(!is_test_function(name, decorators), "{name} {decorators}");
        }
    }

    #[test]
    fn derived_shingles_equal_the_shingles_of_the_tokens() -> anyhow::Result<()> {
        let k = RuleConfig::default().k;
        let mut checked = 0;
        for (path, source) in test_corpus()? {
            let lang = crate::lang::for_path(&path).context("no language")?;
            let tree = parse_tree(lang, &source, DEFAULT_PARSE_BUDGET)?;
            let walked = walk(lang, &source, &tree, None);
            let windows = fingerprint::window_hashes(&walked.tokens, k);
            let mut rest = Vec::new();
            for r in &walked.found.raw {
                let toks = &walked.tokens[r.tok_start..r.tok_end];
                let unit_windows = windows_within(&windows, r.tok_start..r.tok_end, k);
                let shingles = fingerprint::shingles(toks, k);
                assert_eq!(fingerprint::shingle_set(unit_windows), shingles, "{path}");
                let inside = walked
                    .found
                    .statements
                    .iter()
                    .filter(|s| r.tok_start <= s.start && s.end <= r.tok_end);
                for s in inside {
                    let left_out = s.start - r.tok_start..s.end - r.tok_start;
                    shingles_without(unit_windows, toks, left_out.clone(), k, &mut rest);
                    let concat = [&toks[..left_out.start], &toks[left_out.end..]].concat();
                    assert_eq!(
                        rest,
                        fingerprint::shingles(&concat, k),
                        "{path} {left_out:?}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "only {checked} statements left out");
        Ok(())
    }

    /// One function, then `lines` comment lines at the top level.
    fn function_then_comments(lines: usize) -> String {
        let mut source = String::from(
            "def total(items):\n    acc = 0\n    for i in items:\n        acc += i\n    return acc\n",
        );
        for i in 0..lines {
            source.push_str(&format!("# comment line {i}\n"));
        }
        source
    }

    #[test]
    fn a_long_run_of_comments_gives_the_units_of_the_unprepared_source() -> anyhow::Result<()> {
        let lang = crate::lang::for_path("a.py").context("no python")?;
        let fp = Fingerprinter::new(&RuleConfig::default());
        let source = function_then_comments(4000);
        let thinned = parse_file(lang, &source, &fp)?;
        // Unprepared, the grammar is quadratic here: no budget.
        let unprepared = parse_with(lang, &source, None, Duration::MAX)?;
        let raw = extract(lang, &source, &unprepared, &fp, None);
        assert_eq!(thinned, raw);
        let alone = parse_file(lang, &function_then_comments(0), &fp)?;
        let names = |p: &ParsedFile| {
            p.units
                .iter()
                .map(|u| (u.name.clone(), u.exact))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&thinned), names(&alone));
        assert_eq!(
            names(&thinned),
            vec![("total".to_string(), alone.units[0].exact)]
        );
        Ok(())
    }
}
