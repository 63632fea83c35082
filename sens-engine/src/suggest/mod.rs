//! Suggestions for a user prompt (docs/contract.md, "Suggestions"): existing functions
//! and classes that do what the prompt asks, or nothing. A wrong list is worse than none:
//! the agent reads it, stops searching and writes the helper it was not shown.
//!
//! Ranking is BM25F over what a symbol does, not only what it is called: the words
//! of its name, signature, doc comment and body (identifiers and string words,
//! collected when its file is parsed, see [`Terms`](crate::terms::Terms)) and, weighted low, its module
//! path. A symbol's field counts are weighted and length-normalized per field, then
//! saturated once per prompt word, so a word repeated in a long body cannot outweigh
//! a word in the name. The usage count boosts a little.
//!
//! Saying nothing: a symbol's *coverage* is its score in units of one fully
//! saturated word that no other symbol holds, so it compares across prompts and
//! project sizes. The list's confidence is the best coverage among items that match
//! two prompt words or one in their name (one doc or body word alone is chance);
//! under [`MIN_CONFIDENCE`] the list is empty, and it holds only items within
//! `RELATIVE_FLOOR` of the best. Both are tuned on the cases of
//! `bench/suggest/cases.toml` (`sens-bench engine suggest-eval`).
//!
//! With the contextual model ([`model`], when installed and every candidate has its
//! vector): items rank by coverage plus [`COSINE_WEIGHT`] times their cosine to the
//! prompt above [`COSINE_BASE`], and a best cosine of the model's vouch
//! ([`model::Model::vouch`]) also vouches for a list
//! (docs/suggestions.md, "Ranking with the contextual model"). The ranking step
//! ([`fusion`]: rank fusion, lifts for a named symbol's definition and for the
//! file a candidate lives in) ranks in its place with the parts [`Steps`] names;
//! the engine's suggestions use [`Steps::SHIPPED`], a benchmark any parts
//! ([`rank_deep`]).
//!
//! Not candidates: windows, anonymous units, callbacks, `main`, Python protocol
//! methods (`__eq__`: its class is), test code (test
//! files, `#[cfg(test)]` modules, test functions by name or attribute),
//! benchmarks, functions local to another function, vendored code (the walk
//! skips it) and built copies (`dist/`, `build/`) of a project whose source
//! declares a candidate. A file's module item (its own doc and what it
//! re-exports, named by its path) ranks with the symbols; it never vouches
//! for a list, and the list a prompt is shown holds one only when the prompt
//! names a symbol it re-exports from a dependency.

mod definition;
mod files;
mod framed;
mod fusion;
mod lanes;
pub mod model;
mod quant;
pub mod vector_cache;

pub use fusion::Steps;

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::finding::Suggestion;
use crate::index::{Index, Unit};
use crate::paths::{is_bench_path, is_build_output, is_test_path};
use crate::terms::{FIELDS, Field};
use crate::units::UnitKind;
use crate::words::{subwords, word_hash};

/// At most this many suggestions.
pub const MAX_SUGGESTIONS: usize = 8;
/// The best coverage a list needs; under it the engine says nothing.
pub const MIN_CONFIDENCE: f64 = 0.9;
/// Items kept score at least this share of the best item.
const RELATIVE_FLOOR: f64 = 0.35;
const K1: f64 = 1.2;
/// What a prompt naming a symbol adds, in fully saturated rare words.
const NAME_BONUS: f64 = 0.5;
/// An item scores by this many of its best-matching prompt words.
const BEST_WORDS: usize = 6;

/// What one unit of cosine above [`COSINE_BASE`] adds to a coverage.
const COSINE_WEIGHT: f64 = 4.0;
const COSINE_BASE: f64 = 0.1;

/// Weight and length normalization (BM25's b) of each stored field, in the order
/// of [`FIELDS`]: the name says most, a body word least.
const FIELD_WEIGHTS: [(f64, f64); 4] = [(3.0, 0.5), (0.8, 0.75), (5.0, 0.3), (0.4, 0.75)];
/// The module path: a hint, never enough alone.
const PATH_WEIGHT: (f64, f64) = (0.3, 0.3);

