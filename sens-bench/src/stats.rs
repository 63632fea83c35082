//! Statistics (SPEC 3.9): small pure functions over slices of run values, no I/O.
//!
//! - Median differences with percentile bootstrap intervals. Resampling draws runs
//!   with replacement within each (task, condition) cell; the seed is a parameter
//!   with a fixed default, so the same records always give the same interval.
//! - Exact permutation tests: independent ones enumerate every relabelling;
//!   stratified ones (by task) count the relabellings of every task together
//!   without listing them. p-values follow `scipy.stats.permutation_test`: one-sided
//!   p counts relabellings at least as extreme in that direction; two-sided p is
//!   twice the smaller one-sided p, capped at 1.
//! - Fisher's exact test for success counts; the Horizonte decision.
//!
//! Enumerations too large to be exact are refused with [`StatsError`], never
//! approximated and never left to run for hours.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{Discrete, Hypergeometric};

/// Resamples of every bootstrap.
pub const RESAMPLES: usize = 10_000;
/// The fixed default seed of every bootstrap.
pub const DEFAULT_SEED: u64 = 20_260_530;
/// Coverage of the bootstrap intervals.
pub const CONFIDENCE: f64 = 0.95;
/// The most relabellings one test (or one stratum) enumerates: 12 vs 12 runs
/// (C(24, 12) = 2,704,156) fit, 13 vs 12 (C(25, 12) = 5,200,300) do not.
pub const MAX_RELABELLINGS: u128 = 5_000_000;
/// The most distinct values a stratified null distribution may hold while strata are
/// combined. Integer metrics such as lines added stay far below it (their sums share
/// values); tokens or costs over many tasks exceed it and are counted by search.
pub const MAX_NULL_SUPPORT: usize = 100_000;
/// The most steps the stratified test's tail count may take before it is refused.
pub const MAX_COUNT_STEPS: usize = 20_000;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("an empty sample: every group needs at least one value")]
    EmptySample,
    #[error("a value is not finite: {0}")]
    NotFinite(f64),
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

/// The statistic of an independent permutation test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    MeanDiff,
    MedianDiff,
}

/// A closed interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// A point estimate with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub ci: Interval,
}

/// One task's two cells: the runs of the condition and of the baseline.
#[derive(Debug, Clone, Copy)]
pub struct Cells<'a> {
    pub condition: &'a [f64],
    pub baseline: &'a [f64],
}

/// Median differences per task and across tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct MedianDiffs {
    /// Per task, in the order given: median(condition) - median(baseline).
    pub per_task: Vec<Estimate>,
    /// The median of the per-task differences.
    pub across: Estimate,
}

/// The median; `None` for an empty slice.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut copy = values.to_vec();
    median_in_place(&mut copy)
}

/// The median, reordering `values` (the bootstrap's hot path avoids a copy).
fn median_in_place(values: &mut [f64]) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mid = n / 2;
    let (below, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lower + upper) / 2.0)
}

/// The mean; `None` for an empty slice.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// The `q`-th percentile (0..=100) of sorted, non-empty values, interpolating
/// linearly between neighbours as numpy's default does (so intervals match scipy's).
fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = (sorted.len() - 1) as f64 * q / 100.0;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

fn check_sample(values: &[f64]) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::EmptySample);
    }
    match values.iter().find(|v| !v.is_finite()) {
        Some(bad) => Err(StatsError::NotFinite(*bad)),
        None => Ok(()),
    }
}

/// Draws resamples of one sample with replacement into a reused buffer.
struct Resampler<'a> {
    sample: &'a [f64],
    stage: Vec<f64>,
}

impl<'a> Resampler<'a> {
    fn new(sample: &'a [f64]) -> Self {
        Resampler {
            sample,
            stage: vec![0.0; sample.len()],
        }
    }

    fn next(&mut self, rng: &mut ChaCha8Rng) -> &mut [f64] {
        let n = self.sample.len();
        for slot in &mut self.stage {
            *slot = self.sample[rng.random_range(0..n)];
        }
        &mut self.stage
    }

    fn next_median(&mut self, rng: &mut ChaCha8Rng) -> f64 {
        // A resample of a non-empty sample is non-empty.
        median_in_place(self.next(rng)).unwrap_or(f64::NAN)
    }
}

