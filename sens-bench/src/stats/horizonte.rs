//! The Horizonte decision (docs/contract.md, "Statistics"; fixed before measuring): the
//! condition makes the project smaller only if every condition sequence ends smaller than
//! every baseline one.

use super::permutation::{Statistic, permutation_test};
use super::sample::Sample;
use super::{Alternative, StatsError};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub all_below: bool,
    /// One-sided exact permutation p (condition smaller), difference of means.
    pub p_exact: f64,
}

/// Decides on the final sizes of the condition's and the baseline's sequences.
/// With 3 and 3 sequences and every condition one below every baseline one, p = 1/20.
pub fn horizonte_decision(
    condition: Sample<'_>,
    baseline: Sample<'_>,
) -> Result<Decision, StatsError> {
    let p_exact = permutation_test(condition, baseline, Statistic::MeanDiff, Alternative::Less)?;
    Ok(Decision {
        all_below: condition.max() < baseline.min(),
        p_exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(condition: &[f64], baseline: &[f64]) -> Decision {
        horizonte_decision(
            Sample::new(condition).unwrap(),
            Sample::new(baseline).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn three_below_three_gives_one_twentieth() {
        let decision = decide(&[100.0, 110.0, 120.0], &[130.0, 150.0, 140.0]);
        assert!(decision.all_below);
        assert_eq!(decision.p_exact, 1.0 / 20.0);
        let mixed = decide(&[100.0, 145.0, 120.0], &[130.0, 150.0, 140.0]);
        assert!(!mixed.all_below);
        assert!(mixed.p_exact > 0.05);
        // A tie is not below.
        assert!(!decide(&[100.0, 130.0], &[130.0, 150.0]).all_below);
    }
}
