//! Suggestions for a user prompt (SPEC 2.5): existing functions and classes ranked
//! by BM25 over the subwords of their names, signatures, doc comments and paths,
//! boosted by how much the project uses them. A wrong list is worse than none: a
//! symbol qualifies only when a prompt word names it and its score clears a floor.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::finding::Suggestion;
use crate::index::{Index, Unit};
use crate::paths::is_test_path;
use crate::units::UnitKind;

/// At most this many suggestions.
pub const MAX_SUGGESTIONS: usize = 8;
/// BM25 score a symbol needs (before the usage boost).
const SCORE_FLOOR: f64 = 2.0;
/// The name counts this many times in a symbol's text: it says most about it.
const NAME_WEIGHT: usize = 3;
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words that carry no concept: English glue, request verbs and keywords.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "not",
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
    "as",
    "is",
    "are",
    "be",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "we",
    "you",
    "i",
    "me",
    "my",
    "our",
    "your",
    "can",
    "should",
    "must",
    "will",
    "would",
    "could",
    "please",
    "when",
    "then",
    "if",
    "else",
    "so",
    "do",
    "does",
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
    "get",
    "set",
    "want",
    "need",
    "like",
    "there",
    "here",
    "what",
    "which",
    "how",
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
    "very",
    "same",
    "other",
    "way",
    "thing",
    "something",
    "show",
    "see",
    "work",
    "working",
    "change",
    "write",
    "code",
];

/// Distinct prompt words a symbol must match, unless the prompt has fewer: one
/// shared word is chance in a long prompt.
const MIN_MATCHED_TERMS: usize = 2;

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

/// A symbol's words, the name repeated so it weighs most.
fn document(unit: &Unit) -> (Vec<String>, FxHashSet<String>) {
    let name = subwords(&unit.data.name);
    let mut words = Vec::new();
    for _ in 0..NAME_WEIGHT {
        words.extend(name.iter().cloned());
    }
    words.extend(subwords(&unit.data.signature));
    words.extend(subwords(&unit.data.facts.doc));
    words.extend(subwords(&unit.file));
    (words, name.into_iter().collect())
}

/// Up to [`MAX_SUGGESTIONS`] existing symbols relevant to `prompt`, best first.
pub fn suggest(index: &Index, prompt: &str) -> Vec<Suggestion> {
    let query: FxHashSet<String> = subwords(prompt).into_iter().collect();
    if query.is_empty() {
        return Vec::new();
    }
    let docs: Vec<(&Unit, Vec<String>, FxHashSet<String>)> = index
        .units()
        .map(|(_, u)| u)
        .filter(|u| {
            u.data.kind != UnitKind::Window
                && !u.data.name.starts_with('<')
                && !u.data.facts.callback
                && u.data.name != "main"
                && !is_test_path(&u.file)
        })
        .map(|u| {
            let (words, name) = document(u);
            (u, words, name)
        })
        .collect();
    if docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avg_len = docs.iter().map(|(_, w, _)| w.len()).sum::<usize>() as f64 / n;
    let mut df: FxHashMap<&str, usize> = FxHashMap::default();
    for (_, words, _) in &docs {
        let distinct: FxHashSet<&str> = words
            .iter()
            .map(String::as_str)
            .filter(|w| query.contains(*w))
            .collect();
        for w in distinct {
            *df.entry(w).or_default() += 1;
        }
    }
    let idf = |term: &str| {
        let d = df.get(term).copied().unwrap_or(0) as f64;
        (1.0 + (n - d + 0.5) / (d + 0.5)).ln()
    };
    let mut scored: Vec<Suggestion> = docs
        .iter()
        .filter(|(_, words, name)| {
            let matched: FxHashSet<&String> = words.iter().filter(|w| query.contains(*w)).collect();
            name.iter().any(|w| query.contains(w))
                && matched.len() >= MIN_MATCHED_TERMS.min(query.len())
        })
        .filter_map(|(unit, words, _)| {
            let len = words.len() as f64;
            let score: f64 = query
                .iter()
                .map(|term| {
                    let tf = words.iter().filter(|w| *w == term).count() as f64;
                    idf(term) * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len))
                })
                .sum();
            if score < SCORE_FLOOR {
                return None;
            }
            let usages = index.usages(&unit.data.name) as usize;
            Some(Suggestion {
                name: unit.data.name.clone(),
                signature: unit.data.signature.clone(),
                file: unit.file.to_string(),
                line: unit.data.start_line as usize,
                usages,
                score: score * (1.0 + 0.1 * (1.0 + usages as f64).ln()),
            })
        })
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
    });
    scored.truncate(MAX_SUGGESTIONS);
    scored
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
