//! Fingerprints of a unit (docs/contract.md, "Fingerprints"), computed from its leaf
//! tokens with comments dropped: an exact hash of the token texts, a renamed hash over
//! normalized tokens (identifiers and literals replaced by placeholders), and the shingle
//! set with its MinHash band keys for near copies. Pure functions over token hashes.

use std::borrow::Cow;
use std::hash::Hasher;

use rustc_hash::FxHasher;

use crate::config::RuleConfig;

/// One leaf token: the hash of its text and the hash of its normalized form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub text: u64,
    pub norm: u64,
    pub identifier: bool,
}

impl Token {
    /// A string literal: its text is what the code says, not its shape.
    pub fn is_string(&self) -> bool {
        self.norm == STRING_PLACEHOLDER
    }
}

/// What a leaf becomes in normalized form; keywords, operators and punctuation keep
/// their text so the structure stays in the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenClass {
    Identifier,
    String,
    Number,
    Other,
}

// Distinct placeholder hashes; any text hash colliding with them is as likely as
// any other 64-bit collision.
const IDENTIFIER_PLACEHOLDER: u64 = 0x9e37_79b9_7f4a_7c15;
const STRING_PLACEHOLDER: u64 = 0xbf58_476d_1ce4_e5b9;
const NUMBER_PLACEHOLDER: u64 = 0x94d0_49bb_1331_11eb;

/// The splitmix64 finalizer: spreads every input bit over the output.
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub fn hash_text(text: &str) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(text.as_bytes());
    mix(hasher.finish())
}

pub fn token(text: &str, class: TokenClass) -> Token {
    let text = hash_text(text);
    let norm = match class {
        TokenClass::Identifier => IDENTIFIER_PLACEHOLDER,
        TokenClass::String => STRING_PLACEHOLDER,
        TokenClass::Number => NUMBER_PLACEHOLDER,
        TokenClass::Other => text,
    };
    Token {
        text,
        norm,
        identifier: class == TokenClass::Identifier,
    }
}

/// The text a literal token is fingerprinted by: a string's content without its
/// prefix, quotes and quote escapes (formatters re-quote strings), a number in
/// lower case (`0XFF`, `1E5`). Other tokens are their text.
pub fn literal_text(text: &str, class: TokenClass) -> Cow<'_, str> {
    match class {
        TokenClass::String => {
            let is_quote = |c: char| matches!(c, '"' | '\'' | '`');
            // A prefix (`r#`, `b`, `f`, `u`, `@`, `$`) only when a quote follows it.
            let unprefixed = text
                .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '@' || c == '$')
                .trim_start_matches('#');
            let body = if unprefixed.starts_with(is_quote) {
                unprefixed
                    .trim_end_matches('#')
                    .trim_start_matches(is_quote)
                    .trim_end_matches(is_quote)
            } else {
                text
            };
            if body.contains('\\') {
                Cow::Owned(body.replace("\\'", "'").replace("\\\"", "\""))
            } else {
                Cow::Borrowed(body)
            }
        }
        TokenClass::Number if text.bytes().any(|b| b.is_ascii_uppercase()) => {
            Cow::Owned(text.to_ascii_lowercase())
        }
        _ => Cow::Borrowed(text),
    }
}

/// Order-sensitive 64-bit hash of a sequence of token hashes.
pub fn sequence_hash(hashes: impl Iterator<Item = u64>) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let mut len: u64 = 0;
    for x in hashes {
        h = (h ^ x).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        len += 1;
    }
    mix(h ^ len)
}

pub fn exact_hash(tokens: &[Token]) -> u64 {
    sequence_hash(tokens.iter().map(|t| t.text))
}

pub fn renamed_hash(tokens: &[Token]) -> u64 {
    sequence_hash(tokens.iter().map(|t| t.norm))
}

/// The set of k-shingles of normalized tokens, sorted and deduplicated. Units
/// shorter than k tokens have none (single tokens match everywhere). A shingle
/// is 32 bits (its hash folded): MinHash lanes are 32 bits anyway, and a false
/// match between two units of 600 shingles has odds under 1 in 10,000, while
/// half the bytes halve what a copy lookup reads.
pub fn shingles(tokens: &[Token], k: usize) -> Vec<u32> {
    shingle_set(&window_hashes(tokens, k))
}

