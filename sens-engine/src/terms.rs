//! A symbol's words by field, computed once when its file is parsed, so that a
//! suggestion only looks words up (SPEC 2.5: a suggestion at every prompt).

use rustc_hash::FxHashMap;

use crate::words::{subwords, word_hash};

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
    /// The bag of a symbol's name, signature, doc comment and body words (the
    /// texts of its identifier and string tokens).
    pub fn new<'a>(
        name: &str,
        signature: &str,
        doc: &str,
        body: impl IntoIterator<Item = &'a str>,
    ) -> Terms {
        let mut counts: FxHashMap<u64, [u16; 4]> = FxHashMap::default();
        let mut lengths = [0u16; 4];
        let mut add = |field: Field, word: &str| {
            let slot = &mut counts.entry(word_hash(word)).or_default()[field as usize];
            *slot = slot.saturating_add(1);
            lengths[field as usize] = lengths[field as usize].saturating_add(1);
        };
        for (field, text) in [
            (Field::Name, name),
            (Field::Signature, signature),
            (Field::Doc, doc),
        ] {
            for word in subwords(text) {
                add(field, &word);
            }
        }
        for text in body {
            for word in subwords(text) {
                add(Field::Body, &word);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_counted_per_field() {
        let terms = Terms::new(
            "format_money",
            "def format_money(cents)",
            "Formats cents as euros.",
            ["cents", "\"EUR\"", "cents"],
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
