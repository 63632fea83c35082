//! Similarity that something other than copying explains. Normalized tokens
//! (names and literals as placeholders) make two units alike whenever an
//! interface, a protocol or the language dictates their shape: two impls of
//! one trait, `Display` beside `Debug`, overload stubs, the methods and fields
//! of a class body, struct declarations. Such a match is shown as a hint, not
//! a denial, unless the text itself is copied (an exact copy), or, for a near
//! match, the new unit also reuses the other's names and words and is about
//! its size.
//! Measured on labelled real groups: `docs/precision.md`,
//! `docs/experiments/precision.md`.

use crate::index::CopyKind;
use crate::terms::Field;
use crate::units::{UnitData, UnitKind, trait_name};
use crate::words::word_hashes;

/// The share of body words (identifiers and string words, with repeats) two
/// whole units must have in common, of the smaller side's, before a near match
/// between them denies: a copy keeps its original's names; a unit written to
/// the same shape names other things. Chosen on labelled real groups
/// (`docs/experiments/precision.md`): 0.8 leaves the mutation recall of
/// `calibrate` unchanged and removes the most unjust denials.
pub const MIN_SHARED_WORDS: f64 = 0.8;

/// Whether the match of `new` (a unit of the written `text`) with `existing`,
/// of kind `kind`, is only a shape that something else dictates.
pub fn only_shape(new: &UnitData, text: &str, kind: CopyKind, existing: &UnitData) -> bool {
    if kind == CopyKind::Exact {
        return false;
    }
    [new, existing].iter().any(|u| declares(u) || is_stub(u))
        || same_protocol(new, existing, kind)
        || (kind == CopyKind::Renamed && renames_what_a_copy_keeps(new, existing))
        || (kind == CopyKind::Near
            && (mostly_declared(new, existing)
                || outsized(new, existing)
                || says_otherwise(new, existing)
                || !shares_words(new, text, existing)))
}

/// The distinct shingles a whole unit's body (what follows its declaration)
/// needs before a near match of it denies. Near similarity counts a unit's
/// shingles whole, signature included: public functions per variant whose
/// long parameter lists are most of their shingles (one per HTTP verb
/// forwarding to `request`, `handshake` per protocol, `delete_cookie` calling
/// `set_cookie`) match on what they declare, while their bodies, one call
/// each, have a few shingles to say what they do. Chosen on labelled real
/// groups (`docs/experiments/precision.md`): no labelled copy is lost at 24,
/// two are at 32 (bodies of 31). Renamed matches are not judged so: a
/// renamed copy of a short function is the mutation kind `renamed`.
pub const MIN_BODY_SHINGLES: usize = 24;

/// Whether both sides of a match are whole units whose bodies hold under
/// [`MIN_BODY_SHINGLES`] distinct shingles: what matched is mostly their
/// declarations. Both, so that a copy whose statements were deleted down to
/// a small body is still judged by its original's.
fn mostly_declared(new: &UnitData, existing: &UnitData) -> bool {
    let body = |u: &UnitData| u.shingles.len() - usize::from(u.facts.declared);
    let whole = |u: &UnitData| u.kind != UnitKind::Window;
    whole(new) && whole(existing) && body(new).max(body(existing)) < MIN_BODY_SHINGLES
}

/// The share of the larger side's tokens the smaller side of a near match
/// must hold before the match denies. Near similarity counts distinct
/// shingles, and a unit that repeats one shape (a run of parallel tests, the
/// cofactor lines of a 4x4 inverse) has few distinct shingles for its size: a
/// unit a fraction of its size finds most of its own among them without
/// copying any one part of it. A copy that inserts or deletes a few statements
/// stays near its original's size. Chosen on labelled real groups
/// (`docs/experiments/precision.md`): no labelled copy is under 0.59.
pub const MIN_SIZE_SHARE: f64 = 0.5;

/// Whether one side of a near match is under [`MIN_SIZE_SHARE`] of the
/// other's size in tokens.
fn outsized(new: &UnitData, existing: &UnitData) -> bool {
    let (small, large) = if new.tokens <= existing.tokens {
        (new.tokens, existing.tokens)
    } else {
        (existing.tokens, new.tokens)
    };
    f64::from(small) < MIN_SIZE_SHARE * f64::from(large)
}