/// The percentile bootstrap: how many resamples, from which seed, at what coverage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub confidence: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: RESAMPLES,
            seed: DEFAULT_SEED,
            confidence: CONFIDENCE,
        }
    }
}

impl Bootstrap {
    /// Median differences per task and across tasks with percentile intervals. Each
    /// resample redraws every cell (condition and baseline of every task) with
    /// replacement; the per-task difference and the median across tasks are taken
    /// from the same resample.
    pub fn median_diffs(&self, tasks: &[Cells<'_>]) -> Result<MedianDiffs, StatsError> {
        if tasks.is_empty() || self.resamples == 0 {
            return Err(StatsError::EmptySample);
        }
        for cells in tasks {
            check_sample(cells.condition)?;
            check_sample(cells.baseline)?;
        }
        let observed: Vec<f64> = tasks.iter().map(cell_median_diff).collect();
        let observed_across = median(&observed).ok_or(StatsError::EmptySample)?;

        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut resamplers: Vec<(Resampler, Resampler)> = tasks
            .iter()
            .map(|c| (Resampler::new(c.condition), Resampler::new(c.baseline)))
            .collect();
        let mut per_task: Vec<Vec<f64>> = vec![Vec::with_capacity(self.resamples); tasks.len()];
        let mut across = Vec::with_capacity(self.resamples);
        let mut row = vec![0.0; tasks.len()];
        for _ in 0..self.resamples {
            for (t, (condition, baseline)) in resamplers.iter_mut().enumerate() {
                let d = condition.next_median(&mut rng) - baseline.next_median(&mut rng);
                per_task[t].push(d);
                row[t] = d;
            }
            across.push(median_in_place(&mut row).unwrap_or(f64::NAN));
        }
        let per_task = observed
            .iter()
            .zip(per_task)
            .map(|(&value, distribution)| Estimate {
                value,
                ci: self.interval(distribution),
            })
            .collect();
        Ok(MedianDiffs {
            per_task,
            across: Estimate {
                value: observed_across,
                ci: self.interval(across),
            },
        })
    }

    fn interval(&self, mut distribution: Vec<f64>) -> Interval {
        distribution.sort_unstable_by(f64::total_cmp);
        let tail = (1.0 - self.confidence) / 2.0 * 100.0;
        Interval {
            low: percentile_sorted(&distribution, tail),
            high: percentile_sorted(&distribution, 100.0 - tail),
        }
    }
}

fn cell_median_diff(cells: &Cells<'_>) -> f64 {
    // Both cells were checked non-empty.
    median(cells.condition).unwrap_or(f64::NAN) - median(cells.baseline).unwrap_or(f64::NAN)
}

/// C(n, k) in exact integers; `None` on overflow.
pub fn binomial(n: u64, k: u64) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        result = result.checked_mul(u128::from(n - i))? / u128::from(i + 1);
    }
    Some(result)
}

fn relabellings(n1: usize, n2: usize) -> Result<u128, StatsError> {
    let total = (n1 + n2) as u64;
    match binomial(total, n1 as u64) {
        Some(count) if count <= MAX_RELABELLINGS => Ok(count),
        Some(count) => Err(StatsError::TooManyRelabellings {
            count: count.to_string(),
        }),
        None => Err(StatsError::TooManyRelabellings {
            count: format!("C({total}, {n1})"),
        }),
    }
}

/// Calls `visit` with every way to choose `k` of `0..n` (as sorted index lists).
fn for_each_combination(n: usize, k: usize, mut visit: impl FnMut(&[usize])) {
    let mut chosen: Vec<usize> = (0..k).collect();
    loop {
        visit(&chosen);
        // Advance the rightmost index that can still move right.
        let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
            return;
        };
        chosen[i] += 1;
        for j in i + 1..k {
            chosen[j] = chosen[j - 1] + 1;
        }
    }
}

