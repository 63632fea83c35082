//! The decision to say that a new unit re-implements an existing one: a
//! candidate's score from what ranked it, and the score from which the finder
//! speaks, set on the tuning cases of `bench/reuse/cases.toml` (`sens-bench
//! engine reuse-eval`; docs/reuse.md).

use super::Candidate;

/// What one unit of the two texts' cosine above [`TWIN_BASE`] adds, in the
/// coverage's units (rare words).
const TWIN_WEIGHT: f64 = 8.0;
const TWIN_BASE: f64 = 0.1;
/// What a candidate smaller than the new unit loses per unit of the log of the
/// ratio of their sizes: a one-liner cannot do all that a loop of twenty lines
/// does, however alike their words (`len` for an edit distance calling `len`).
const SMALLER_PENALTY: f64 = 0.75;

/// The best candidate's score from which the finder names it: 0.24 above the
/// best candidate of any new function of the tuning cases (2.76), 0.04 under
/// one re-implementation found (2.84): a note on new code teaches the agent to
/// ignore notes.
pub const THRESHOLD: f64 = 3.0;

/// A candidate's score: its coverage of the new code's words, plus the share of
/// the cosine of the two units' texts above its base, less the penalty of a
/// candidate smaller than the new unit (sizes in normalized tokens).
pub fn score(coverage: f64, twin: Option<f64>, new_tokens: u32, tokens: u32) -> f64 {
    let twin = TWIN_WEIGHT * (twin.unwrap_or(0.0) - TWIN_BASE).max(0.0);
    let smaller = (f64::from(new_tokens.max(1)) / f64::from(tokens.max(1)))
        .ln()
        .max(0.0);
    coverage + twin - SMALLER_PENALTY * smaller
}

/// The finder names `best`, a unit's best candidate, as what the unit does
/// again. Words alone tell what is alike, not what is the same: without the
/// model's cosine it names nothing.
pub fn speaks(best: &Candidate) -> bool {
    speaks_at(best, THRESHOLD)
}

/// [`speaks`] with the threshold at another value (the tuning's sweep).
pub fn speaks_at(best: &Candidate, threshold: f64) -> bool {
    best.twin.is_some() && best.suggestion.score >= threshold
}

/// The note's floor on the best candidate's coverage of the new code's words
/// (rare words), and on its lead over the second candidate's score: the note
/// tells the agent to call another unit, so it speaks only where the new code's
/// words point at one unit clearly, not at a family of look-alikes (siblings
/// tie; a re-implementation stands out). Chosen on the tuning cases
/// (`bench/reuse/cases.toml` tuning and `siblings.toml`: 5 of 12
/// re-implementations named, 1 of 19 new functions noted); held out
/// (docs/reuse.md): 9 of 55 re-implementations named, 1 of 33 new functions and
/// no bench reference noted.
pub const NOTE_COVERAGE: f64 = 1.75;
pub const NOTE_MARGIN: f64 = 0.75;

/// The agent is told that the unit whose candidates are `candidates` (best
/// first) does what the first one does: the finder speaks ([`speaks`]), and the
/// first candidate's coverage and lead reach [`NOTE_COVERAGE`] and
/// [`NOTE_MARGIN`].
pub fn notes(candidates: &[Candidate]) -> bool {
    let Some(best) = candidates.first() else {
        return false;
    };
    let second = candidates.get(1).map_or(0.0, |c| c.suggestion.score);
    speaks(best) && best.coverage >= NOTE_COVERAGE && best.suggestion.score - second >= NOTE_MARGIN
}