/// The shingle of every k-token window of `tokens`, by start position: a unit's
/// shingles are the set of the windows inside it, so a file's windows are hashed
/// once for all its nested and overlapping units.
pub fn window_hashes(tokens: &[Token], k: usize) -> Vec<u32> {
    if k == 0 || tokens.len() < k {
        return Vec::new();
    }
    tokens
        .windows(k)
        .map(|w| {
            let h = sequence_hash(w.iter().map(|t| t.norm));
            (h ^ (h >> 32)) as u32
        })
        .collect()
}

/// Window shingles as a sorted, deduplicated set.
pub fn shingle_set(windows: &[u32]) -> Vec<u32> {
    let mut set = windows.to_vec();
    set.sort_unstable();
    set.dedup();
    set
}

/// The number of elements two sorted, deduplicated sets share when it reaches
/// `needed`; stops as soon as the rest of the sets can no longer reach it.
pub fn common_at_least(a: &[u32], b: &[u32], needed: usize) -> Option<usize> {
    let (mut i, mut j, mut common) = common_in_blocks(a, b, needed)?;
    while i < a.len() && j < b.len() {
        if common + (a.len() - i).min(b.len() - j) < needed {
            return None;
        }
        // Branch-free steps: which side advances is unpredictable.
        let (x, y) = (a[i], b[j]);
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    (common >= needed).then_some(common)
}

/// Half the buckets a [`Sketch`] counts shingles in (two 4-bit counts a byte):
/// 64 bytes a unit the index holds (docs/performance.md, "What the index keeps
/// per unit"); 128 ruled out a few more candidates for 64 bytes more a unit
/// (docs/experiments/scale.md).
const SKETCH_BYTES: usize = 64;

/// A shingle set's counts per bucket of the shingles' low 7 bits, 4 bits a
/// count (15: 15 or more): 64 bytes a copy lookup reads before a candidate's
/// shingles. Two sets share at most the smaller count in every bucket, so
/// [`Counts::common_at_most`] bounds their overlap from above, exactly.
/// Aligned so that a lookup reads one cache line per candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Sketch([u8; SKETCH_BYTES]);

/// A sketch's saturated count.
const SKETCH_FULL: u8 = 15;

impl Sketch {
    pub fn of(shingles: &[u32]) -> Self {
        Self::pack(&bucket_counts(shingles))
    }

    fn pack(counts: &[u8; 2 * SKETCH_BYTES]) -> Self {
        let mut packed = [0u8; SKETCH_BYTES];
        for (byte, pair) in packed.iter_mut().zip(counts.chunks_exact(2)) {
            *byte = pair[0].min(SKETCH_FULL) | pair[1].min(SKETCH_FULL) << 4;
        }
        Self(packed)
    }
}

/// The counts of a looked-up unit's shingles per sketch bucket.
#[derive(Debug, Clone)]
pub enum Counts {
    /// Every count at most 15 (units of up to some thousand shingles): packed
    /// as a [`Sketch`] is, so the bound is a nibble-wise minimum of two
    /// 64-byte arrays (a 15 of the candidate bounds nothing, and the minimum
    /// with it is this side's count, exactly as it should be).
    Nibbles([u8; SKETCH_BYTES]),
    /// Counts up to 254, even and odd buckets apart so the bound is computed
    /// on whole bytes.
    Bytes {
        even: [u8; SKETCH_BYTES],
        odd: [u8; SKETCH_BYTES],
    },
}

impl Counts {
    /// `None` when a bucket holds 255 shingles or more (a unit of tens of
    /// thousands of shingles): its count would not fit, and no bound is given.
    pub fn of(shingles: &[u32]) -> Option<Self> {
        let counts = bucket_counts(shingles);
        if counts.iter().all(|&c| c <= SKETCH_FULL) {
            return Some(Self::Nibbles(Sketch::pack(&counts).0));
        }
        Self::bytes(&counts)
    }

    fn bytes(counts: &[u8; 2 * SKETCH_BYTES]) -> Option<Self> {
        if counts.contains(&u8::MAX) {
            return None;
        }
        let (mut even, mut odd) = ([0u8; SKETCH_BYTES], [0u8; SKETCH_BYTES]);
        for ((e, o), pair) in even.iter_mut().zip(&mut odd).zip(counts.chunks_exact(2)) {
            (*e, *o) = (pair[0], pair[1]);
        }
        Some(Self::Bytes { even, odd })
    }

    /// At least as many as the shingles these counts' set shares with the set
    /// `sketch` describes (a saturated count bounds nothing: the other side's).
    pub fn common_at_most(&self, sketch: &Sketch) -> usize {
        match self {
            Self::Nibbles(own) => nibble_minima(own, &sketch.0),
            Self::Bytes { even, odd } => {
                let open = |c: u8| if c == SKETCH_FULL { u8::MAX } else { c };
                // Summed in 16-bit lanes (at most 2 x 64 x 254).
                let total: u16 = sketch
                    .0
                    .iter()
                    .zip(even.iter().zip(odd))
                    .map(|(&packed, (&even, &odd))| {
                        u16::from(even.min(open(packed & 0x0f)))
                            + u16::from(odd.min(open(packed >> 4)))
                    })
                    .sum();
                usize::from(total)
            }
        }
    }
}

/// The start of [`common_at_least`], four elements of each set a step in
/// vector registers (SSE2, part of every x86-64): all 16 pairs of the two
/// blocks compared at once, then the block with the smaller last element moves
/// on (both when the last elements are equal). A shared element is counted
/// once: two blocks meet at most once, and the blocks holding it always meet.
/// Returns where the element-wise merge goes on and what it has counted, or
/// `None` once `needed` is out of reach.
#[cfg(target_arch = "x86_64")]
fn common_in_blocks(a: &[u32], b: &[u32], needed: usize) -> Option<(usize, usize, usize)> {
    use std::arch::x86_64::{
        __m128i, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_or_si128,
        _mm_shuffle_epi32,
    };
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while let (Some(x), Some(y)) = (a[i..].first_chunk::<4>(), b[j..].first_chunk::<4>()) {
        if common + (a.len() - i).min(b.len() - j) < needed {
            return None;
        }
        // SAFETY: SSE2 is part of every x86-64 processor, and each load reads
        // a 4-element array (unaligned loads need no alignment).
        let matched = unsafe {
            let load = |block: &[u32; 4]| _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
            let (x, y) = (load(x), load(y));
            // `y` turned by one, two and three lanes against `x`.
            let equal = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi32(x, y),
                    _mm_cmpeq_epi32(x, _mm_shuffle_epi32::<0b00_11_10_01>(y)),
                ),
                _mm_or_si128(
                    _mm_cmpeq_epi32(x, _mm_shuffle_epi32::<0b01_00_11_10>(y)),
                    _mm_cmpeq_epi32(x, _mm_shuffle_epi32::<0b10_01_00_11>(y)),
                ),
            );
            _mm_movemask_ps(_mm_castsi128_ps(equal)).count_ones()
        };
        common += matched as usize;
        let (x, y) = (x[3], y[3]);
        i += 4 * usize::from(x <= y);
        j += 4 * usize::from(y <= x);
    }
    Some((i, j, common))
}

