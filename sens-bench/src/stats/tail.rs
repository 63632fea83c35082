//! The branch-and-bound count of a stratified null distribution's tail: how many
//! relabellings of every task together sum to at most a threshold, without listing
//! them.

/// How many combinations of one value per stratum of `head` and one of `rest` (a
/// joint distribution), weighted by their counts, sum to at most `threshold`. All
/// hold (value, count) sorted by value. A search over `head` counts whole subtrees
/// at once when they lie entirely below or above the threshold and looks the
/// remainder up in `rest`; it is fast exactly when the counted tail is small.
/// `None` when the search needs more than `max_steps` steps.
pub(super) fn count_at_most(
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

#[cfg(test)]
mod tests {
    use super::*;

    type Strata = Vec<Vec<(f64, u128)>>;

    /// Every sum of one value per part with its weight, counted one by one.
    fn brute_force_at_most(head: &Strata, rest: &[(f64, u128)], threshold: f64) -> u128 {
        let mut weighted = vec![(0.0, 1_u128)];
        for part in head.iter().map(Vec::as_slice).chain([rest]) {
            weighted = weighted
                .iter()
                .flat_map(|&(s, c)| part.iter().map(move |&(v, k)| (s + v, c * k)))
                .collect();
        }
        weighted
            .iter()
            .filter(|(s, _)| *s <= threshold)
            .map(|(_, c)| c)
            .sum()
    }

    #[test]
    fn fractional_values_are_counted_as_brute_force_counts_them() {
        // Values below one (sums and products of them differ in size both ways),
        // exact in binary, so thresholds can sit exactly on a sum; the second case
        // has only positive values.
        let mixed: Strata = vec![
            vec![(-0.5, 1), (0.25, 2)],
            vec![(-0.25, 1), (0.125, 1), (0.375, 3)],
        ];
        let positive: Strata = vec![vec![(0.25, 1), (0.5, 1)], vec![(0.125, 1), (0.375, 2)]];
        let rest = vec![(-0.125, 1), (0.25, 2)];
        for head in [&mixed, &positive] {
            for threshold in [
                -1.0, -0.875, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 0.875, 1.0, 2.0,
            ] {
                assert_eq!(
                    count_at_most(head, &rest, threshold, 1_000),
                    Some(brute_force_at_most(head, &rest, threshold)),
                    "{threshold} {head:?}"
                );
            }
        }
        let head = mixed;
        assert_eq!(count_at_most(&head, &rest, 0.25, 0), None, "no steps left");
    }
}
