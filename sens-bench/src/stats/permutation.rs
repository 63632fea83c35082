//! Exact permutation tests of two independent samples: every relabelling of the
//! pooled values is enumerated. p-values follow `scipy.stats.permutation_test`:
//! one-sided p counts relabellings at least as extreme in that direction; two-sided
//! p is twice the smaller one-sided p, capped at 1.

use super::describe::median_of_non_empty;
use super::sample::Sample;
use super::{Alternative, StatsError};

/// The most relabellings one test (or one stratum) enumerates: 12 vs 12 runs
/// (C(24, 12) = 2,704,156) fit, 13 vs 12 (C(25, 12) = 5,200,300) do not.
pub const MAX_RELABELLINGS: u128 = 5_000_000;

/// The statistic of an independent permutation test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    MeanDiff,
    MedianDiff,
}

/// C(n, k) in exact integers; `None` on overflow.
fn binomial(n: u64, k: u64) -> Option<u128> {
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
pub(super) fn null_distribution(
    x: Sample<'_>,
    y: Sample<'_>,
    statistic: Statistic,
) -> Result<Vec<f64>, StatsError> {
    let count = relabellings(x.len(), y.len())?;
    let pooled: Vec<f64> = x.iter().chain(y.iter()).copied().collect();
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
            // Both groups keep their sample's size, so neither is empty.
            values.push(median_of_non_empty(&mut first) - median_of_non_empty(&mut second));
        }
    });
    Ok(values)
}

pub(super) fn observed_statistic(x: Sample<'_>, y: Sample<'_>, statistic: Statistic) -> f64 {
    match statistic {
        Statistic::MeanDiff => x.mean() - y.mean(),
        Statistic::MedianDiff => x.median() - y.median(),
    }
}

