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

/// Values per run for one condition: integers around a per-task level, scaled by
/// `effect`, with noise up to `spread`.
fn synthetic(rng: &mut ChaCha8Rng, levels: &[f64], effect: f64, spread: u32) -> Vec<Vec<f64>> {
    levels
        .iter()
        .map(|level| {
            (0..REPS)
                .map(|_| (level * effect + f64::from(rng.random_range(0..spread))).round())
                .collect()
        })
        .collect()
}

fn borrow(condition: &[Vec<f64>], baseline: &[Vec<f64>]) -> Vec<(Vec<f64>, Vec<f64>)> {
    condition
        .iter()
        .cloned()
        .zip(baseline.iter().cloned())
        .collect()
}

fn as_cells(pairs: &[(Vec<f64>, Vec<f64>)]) -> Result<Vec<Cells<'_>>, stats::StatsError> {
    pairs
        .iter()
        .map(|(condition, baseline)| Cells::new(condition, baseline))
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
    let c0 = synthetic(&mut rng, &levels, 1.0, 40);
    let c1 = synthetic(&mut rng, &levels, 0.9, 40);
    let c2 = synthetic(&mut rng, &levels, 0.6, 40);
    let comparisons = [borrow(&c1, &c0), borrow(&c2, &c0)];
    let borrowed: Vec<Vec<Cells>> = comparisons
        .iter()
        .map(|p| as_cells(p))
        .collect::<Result<_, _>>()?;
    // Token counts: large, all distinct, so the stratified test counts its tail by
    // search instead of convolving.
    let token_levels: Vec<f64> = levels.iter().map(|l| l * 1_000.0).collect();
    let t0 = synthetic(&mut rng, &token_levels, 1.0, 30_000);
    let strong = borrow(&synthetic(&mut rng, &token_levels, 1.3, 30_000), &t0);
    let moderate = borrow(&synthetic(&mut rng, &token_levels, 1.1, 30_000), &t0);
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
        "exact stratified test, lines added, 12 tasks (convolution)",
        time(|| stratified_permutation_test(&borrowed[1], Alternative::TwoSided).map(|_| ()))?,
    );
    for (effect, pairs) in [("+30%", &strong), ("+10%", &moderate)] {
        let cells = as_cells(pairs)?;
        let outcome = match stratified_permutation_test(&cells, Alternative::TwoSided) {
            Ok(p) => format!("p = {p:e}"),
            Err(err) => format!("refused: {err}"),
        };
        print_row(
            &format!("exact stratified test, tokens {effect}, 12 tasks (search)"),
            // Timed whether it counts or refuses: both must end quickly.
            time(|| {
                let _ = stratified_permutation_test(&cells, Alternative::TwoSided);
                Ok(())
            })?,
        );
        println!("  {outcome}");
    }
    Ok(ExitCode::SUCCESS)
}
