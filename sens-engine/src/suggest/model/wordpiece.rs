//! The models' tokenizer: BERT's uncased WordPiece over the vocabulary of the
//! model's `tokenizer.json`, the ids a forward pass reads.

use std::path::Path;

use anyhow::{Context, Result};
use rustc_hash::FxHashMap;

const TOKENIZER_FILE: &str = "tokenizer.json";

/// BERT's limit: a longer word is one unknown token.
const MAX_WORD_CHARS: usize = 100;

/// The ids of the tokens that bound a sequence and stand for an unknown word.
struct Special {
    cls: u32,
    sep: u32,
    unk: u32,
}

/// A model's vocabulary: the id of each word piece.
pub(super) struct WordPiece {
    vocab: FxHashMap<String, u32>,
    ids: Special,
}

impl WordPiece {
    /// The vocabulary of `dir`'s tokenizer, `bounds` naming the tokens that
    /// open and close a sequence (the model family's).
    pub(super) fn read(dir: &Path, bounds: [&str; 2]) -> Result<Self> {
        let tokenizer = dir.join(TOKENIZER_FILE);
        let vocab =
            read_vocab(&tokenizer).with_context(|| format!("tokenizer {}", tokenizer.display()))?;
        let special = |t: &str| {
            vocab
                .get(t)
                .copied()
                .with_context(|| format!("{}: no {t} token", tokenizer.display()))
        };
        let [cls, sep] = bounds;
        let ids = Special {
            cls: special(cls)?,
            sep: special(sep)?,
            unk: special("[UNK]")?,
        };
        Ok(WordPiece { vocab, ids })
    }

    /// The number of word pieces.
    pub(super) fn len(&self) -> usize {
        self.vocab.len()
    }

    /// The ids of the tokens that open and close a sequence.
    pub(super) fn bounds(&self) -> [u32; 2] {
        [self.ids.cls, self.ids.sep]
    }

    /// Each text's word pieces (at most `limit`) between the model's bounds.
    pub(super) fn sequences(&self, texts: &[&str], limit: usize) -> Vec<Vec<u32>> {
        texts
            .iter()
            .map(|text| {
                let mut ids = vec![self.ids.cls];
                ids.extend(self.tokens(text, limit));
                ids.push(self.ids.sep);
                ids
            })
            .collect()
    }

    /// WordPiece ids of `text` (BERT's uncased split: lower case, punctuation
    /// apart; accents are kept, which only non-ASCII words notice), at most
    /// `limit`.
    pub(super) fn tokens(&self, text: &str, limit: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for word in basic_words(text) {
            out.extend(self.word_pieces(&word));
            if out.len() >= limit {
                break;
            }
        }
        out.truncate(limit);
        out
    }

    /// Greedy longest match with `##` continuations; `[UNK]` when a part is not
    /// in the vocabulary.
    fn word_pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.ids.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let found = (start + 1..=chars.len()).rev().find_map(|end| {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                let to = chars.get(end).map_or(word.len(), |&(i, _)| i);
                piece.push_str(&word[chars[start].0..to]);
                self.vocab.get(&piece).map(|&id| (id, end))
            });
            let Some((id, end)) = found else {
                return vec![self.ids.unk];
            };
            out.push(id);
            start = end;
        }
        out
    }
}

/// Lower-case words and punctuation marks, one each.
fn basic_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        let punct = if c.is_ascii() {
            !c.is_ascii_alphanumeric() && !c.is_ascii_whitespace()
        } else {
            !c.is_alphanumeric() && !c.is_whitespace()
        };
        if c.is_whitespace() || c.is_control() || punct {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            if punct && !c.is_control() {
                words.push(c.to_string());
            }
        } else {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The `model.vocab` of a `tokenizer.json`.
fn read_vocab(path: &Path) -> Result<FxHashMap<String, u32>> {
    #[derive(serde::Deserialize)]
    struct Tokenizer {
        model: TokenizerModel,
    }
    #[derive(serde::Deserialize)]
    struct TokenizerModel {
        vocab: FxHashMap<String, u32>,
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let t: Tokenizer = serde_json::from_str(&text).context("field `model.vocab`")?;
    Ok(t.model.vocab)
}