/// The distinct strings each of two units must hold before what they say can
/// tell a copy from a shape: with fewer, one changed message is most of them.
const MIN_STRINGS: usize = 3;

/// The share of the smaller side's distinct strings a near copy keeps. A copy
/// that inserts and deletes statements keeps most of its messages, keys and
/// formats; two units of one shape that differ in every string (parallel
/// tests, one constructor per alignment) say other things. Only near matches
/// are judged so: a renamed match's renaming may cover its strings too (the
/// mutation kind `renamed` does), and stays a copy. Chosen on labelled real
/// groups (`docs/experiments/precision.md`).
pub const MIN_SHARED_STRINGS: f64 = 0.34;

/// Whether two units of the same shape say different things: both hold
/// [`MIN_STRINGS`] distinct strings and share under [`MIN_SHARED_STRINGS`] of
/// the smaller side's.
fn says_otherwise(new: &UnitData, existing: &UnitData) -> bool {
    let (a, b) = (&new.facts.strings, &existing.facts.strings);
    if a.len().min(b.len()) < MIN_STRINGS {
        return false;
    }
    let shared = a.iter().filter(|s| b.binary_search(s).is_ok()).count();
    (shared as f64) < MIN_SHARED_STRINGS * a.len().min(b.len()) as f64
}

/// The share of the smaller side's called names and members (`f(`, `x.f`) a
/// renamed match may keep and still be a unit of the same shape rather than a
/// copy, when it also keeps [`MIN_OWN_NAMES`] of its other names: a copy keeps
/// what it calls and renames its parameters and locals; a unit written to the
/// same shape (one `copy()` per class, one constructor per alignment) keeps the
/// conventional names of its parameters and calls other things. Chosen on
/// labelled real groups (`docs/experiments/precision.md`): the lowest share
/// of a labelled renamed copy is 0.62.
pub const MAX_KEPT_CALLS: f64 = 0.6;

/// The share of the smaller side's other names (parameters, locals, types) a
/// renamed match keeps before its calling other things says it is a unit of
/// the same shape: a renaming that changes every name (the mutation kind
/// `renamed` of `calibrate`) keeps none and stays a copy.
pub const MIN_OWN_NAMES: f64 = 0.5;

/// Whether a renamed match calls or reaches other things (under
/// [`MAX_KEPT_CALLS`] of its called names and members shared) while keeping
/// the names a renaming copy changes ([`MIN_OWN_NAMES`] of its parameters and
/// locals shared): the opposite of a copy's renaming.
fn renames_what_a_copy_keeps(new: &UnitData, existing: &UnitData) -> bool {
    let share = |called: bool| {
        let role = |names: &[u16]| -> Vec<u16> {
            names
                .iter()
                .copied()
                .filter(|n| (n & 1 == 1) == called)
                .collect()
        };
        let (a, b) = (role(&new.facts.names), role(&existing.facts.names));
        let smaller = a.len().min(b.len());
        let shared = a.iter().filter(|n| b.binary_search(n).is_ok()).count();
        (smaller > 0).then(|| shared as f64 / smaller as f64)
    };
    match (share(true), share(false)) {
        (Some(calls), Some(own)) => calls < MAX_KEPT_CALLS && own >= MIN_OWN_NAMES,
        _ => false,
    }
}

/// The keyword a declaration starts with, past visibility and other modifiers
/// (`pub(crate) struct X`, `export default class Y`, `impl<T> Z`).
fn keyword(signature: &str) -> Option<&str> {
    const MODIFIERS: &[&str] = &[
        "pub",
        "crate",
        "super",
        "self",
        "in",
        "export",
        "default",
        "declare",
        "abstract",
        "public",
        "private",
        "protected",
        "internal",
        "sealed",
        "static",
        "final",
        "unsafe",
        "data",
        "open",
        "async",
        "partial",
    ];
    signature
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .find(|w| !MODIFIERS.contains(w))
}