/// One prompt word that scored for an item: where it stood and what it added.
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    pub word: String,
    /// Field label and count, for fields holding the word.
    pub fields: Vec<(&'static str, u16)>,
    pub score: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ranked {
    #[serde(flatten)]
    pub suggestion: Suggestion,
    /// The item's score over the prompt's best possible score.
    pub coverage: f64,
    pub matches: Vec<Match>,
    /// Its cosine to the prompt, when the model ranked.
    pub cosine: Option<f64>,
}

/// What the model made of a prompt.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ModelScore {
    /// The best cosine of any candidate to the prompt.
    pub best_cosine: f64,
    /// The model's best cosine from which the list is shown.
    pub vouch: f64,
}

impl ModelScore {
    /// The model vouches for the list.
    pub fn vouches(&self) -> bool {
        self.best_cosine >= self.vouch
    }
}

/// The best items for a prompt, before and after the decision to say nothing.
#[derive(Debug, Clone, Serialize)]
pub struct Ranking {
    /// The prompt's words as ranked (stop words dropped, stemmed).
    pub words: Vec<String>,
    /// The best item's coverage.
    pub confidence: f64,
    /// When the model ranked.
    #[serde(flatten)]
    pub model: Option<ModelScore>,
    /// Under [`MIN_CONFIDENCE`]: the engine suggests nothing.
    pub silent: bool,
    /// The best items (kept even when silent, to explain).
    pub items: Vec<Ranked>,
}

impl Ranking {
    /// The list is shown at a minimum confidence: the words' confidence reaches
    /// it, or the model vouches for it.
    pub fn shown_at(&self, min_confidence: f64) -> bool {
        self.confidence >= min_confidence || self.model.is_some_and(|m| m.vouches())
    }
}

/// Up to [`MAX_SUGGESTIONS`] existing symbols relevant to `prompt`, best first;
/// empty when none is relevant enough. Words alone until the model has every
/// candidate's vector, which a background pass then computes.
pub fn suggest(index: &Index, prompt: &str) -> Vec<Suggestion> {
    suggest_with_store(index, prompt, None)
}

/// [`suggest`], the symbol vectors also kept in the folder `store` (an engine's
/// on-disk cache): read at the first suggestion, written after a background pass
/// ([`model::Model::read_store`]).
pub fn suggest_with_store(index: &Index, prompt: &str, store: Option<&Path>) -> Vec<Suggestion> {
    let model = model::shared();
    if let (Some(m), Some(dir)) = (model, store) {
        m.read_store(dir);
    }
    let ranking = rank_with(index, prompt, model);
    if ranking.model.is_none()
        && let Some(m) = model
    {
        m.prepare_in_background(&candidates(index));
    }
    if ranking.silent {
        return Vec::new();
    }
    ranking.items.into_iter().map(|r| r.suggestion).collect()
}

/// Embeds every candidate that has no vector yet (the background pass, run in
/// the foreground); returns how many it embedded, 0 without a model.
pub fn prepare(index: &Index) -> usize {
    model::shared().map_or(0, |m| m.prepare(&candidates(index)))
}

/// [`prepare`] with the vectors also kept in the folder `store`: read from it
/// first, written back when the process holds any the file does not.
pub fn prepare_with_store(index: &Index, store: &Path) -> anyhow::Result<usize> {
    let Some(m) = model::shared() else {
        return Ok(0);
    };
    m.read_store(store);
    let made = m.prepare(&candidates(index));
    m.save_store(store)?;
    Ok(made)
}

/// The ranking behind [`suggest`], with what scored.
pub fn rank(index: &Index, prompt: &str) -> Ranking {
    rank_with(index, prompt, model::shared())
}

/// [`rank`] with other parts of the ranking step than the shipped ones (to
/// measure which to ship).
pub fn rank_steps(index: &Index, prompt: &str, steps: Steps) -> Ranking {
    rank_deep(index, prompt, model::shared(), MAX_SUGGESTIONS, steps)
}

/// [`rank`] with the given model, or words alone.
pub fn rank_with(index: &Index, prompt: &str, model: Option<&model::Model>) -> Ranking {
    rank_deep(index, prompt, model, MAX_SUGGESTIONS, Steps::SHIPPED)
}

