//! `sens-bench stats-bench`: times the statistics of one comparison on a synthetic
//! batch the size of the bench (12 tasks, 3 conditions, 3 reps) and prints the
//! figures. A benchmark command, not a test: nothing is asserted.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::stats::{
    self, Alternative, Bootstrap, Cells, Statistic, permutation_test, stratified_permutation_test,
};

const TASKS: usize = 12;
const REPS: usize = 3;
const ROUNDS: usize = 7;

/// Lines added per run for one condition: integers around a per-task level, shifted
/// by `effect`.
fn synthetic(rng: &mut ChaCha8Rng, levels: &[f64], effect: f64) -> Vec<Vec<f64>> {
    levels
        .iter()
        .map(|level| {
            (0..REPS)
                .map(|_| (level * effect + f64::from(rng.random_range(0..40_u32))).round())
                .collect()
        })
        .collect()
}

/// The median and the fastest of `ROUNDS` timings of `work`.
fn time(
    mut work: impl FnMut() -> Result<(), stats::StatsError>,
) -> anyhow::Result<(Duration, Duration)> {
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        work()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((times[ROUNDS / 2], times[0]))
}

fn print_row(what: &str, (median, fastest): (Duration, Duration)) {
    println!(
        "{what:<58} median {:>9.3} ms   fastest {:>9.3} ms",
        median.as_secs_f64() * 1e3,
        fastest.as_secs_f64() * 1e3
    );
}

pub fn run() -> anyhow::Result<ExitCode> {
    let mut rng = ChaCha8Rng::seed_from_u64(stats::DEFAULT_SEED);
    let levels: Vec<f64> = (0..TASKS)
        .map(|_| f64::from(rng.random_range(20..200_u32)))
        .collect();
    let c0 = synthetic(&mut rng, &levels, 1.0);
    let c1 = synthetic(&mut rng, &levels, 0.9);
    let c2 = synthetic(&mut rng, &levels, 0.6);
    let cells = |condition: &[Vec<f64>]| -> Vec<(Vec<f64>, Vec<f64>)> {
        condition.iter().cloned().zip(c0.iter().cloned()).collect()
    };
    let comparisons = [cells(&c1), cells(&c2)];
    let borrowed: Vec<Vec<Cells>> = comparisons
        .iter()
        .map(|pairs| {
            pairs
                .iter()
                .map(|(condition, baseline)| Cells {
                    condition,
                    baseline,
                })
                .collect()
        })
        .collect();
    let bootstrap = Bootstrap::default();
    println!(
        "synthetic batch: {TASKS} tasks x 3 conditions x {REPS} reps; {} resamples; {ROUNDS} rounds",
        bootstrap.resamples
    );
    print_row(
        "bootstrap, one comparison (12 tasks + all)",
        time(|| bootstrap.median_diffs(&borrowed[1]).map(|_| ()))?,
    );
    print_row(
        "bootstrap, both comparisons (C1, C2 vs C0)",
        time(|| {
            borrowed
                .iter()
                .try_for_each(|c| bootstrap.median_diffs(c).map(|_| ()))
        })?,
    );
    print_row(
        "exact permutation tests, 12 tasks (20 relabellings each)",
        time(|| {
            borrowed[1].iter().try_for_each(|c| {
                permutation_test(
                    c.condition,
                    c.baseline,
                    Statistic::MeanDiff,
                    Alternative::TwoSided,
                )
                .map(|_| ())
            })
        })?,
    );
    print_row(
        "exact stratified test, 12 tasks (20^12 relabellings)",
        time(|| stratified_permutation_test(&borrowed[1], Alternative::TwoSided).map(|_| ()))?,
    );
    Ok(ExitCode::SUCCESS)
}
