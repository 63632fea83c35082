//! A symbol's words by field, computed once when its file is parsed, so that a suggestion
//! only looks words up (docs/contract.md, "Suggestions": a suggestion at every prompt).

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::words::word_hashes;

/// The fields of a symbol that its words come from. The module path is not
/// stored: it is the file's, and ranked from the path at query time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    Signature,
    Doc,
    /// Identifiers and string words of the body.
    Body,
}

pub const FIELDS: [Field; 4] = [Field::Name, Field::Signature, Field::Doc, Field::Body];

impl Field {
    pub fn label(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Signature => "signature",
            Field::Doc => "doc",
            Field::Body => "body",
        }
    }
}

/// Each distinct word of a symbol (by hash, sorted) with its count per field,
/// and each field's length in words.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Terms {
    words: Box<[(u64, [u16; 4])]>,
    lengths: [u16; 4],
}

impl Terms {
    /// Bytes its words hold (the index's `footprint`).
    pub fn heap_bytes(&self) -> usize {
        size_of_val(&*self.words)
    }

    /// The bag of a symbol's name, signature, doc comment and body words (the
    /// word hashes of its identifier and string tokens, see [`BodyWords`]).
    pub fn new(
        name: &str,
        signature: &str,
        doc: &str,
        body: impl IntoIterator<Item = u64>,
    ) -> Terms {
        let mut counts: FxHashMap<u64, [u16; 4]> = FxHashMap::default();
        let mut lengths = [0u16; 4];
        let mut add = |field: Field, hash: u64| {
            let slot = &mut counts.entry(hash).or_default()[field as usize];
            *slot = slot.saturating_add(1);
            lengths[field as usize] = lengths[field as usize].saturating_add(1);
        };
        let mut hashes = Vec::new();
        for (field, text) in [
            (Field::Name, name),
            (Field::Signature, signature),
            (Field::Doc, doc),
        ] {
            hashes.clear();
            word_hashes(text, &mut hashes);
            for &hash in &hashes {
                add(field, hash);
            }
        }
        for hash in body {
            add(Field::Body, hash);
        }
        let mut words: Vec<(u64, [u16; 4])> = counts.into_iter().collect();
        words.sort_unstable_by_key(|&(hash, _)| hash);
        Terms {
            words: words.into_boxed_slice(),
            lengths,
        }
    }

    /// The counts per field of the word with this hash (zero when absent).
    pub fn counts(&self, hash: u64) -> [u16; 4] {
        self.words
            .binary_search_by_key(&hash, |&(h, _)| h)
            .map_or([0; 4], |i| self.words[i].1)
    }

    pub fn length(&self, field: Field) -> u16 {
        self.lengths[field as usize]
    }
}

/// The word hashes of a file's identifier and string tokens, each distinct
/// text split once: identifier texts repeat heavily in a file, and a class's
/// body repeats its methods' tokens.
#[derive(Debug, Default)]
pub struct BodyWords {
    /// Token index and the range of its words in `hashes`, by token index.
    tokens: Vec<(usize, Range<usize>)>,
    hashes: Vec<u64>,
}

impl BodyWords {
    /// From (token index, text) pairs sorted by token index.
    pub fn new(texts: &[(usize, &str)]) -> Self {
        let mut seen: FxHashMap<&str, Range<usize>> = FxHashMap::default();
        let mut hashes = Vec::new();
        let tokens = texts
            .iter()
            .map(|&(token, text)| {
                let words = seen.entry(text).or_insert_with(|| {
                    let start = hashes.len();
                    word_hashes(text, &mut hashes);
                    start..hashes.len()
                });
                (token, words.clone())
            })
            .collect();
        Self { tokens, hashes }
    }

    /// The word hashes of the tokens in `tokens`, in order.
    pub fn within(&self, tokens: Range<usize>) -> impl Iterator<Item = u64> + '_ {
        let first = self.tokens.partition_point(|(i, _)| *i < tokens.start);
        let last = self.tokens.partition_point(|(i, _)| *i < tokens.end);
        self.tokens[first..last]
            .iter()
            .flat_map(|(_, words)| &self.hashes[words.clone()])
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::word_hash;

    #[test]
    fn body_words_split_once_equal_each_texts_own_words() -> anyhow::Result<()> {
        let corpus = crate::units::test_corpus()?;
        for (path, source) in &corpus {
            // Every other whitespace-separated piece a token: texts repeat,
            // token indices have gaps.
            let texts: Vec<(usize, &str)> = source
                .split_whitespace()
                .enumerate()
                .map(|(i, t)| (2 * i, t))
                .collect();
            let body = BodyWords::new(&texts);
            let end = 2 * texts.len();
            for range in [0..end, end / 3..end / 2 + 1, 1..2, end..end] {
                let mut expected = Vec::new();
                for &(_, text) in texts.iter().filter(|(i, _)| range.contains(i)) {
                    word_hashes(text, &mut expected);
                }
                let got: Vec<u64> = body.within(range.clone()).collect();
                assert_eq!(got, expected, "{path} {range:?}");
            }
        }
        Ok(())
    }

    #[test]
    fn words_are_counted_per_field() {
        let body = BodyWords::new(&[(0, "cents"), (2, "\"EUR\""), (3, "cents"), (5, "other")]);
        let terms = Terms::new(
            "format_money",
            "def format_money(cents)",
            "Formats cents as euros.",
            body.within(0..4),
        );
        assert_eq!(terms.counts(word_hash("money")), [1, 1, 0, 0]);
        assert_eq!(terms.counts(word_hash("cent")), [0, 1, 1, 2]);
        assert_eq!(terms.counts(word_hash("eur")), [0, 0, 0, 1]);
        assert_eq!(terms.counts(word_hash("euro")), [0, 0, 1, 0]);
        assert_eq!(terms.counts(word_hash("poem")), [0; 4]);
        assert_eq!(terms.length(Field::Name), 2);
        assert_eq!(terms.length(Field::Body), 3);
    }
}