/// [`rank_with`] keeping the best `depth` items: a benchmark that judges files
/// reads past the shown list, so past [`MAX_SUGGESTIONS`] no item is dropped for
/// scoring under `RELATIVE_FLOOR` of the best. Whether the engine says nothing
/// is decided as for the shown list.
pub fn rank_deep(
    index: &Index,
    prompt: &str,
    model: Option<&model::Model>,
    depth: usize,
    steps: Steps,
) -> Ranking {
    let (words, hashes) = query_words(prompt);
    let candidates = candidates(index);
    // The prompt's vector takes most of a suggestion's time and leaves a core
    // idle in its serial steps: the words score meanwhile.
    let (items, cosines) = rayon::join(
        || score(index, &candidates, &words, &hashes),
        || model.and_then(|m| Some((m.vouch(), cosines(m, &candidates, prompt)?))),
    );
    let mut items: Vec<Ranked> = items.into_iter().flatten().collect();
    items.sort_by(best_first);
    let mut seen = rustc_hash::FxHashSet::default();
    items.retain(|r| seen.insert(r.suggestion.name.clone()));
    // A module's doc and exported names match many requests loosely: it ranks
    // with the symbols, but neither vouches for the list nor, in the list a
    // prompt is shown, takes a symbol's place unless the prompt names what it
    // re-exports (docs/suggestions.md, "Modules").
    let modules: FxHashMap<&str, &Unit> = candidates
        .iter()
        .filter(|u| !u.data.kind.is_symbol())
        .map(|u| (u.data.name.as_str(), *u))
        .collect();
    let is_module = |r: &Ranked| modules.contains_key(r.suggestion.name.as_str());
    let listed = depth <= MAX_SUGGESTIONS;
    let reach = if listed { depth + modules.len() } else { depth };
    let best = items
        .iter()
        .find(|r| !is_module(r))
        .map_or(0.0, |r| r.suggestion.score);
    let floor = if listed { RELATIVE_FLOOR * best } else { 0.0 };
    let lexical: Vec<Ranked> = items
        .iter()
        .filter(|r| r.suggestion.score >= floor)
        .take(reach)
        .cloned()
        .collect();
    let confidence = lexical
        .iter()
        .filter(|r| !is_module(r))
        .take(MAX_SUGGESTIONS)
        .filter(|r| r.suggestion.score >= RELATIVE_FLOOR * best)
        .filter(|r| telling(r))
        .map(|r| r.coverage)
        .fold(0.0, f64::max);
    let (mut items, model) = match cosines {
        Some((vouch, cos)) => {
            let best_cosine = cos
                .iter()
                .zip(&candidates)
                .filter(|(_, u)| u.data.kind.is_symbol())
                .map(|(&c, _)| c)
                .fold(f64::NEG_INFINITY, f64::max);
            let score = ModelScore { best_cosine, vouch };
            let ranked = fusion::rank(index, items, &candidates, &cos, prompt, reach, steps);
            (ranked, Some(score))
        }
        None => (lexical, None),
    };
    if listed {
        let named = definition::Named::of(prompt);
        items.retain(|r| {
            modules
                .get(r.suggestion.name.as_str())
                .is_none_or(|u| steps.definition && fusion::defines(index, &named, u) > 0.0)
        });
        items.truncate(depth);
    }
    let mut ranking = Ranking {
        words,
        confidence,
        model,
        silent: false,
        items,
    };
    ranking.silent = !ranking.shown_at(MIN_CONFIDENCE);
    ranking
}

/// Each candidate's cosine to the prompt; `None` while some candidate has no
/// vector yet.
fn cosines(model: &model::Model, candidates: &[&Unit], prompt: &str) -> Option<Vec<f64>> {
    let vectors: Vec<_> = candidates
        .iter()
        .map(|u| model.cached(u))
        .collect::<Option<_>>()?;
    let p = model.embed_prompt(prompt);
    Some(vectors.iter().map(|v| model.cosine(v, &p)).collect())
}

/// An item's score with the model: its coverage plus the cosine's share above
/// [`COSINE_BASE`].
pub fn blended(coverage: f64, cosine: Option<f64>) -> f64 {
    coverage + COSINE_WEIGHT * (cosine.unwrap_or(0.0) - COSINE_BASE).max(0.0)
}