/// Declarations that hold members rather than statements.
const CONTAINERS: &[&str] = &[
    "class",
    "struct",
    "enum",
    "union",
    "interface",
    "trait",
    "impl",
    "object",
    "module",
    "namespace",
    "record",
    "type",
];

/// Declarations of data only: their similarity is a list of fields.
const DATA: &[&str] = &["struct", "enum", "union", "interface", "record", "type"];

/// A window of a class body or of a module's top level (a run of methods,
/// fields, properties or metadata: declarations, which a window inside a
/// function body is not), or a declaration of data (a struct's fields).
fn declares(unit: &UnitData) -> bool {
    let keyword = keyword(&unit.signature);
    match unit.kind {
        // A window's signature is its enclosing unit's; empty at top level.
        UnitKind::Window => {
            unit.signature.trim().is_empty() || keyword.is_some_and(|k| CONTAINERS.contains(&k))
        }
        UnitKind::Class => keyword.is_some_and(|k| DATA.contains(&k)),
        UnitKind::Function | UnitKind::Module => false,
    }
}

/// An overload stub (`@typing.overload`): a signature the implementation
/// below it repeats.
fn is_stub(unit: &UnitData) -> bool {
    unit.facts.decorators.contains("overload")
}

/// The trait a Rust `impl Trait for Type` block implements, without its path
/// and type arguments.
fn implemented_trait(unit: &UnitData) -> Option<&str> {
    if unit.kind != UnitKind::Class || keyword(&unit.signature) != Some("impl") {
        return None;
    }
    let (head, _) = unit.signature.split_once(" for ")?;
    Some(trait_name(head.split_whitespace().last()?))
}

/// Two impls of different traits (`Display` and `Debug` of one type) or their
/// methods (the two `fmt`s), or a near match between impls of one trait or
/// the methods implementing it (an impl block holding another impl's method):
/// the trait dictates their signatures. The same body under another impl of
/// the same trait is a renamed copy and stays one.
fn same_protocol(new: &UnitData, existing: &UnitData, kind: CopyKind) -> bool {
    if let (Some(a), Some(b)) = (implemented_trait(new), implemented_trait(existing)) {
        return a != b || kind == CopyKind::Near;
    }
    let (a, b) = (new.facts.protocol, existing.facts.protocol);
    if a != 0 && b != 0 && a != b {
        return true;
    }
    let implements = |u: &UnitData| u.facts.implements || implemented_trait(u).is_some();
    kind == CopyKind::Near && implements(new) && implements(existing)
}

/// Whether the two units' bodies mostly use the same words (identifiers and
/// string words, counted with repeats by each unit's word index): the larger
/// of the share of the new unit's words found in the existing one and the
/// share of the existing one's found in the new one, so that statements
/// inserted into a copy (or deleted from it) do not hide it. Windows have no
/// word index: they always share.
fn shares_words(new: &UnitData, text: &str, existing: &UnitData) -> bool {
    const BODY: usize = Field::Body as usize;
    if new.kind == UnitKind::Window || existing.kind == UnitKind::Window {
        return true;
    }
    // The new unit's distinct words: those of its text its word index holds.
    let lines: Vec<&str> = text
        .lines()
        .skip(new.start_line.saturating_sub(1) as usize)
        .take((new.end_line + 1).saturating_sub(new.start_line) as usize)
        .collect();
    let mut words = Vec::new();
    word_hashes(&lines.join("\n"), &mut words);
    words.sort_unstable();
    words.dedup();
    let (mut own, mut shared) = (0usize, 0usize);
    for w in words {
        let (mine, theirs) = (
            new.facts.terms.counts(w)[BODY],
            existing.facts.terms.counts(w)[BODY],
        );
        own += usize::from(mine);
        shared += usize::from(mine.min(theirs));
    }
    let theirs = usize::from(existing.facts.terms.length(Field::Body));
    if own == 0 || theirs == 0 {
        return true;
    }
    shared as f64 >= MIN_SHARED_WORDS * own.min(theirs) as f64
}