/// The p-value of `observed` under a null distribution of (value, relabellings)
/// pairs. `tolerance` absorbs rounding: values within it of `observed` count as
/// equal (scipy uses 100 machine epsilons relative to the observed value).
pub(super) fn p_value(
    null: &[(f64, u128)],
    observed: f64,
    tolerance: f64,
    alternative: Alternative,
) -> f64 {
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

pub(super) fn scipy_tolerance(observed: f64) -> f64 {
    observed.abs() * 100.0 * f64::EPSILON
}

/// The exact permutation test of two independent samples: every relabelling of the
/// pooled values into groups of `x.len()` and `y.len()` is enumerated.
pub fn permutation_test(
    x: Sample<'_>,
    y: Sample<'_>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f64]) -> Sample<'_> {
        Sample::new(values).unwrap()
    }

    #[test]
    fn binomials_are_exact_and_overflow_is_caught() {
        assert_eq!(binomial(6, 3), Some(20));
        assert_eq!(binomial(7, 2), Some(21));
        assert_eq!(binomial(24, 12), Some(2_704_156));
        assert_eq!(binomial(5, 0), Some(1));
        assert_eq!(binomial(5, 5), Some(1));
        // C(n, k) is computed as C(n, n - k) when that is shorter, so it does not
        // overflow on the way.
        assert_eq!(binomial(200, 199), Some(200));
        assert_eq!(binomial(3, 5), Some(0));
        assert_eq!(binomial(200, 100), None);
    }

    #[test]
    fn the_relabelling_cap_lets_12_vs_12_through_and_stops_13_vs_12() {
        assert_eq!(relabellings(12, 12), Ok(2_704_156));
        assert_eq!(
            relabellings(13, 12),
            Err(StatsError::TooManyRelabellings {
                count: "5200300".into()
            })
        );
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
        let mut triples = 0;
        for_each_combination(6, 3, |c| {
            assert!(c.windows(2).all(|w| w[0] < w[1]) && c[2] < 6, "{c:?}");
            triples += 1;
        });
        assert_eq!(triples, 20);
    }

    #[test]
    fn null_distributions_hold_every_relabelling_s_statistic() {
        let (x, y) = (sample(&[1.0, 4.0]), sample(&[2.0]));
        let mut means = null_distribution(x, y, Statistic::MeanDiff).unwrap();
        means.sort_by(f64::total_cmp);
        // {1,4} vs 2, {1,2} vs 4, {4,2} vs 1.
        assert_eq!(means, [-2.5, 0.5, 2.0]);
        let mut medians = null_distribution(x, y, Statistic::MedianDiff).unwrap();
        medians.sort_by(f64::total_cmp);
        assert_eq!(medians, [-2.5, 0.5, 2.0]);
        let (x, y) = (sample(&[1.0, 2.0, 9.0]), sample(&[3.0]));
        let medians = null_distribution(x, y, Statistic::MedianDiff).unwrap();
        // Medians of {1,2,9}, {1,2,3}, {1,9,3}, {2,9,3} minus the one left out.
        assert_eq!(medians, [2.0 - 3.0, 2.0 - 9.0, 3.0 - 2.0, 3.0 - 1.0]);
        assert_eq!(observed_statistic(x, y, Statistic::MeanDiff), 4.0 - 3.0);
        assert_eq!(observed_statistic(x, y, Statistic::MedianDiff), 2.0 - 3.0);
    }

    #[test]
    fn two_sided_p_doubles_the_smaller_tail_and_caps_at_one() {
        let x = sample(&[1.0, 2.0, 3.0]);
        let y = sample(&[4.0, 5.0, 6.0]);
        let less = permutation_test(x, y, Statistic::MeanDiff, Alternative::Less).unwrap();
        let greater = permutation_test(x, y, Statistic::MeanDiff, Alternative::Greater).unwrap();
        let two = permutation_test(x, y, Statistic::MeanDiff, Alternative::TwoSided).unwrap();
        assert_eq!(less, 0.05);
        assert_eq!(greater, 1.0);
        assert_eq!(two, 0.1);
        let one = sample(&[1.0]);
        let same = permutation_test(one, one, Statistic::MedianDiff, Alternative::TwoSided);
        assert_eq!(same, Ok(1.0));
    }

    #[test]
    fn values_within_the_tolerance_count_as_ties() {
        let null = [(-1.0, 1), (0.0, 2), (1.0 + 1e-12, 1)];
        assert_eq!(p_value(&null, 1.0, 1e-9, Alternative::Greater), 0.25);
        assert_eq!(p_value(&null, 1.0, 0.0, Alternative::Greater), 0.25);
        assert_eq!(
            p_value(&null, 1.0 + 2e-12, 1e-9, Alternative::Greater),
            0.25
        );
        assert_eq!(p_value(&null, 1.0 + 2e-12, 0.0, Alternative::Greater), 0.0);
        assert_eq!(p_value(&null, -1.0 - 1e-12, 1e-9, Alternative::Less), 0.25);
        assert_eq!(p_value(&null, -1.0 - 1e-12, 0.0, Alternative::Less), 0.0);
        assert_eq!(scipy_tolerance(-2.0), 200.0 * f64::EPSILON);
    }

    #[test]
    fn too_many_relabellings_are_refused_not_enumerated() {
        let big: Vec<f64> = (0..40).map(f64::from).collect();
        let err = permutation_test(
            sample(&big[..20]),
            sample(&big[20..]),
            Statistic::MeanDiff,
            Alternative::Less,
        )
        .unwrap_err();
        assert!(matches!(err, StatsError::TooManyRelabellings { .. }));
        assert!(err.to_string().contains("137846528820"), "{err}");
        let huge: Vec<f64> = (0..300).map(f64::from).collect();
        let err = permutation_test(
            sample(&huge[..150]),
            sample(&huge[150..]),
            Statistic::MeanDiff,
            Alternative::Less,
        )
        .unwrap_err();
        assert!(err.to_string().contains("C(300, 150)"), "{err}");
    }
}
