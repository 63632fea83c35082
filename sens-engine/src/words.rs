//! Words of identifiers and prose, as the suggestions compare them: split on case
//! and separators, lower-cased, stop words dropped, lightly stemmed, hashed.

use std::hash::{Hash, Hasher};
use std::sync::LazyLock;

use rustc_hash::FxHashSet;

/// Words that carry no concept: English glue, request verbs, words every request
/// or every program uses (`no`, `such`, `keep`, `output`...) and keywords. A stop
/// word that names a concept of one project is lost there, but in every other
/// project it matched names by chance and pushed unrelated symbols up.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "not",
    "no",
    "nor",
    "to",
    "of",
    "in",
    "on",
    "at",
    "by",
    "for",
    "from",
    "with",
    "into",
    "onto",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "we",
    "you",
    "i",
    "me",
    "my",
    "our",
    "your",
    "they",
    "them",
    "their",
    "he",
    "she",
    "his",
    "her",
    "us",
    "can",
    "cannot",
    "should",
    "must",
    "will",
    "would",
    "could",
    "may",
    "might",
    "shall",
    "please",
    "when",
    "whenever",
    "then",
    "if",
    "else",
    "so",
    "do",
    "does",
    "did",
    "done",
    "doing",
    "all",
    "each",
    "every",
    "some",
    "any",
    "also",
    "only",
    "just",
    "now",
    "new",
    "add",
    "make",
    "use",
    "using",
    "used",
    "get",
    "set",
    "want",
    "need",
    "needs",
    "like",
    "what",
    "which",
    "who",
    "how",
    "why",
    "where",
    "while",
    "fn",
    "def",
    "pub",
    "let",
    "const",
    "var",
    "function",
    "return",
    "self",
    "impl",
    "class",
    "struct",
    "async",
    "await",
    "mut",
    "str",
    "string",
    "int",
    "none",
    "null",
    "true",
    "false",
    "src",
    "lib",
    "mod",
    "index",
    "about",
    "after",
    "before",
    "over",
    "under",
    "than",
    "more",
    "less",
    "most",
    "very",
    "same",
    "other",
    "others",
    "another",
    "way",
    "thing",
    "things",
    "something",
    "anything",
    "show",
    "see",
    "work",
    "working",
    "works",
    "change",
    "write",
    "code",
    "such",
    "keep",
    "end",
    "save",
    "record",
    "output",
    "one",
    "two",
    "first",
    "last",
    "give",
    "gives",
    "take",
    "takes",
    "put",
    "lets",
    "able",
    "already",
    "again",
    "still",
    "even",
    "much",
    "many",
    "own",
    "right",
    "wrong",
    "good",
    "bad",
    "sure",
    "really",
    "too",
    "instead",
    "rather",
    "whether",
    "via",
    "per",
    "etc",
    "eg",
    "ie",
    "ok",
    "thanks",
    "hi",
    "hello",
    "currently",
    "today",
    "always",
    "never",
    "sometimes",
    "out",
    "up",
    "down",
    "off",
    "through",
    "because",
    "since",
    "have",
    "has",
    "had",
    "having",
    "go",
    "going",
    "come",
    "try",
    "tries",
    "call",
    "calls",
    "run",
    "project",
    "feature",
    "support",
    "user",
    "users",
    "people",
    "someone",
    "well",
    "both",
    "either",
    "across",
    "around",
    "next",
    "back",
    "ways",
    "whatever",
    "know",
    "think",
    "look",
    "looks",
    "find",
    "found",
];

/// [`STOPWORDS`] as a set: a word is looked up for every identifier's subword.
static STOPWORD_SET: LazyLock<FxHashSet<&'static str>> =
    LazyLock::new(|| STOPWORDS.iter().copied().collect());

/// Lower-case subwords of identifiers and prose: `parseHTTPHeader2` ->
/// `pars`, `http`, `header`, each stemmed.
pub fn subwords(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for_each_subword(text, |word| words.push(word.to_string()));
    words
}

/// Appends the [`word_hash`] of each of `text`'s [`subwords`] to `out`.
pub fn word_hashes(text: &str, out: &mut Vec<u64>) {
    for_each_subword(text, |word| out.push(word_hash(word)));
}

/// Calls `f` with each of `text`'s [`subwords`], in order, allocating only for
/// a word with non-ASCII letters.
fn for_each_subword(text: &str, mut f: impl FnMut(&str)) {
    let mut word = String::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let mut chars = chunk.char_indices().peekable();
        let (mut start, mut prev) = (0, None::<char>);
        while let Some((i, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            let boundary = prev.is_some_and(|p| {
                let next_lower = next.is_some_and(|n| n.is_lowercase());
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_uppercase() && c.is_uppercase() && next_lower)
                    || (p.is_alphabetic() != c.is_alphabetic())
            });
            if boundary {
                emit(&chunk[start..i], &mut word, &mut f);
                start = i;
            }
            prev = Some(c);
        }
        if !chunk.is_empty() {
            emit(&chunk[start..], &mut word, &mut f);
        }
    }
}