/// Highest score first; ties in file and line order, so a ranking is the same
/// on every run.
fn best_first(a: &Ranked, b: &Ranked) -> std::cmp::Ordering {
    fn place(r: &Ranked) -> (f64, &str, usize) {
        (r.suggestion.score, &r.suggestion.file, r.suggestion.line)
    }
    score_order(place(a), place(b))
}

/// [`best_first`] on a score and a place (file, line).
pub fn score_order(a: (f64, &str, usize), b: (f64, &str, usize)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0)
        .then_with(|| (a.1, a.2).cmp(&(b.1, b.2)))
}

/// What a suggestion says of a unit.
pub fn suggestion(index: &Index, unit: &Unit, score: f64) -> Suggestion {
    Suggestion {
        name: unit.data.name.clone(),
        signature: unit.data.signature.clone(),
        file: unit.file.to_string(),
        line: unit.data.start_line as usize,
        usages: index.usages(&unit.data.name) as usize,
        score,
    }
}

/// An item that can vouch for a list: it matches two prompt words, or one in its
/// name. One word in a doc comment or body is chance as often as not.
fn telling(item: &Ranked) -> bool {
    item.matches.len() >= 2
        || item
            .matches
            .iter()
            .any(|m| m.fields.iter().any(|&(f, _)| f == Field::Name.label()))
}

/// What one candidate holds of the prompt's words, per field (the path last).
struct Hits {
    counts: Vec<[u16; 5]>,
    lengths: [f64; 5],
}

/// Each candidate's words of `text`, ranked as a prompt's are; `None` for a
/// candidate holding none of them.
pub fn lexical(index: &Index, candidates: &[&Unit], text: &str) -> Vec<Option<Ranked>> {
    let (words, hashes) = query_words(text);
    score(index, candidates, &words, &hashes)
}

/// A query's distinct words (stop words dropped, stemmed), sorted, and their hashes.
fn query_words(text: &str) -> (Vec<String>, Vec<u64>) {
    let mut words = subwords(text);
    words.sort();
    words.dedup();
    let hashes = words.iter().map(|w| word_hash(w)).collect();
    (words, hashes)
}

