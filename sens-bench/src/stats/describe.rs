//! Descriptive statistics over plain values: the one median, and numpy's percentile.

/// The median; `None` for an empty slice.
pub fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median_of_non_empty(&mut values.to_vec()))
}

/// The median of non-empty `values`, reordering them (the bootstrap's hot path
/// avoids a copy). An empty slice is a caller's bug: every caller holds a sample.
pub(super) fn median_of_non_empty(values: &mut [f64]) -> f64 {
    let n = values.len();
    let mid = n / 2;
    let (below, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

/// The `q`-th percentile (0..=100) of sorted, non-empty values, interpolating
/// linearly between neighbours as numpy's default does (so intervals match scipy's).
pub(super) fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = (sorted.len() - 1) as f64 * q / 100.0;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles_follow_numpy() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[-4.0, -1.0, -3.0, -2.0]), Some(-2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_sorted(&sorted, 50.0), 3.0);
        assert_eq!(percentile_sorted(&sorted, 2.5), 1.1);
        assert_eq!(percentile_sorted(&sorted, 0.0), 1.0);
        assert_eq!(percentile_sorted(&sorted, 100.0), 5.0);
        assert!((percentile_sorted(&sorted, 97.5) - 4.9).abs() < 1e-12);
        assert_eq!(percentile_sorted(&[2.0, 4.0], 25.0), 2.5);
    }
}