#[cfg(not(target_arch = "x86_64"))]
fn common_in_blocks(_: &[u32], _: &[u32], _: usize) -> Option<(usize, usize, usize)> {
    Some((0, 0, 0))
}

/// The sum over both nibbles of every byte of the smaller of `a`'s and `b`'s:
/// 16 bytes a step in vector registers (SSE2, part of every x86-64), the byte
/// sums added by `psadbw`.
#[cfg(target_arch = "x86_64")]
fn nibble_minima(a: &[u8; SKETCH_BYTES], b: &[u8; SKETCH_BYTES]) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_add_epi64, _mm_and_si128, _mm_cvtsi128_si64, _mm_loadu_si128,
        _mm_min_epu8, _mm_sad_epu8, _mm_set1_epi8, _mm_setzero_si128, _mm_srli_epi16,
        _mm_unpackhi_epi64,
    };
    let (a, _) = a.as_chunks::<16>();
    let (b, _) = b.as_chunks::<16>();
    // SAFETY: SSE2 is part of every x86-64 processor, and each load reads a
    // 16-byte array (unaligned loads need no alignment).
    let halves = unsafe {
        let load = |bytes: &[u8; 16]| _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>());
        let (low, high) = (_mm_set1_epi8(0x0f), _mm_set1_epi8(0xf0u8 as i8));
        let mut total = _mm_setzero_si128();
        for (a, b) in a.iter().zip(b) {
            let (x, y) = (load(a), load(b));
            let lows = _mm_min_epu8(_mm_and_si128(x, low), _mm_and_si128(y, low));
            let highs = _mm_min_epu8(_mm_and_si128(x, high), _mm_and_si128(y, high));
            // At most 15 + 15 a byte: no carry into the next.
            let sums = _mm_add_epi8(lows, _mm_and_si128(_mm_srli_epi16::<4>(highs), low));
            total = _mm_add_epi64(total, _mm_sad_epu8(sums, _mm_setzero_si128()));
        }
        _mm_cvtsi128_si64(total) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total))
    };
    usize::try_from(halves).unwrap_or(usize::MAX)
}

