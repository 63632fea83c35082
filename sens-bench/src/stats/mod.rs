//! Statistics (docs/contract.md, "Statistics"): small pure modules over validated
//! samples, no I/O.
//!
//! - `sample`: a [`Sample`] is checked once (non-empty, finite) where the values
//!   come in; every entry point takes samples, so none checks its input again.
//! - `describe`: the one median (also for plain values), numpy's percentile.
//! - `bootstrap`: median differences with percentile bootstrap intervals.
//!   Resampling draws runs with replacement within each (task, condition) cell; the
//!   seed is a parameter with a fixed default, so the same records always give the
//!   same interval.
//! - `permutation`: exact permutation tests of independent samples, every
//!   relabelling enumerated; `stratified` (by task) counts the relabellings of
//!   every task together without listing them, by convolution or by the
//!   branch-and-bound count of `tail`. p-values follow
//!   `scipy.stats.permutation_test`: one-sided p counts relabellings at least as
//!   extreme in that direction; two-sided p is twice the smaller one-sided p,
//!   capped at 1.
//! - `fisher`: Fisher's exact test for success counts; `horizonte`: the
//!   sequence decision.
//!
//! Enumerations too large to be exact are refused with [`StatsError`], never
//! approximated and never left to run for hours.

mod bootstrap;
mod describe;
mod fisher;
mod horizonte;
mod permutation;
mod sample;
mod stratified;
mod tail;

pub use bootstrap::{Bootstrap, DEFAULT_SEED, Estimate, Interval, MedianDiffs};
pub use describe::median;
pub use fisher::{Counts, fisher_exact};
pub use horizonte::{Decision, horizonte_decision};
pub use permutation::{MAX_RELABELLINGS, Statistic, permutation_test};
pub use sample::{Cells, Sample};
pub use stratified::stratified_permutation_test;
use stratified::{MAX_COUNT_STEPS, MAX_NULL_SUPPORT};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("an empty sample: every group needs at least one value")]
    EmptySample,
    #[error("a value is not finite: {0}")]
    NotFinite(f64),
    #[error(
        "{successes} successes of {n} runs: a group needs at least one run and no more \
         successes than runs"
    )]
    ImpossibleCounts { successes: u64, n: u64 },
    #[error(
        "{count} relabellings are too many to enumerate exactly (at most {MAX_RELABELLINGS}); \
         compare fewer runs per group"
    )]
    TooManyRelabellings { count: String },
    #[error(
        "the exact stratified test over {strata} tasks is too large to count: more than \
         {MAX_NULL_SUPPORT} distinct sums, and its tail needs more than {MAX_COUNT_STEPS} steps"
    )]
    TooLargeToCount { strata: usize },
}

/// Which way a test looks: the statistic is `stat(x) - stat(y)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alternative {
    TwoSided,
    /// x smaller than y.
    Less,
    /// x larger than y.
    Greater,
}