/// One subword, lower-cased into `word` and stemmed, unless it is short, a
/// number or a stop word.
fn emit(raw: &str, word: &mut String, f: &mut impl FnMut(&str)) {
    word.clear();
    if raw.is_ascii() {
        word.extend(raw.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        // `str::to_lowercase`, not per char: a final sigma lowers differently.
        word.push_str(&raw.to_lowercase());
    }
    if word.len() < 2 || word.bytes().all(|b| b.is_ascii_digit()) {
        return;
    }
    if !STOPWORD_SET.contains(word.as_str()) {
        stem(word);
        f(word);
    }
}

/// A word's key in the term bags.
pub fn word_hash(word: &str) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    word.hash(&mut h);
    h.finish()
}

/// A light stemmer, so `formatted`, `formats` and `format`, or `dates` and
/// `date`, meet: common suffixes off, a doubled final consonant and a final `e`
/// dropped. Words keep at least 3 letters.
fn stem(w: &mut String) {
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
        return;
    }
    for suffix in ["ing", "ed", "ly", "es", "s"] {
        let keeps_s =
            suffix == "s" && (w.ends_with("ss") || w.ends_with("us") || w.ends_with("is"));
        if w.len() >= suffix.len() + 3 && w.ends_with(suffix) && !keeps_s {
            w.truncate(w.len() - suffix.len());
            break;
        }
    }
    let bytes = w.as_bytes();
    if let [.., a, b] = bytes
        && a == b
        && !matches!(a, b'a' | b'e' | b'i' | b'o' | b'u' | b'l' | b's' | b'z')
    {
        w.pop();
    }
    if w.len() >= 4 && w.ends_with('e') {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward split the fast path replaced: a `Vec<char>` per
    /// chunk, a `String` per word, a linear scan of the stop words.
    fn reference_subwords(text: &str) -> Vec<String> {
        let mut words = Vec::new();
        for chunk in text.split(|c: char| !c.is_alphanumeric()) {
            let chars: Vec<char> = chunk.chars().collect();
            let mut start = 0;
            for i in 1..=chars.len() {
                let boundary = i == chars.len() || {
                    let (p, c) = (chars[i - 1], chars[i]);
                    let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                    (p.is_lowercase() && c.is_uppercase())
                        || (p.is_uppercase() && c.is_uppercase() && next_lower)
                        || (p.is_alphabetic() != c.is_alphabetic())
                };
                if boundary {
                    let mut word = chars[start..i].iter().collect::<String>().to_lowercase();
                    start = i;
                    if word.len() < 2 || word.chars().all(|c| c.is_ascii_digit()) {
                        continue;
                    }
                    if !STOPWORDS.contains(&word.as_str()) {
                        stem(&mut word);
                        words.push(word);
                    }
                }
            }
        }
        words
    }

    #[test]
    fn the_fast_split_equals_the_straightforward_one_on_real_text() -> anyhow::Result<()> {
        let corpus = crate::units::test_corpus()?;
        let special = "ΣΑΣ ΟΔΟΣ straßeÜber İstanbul ǅemal x2Y ÀÉÎõü µs 12ab ab12 …";
        let mut words = 0;
        for text in corpus.iter().flat_map(|(_, t)| t.lines()).chain([special]) {
            let fast = subwords(text);
            assert_eq!(fast, reference_subwords(text), "{text}");
            let mut hashes = Vec::new();
            word_hashes(text, &mut hashes);
            assert_eq!(
                hashes,
                fast.iter().map(|w| word_hash(w)).collect::<Vec<_>>()
            );
            words += fast.len();
        }
        assert!(words > 10_000, "only {words} words");
        Ok(())
    }

    #[test]
    fn subwords_split_identifiers_and_fold_plurals() {
        assert_eq!(subwords("parseHTTPHeader2"), ["pars", "http", "header"]);
        assert_eq!(
            subwords("format_money_amounts"),
            ["format", "money", "amount"]
        );
        assert_eq!(
            subwords("Add the weekly totals, please!"),
            ["week", "total"]
        );
        assert_eq!(subwords("categories status"), ["category", "status"]);
        assert!(subwords("no such record, keep the output to the end").is_empty());
        assert_eq!(
            subwords("between, until, without"),
            ["between", "until", "without"]
        );
        for (a, b) in [
            ("formatted", "format"),
            ("dates", "date"),
            ("parsing", "parse"),
            ("monthly", "month"),
        ] {
            assert_eq!(subwords(a), subwords(b), "{a} {b}");
        }
    }
}