#[cfg(not(target_arch = "x86_64"))]
fn nibble_minima(a: &[u8; SKETCH_BYTES], b: &[u8; SKETCH_BYTES]) -> usize {
    a.iter()
        .zip(b)
        .map(|(&a, &b)| usize::from((a & 0x0f).min(b & 0x0f) + (a >> 4).min(b >> 4)))
        .sum()
}

/// Shingles per bucket of their low bits, saturating at 255.
fn bucket_counts(shingles: &[u32]) -> [u8; 2 * SKETCH_BYTES] {
    let mut counts = [0u8; 2 * SKETCH_BYTES];
    for &s in shingles {
        let slot = &mut counts[s as usize % (2 * SKETCH_BYTES)];
        *slot = slot.saturating_add(1);
    }
    counts
}

/// The smallest count of at least `x`: `x.ceil() as usize`, without the call
/// to the C library that `ceil` is on x86-64's baseline (a copy lookup makes
/// one per candidate).
fn count_at_least(x: f64) -> usize {
    let whole = x as usize;
    whole.saturating_add(usize::from((whole as f64) < x))
}

/// The exact Jaccard of two sorted, deduplicated sets when it reaches
/// `threshold`; stops as soon as the overlap can no longer reach it.
pub fn jaccard_at_least(a: &[u32], b: &[u32], threshold: f64) -> Option<f64> {
    let total = a.len() + b.len();
    // J = c / (total - c) >= t  <=>  c >= t * total / (1 + t).
    let needed = count_at_least(threshold * total as f64 / (1.0 + threshold));
    let common = common_at_least(a, b, needed)?;
    let similarity = common as f64 / (total - common) as f64;
    (total > 0 && similarity >= threshold).then_some(similarity)
}

/// When a new unit of `new` shingles sharing `common` with an existing unit of
/// `existing` is a near copy of it, and how similar: its Jaccard when that
/// reaches `threshold`; else the share of the existing unit's shingles found in
/// the new one when that reaches `containment` (an inserted statement lowers the
/// Jaccard, not this), between whole units (functions, classes: a window is a
/// fragment, and fragments are matched by windows), for an existing unit of at
/// least `min_contained` shingles that the new one outgrows by at most half (a
/// small or generic unit is inside much: a test's set-up lines stand in every
/// test twice its size). `whole` says both units are whole ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearRule {
    pub threshold: f64,
    pub containment: f64,
    pub min_contained: usize,
}

impl NearRule {
    pub fn new(cfg: &RuleConfig) -> Self {
        Self {
            threshold: cfg.threshold,
            containment: cfg.containment,
            min_contained: cfg.min_shingles,
        }
    }

    /// Whether containment may judge the pair at all: whole units, an existing
    /// unit of `min_contained` shingles or more, the new one at most half again
    /// its size.
    pub fn contains(&self, new: usize, existing: usize, whole: bool) -> bool {
        whole && existing >= self.min_contained.max(1) && 2 * new <= 3 * existing
    }

