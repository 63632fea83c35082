//! Fisher's exact test on success counts.

use statrs::distribution::{Discrete, Hypergeometric};

use super::{Alternative, StatsError};

/// Success counts of one group: `successes` of `n` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub successes: u64,
    pub n: u64,
}

impl Counts {
    fn check(self) -> Result<Self, StatsError> {
        if self.n == 0 || self.successes > self.n {
            return Err(StatsError::ImpossibleCounts {
                successes: self.successes,
                n: self.n,
            });
        }
        Ok(self)
    }
}

/// Fisher's exact test on the 2x2 table (rows: group a, group b; columns: success,
/// failure). `Less` asks whether a succeeds less often than b. The two-sided p sums
/// the probabilities of every table no more likely than the observed one (with the
/// relative tolerance 1e-7 that R and scipy use against rounding).
pub fn fisher_exact(a: Counts, b: Counts, alternative: Alternative) -> Result<f64, StatsError> {
    let (a, b) = (a.check()?, b.check()?);
    let population = a.n + b.n;
    let successes = a.successes + b.successes;
    // a.successes follows the hypergeometric law of a.n draws from the population;
    // checked counts always make a valid law.
    let law = Hypergeometric::new(population, successes, a.n).map_err(|_| {
        StatsError::ImpossibleCounts {
            successes: a.successes,
            n: a.n,
        }
    })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fisher_tails_add_up_around_the_observed_table() {
        let a = Counts { successes: 1, n: 3 };
        let b = Counts { successes: 6, n: 6 };
        let less = fisher_exact(a, b, Alternative::Less).unwrap();
        let greater = fisher_exact(a, b, Alternative::Greater).unwrap();
        // P(X <= 1) + P(X >= 1) = 1 + P(X = 1); P(X = 1) = C(7,1) C(2,2) / C(9,3) = 7/84.
        assert!((less + greater - (1.0 + 7.0 / 84.0)).abs() < 1e-12);
        assert!((less - 1.0 / 12.0).abs() < 1e-12);
        // Two-sided: only the observed table is as unlikely (P = 7/84 = 1/12).
        let two = fisher_exact(a, b, Alternative::TwoSided).unwrap();
        assert!((two - 1.0 / 12.0).abs() < 1e-12, "{two}");
        // 0 of 3 vs 3 of 6: the tables with 0 or 3 successes in a, 13/28 together.
        let none = Counts { successes: 0, n: 3 };
        let half = Counts { successes: 3, n: 6 };
        let two = fisher_exact(none, half, Alternative::TwoSided).unwrap();
        assert!((two - 13.0 / 28.0).abs() < 1e-12, "{two}");
        // Both rows all successes: one possible table, p = 1 every way.
        let all = Counts { successes: 3, n: 3 };
        for alternative in [
            Alternative::Less,
            Alternative::Greater,
            Alternative::TwoSided,
        ] {
            assert_eq!(fisher_exact(all, all, alternative), Ok(1.0));
        }
    }

    #[test]
    fn impossible_counts_are_errors_naming_them() {
        let b = Counts { successes: 6, n: 6 };
        let err = fisher_exact(Counts { successes: 4, n: 3 }, b, Alternative::Less).unwrap_err();
        assert_eq!(err, StatsError::ImpossibleCounts { successes: 4, n: 3 });
        assert!(err.to_string().contains("4 successes of 3 runs"), "{err}");
        let empty = Counts { successes: 0, n: 0 };
        assert!(fisher_exact(b, empty, Alternative::TwoSided).is_err());
        assert!(fisher_exact(Counts { successes: 7, n: 6 }, b, Alternative::TwoSided).is_err());
    }
}
