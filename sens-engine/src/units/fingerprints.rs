//! The walk's units fingerprinted: exact and renamed hashes, shingles, LSH bands
//! and the leave-one-out keys, with their terms and strings (docs/contract.md,
//! "Fingerprints").

use std::ops::Range;

use super::facts::names_by_role;
use super::names::truncate;
use super::walk::{Found, Walked};
use super::{ParsedFile, UnitData, UnitKind};
use crate::config::RuleConfig;
use crate::fingerprint::{self, MinHasher, NearRule, Token};
use crate::lang::Lang;
use crate::terms::{BodyWords, Terms};

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

/// Doc text kept per unit (for suggestions), in bytes.
const DOC_MAX: usize = 400;

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

pub(super) fn finish(
    lang: &Lang,
    walked: Walked,
    parse_errors: bool,
    fp: &Fingerprinter,
) -> ParsedFile {
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
        r.facts.names = names_by_role(toks);
        r.facts.declared = declared(unit_windows, r.body_tok - r.tok_start);
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

/// [`UnitFacts::declared`](super::UnitFacts::declared): how many of the
/// unit's distinct shingles only windows starting before its body (`body`
/// tokens in, of the unit's `windows`) hold.
fn declared(windows: &[u32], body: usize) -> u16 {
    let split = body.min(windows.len());
    if split == 0 {
        return 0;
    }
    // The declaration's few distinct windows, each looked up once per body
    // window: no sorted copy of a long body.
    let declaration = fingerprint::shingle_set(&windows[..split]);
    let mut in_body = vec![false; declaration.len()];
    for w in &windows[split..] {
        if let Ok(i) = declaration.binary_search(w) {
            in_body[i] = true;
        }
    }
    let only_declared = in_body.iter().filter(|&&found| !found).count();
    u16::try_from(only_declared).unwrap_or(u16::MAX)
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

#[cfg(test)]
mod tests {
    use anyhow::Context;

    use super::{Fingerprinter, shingles_without, windows_within};
    use crate::config::RuleConfig;
    use crate::fingerprint;
    use crate::units::parse::{DEFAULT_PARSE_BUDGET, parse_tree};
    use crate::units::walk::walk;
    use crate::units::{UnitKind, parse_file, test_corpus};

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

    /// A function's body shingles (those its declaration alone does not
    /// hold) are the same under a short and a long parameter list, in each
    /// language's grammar, and the longer list declares more.
    #[test]
    fn a_body_is_counted_apart_from_its_declaration() -> anyhow::Result<()> {
        let body_py = "    total = 0\n    for item in items:\n        total += weigh(item, scale)\n    return total\n";
        let body_rs =
            "{ let mut total = 0; for item in items { total += weigh(item, scale); } total }";
        let body_ts = "{ let total = 0; for (const item of items) { total += weigh(item, scale); } return total; }";
        let cases = [
            (
                "a.py",
                format!("def f(items):\n{body_py}"),
                format!(
                    "def f(items, *, scale: float = 1.0, limit: int | None = None, strict: bool = False):\n{body_py}"
                ),
            ),
            (
                "a.rs",
                format!("fn f(items: &[u32]) -> u32 {body_rs}"),
                format!(
                    "pub fn f<T>(items: &[T], scale: u32, limit: Option<usize>) -> u32 where T: Copy + Into<u32> {body_rs}"
                ),
            ),
            (
                "a.ts",
                format!("function f(items) {body_ts}"),
                format!(
                    "export function f(items: Item[], scale: number = 1, limit?: number): number {body_ts}"
                ),
            ),
        ];
        let fp = Fingerprinter::new(&RuleConfig::default());
        for (path, short, long) in cases {
            let lang = crate::lang::for_path(path).context("no language")?;
            let counts = |source: &str| -> anyhow::Result<(usize, usize)> {
                let parsed = parse_file(lang, source, &fp)?;
                let unit = parsed
                    .units
                    .iter()
                    .find(|u| u.kind == UnitKind::Function)
                    .context("no function")?;
                let declared = usize::from(unit.facts.declared);
                Ok((unit.shingles.len() - declared, declared))
            };
            let ((body_short, declared_short), (body_long, declared_long)) =
                (counts(&short)?, counts(&long)?);
            assert_eq!(body_short, body_long, "{path}");
            assert!(
                declared_long > declared_short,
                "{path}: {declared_long} <= {declared_short}"
            );
        }
        Ok(())
    }
}