    /// The fewest shared shingles that can make a near copy; `None` when the
    /// sizes alone rule it out (Jaccard cannot exceed the ratio of the sizes).
    pub fn needed(&self, new: usize, existing: usize, whole: bool) -> Option<usize> {
        let total = new + existing;
        let by_jaccard = ((new.min(existing) as f64) >= self.threshold * new.max(existing) as f64)
            .then(|| count_at_least(self.threshold * total as f64 / (1.0 + self.threshold)));
        let by_containment = self
            .contains(new, existing, whole)
            .then(|| count_at_least(self.containment * existing as f64));
        let needed = match (by_jaccard, by_containment) {
            (Some(j), Some(c)) => j.min(c),
            (j, c) => j.or(c)?,
        };
        (needed > 0).then_some(needed)
    }

    /// The similarity of a near copy, or `None` when the pair is not one.
    pub fn similarity(
        &self,
        new: usize,
        existing: usize,
        common: usize,
        whole: bool,
    ) -> Option<f64> {
        let union = new + existing - common;
        if union == 0 {
            return None;
        }
        let jaccard = common as f64 / union as f64;
        let contained = common as f64 / existing as f64;
        if jaccard >= self.threshold {
            Some(jaccard)
        } else if self.contains(new, existing, whole) && contained >= self.containment {
            Some(contained)
        } else {
            None
        }
    }
}

/// MinHash with a fixed family of permutations `(s ^ a_i) * b_i` (b_i odd), drawn
/// once from a fixed seed so fingerprints are stable across runs and machines.
#[derive(Debug, Clone)]
pub struct MinHasher {
    xors: Vec<u32>,
    muls: Vec<u32>,
    bands: usize,
    rows: usize,
}