/// Every relabelling's value of `statistic(x') - statistic(y')`, where x' takes
/// `x.len()` of the pooled values: the exact null distribution, one entry per
/// relabelling.
fn null_distribution(x: &[f64], y: &[f64], statistic: Statistic) -> Result<Vec<f64>, StatsError> {
    check_sample(x)?;
    check_sample(y)?;
    let count = relabellings(x.len(), y.len())?;
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let mut values = Vec::with_capacity(count as usize);
    let (n1, n2) = (x.len(), y.len());
    let total: f64 = pooled.iter().sum();
    let mut in_x = vec![false; pooled.len()];
    let mut first = Vec::with_capacity(n1);
    let mut second = Vec::with_capacity(n2);
    for_each_combination(pooled.len(), n1, |chosen| match statistic {
        Statistic::MeanDiff => {
            let sum: f64 = chosen.iter().map(|&i| pooled[i]).sum();
            values.push(sum / n1 as f64 - (total - sum) / n2 as f64);
        }
        Statistic::MedianDiff => {
            in_x.iter_mut().for_each(|flag| *flag = false);
            chosen.iter().for_each(|&i| in_x[i] = true);
            first.clear();
            second.clear();
            for (value, &flag) in pooled.iter().zip(&in_x) {
                if flag { &mut first } else { &mut second }.push(*value);
            }
            let d = median_in_place(&mut first).unwrap_or(f64::NAN)
                - median_in_place(&mut second).unwrap_or(f64::NAN);
            values.push(d);
        }
    });
    Ok(values)
}

fn observed_statistic(x: &[f64], y: &[f64], statistic: Statistic) -> f64 {
    let center = match statistic {
        Statistic::MeanDiff => mean,
        Statistic::MedianDiff => median,
    };
    center(x).unwrap_or(f64::NAN) - center(y).unwrap_or(f64::NAN)
}

/// The p-value of `observed` under a null distribution of (value, relabellings)
/// pairs. `tolerance` absorbs rounding: values within it of `observed` count as
/// equal (scipy uses 100 machine epsilons relative to the observed value).
fn p_value(null: &[(f64, u128)], observed: f64, tolerance: f64, alternative: Alternative) -> f64 {
    let total: u128 = null.iter().map(|(_, count)| count).sum();
    let count_where = |keep: &dyn Fn(f64) -> bool| -> f64 {
        let hits: u128 = null.iter().filter(|(v, _)| keep(*v)).map(|(_, c)| c).sum();
        hits as f64 / total as f64
    };
    let less = || count_where(&|v| v <= observed + tolerance);
    let greater = || count_where(&|v| v >= observed - tolerance);
    match alternative {
        Alternative::Less => less(),
        Alternative::Greater => greater(),
        Alternative::TwoSided => (2.0 * less().min(greater())).min(1.0),
    }
}

fn scipy_tolerance(observed: f64) -> f64 {
    observed.abs() * 100.0 * f64::EPSILON
}

/// The exact permutation test of two independent samples: every relabelling of the
/// pooled values into groups of `x.len()` and `y.len()` is enumerated.
pub fn permutation_test(
    x: &[f64],
    y: &[f64],
    statistic: Statistic,
    alternative: Alternative,
) -> Result<f64, StatsError> {
    let null: Vec<(f64, u128)> = null_distribution(x, y, statistic)?
        .into_iter()
        .map(|v| (v, 1))
        .collect();
    let observed = observed_statistic(x, y, statistic);
    Ok(p_value(
        &null,
        observed,
        scipy_tolerance(observed),
        alternative,
    ))
}