/// Each candidate's item for the prompt's words, in the candidates' order;
/// `None` for a candidate holding none of them.
fn score(
    index: &Index,
    candidates: &[&Unit],
    words: &[String],
    hashes: &[u64],
) -> Vec<Option<Ranked>> {
    let mut path_words: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    let hits: Vec<Hits> = candidates
        .iter()
        .map(|u| {
            let path = path_words
                .entry(&u.file)
                .or_insert_with(|| module_words(&u.file));
            let t = &u.data.facts.terms;
            let counts = hashes
                .iter()
                .map(|&h| {
                    let [a, b, c, d] = t.counts(h);
                    let p = path.iter().filter(|&&w| w == h).count();
                    [a, b, c, d, u16::try_from(p).unwrap_or(u16::MAX)]
                })
                .collect();
            let mut lengths = [0.0; 5];
            for f in FIELDS {
                lengths[f as usize] = f64::from(t.length(f));
            }
            lengths[4] = path.len() as f64;
            Hits { counts, lengths }
        })
        .collect();
    // The words' rarity and the fields' mean lengths are the symbols': a
    // module item is scored against them and leaves them as they are.
    let symbols: Vec<&Hits> = hits
        .iter()
        .zip(candidates)
        .filter(|(_, u)| u.data.kind.is_symbol())
        .map(|(h, _)| h)
        .collect();
    let n = symbols.len().max(1) as f64;
    let mut avg = [0.0; 5];
    for h in &symbols {
        for (a, l) in avg.iter_mut().zip(h.lengths) {
            *a += l / n;
        }
    }
    let weights = [
        FIELD_WEIGHTS[0],
        FIELD_WEIGHTS[1],
        FIELD_WEIGHTS[2],
        FIELD_WEIGHTS[3],
        PATH_WEIGHT,
    ];
    let tf = |h: &Hits, term: usize| -> f64 {
        (0..5)
            .map(|f| {
                let (w, b) = weights[f];
                let norm = if avg[f] > 0.0 {
                    1.0 - b + b * h.lengths[f] / avg[f]
                } else {
                    1.0
                };
                w * f64::from(h.counts[term][f]) / norm
            })
            .sum()
    };
    let idf: Vec<f64> = (0..hashes.len())
        .map(|t| {
            let df = symbols
                .iter()
                .filter(|h| h.counts[t].iter().any(|&c| c > 0))
                .count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    // One prompt word the project never uses elsewhere, fully saturated.
    let rare_word = (1.0 + (n + 0.5) / 1.5).ln();
    candidates
        .iter()
        .zip(&hits)
        .map(|(unit, h)| {
            let mut matches = Vec::new();
            for (t, word) in words.iter().enumerate() {
                let x = tf(h, t);
                if x <= 0.0 {
                    continue;
                }
                let s = idf[t] * x / (K1 + x);
                let labels = FIELDS.iter().map(|f| f.label()).chain(["path"]);
                matches.push(Match {
                    word: word.clone(),
                    fields: labels.zip(h.counts[t]).filter(|&(_, c)| c > 0).collect(),
                    score: s,
                });
            }
            if matches.is_empty() {
                return None;
            }
            // The best words only: in a long prompt, a big class matching many
            // words weakly must not outrank a helper matching a few well.
            matches.sort_by(|a, b| b.score.total_cmp(&a.score));
            let mut total: f64 = matches.iter().take(BEST_WORDS).map(|m| m.score).sum();
            // The prompt names the symbol (every word of a name of two words or
            // more): strong evidence even when those words are common in the
            // project. A one-word name is as often a verb of the request
            // (`split`, `drop`, `send`) and gets nothing.
            let name_hits: f64 = h.counts.iter().map(|c| f64::from(c[0])).sum();
            if h.lengths[0] >= 2.0 && name_hits >= h.lengths[0] {
                total += NAME_BONUS * rare_word;
            }
            let usages = index.usages(&unit.data.name);
            Some(Ranked {
                suggestion: suggestion(
                    index,
                    unit,
                    total * (1.0 + 0.1 * (1.0 + f64::from(usages)).ln()),
                ),
                coverage: total / rare_word,
                matches,
                cosine: None,
            })
        })
        .collect()
}

/// The module path's words: folders and file stem.
fn module_words(path: &str) -> Vec<u64> {
    let stem = path.rsplit_once('.').map_or(path, |(stem, _)| stem);
    subwords(stem).iter().map(|w| word_hash(w)).collect()
}

/// The symbols a suggestion may name.
pub fn candidates(index: &Index) -> Vec<&Unit> {
    // Built copies repeat the source's symbols without their docs and skew every
    // word's rarity; a project whose source declares nothing keeps them (an npm
    // package of `dist/` and top-level stubs that only re-export it).
    let source = candidates_in(index, |path| !is_build_output(path));
    if source.is_empty() {
        candidates_in(index, is_build_output)
    } else {
        source
    }
}

/// The candidates of the files `keep` takes.
fn candidates_in(index: &Index, keep: impl Fn(&str) -> bool) -> Vec<&Unit> {
    let mut out = Vec::new();
    for (path, entry) in index.files() {
        if is_test_path(path) || is_bench_path(path) || !keep(path) {
            continue;
        }
        // Functions enclosing the current unit, innermost last (units come in
        // source order, outer before inner).
        let mut open: Vec<(u32, u32)> = Vec::new();
        for unit in entry.units.iter().filter_map(|&id| index.unit(id)) {
            let d = &unit.data;
            if d.kind == UnitKind::Window {
                continue;
            }
            while open.last().is_some_and(|&(_, end)| end < d.start_line) {
                open.pop();
            }
            let local = open.iter().any(|&(start, end)| {
                start <= d.start_line
                    && d.end_line <= end
                    && (start, end) != (d.start_line, d.end_line)
            });
            if d.kind == UnitKind::Function {
                open.push((d.start_line, d.end_line));
            }
            if !local && is_candidate(unit) {
                out.push(unit);
            }
        }
    }
    out
}

/// A symbol that may be named: a function or class with a name, neither `main`,
/// a callback, test code nor a protocol method.
pub fn is_candidate(unit: &Unit) -> bool {
    let d = &unit.data;
    !d.name.starts_with('<')
        && d.name != "main"
        && !d.facts.callback
        && !d.is_test()
        && !d.is_dunder()
}