impl MinHasher {
    pub fn new(cfg: &RuleConfig) -> Self {
        let mut state: u64 = 0x5eed_5e45_0000_0001;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(state)
        };
        // 32-bit lanes: twice as many per vector register as 64-bit ones.
        let xors = (0..cfg.permutations)
            .map(|_| (next() >> 32) as u32)
            .collect();
        let muls = (0..cfg.permutations)
            .map(|_| (next() >> 32) as u32 | 1)
            .collect();
        Self {
            xors,
            muls,
            bands: cfg.bands,
            rows: cfg.rows(),
        }
    }

    /// The MinHash of the first `permutations` permutations (at most all).
    pub fn signature(&self, shingles: &[u32], permutations: usize) -> Vec<u32> {
        let n = permutations.min(self.xors.len());
        let mut sig = vec![u32::MAX; n];
        for &s in shingles {
            for ((slot, &a), &b) in sig.iter_mut().zip(&self.xors[..n]).zip(&self.muls[..n]) {
                *slot = (*slot).min((s ^ a).wrapping_mul(b));
            }
        }
        sig
    }

    /// One key per LSH band: the hash of the band's rows and its index, so equal
    /// rows in different bands do not collide. Empty when there are no shingles.
    pub fn band_keys(&self, shingles: &[u32]) -> Vec<u64> {
        self.first_band_keys(shingles, self.bands)
    }

    /// The keys of the first `bands` bands (at most all), computing only their
    /// permutations.
    pub fn first_band_keys(&self, shingles: &[u32], bands: usize) -> Vec<u64> {
        if shingles.is_empty() {
            return Vec::new();
        }
        let bands = bands.min(self.bands);
        let sig = self.signature(shingles, bands * self.rows);
        (0..bands)
            .map(|band| {
                let rows = &sig[band * self.rows..(band + 1) * self.rows];
                sequence_hash(
                    std::iter::once(band as u64).chain(rows.iter().map(|&r| u64::from(r))),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Jaccard by set operations, the reference for `jaccard_at_least`.
    fn jaccard(a: &[u32], b: &[u32]) -> f64 {
        let (a, b): (BTreeSet<u32>, BTreeSet<u32>) =
            (a.iter().copied().collect(), b.iter().copied().collect());
        let union = a.union(&b).count();
        if union == 0 {
            return 0.0;
        }
        a.intersection(&b).count() as f64 / union as f64
    }

    fn toks(words: &str) -> Vec<Token> {
        words
            .split_whitespace()
            .map(|w| {
                let class = if w.starts_with('"') {
                    TokenClass::String
                } else if w.chars().all(|c| c.is_ascii_digit()) {
                    TokenClass::Number
                } else if w.chars().all(|c| c.is_alphabetic()) && w != "fn" && w != "let" {
                    TokenClass::Identifier
                } else {
                    TokenClass::Other
                };
                token(w, class)
            })
            .collect()
    }

    #[test]
    fn renaming_changes_exact_but_not_renamed_hash() {
        let a = toks("fn add ( a , b ) { let c = a + b + 1 ; \"x\" }");
        let b = toks("fn sum ( x , y ) { let z = x + y + 7 ; \"y\" }");
        let c = toks("fn sum ( x , y ) { let z = x - y + 7 ; \"y\" }");
        assert_ne!(exact_hash(&a), exact_hash(&b));
        assert_eq!(renamed_hash(&a), renamed_hash(&b));
        assert_ne!(renamed_hash(&b), renamed_hash(&c), "operators are kept");
        assert_eq!(
            exact_hash(&a),
            exact_hash(&toks("fn add ( a , b ) { let c = a + b + 1 ; \"x\" }"))
        );
    }

    #[test]
    fn literals_are_fingerprinted_without_their_quotes() {
        let s = |t| literal_text(t, TokenClass::String).into_owned();
        assert_eq!(s(r"'it\'s'"), "it's");
        assert_eq!(s(r#""it's""#), "it's");
        assert_eq!(s(r###"r#"raw"#"###), "raw");
        assert_eq!(s("b'bytes'"), "bytes");
        assert_eq!(s("'''doc'''"), s(r#""""doc""""#));
        assert_eq!(s("`tpl ${x}`"), "tpl ${x}");
        assert_eq!(literal_text("0XFF", TokenClass::Number), "0xff");
        assert_eq!(literal_text("Name", TokenClass::Identifier), "Name");
    }

    #[test]
    fn jaccard_counts_the_overlap() {
        assert_eq!(jaccard(&[1, 2, 3, 4], &[3, 4, 5, 6]), 2.0 / 6.0);
        assert_eq!(jaccard(&[1, 2], &[1, 2]), 1.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn jaccard_at_least_agrees_with_jaccard() {
        let a: Vec<u32> = (0..100).collect();
        for cut in [70u32, 79, 80, 81, 95, 100] {
            let b: Vec<u32> = (0..cut).collect();
            let full = jaccard(&a, &b);
            let bounded = jaccard_at_least(&a, &b, 0.8);
            assert_eq!(bounded, (full >= 0.8).then_some(full), "cut {cut}");
        }
        assert_eq!(jaccard_at_least(&[], &[], 0.8), None);
    }

    #[test]
    fn an_existing_unit_inside_a_larger_new_one_is_near_by_containment() {
        let rule = NearRule::new(&RuleConfig::default());
        let existing: Vec<u32> = (0..68).collect();
        // 32 shingles inserted: Jaccard 0.68, the existing unit wholly inside.
        let new: Vec<u32> = (0..100).collect();
        let common = common_at_least(&new, &existing, 0).unwrap();
        assert!(jaccard_at_least(&new, &existing, rule.threshold).is_none());
        assert_eq!(rule.similarity(100, 68, common, true), Some(1.0));
        // A window (a fragment) is not judged by containment.
        assert_eq!(rule.similarity(100, 68, common, false), None);
        // The other way round (the new unit inside the existing one) is Jaccard's.
        assert_eq!(rule.similarity(68, 100, common, true), None);
        // Too small to be judged contained, or the new unit more than half again
        // as big.
        let small = rule.min_contained - 1;
        assert_eq!(rule.similarity(100, small, small, true), None);
        assert_eq!(rule.similarity(90, 60, 60, true), Some(1.0));
        assert_eq!(rule.similarity(91, 60, 60, true), None);
        // Under the containment share and the Jaccard threshold: not near.
        assert_eq!(rule.similarity(90, 60, 53, true), None);
        assert_eq!(rule.similarity(90, 60, 54, true), Some(0.9));
    }

    /// The size filter never drops a pair the rule would call near.
    #[test]
    fn needed_is_a_lower_bound_of_every_near_pair() {
        let rule = NearRule::new(&RuleConfig::default());
        for whole in [true, false] {
            for new in 0..130 {
                for existing in 0..130 {
                    for common in 0..=new.min(existing) {
                        if rule.similarity(new, existing, common, whole).is_some() {
                            let needed = rule.needed(new, existing, whole);
                            assert!(
                                needed.is_some_and(|n| n <= common),
                                "{new} {existing} {common} {whole}: needed {needed:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn common_at_least_counts_or_gives_up() {
        let a: Vec<u32> = (0..50).collect();
        let b: Vec<u32> = (25..75).collect();
        assert_eq!(common_at_least(&a, &b, 25), Some(25));
        assert_eq!(common_at_least(&a, &b, 26), None);
        assert_eq!(common_at_least(&a, &[], 0), Some(0));
    }

    #[test]
    fn count_at_least_is_the_ceiling() {
        let mut state = 3u64;
        for i in 0..100_000u32 {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let x = match i % 3 {
                0 => f64::from(i) / 7.0,
                1 => f64::from(i % 500),
                _ => (mix(state) % 1_000_000) as f64 * 0.8 / 1.8,
            };
            assert_eq!(count_at_least(x), x.ceil() as usize, "{x}");
        }
        assert_eq!(count_at_least(-0.5), 0);
        assert_eq!(count_at_least(f64::NAN), 0);
    }

    /// The block merge counts what a plain set intersection counts, and gives
    /// up exactly when that is below `needed`: random sets of every size up to
    /// 40 (all remainders of four), sharing runs and scattered elements.
    #[test]
    fn common_at_least_equals_a_set_intersection() {
        let mut state = 7u64;
        let mut rnd = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(state) as u32
        };
        for round in 0..3000 {
            let range = 8 + rnd() % 120;
            let mut draw = |n: u32| -> Vec<u32> {
                let mut v: Vec<u32> = (0..n).map(|_| rnd() % range).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (n, m) = (round % 41, (round / 41) % 41);
            let (a, b) = (draw(n), draw(m));
            let truth = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
            for needed in 0..=a.len().min(b.len()) + 1 {
                let expected = (truth >= needed).then_some(truth);
                assert_eq!(
                    common_at_least(&a, &b, needed),
                    expected,
                    "{a:?} {b:?} {needed}"
                );
                assert_eq!(
                    common_at_least(&b, &a, needed),
                    expected,
                    "{b:?} {a:?} {needed}"
                );
            }
        }
    }

    /// The sketch's bound is never below the true overlap: random sets of
    /// every size, with shingles crowded into few buckets so counts saturate.
    #[test]
    fn the_sketch_bounds_the_overlap_from_above() {
        let mut state = 99u64;
        let mut rnd = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(state) as u32
        };
        let (mut tight, mut nibbles) = (0, 0);
        for round in 0..400 {
            // Low bits drawn from 2^spread buckets: from all 128 down to one.
            let spread = round % 8;
            let draw = |rnd: &mut dyn FnMut() -> u32, n: u32| -> Vec<u32> {
                (0..n % 700)
                    .map(|_| (rnd() & !0xff) | (rnd() & ((1 << spread) - 1)))
                    .collect()
            };
            let c = rnd();
            let shared = draw(&mut rnd, c % 400);
            let set = |own: Vec<u32>| {
                let mut v: Vec<u32> = shared.iter().copied().chain(own).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (n, m) = (rnd(), rnd());
            let (a, b) = (set(draw(&mut rnd, n)), set(draw(&mut rnd, m)));
            let common = common_at_least(&a, &b, 0).unwrap_or(0);
            match Counts::of(&a) {
                Some(counts) => {
                    let bound = counts.common_at_most(&Sketch::of(&b));
                    assert!(bound >= common, "round {round}: {bound} < {common}");
                    tight += usize::from(bound < a.len().min(b.len()));
                    // Packed as nibbles or not, the bound is the same.
                    let bytes = Counts::bytes(&bucket_counts(&a)).unwrap();
                    assert_eq!(
                        bytes.common_at_most(&Sketch::of(&b)),
                        bound,
                        "round {round}"
                    );
                    nibbles += usize::from(matches!(counts, Counts::Nibbles(_)));
                }
                None => assert!(a.len() >= 255, "no bound for {} shingles", a.len()),
            }
        }
        assert!(tight > 100, "the bound is never below the smaller size");
        assert!(
            (50..350).contains(&nibbles),
            "{nibbles} of 400 sets packed as nibbles"
        );
    }

    #[test]
    fn shingles_need_k_tokens() {
        let t = toks("a + b");
        assert_eq!(shingles(&t, 3).len(), 1);
        assert!(shingles(&t[..2], 3).is_empty());
    }

    /// Candidate recall of pairs of known Jaccard in 0.70..0.90 (the threshold
    /// and above), generated the way near copies arise (a run of tokens inserted
    /// into a token sequence), against 1 - (1 - s^r)^b per bin of 0.05.
    #[test]
    fn lsh_candidate_recall_matches_the_theory_near_the_threshold() {
        let cfg = RuleConfig::default();
        let mh = MinHasher::new(&cfg);
        let (bands, rows) = (cfg.bands as i32, cfg.rows() as i32);
        let mut state = 12345u64;
        let mut rnd = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix(state)
        };
        let word = |w: u64| Token {
            text: w,
            norm: mix(w),
            identifier: false,
        };
        // Per bin: pairs, pairs sharing a band, expected pairs sharing a band.
        let mut bins = [(0usize, 0usize, 0f64); 4];
        while bins.iter().map(|b| b.0).min() < Some(400) {
            let len = 60 + (rnd() % 200) as usize;
            let vocab = 20 + rnd() % 60;
            let seq: Vec<Token> = (0..len).map(|_| word(rnd() % vocab)).collect();
            let mut other = seq.clone();
            let at = (rnd() as usize) % len;
            for j in 0..1 + (rnd() % 40) as usize {
                other.insert(at + j, word(vocab + rnd() % vocab));
            }
            let (a, b) = (shingles(&seq, cfg.k), shingles(&other, cfg.k));
            let s = jaccard(&a, &b);
            if !(0.70..0.90).contains(&s) {
                continue;
            }
            let bin = &mut bins[(((s - 0.70) / 0.05) as usize).min(3)];
            let (ka, kb) = (mh.band_keys(&a), mh.band_keys(&b));
            bin.0 += 1;
            bin.1 += usize::from(ka.iter().zip(&kb).any(|(x, y)| x == y));
            bin.2 += 1.0 - (1.0 - s.powi(rows)).powi(bands);
        }
        for (pairs, hits, expected) in bins {
            let (recall, theory) = (hits as f64 / pairs as f64, expected / pairs as f64);
            assert!(
                (recall - theory).abs() < 0.02,
                "recall {recall:.4} against theory {theory:.4} over {pairs} pairs"
            );
        }
    }

    #[test]
    fn similar_sets_share_a_band_and_different_sets_do_not() {
        let cfg = RuleConfig::default();
        let mh = MinHasher::new(&cfg);
        let base: Vec<u32> = (0..200u64).map(|x| mix(x) as u32).collect();
        let mut near = base.clone();
        near.truncate(190); // Jaccard 0.95
        near.sort_unstable();
        let mut base_sorted = base.clone();
        base_sorted.sort_unstable();
        let other: Vec<u32> = {
            let mut v: Vec<u32> = (1000..1200u64).map(|x| mix(x) as u32).collect();
            v.sort_unstable();
            v
        };
        let ka = mh.band_keys(&base_sorted);
        let kb = mh.band_keys(&near);
        let kc = mh.band_keys(&other);
        assert_eq!(ka.len(), cfg.bands);
        assert!(ka.iter().zip(&kb).any(|(x, y)| x == y));
        assert!(ka.iter().zip(&kc).all(|(x, y)| x != y));
    }
}