/// The exact permutation test stratified by task: runs are relabelled only within
/// each task (condition vs baseline), and the statistic is the sum over tasks of
/// the per-task mean differences. The relabellings multiply across tasks (20^12 for
/// 12 tasks of 3 vs 3), so they are counted, not listed: first by convolving the
/// per-task null distributions (exact while the sums share few distinct values, as
/// integer metrics do), else by a branch-and-bound count of the tail beyond the
/// observed sum, which is fast exactly when that tail is small. When neither fits
/// its budget the test is refused.
pub fn stratified_permutation_test(
    strata: &[Cells<'_>],
    alternative: Alternative,
) -> Result<f64, StatsError> {
    stratified_within(strata, alternative, MAX_COUNT_STEPS)
}

/// The stratified test with a budget of search steps for each tail.
fn stratified_within(
    strata: &[Cells<'_>],
    alternative: Alternative,
    max_steps: usize,
) -> Result<f64, StatsError> {
    if strata.is_empty() {
        return Err(StatsError::EmptySample);
    }
    let mut raw = Vec::with_capacity(strata.len());
    for cells in strata {
        raw.push(null_distribution(
            cells.condition,
            cells.baseline,
            Statistic::MeanDiff,
        )?);
    }
    // Values that are equal in exact arithmetic may differ in their last bits after
    // different sums; merge them at a tolerance far below any difference in the data.
    let scale: f64 = raw
        .iter()
        .map(|values| values.iter().fold(0.0_f64, |m, v| m.max(v.abs())))
        .sum();
    let merge_tolerance = scale.max(f64::MIN_POSITIVE) * 1e-9;
    let per_stratum: Vec<Vec<(f64, u128)>> = raw
        .into_iter()
        .map(|values| {
            merge_close(
                values.into_iter().map(|v| (v, 1)).collect(),
                merge_tolerance,
            )
        })
        .collect();
    let too_large = || StatsError::TooLargeToCount {
        strata: strata.len(),
    };
    let total = per_stratum.iter().try_fold(1_u128, |product, stratum| {
        product.checked_mul(stratum.iter().map(|(_, c)| c).sum())
    });
    let total = total.ok_or_else(too_large)?;
    let observed: f64 = strata
        .iter()
        .map(|c| observed_statistic(c.condition, c.baseline, Statistic::MeanDiff))
        .sum();
    let tolerance = merge_tolerance.max(scipy_tolerance(observed));
    let (split, rest) = convolve_suffix(&per_stratum, merge_tolerance);
    if split == 0 {
        return Ok(p_value(&rest, observed, tolerance, alternative));
    }
    let head = &per_stratum[..split];
    let negate = |part: &[(f64, u128)]| -> Vec<(f64, u128)> {
        part.iter().rev().map(|&(v, c)| (-v, c)).collect()
    };
    let negated_head: Vec<Vec<(f64, u128)>> = head.iter().map(|s| negate(s)).collect();
    let negated_rest = negate(&rest);
    let share = |count: u128| count as f64 / total as f64;
    let less = || count_at_most(head, &rest, observed + tolerance, max_steps).map(share);
    let greater = || {
        count_at_most(
            &negated_head,
            &negated_rest,
            -(observed - tolerance),
            max_steps,
        )
        .map(share)
    };
    match alternative {
        Alternative::Less => less().ok_or_else(too_large),
        Alternative::Greater => greater().ok_or_else(too_large),
        // The two tails overlap and cover everything (p_less + p_greater >= 1), so
        // a tail of at most one half is the smaller one.
        Alternative::TwoSided => match (less(), greater()) {
            (Some(l), Some(g)) => Ok((2.0 * l.min(g)).min(1.0)),
            (Some(tail), None) | (None, Some(tail)) if tail <= 0.5 => Ok(2.0 * tail),
            _ => Err(too_large()),
        },
    }
}

/// Convolves the strata from the last one back while the joint distribution stays
/// under [`MAX_NULL_SUPPORT`] distinct values (merged at `tolerance`). Returns how
/// many leading strata are left out (0: the whole null distribution) and the joint
/// distribution of the others.
fn convolve_suffix(per_stratum: &[Vec<(f64, u128)>], tolerance: f64) -> (usize, Vec<(f64, u128)>) {
    let mut split = per_stratum.len();
    let mut rest: Vec<(f64, u128)> = vec![(0.0, 1)];
    while split > 0 {
        match convolve_pair(&rest, &per_stratum[split - 1], tolerance) {
            Some(joint) => {
                rest = joint;
                split -= 1;
            }
            None => break,
        }
    }
    (split, rest)
}

/// The distribution of the sum of two independent parts; `None` past the cap.
fn convolve_pair(
    joint: &[(f64, u128)],
    stratum: &[(f64, u128)],
    tolerance: f64,
) -> Option<Vec<(f64, u128)>> {
    // Sums before merging: integer metrics merge many, so allow some room, but not
    // so much that a failing attempt costs a long sort.
    if joint.len().saturating_mul(stratum.len()) > MAX_NULL_SUPPORT.saturating_mul(4) {
        return None;
    }
    let mut next = Vec::with_capacity(joint.len() * stratum.len());
    for &(a, ca) in joint {
        for &(b, cb) in stratum {
            next.push((a + b, ca.checked_mul(cb)?));
        }
    }
    let merged = merge_close(next, tolerance);
    (merged.len() <= MAX_NULL_SUPPORT).then_some(merged)
}

/// How many combinations of one value per stratum of `head` and one of `rest` (a
/// joint distribution), weighted by their counts, sum to at most `threshold`. All
/// hold (value, count) sorted by value. A search over `head` counts whole subtrees
/// at once when they lie entirely below or above the threshold and looks the
/// remainder up in `rest`; it is fast exactly when the counted tail is small.
/// `None` when the search needs more than `max_steps` steps.
fn count_at_most(
    head: &[Vec<(f64, u128)>],
    rest: &[(f64, u128)],
    threshold: f64,
    max_steps: usize,
) -> Option<u128> {
    let split = head.len();
    let rest_values: Vec<f64> = rest.iter().map(|(v, _)| *v).collect();
    let rest_cumulative: Vec<u128> = rest
        .iter()
        .scan(0_u128, |acc, (_, c)| {
            *acc += c;
            Some(*acc)
        })
        .collect();
    let mut suffix_min = vec![rest_values.first().copied()?; split + 1];
    let mut suffix_max = vec![rest_values.last().copied()?; split + 1];
    let mut suffix_total = vec![rest_cumulative.last().copied()?; split + 1];
    for d in (0..split).rev() {
        suffix_min[d] = suffix_min[d + 1] + head[d].first()?.0;
        suffix_max[d] = suffix_max[d + 1] + head[d].last()?.0;
        let here: u128 = head[d].iter().map(|(_, c)| c).sum();
        suffix_total[d] = suffix_total[d + 1].checked_mul(here)?;
    }
    struct Search<'a> {
        strata: &'a [Vec<(f64, u128)>],
        split: usize,
        rest_values: Vec<f64>,
        rest_cumulative: Vec<u128>,
        threshold: f64,
        suffix_min: Vec<f64>,
        suffix_max: Vec<f64>,
        suffix_total: Vec<u128>,
        steps: usize,
        max_steps: usize,
    }
    impl Search<'_> {
        fn count(&mut self, depth: usize, sum: f64) -> Option<u128> {
            if sum + self.suffix_max[depth] <= self.threshold {
                return Some(self.suffix_total[depth]);
            }
            if sum + self.suffix_min[depth] > self.threshold {
                return Some(0);
            }
            if depth == self.split {
                let below = self
                    .rest_values
                    .partition_point(|v| sum + v <= self.threshold);
                return Some(below.checked_sub(1).map_or(0, |i| self.rest_cumulative[i]));
            }
            self.steps += 1;
            if self.steps > self.max_steps {
                return None;
            }
            let mut total: u128 = 0;
            for &(value, count) in &self.strata[depth] {
                if sum + value + self.suffix_min[depth + 1] > self.threshold {
                    break;
                }
                total += count.checked_mul(self.count(depth + 1, sum + value)?)?;
            }
            Some(total)
        }
    }
    Search {
        strata: head,
        split,
        rest_values,
        rest_cumulative,
        threshold,
        suffix_min,
        suffix_max,
        suffix_total,
        steps: 0,
        max_steps,
    }
    .count(0, 0.0)
}

