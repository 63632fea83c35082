//! The seeded percentile bootstrap of median differences: runs are drawn with
//! replacement within each (task, condition) cell from a ChaCha8 stream, so the same
//! cells and seed always give the same intervals.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::StatsError;
use super::describe::{median_of_non_empty, percentile_sorted};
use super::sample::{Cells, Sample};

/// Resamples of every bootstrap.
pub const RESAMPLES: usize = 10_000;
/// The fixed default seed of every bootstrap.
pub const DEFAULT_SEED: u64 = 20_260_530;
/// Coverage of the bootstrap intervals.
pub const CONFIDENCE: f64 = 0.95;

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

/// Median differences per task and across tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct MedianDiffs {
    /// Per task, in the order given: median(condition) - median(baseline).
    pub per_task: Vec<Estimate>,
    /// The median of the per-task differences.
    pub across: Estimate,
}

/// Draws resamples of one sample with replacement into a reused buffer.
struct Resampler<'a> {
    sample: Sample<'a>,
    stage: Vec<f64>,
}

impl<'a> Resampler<'a> {
    fn new(sample: Sample<'a>) -> Self {
        Resampler {
            sample,
            stage: vec![0.0; sample.len()],
        }
    }

    /// The median of the next resample (as long as the sample, so never empty).
    fn next_median(&mut self, rng: &mut ChaCha8Rng) -> f64 {
        let n = self.sample.len();
        for slot in &mut self.stage {
            *slot = self.sample[rng.random_range(0..n)];
        }
        median_of_non_empty(&mut self.stage)
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
    /// from the same resample. No tasks, or no resamples, is an error.
    pub fn median_diffs(&self, tasks: &[Cells<'_>]) -> Result<MedianDiffs, StatsError> {
        if tasks.is_empty() || self.resamples == 0 {
            return Err(StatsError::EmptySample);
        }
        let observed: Vec<f64> = tasks
            .iter()
            .map(|c| c.condition.median() - c.baseline.median())
            .collect();
        let observed_across = median_of_non_empty(&mut observed.clone());

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
            across.push(median_of_non_empty(&mut row));
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

    /// The central `confidence` share of a non-empty bootstrap distribution.
    fn interval(&self, mut distribution: Vec<f64>) -> Interval {
        distribution.sort_unstable_by(f64::total_cmp);
        let tail = (1.0 - self.confidence) / 2.0 * 100.0;
        Interval {
            low: percentile_sorted(&distribution, tail),
            high: percentile_sorted(&distribution, 100.0 - tail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_is_deterministic_for_a_seed_and_moves_with_it() {
        let cells = [Cells::new(&[10.0, 14.0, 12.0, 19.0], &[20.0, 25.0, 22.0]).unwrap()];
        let boot = Bootstrap::default();
        let first = boot.median_diffs(&cells).unwrap();
        assert_eq!(first, boot.median_diffs(&cells).unwrap());
        assert_eq!(first.per_task[0].value, 13.0 - 22.0);
        assert_eq!(first.across, first.per_task[0]);
        let ci = first.per_task[0].ci;
        assert!(ci.low <= -9.0 && -9.0 <= ci.high, "{ci:?}");
        assert!(ci.low >= 10.0 - 25.0 && ci.high <= 19.0 - 20.0, "{ci:?}");
        assert!(ci.low < ci.high, "{ci:?}");
        // Ten thousand resamples hide the seed; three show it.
        let intervals: Vec<Interval> = (0..8)
            .map(|seed| {
                let few = Bootstrap {
                    seed,
                    resamples: 3,
                    ..boot
                };
                let diffs = few.median_diffs(&cells).unwrap();
                assert_eq!(diffs.per_task[0].value, first.per_task[0].value);
                diffs.per_task[0].ci
            })
            .collect();
        assert!(
            intervals.iter().any(|ci| *ci != intervals[0]),
            "another seed draws other resamples: {intervals:?}"
        );
    }

    #[test]
    fn the_across_estimate_is_the_median_of_the_task_differences() {
        let cells = [
            Cells::new(&[1.0, 2.0], &[5.0, 6.0]).unwrap(),
            Cells::new(&[10.0], &[30.0]).unwrap(),
            Cells::new(&[7.0, 9.0, 8.0], &[8.0, 8.0, 8.0]).unwrap(),
        ];
        let diffs = Bootstrap::default().median_diffs(&cells).unwrap();
        let values: Vec<f64> = diffs.per_task.iter().map(|e| e.value).collect();
        assert_eq!(values, [-4.0, -20.0, 0.0]);
        assert_eq!(diffs.across.value, -4.0);
        // The second task has one run per cell: every resample gives -20.
        assert_eq!(
            diffs.per_task[1].ci,
            Interval {
                low: -20.0,
                high: -20.0
            }
        );
        let across = diffs.across.ci;
        // The middle task is always the first one (-5..=-3 against -20 and -1..=1).
        assert!(-5.0 <= across.low && across.high <= -3.0, "{across:?}");
    }

    #[test]
    fn confidence_sets_how_much_of_the_distribution_the_interval_covers() {
        let boot = Bootstrap {
            confidence: 0.5,
            ..Bootstrap::default()
        };
        let interval = boot.interval((0..=100).map(f64::from).rev().collect());
        assert_eq!(
            interval,
            Interval {
                low: 25.0,
                high: 75.0
            }
        );
    }

    #[test]
    fn a_single_run_per_cell_gives_a_point_interval() {
        let cells = [Cells::new(&[5.0], &[8.0]).unwrap()];
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
    fn no_tasks_or_no_resamples_are_errors() {
        assert_eq!(
            Bootstrap::default().median_diffs(&[]),
            Err(StatsError::EmptySample)
        );
        let cells = [Cells::new(&[5.0], &[8.0]).unwrap()];
        let none = Bootstrap {
            resamples: 0,
            ..Bootstrap::default()
        };
        assert_eq!(none.median_diffs(&cells), Err(StatsError::EmptySample));
    }
}
