//! The exact permutation test stratified by task: the relabellings of every task
//! multiply, so they are counted, not listed: by convolving the per-task null
//! distributions while their sums have few distinct values, else by the
//! branch-and-bound tail count of `tail`.

use super::permutation::{
    Statistic, null_distribution, observed_statistic, p_value, scipy_tolerance,
};
use super::sample::Cells;
use super::tail::count_at_most;
use super::{Alternative, StatsError};

/// The most distinct values a stratified null distribution may hold while strata are
/// combined. Integer metrics such as lines added stay far below it (their sums share
/// values); tokens or costs over many tasks exceed it and are counted by search.
pub const MAX_NULL_SUPPORT: usize = 100_000;
/// The most steps the stratified test's tail count may take before it is refused.
pub const MAX_COUNT_STEPS: usize = 20_000;

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
    let raw = strata
        .iter()
        .map(|c| null_distribution(c.condition, c.baseline, Statistic::MeanDiff))
        .collect::<Result<Vec<_>, _>>()?;
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
        Alternative::TwoSided => two_sided(less(), greater()).ok_or_else(too_large),
    }
}

/// The two-sided p from the one-sided ones, either of which may have been refused.
/// The two tails overlap and cover everything (p_less + p_greater >= 1), so a tail
/// of at most one half is the smaller one.
fn two_sided(less: Option<f64>, greater: Option<f64>) -> Option<f64> {
    match (less, greater) {
        (Some(l), Some(g)) => Some((2.0 * l.min(g)).min(1.0)),
        (Some(tail), None) | (None, Some(tail)) if tail <= 0.5 => Some(2.0 * tail),
        _ => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stratified_matches_brute_force_enumeration() {
        let a = ([3.0, 5.0, 4.0], [6.0, 9.0, 7.0]);
        let b = ([10.0, 12.0], [11.0, 15.0, 14.0]);
        let strata = [
            Cells::new(&a.0, &a.1).unwrap(),
            Cells::new(&b.0, &b.1).unwrap(),
        ];
        let [one, two] = strata.map(|c| (c.condition, c.baseline));
        let observed = observed_statistic(one.0, one.1, Statistic::MeanDiff)
            + observed_statistic(two.0, two.1, Statistic::MeanDiff);
        let first = null_distribution(one.0, one.1, Statistic::MeanDiff).unwrap();
        let second = null_distribution(two.0, two.1, Statistic::MeanDiff).unwrap();
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
        let greater = stratified_permutation_test(&strata, Alternative::Greater).unwrap();
        assert_eq!(greater, brute_greater);
        let two = stratified_permutation_test(&strata, Alternative::TwoSided).unwrap();
        assert_eq!(two, (2.0 * brute_less.min(brute_greater)).min(1.0));
        assert_eq!(
            stratified_permutation_test(&[], Alternative::Less),
            Err(StatsError::EmptySample)
        );
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
        let strata = as_strata(&values);
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
            .map(|v| Cells::new(&v[..3], &v[3..]).unwrap())
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
        // Every relabelling is at least as large: the search counts it at once.
        let greater = stratified_permutation_test(&strata, Alternative::Greater);
        assert_eq!(greater, Ok(1.0));
        // The count is refused, not estimated, when its budget of steps runs out.
        let starved = stratified_within(&strata, Alternative::Less, 0);
        assert_eq!(starved, Err(StatsError::TooLargeToCount { strata: 12 }));
    }

    #[test]
    fn a_small_upper_tail_is_counted_by_the_mirrored_search() {
        let values = irrational_strata([3, 4, 5, 0, 1, 2]);
        let strata = as_strata(&values);
        let p = stratified_permutation_test(&strata, Alternative::Greater).unwrap();
        assert_eq!(p, 1.0 / 20f64.powi(12));
        let less = stratified_permutation_test(&strata, Alternative::Less).unwrap();
        assert_eq!(less, 1.0);
    }

    #[test]
    fn values_closer_than_the_tolerance_merge_into_one() {
        let pairs = vec![(2.0, 1), (1.0 + 1e-12, 2), (1.0, 1), (1.5, 4)];
        assert_eq!(merge_close(pairs, 1e-9), [(1.0, 3), (1.5, 4), (2.0, 1)]);
    }

    #[test]
    fn two_sided_p_takes_the_smaller_tail_even_when_the_other_was_refused() {
        assert_eq!(two_sided(Some(0.3), Some(0.9)), Some(0.6));
        assert_eq!(two_sided(Some(0.7), Some(0.8)), Some(1.0));
        assert_eq!(two_sided(Some(0.125), None), Some(0.25));
        assert_eq!(two_sided(None, Some(0.25)), Some(0.5));
        assert_eq!(two_sided(Some(0.5), None), Some(1.0));
        // A known tail over one half may be the larger one: the smaller is unknown.
        assert_eq!(two_sided(Some(0.75), None), None);
        assert_eq!(two_sided(None, Some(0.75)), None);
        assert_eq!(two_sided(None, None), None);
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
                let cells = Cells::new(&v[..2], &v[2..]).unwrap();
                let null = null_distribution(cells.condition, cells.baseline, Statistic::MeanDiff)
                    .unwrap();
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
}