/// Sorts (value, count) pairs and merges runs of values within `tolerance` of the
/// run's first value.
fn merge_close(mut pairs: Vec<(f64, u128)>, tolerance: f64) -> Vec<(f64, u128)> {
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, u128)> = Vec::with_capacity(pairs.len());
    for (value, count) in pairs {
        match merged.last_mut() {
            Some((last, total)) if value - *last <= tolerance => *total += count,
            _ => merged.push((value, count)),
        }
    }
    merged
}

/// Success counts of two groups: `successes` of `n` runs each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub successes: u64,
    pub n: u64,
}

/// Fisher's exact test on the 2x2 table (rows: group a, group b; columns: success,
/// failure). `Less` asks whether a succeeds less often than b. The two-sided p sums
/// the probabilities of every table no more likely than the observed one (with the
/// relative tolerance 1e-7 that R and scipy use against rounding).
pub fn fisher_exact(a: Counts, b: Counts, alternative: Alternative) -> Result<f64, StatsError> {
    if a.n == 0 || b.n == 0 || a.successes > a.n || b.successes > b.n {
        return Err(StatsError::EmptySample);
    }
    let population = a.n + b.n;
    let successes = a.successes + b.successes;
    // a.successes follows the hypergeometric law of a.n draws from the population.
    let law =
        Hypergeometric::new(population, successes, a.n).map_err(|_| StatsError::EmptySample)?;
    let lowest = (a.n + successes).saturating_sub(population);
    let highest = a.n.min(successes);
    let observed = a.successes;
    let pmf_obs = law.pmf(observed);
    let sum_where = |keep: &dyn Fn(u64) -> bool| -> f64 {
        (lowest..=highest)
            .filter(|&k| keep(k))
            .map(|k| law.pmf(k))
            .sum()
    };
    let p = match alternative {
        Alternative::Less => sum_where(&|k| k <= observed),
        Alternative::Greater => sum_where(&|k| k >= observed),
        Alternative::TwoSided => sum_where(&|k| law.pmf(k) <= pmf_obs * (1.0 + 1e-7)),
    };
    Ok(p.min(1.0))
}

