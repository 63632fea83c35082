//! Words of identifiers and prose, as the suggestions compare them: split on case
//! and separators, lower-cased, stop words dropped, lightly stemmed, hashed.

use std::hash::{Hash, Hasher};

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

/// Lower-case subwords of identifiers and prose: `parseHTTPHeader2` ->
/// `pars`, `http`, `header`, each stemmed.
pub fn subwords(text: &str) -> Vec<String> {
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
                let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
                start = i;
                if word.len() < 2 || word.chars().all(|c| c.is_ascii_digit()) {
                    continue;
                }
                if !STOPWORDS.contains(&word.as_str()) {
                    words.push(stem(word));
                }
            }
        }
    }
    words
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
fn stem(word: String) -> String {
    let mut w = word;
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
        return w;
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
    w
}

#[cfg(test)]
mod tests {
    use super::*;

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
