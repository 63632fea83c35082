//! The validated sample every test and interval takes: checked once, where the values
//! come in, so the statistics never check their input again.

use std::ops::Deref;

use super::StatsError;
use super::describe::median_of_non_empty;

/// Values of one group of runs: at least one, every one finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample<'a>(&'a [f64]);

impl<'a> Sample<'a> {
    /// Checks `values` once: an empty slice or a NaN or infinite value is an error.
    pub fn new(values: &'a [f64]) -> Result<Self, StatsError> {
        if values.is_empty() {
            return Err(StatsError::EmptySample);
        }
        match values.iter().find(|v| !v.is_finite()) {
            Some(bad) => Err(StatsError::NotFinite(*bad)),
            None => Ok(Sample(values)),
        }
    }

    pub fn values(&self) -> &'a [f64] {
        self.0
    }

    pub fn mean(&self) -> f64 {
        self.0.iter().sum::<f64>() / self.0.len() as f64
    }

    pub fn median(&self) -> f64 {
        median_of_non_empty(&mut self.0.to_vec())
    }

    pub fn min(&self) -> f64 {
        self.0.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.0.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

impl Deref for Sample<'_> {
    type Target = [f64];

    fn deref(&self) -> &[f64] {
        self.0
    }
}

/// One task's two cells: the runs of the condition and of the baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cells<'a> {
    pub condition: Sample<'a>,
    pub baseline: Sample<'a>,
}

impl<'a> Cells<'a> {
    /// Validates both cells.
    pub fn new(condition: &'a [f64], baseline: &'a [f64]) -> Result<Self, StatsError> {
        Ok(Cells {
            condition: Sample::new(condition)?,
            baseline: Sample::new(baseline)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_non_finite_values_are_refused_once_at_the_door() {
        assert_eq!(Sample::new(&[]), Err(StatsError::EmptySample));
        assert_eq!(
            Sample::new(&[1.0, f64::INFINITY]),
            Err(StatsError::NotFinite(f64::INFINITY))
        );
        assert!(matches!(
            Sample::new(&[f64::NAN]),
            Err(StatsError::NotFinite(v)) if v.is_nan()
        ));
        assert_eq!(Cells::new(&[1.0], &[]), Err(StatsError::EmptySample));
        let sample = Sample::new(&[4.0, -1.0, 3.0, 2.0]).unwrap();
        assert_eq!(sample.values(), &[4.0, -1.0, 3.0, 2.0]);
        assert_eq!(sample.len(), 4);
    }

    #[test]
    fn a_sample_describes_itself() {
        let sample = Sample::new(&[4.0, -1.0, 3.0, 2.0, 7.0]).unwrap();
        assert_eq!(sample.mean(), 3.0);
        assert_eq!(sample.median(), 3.0);
        assert_eq!(sample.min(), -1.0);
        assert_eq!(sample.max(), 7.0);
    }
}
