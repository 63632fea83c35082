//! The existing units most like a new one, from the suggestions' retrieval core:
//! the new unit's code (its name, signature, doc, calls and literals) ranked as a
//! prompt's words are against each candidate's fields, and the model's vector of
//! the new unit's own text (name and doc, or signature) against each candidate's,
//! which is made the same way. Candidates are the suggestions' symbols (no
//! tests, benchmarks, callbacks, module items), less the new unit's own file.

use serde::Serialize;

use super::decision;
use crate::finding::Suggestion;
use crate::index::{Index, Unit};
use crate::suggest::{self, model};

/// At most this many candidates per new unit.
pub const MAX_CANDIDATES: usize = 8;

/// An existing unit like a new one, with what it was ranked by.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The existing unit; its `score` is [`decision::score`].
    #[serde(flatten)]
    pub suggestion: Suggestion,
    /// The new unit's code words it holds, in rare words (the suggestions' coverage).
    pub coverage: f64,
    /// The cosine of the two units' texts; `None` without the model, or while
    /// some candidate has no vector yet.
    pub twin: Option<f64>,
}

/// The candidates for `unit`, whose source is `code`, best first, one per name.
pub fn candidates(index: &Index, unit: &Unit, code: &str) -> Vec<Candidate> {
    let pool: Vec<&Unit> = suggest::candidates(index)
        .into_iter()
        .filter(|u| u.file != unit.file && u.data.kind.is_symbol())
        .collect();
    let model = model::shared().filter(|m| pool.iter().all(|u| m.cached(u).is_some()));
    let (lexical, twins) = rayon::join(
        || suggest::lexical(index, &pool, code),
        || model.map(|m| twins(m, &pool, unit)),
    );
    let mut out: Vec<Candidate> = pool
        .iter()
        .zip(lexical)
        .enumerate()
        .map(|(i, (u, ranked))| {
            let coverage = ranked.map_or(0.0, |r| r.coverage);
            let twin = twins.as_ref().map(|t| t[i]);
            let score = decision::score(coverage, twin, unit.data.tokens, u.data.tokens);
            Candidate {
                suggestion: suggest::suggestion(index, u, score),
                coverage,
                twin,
            }
        })
        .collect();
    fn place(c: &Candidate) -> (f64, &str, usize) {
        (c.suggestion.score, &c.suggestion.file, c.suggestion.line)
    }
    out.sort_by(|a, b| suggest::score_order(place(a), place(b)));
    let mut seen = rustc_hash::FxHashSet::default();
    out.retain(|c| seen.insert(c.suggestion.name.clone()));
    out.truncate(MAX_CANDIDATES);
    out
}

/// The cosine of `unit`'s own text to each candidate's.
fn twins(m: &model::Model, pool: &[&Unit], unit: &Unit) -> Vec<f64> {
    let own = m.embed_symbol(unit);
    pool.iter()
        .map(|u| m.cached(u).map_or(0.0, |v| m.cosine(&v, &own)))
        .collect()
}