/// The Horizonte decision (fixed before measuring): the condition makes the project
/// smaller only if every condition sequence ends smaller than every baseline one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub all_below: bool,
    /// One-sided exact permutation p (condition smaller), difference of means.
    pub p_exact: f64,
}

/// Decides on the final sizes of the condition's and the baseline's sequences.
/// With 3 and 3 sequences and every condition one below every baseline one, p = 1/20.
pub fn horizonte_decision(condition: &[f64], baseline: &[f64]) -> Result<Decision, StatsError> {
    let p_exact = permutation_test(condition, baseline, Statistic::MeanDiff, Alternative::Less)?;
    let highest = condition.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lowest = baseline.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(Decision {
        all_below: highest < lowest,
        p_exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles_follow_numpy() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_sorted(&sorted, 50.0), 3.0);
        assert_eq!(percentile_sorted(&sorted, 2.5), 1.1);
        assert!((percentile_sorted(&sorted, 97.5) - 4.9).abs() < 1e-12);
    }

    #[test]
    fn binomials_are_exact_and_overflow_is_caught() {
        assert_eq!(binomial(6, 3), Some(20));
        assert_eq!(binomial(24, 12), Some(2_704_156));
        assert_eq!(binomial(5, 0), Some(1));
        assert_eq!(binomial(3, 5), Some(0));
        assert_eq!(binomial(200, 100), None);
    }

    #[test]
    fn enumeration_visits_every_combination_once() {
        let mut seen = Vec::new();
        for_each_combination(5, 2, |c| seen.push(c.to_vec()));
        assert_eq!(seen.len(), 10);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 10);
        assert_eq!(seen[0], vec![0, 1]);
        assert_eq!(seen[9], vec![3, 4]);
    }

    #[test]
    fn three_below_three_gives_one_twentieth() {
        let decision = horizonte_decision(&[100.0, 110.0, 120.0], &[130.0, 150.0, 140.0]).unwrap();
        assert!(decision.all_below);
        assert_eq!(decision.p_exact, 1.0 / 20.0);
        let mixed = horizonte_decision(&[100.0, 145.0, 120.0], &[130.0, 150.0, 140.0]).unwrap();
        assert!(!mixed.all_below);
        assert!(mixed.p_exact > 0.05);
    }

    #[test]
    fn two_sided_p_doubles_the_smaller_tail_and_caps_at_one() {
        let x = [1.0, 2.0, 3.0];
        let y = [4.0, 5.0, 6.0];
        let less = permutation_test(&x, &y, Statistic::MeanDiff, Alternative::Less).unwrap();
        let greater = permutation_test(&x, &y, Statistic::MeanDiff, Alternative::Greater).unwrap();
        let two = permutation_test(&x, &y, Statistic::MeanDiff, Alternative::TwoSided).unwrap();
        assert_eq!(less, 0.05);
        assert_eq!(greater, 1.0);
        assert_eq!(two, 0.1);
        let same = permutation_test(&[1.0], &[1.0], Statistic::MedianDiff, Alternative::TwoSided);
        assert_eq!(same, Ok(1.0));
    }

    #[test]
    fn too_many_relabellings_are_refused_not_enumerated() {
        let big: Vec<f64> = (0..40).map(f64::from).collect();
        let err = permutation_test(
            &big[..20],
            &big[20..],
            Statistic::MeanDiff,
            Alternative::Less,
        )
        .unwrap_err();
        assert!(matches!(err, StatsError::TooManyRelabellings { .. }));
        assert!(err.to_string().contains("137846528820"), "{err}");
    }

    #[test]
    fn stratified_matches_brute_force_enumeration() {
        let a = ([3.0, 5.0, 4.0], [6.0, 9.0, 7.0]);
        let b = ([10.0, 12.0], [11.0, 15.0, 14.0]);
        let strata = [
            Cells {
                condition: &a.0,
                baseline: &a.1,
            },
            Cells {
                condition: &b.0,
                baseline: &b.1,
            },
        ];
        let observed = observed_statistic(&a.0, &a.1, Statistic::MeanDiff)
            + observed_statistic(&b.0, &b.1, Statistic::MeanDiff);
        let first = null_distribution(&a.0, &a.1, Statistic::MeanDiff).unwrap();
        let second = null_distribution(&b.0, &b.1, Statistic::MeanDiff).unwrap();
        let sums: Vec<f64> = first
            .iter()
            .flat_map(|u| second.iter().map(move |v| u + v))
            .collect();
        let brute_less =
            sums.iter().filter(|&&s| s <= observed + 1e-9).count() as f64 / sums.len() as f64;
        let brute_greater =
            sums.iter().filter(|&&s| s >= observed - 1e-9).count() as f64 / sums.len() as f64;
        assert_eq!(sums.len(), 200);
        let less = stratified_permutation_test(&strata, Alternative::Less).unwrap();
        assert_eq!(less, brute_less);
        let two = stratified_permutation_test(&strata, Alternative::TwoSided).unwrap();
        assert_eq!(two, (2.0 * brute_less.min(brute_greater)).min(1.0));
    }

    #[test]
    fn stratified_is_exact_over_a_bench_sized_batch_of_integers() {
        // 12 tasks, 3 vs 3 runs, condition below baseline in every task: only the
        // observed relabelling is as extreme, 1 in 20^12.
        let values: Vec<[f64; 6]> = (0..12)
            .map(|t| {
                let base = f64::from(t * 37 % 200);
                [
                    base,
                    base + 4.0,
                    base + 9.0,
                    base + 50.0,
                    base + 61.0,
                    base + 75.0,
                ]
            })
            .collect();
        let strata: Vec<Cells> = values
            .iter()
            .map(|v| Cells {
                condition: &v[..3],
                baseline: &v[3..],
            })
            .collect();
        let p = stratified_permutation_test(&strata, Alternative::Less).unwrap();
        assert_eq!(p, 1.0 / 20f64.powi(12));
    }

    /// Twelve tasks of square roots (sums of them rarely coincide, so the joint
    /// distribution has ~20^12 distinct values); `order` picks which three of each
    /// task's six values form the condition.
    fn irrational_strata(order: [usize; 6]) -> Vec<[f64; 6]> {
        (0..12)
            .map(|t| order.map(|i| (((t * 6 + i) as f64) + 2.0).sqrt() * 1e3))
            .collect()
    }

    fn as_strata(values: &[[f64; 6]]) -> Vec<Cells<'_>> {
        values
            .iter()
            .map(|v| Cells {
                condition: &v[..3],
                baseline: &v[3..],
            })
            .collect()
    }

    #[test]
    fn a_small_tail_is_counted_exactly_where_the_distribution_is_too_large() {
        let values = irrational_strata([0, 1, 2, 3, 4, 5]);
        let strata = as_strata(&values);
        let p = stratified_permutation_test(&strata, Alternative::Less).unwrap();
        assert_eq!(p, 1.0 / 20f64.powi(12));
        let two = stratified_permutation_test(&strata, Alternative::TwoSided).unwrap();
        assert_eq!(two, 2.0 / 20f64.powi(12));
    }

    #[test]
    fn a_central_statistic_over_many_irrational_tasks_is_refused() {
        let values = irrational_strata([0, 3, 4, 1, 2, 5]);
        let err =
            stratified_permutation_test(&as_strata(&values), Alternative::TwoSided).unwrap_err();
        assert_eq!(err, StatsError::TooLargeToCount { strata: 12 });
    }

    #[test]
    fn the_tail_search_agrees_with_brute_force() {
        // Eight tasks of 2 vs 2 runs: 6^8 relabellings, too many distinct sums to
        // convolve them all, so the search runs over the first tasks.
        let values: Vec<[f64; 4]> = (0..8)
            .map(|t| [0, 2, 1, 3].map(|i| (((t * 4 + i) as f64) + 2.0).sqrt() * 100.0))
            .collect();
        let per_stratum: Vec<Vec<(f64, u128)>> = values
            .iter()
            .map(|v| {
                let null = null_distribution(&v[..2], &v[2..], Statistic::MeanDiff).unwrap();
                merge_close(null.into_iter().map(|x| (x, 1)).collect(), 1e-9)
            })
            .collect();
        let (split, rest) = convolve_suffix(&per_stratum, 1e-9);
        assert!(split > 1, "the search must cover several tasks: {split}");
        let mut sums = vec![0.0];
        for stratum in &per_stratum {
            sums = sums
                .iter()
                .flat_map(|s| stratum.iter().map(move |(v, _)| s + v))
                .collect();
        }
        assert_eq!(sums.len(), 6usize.pow(8));
        for threshold in [-400.0, -90.0, -12.5, 0.0, 3.0, 55.0, 400.0] {
            let brute = sums.iter().filter(|s| **s <= threshold).count() as u128;
            assert_eq!(
                count_at_most(&per_stratum[..split], &rest, threshold, MAX_COUNT_STEPS),
                Some(brute),
                "{threshold}"
            );
        }
    }

    #[test]
    fn bootstrap_is_deterministic_for_a_seed_and_moves_with_it() {
        let cond = [10.0, 14.0, 12.0, 19.0];
        let base = [20.0, 25.0, 22.0];
        let cells = [Cells {
            condition: &cond,
            baseline: &base,
        }];
        let boot = Bootstrap::default();
        let first = boot.median_diffs(&cells).unwrap();
        assert_eq!(first, boot.median_diffs(&cells).unwrap());
        assert_eq!(first.per_task[0].value, 13.0 - 22.0);
        assert_eq!(first.across, first.per_task[0]);
        let ci = first.per_task[0].ci;
        assert!(ci.low <= -9.0 && -9.0 <= ci.high, "{ci:?}");
        assert!(ci.low >= 10.0 - 25.0 && ci.high <= 19.0 - 20.0, "{ci:?}");
        let other = Bootstrap { seed: 7, ..boot };
        let moved = other.median_diffs(&cells).unwrap();
        assert_eq!(moved.per_task[0].value, first.per_task[0].value);
    }

    #[test]
    fn a_single_run_per_cell_gives_a_point_interval() {
        let cells = [Cells {
            condition: &[5.0],
            baseline: &[8.0],
        }];
        let diffs = Bootstrap::default().median_diffs(&cells).unwrap();
        assert_eq!(
            diffs.across.ci,
            Interval {
                low: -3.0,
                high: -3.0
            }
        );
    }

    #[test]
    fn empty_and_non_finite_samples_are_errors() {
        let cells = [Cells {
            condition: &[],
            baseline: &[8.0],
        }];
        assert_eq!(
            Bootstrap::default().median_diffs(&cells),
            Err(StatsError::EmptySample)
        );
        let nan = permutation_test(&[f64::NAN], &[1.0], Statistic::MeanDiff, Alternative::Less);
        assert!(matches!(nan, Err(StatsError::NotFinite(_))));
    }

    #[test]
    fn fisher_tails_add_up_around_the_observed_table() {
        let a = Counts { successes: 1, n: 3 };
        let b = Counts { successes: 6, n: 6 };
        let less = fisher_exact(a, b, Alternative::Less).unwrap();
        let greater = fisher_exact(a, b, Alternative::Greater).unwrap();
        // P(X <= 1) + P(X >= 1) = 1 + P(X = 1); P(X = 1) = C(7,1) C(2,2) / C(9,3) = 7/84.
        assert!((less + greater - (1.0 + 7.0 / 84.0)).abs() < 1e-12);
        assert!((less - 1.0 / 12.0).abs() < 1e-12);
        assert!(fisher_exact(Counts { successes: 4, n: 3 }, b, Alternative::Less).is_err());
    }
}
