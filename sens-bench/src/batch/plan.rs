//! The plan of a batch (docs/contract.md, "Runs"): every task x condition x repetition,
//! with the conditions ordered randomly within each (task, rep) block so that drift over
//! time (API load, caches, machine noise) does not favour one condition. The order comes
//! from a fixed seed and depends only on (seed, task, rep): adding a task to a batch does
//! not reshuffle the blocks already planned.
//!
//! A batch split across machines (`--shard K/N`) runs the runs of whole (unit,
//! rep) blocks only ([`select_shard`]): a block's random order stays on one
//! machine, and a sequence under one condition and repetition (a block's run) is
//! never split. The split depends only on the plan: blocks are taken in (unit,
//! rep) order, heaviest first, each to the shard with the least work so far
//! (ties to the lowest shard), so with equal weights the shards differ by at most
//! one block. A block's work is its number of runs times its unit's weight: 1 for
//! a task, the number of steps for a sequence, or what `--weights` gives.
//!
//! A plan holds at most [`MAX_RUNS`] runs and is computed lazily, one block at
//! a time: a dry run counts it without holding it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, bail};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The default seed of a batch's plan; recorded in the manifest.
pub const DEFAULT_SEED: u64 = 20_261_130;

/// One run to do: a unit of work (a task, or a whole sequence) under one condition,
/// at one repetition (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlannedRun {
    pub unit: String,
    pub condition: String,
    pub rep: u32,
}

/// The most runs a plan may hold: far more than a batch could run, few enough
/// that a plan stays small in memory.
pub const MAX_RUNS: u64 = 1_000_000;

/// The number of runs of a plan; an error above [`MAX_RUNS`].
pub fn size(units: usize, conditions: usize, reps: u32) -> anyhow::Result<u64> {
    let runs = (units as u128)
        .checked_mul(conditions as u128)
        .and_then(|n| n.checked_mul(u128::from(reps)));
    match runs.and_then(|n| u64::try_from(n).ok()) {
        Some(runs) if runs <= MAX_RUNS => Ok(runs),
        _ => bail!(
            "the plan of {units} units x {conditions} conditions x {reps} reps = {} runs is \
             more than {MAX_RUNS}: lower --reps, or select fewer units or conditions",
            runs.map_or_else(|| "too many".to_string(), |n| n.to_string())
        ),
    }
}

/// Repetitions outermost (every task's rep 1 before any rep 2), then units in the
/// order given, then the block's conditions in seeded random order; an error
/// when the plan is larger than [`size`] allows.
pub fn plan<'a>(
    units: &'a [String],
    conditions: &'a [String],
    reps: u32,
    seed: u64,
) -> anyhow::Result<impl Iterator<Item = PlannedRun> + Clone + 'a> {
    size(units.len(), conditions.len(), reps)?;
    Ok((1..=reps).flat_map(move |rep| {
        units.iter().flat_map(move |unit| {
            let mut block = conditions.to_vec();
            block.shuffle(&mut ChaCha8Rng::seed_from_u64(block_seed(seed, unit, rep)));
            block.into_iter().map(move |condition| PlannedRun {
                unit: unit.clone(),
                condition,
                rep,
            })
        })
    }))
}

/// Part `index` of `count` (1-based) of a batch split across machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl FromStr for Shard {
    type Err = anyhow::Error;
    fn from_str(text: &str) -> anyhow::Result<Shard> {
        let parsed = text
            .split_once('/')
            .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if 1 <= index && index <= count => Ok(Shard { index, count }),
            _ => bail!("shard `{text}` is not K/N with 1 <= K <= N (e.g. 2/4)"),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The (unit, rep) blocks of a plan that belong to one shard.
#[derive(Debug, Clone, Default)]
pub struct ShardBlocks(HashMap<String, HashSet<u32>>);

impl ShardBlocks {
    pub fn contains(&self, run: &PlannedRun) -> bool {
        self.0
            .get(&run.unit)
            .is_some_and(|reps| reps.contains(&run.rep))
    }
}

/// The blocks of `runs` (a [`plan`]) that belong to `shard`; see the module
/// documentation. `weight` gives a unit's weight (at least 1); work that does
/// not fit in 64 bits is an error naming `--weights`, which alone makes it so.
pub fn select_shard(
    runs: impl Iterator<Item = PlannedRun>,
    shard: Shard,
    weight: impl Fn(&str) -> u64,
) -> anyhow::Result<ShardBlocks> {
    let overflow = || {
        anyhow::anyhow!(
            "the weights of --weights overflow: a block's weight times its runs, summed \
             over a shard, must stay under 2^64; give smaller weights"
        )
    };
    let mut blocks: BTreeMap<(String, u32), u64> = BTreeMap::new();
    for run in runs {
        let unit_weight = weight(&run.unit);
        let work = blocks.entry((run.unit, run.rep)).or_default();
        *work = work.checked_add(unit_weight).ok_or_else(overflow)?;
    }
    let mut order: Vec<((String, u32), u64)> = blocks.into_iter().collect();
    // Stable: equal work keeps the (unit, rep) order.
    order.sort_by_key(|block| std::cmp::Reverse(block.1));
    // Shards past the number of blocks never get one (each block goes to the
    // first empty shard while there is one), so only those are counted.
    let mut load = vec![0u64; (shard.count as usize).min(order.len())];
    let mut mine = ShardBlocks::default();
    for ((unit, rep), work) in order {
        let lightest = (0..load.len()).min_by_key(|&i| load[i]).unwrap_or(0);
        load[lightest] = load[lightest].checked_add(work).ok_or_else(overflow)?;
        if lightest + 1 == shard.index as usize {
            mine.0.entry(unit).or_default().insert(rep);
        }
    }
    Ok(mine)
}

/// `--weights FILE`: a TOML table of unit id -> weight (a whole number >= 1).
/// Every id must be one of `units`.
pub fn load_weights(path: &Path, units: &[String]) -> anyhow::Result<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the weights file {}", path.display()))?;
    let weights: BTreeMap<String, u64> = toml::from_str(&text).with_context(|| {
        format!(
            "{} is not a weights file (lines of `id = weight`, a whole number)",
            path.display()
        )
    })?;
    for (id, weight) in &weights {
        if *weight == 0 {
            bail!("{}: `{id}`: a weight is at least 1", path.display());
        }
        if !units.contains(id) {
            bail!("{}: `{id}` is not a unit of this batch", path.display());
        }
    }
    Ok(weights)
}

fn block_seed(seed: u64, unit: &str, rep: u32) -> u64 {
    let digest = Sha256::digest(format!("{seed}\0{unit}\0{rep}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn plan(units: &[String], conditions: &[String], reps: u32, seed: u64) -> Vec<PlannedRun> {
        super::plan(units, conditions, reps, seed)
            .unwrap()
            .collect()
    }

    /// The runs of `runs` in `shard`, in plan order.
    fn select_shard(
        runs: Vec<PlannedRun>,
        shard: Shard,
        weight: impl Fn(&str) -> u64,
    ) -> Vec<PlannedRun> {
        let blocks = super::select_shard(runs.iter().cloned(), shard, weight).unwrap();
        runs.into_iter()
            .filter(|run| blocks.contains(run))
            .collect()
    }

    #[test]
    fn a_plan_over_the_limit_is_refused_before_anything_is_planned() {
        let units = strings(&["a"]);
        let conditions = strings(&["C0", "C2"]);
        assert_eq!(size(1, 2, 500_000).unwrap(), MAX_RUNS);
        let err = super::plan(&units, &conditions, u32::MAX, 1)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("= 8589934590 runs is more than 1000000"),
            "{err}"
        );
        assert!(size(usize::MAX, usize::MAX, u32::MAX).is_err());
    }

    #[test]
    fn more_shards_than_blocks_give_one_block_each_then_none() {
        let units = strings(&["a", "b"]);
        let whole = plan(&units, &strings(&["C0"]), 1, 1);
        let part = |k| select_shard(whole.clone(), shard(k, u32::MAX), |_| 1);
        assert_eq!(part(1).len() + part(2).len(), 2);
        assert_eq!(part(1).len(), 1);
        assert!(part(3).is_empty() && part(u32::MAX).is_empty());
        assert_eq!(part(1), select_shard(whole.clone(), shard(1, 2), |_| 1));
    }

    #[test]
    fn weights_that_overflow_are_refused_naming_the_flag() {
        let units = strings(&["a", "b"]);
        let runs = plan(&units, &strings(&["C0", "C2"]), 1, 1);
        let err = super::select_shard(runs.into_iter(), shard(1, 2), |_| u64::MAX / 2 + 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--weights overflow"), "{err}");
    }

    #[test]
    fn every_combination_once_and_blocks_stay_together() {
        let units = strings(&["a", "b", "c"]);
        let conditions = strings(&["C0", "C1", "C2"]);
        let runs = plan(&units, &conditions, 2, DEFAULT_SEED);
        assert_eq!(runs.len(), 18);
        let unique: HashSet<_> = runs.iter().collect();
        assert_eq!(unique.len(), 18);
        for block in runs.chunks(3) {
            assert!(
                block
                    .iter()
                    .all(|r| r.unit == block[0].unit && r.rep == block[0].rep)
            );
            let mut seen: Vec<_> = block.iter().map(|r| r.condition.clone()).collect();
            seen.sort();
            assert_eq!(seen, conditions);
        }
        assert!(
            runs[..9].iter().all(|r| r.rep == 1),
            "rep 1 of every unit comes first"
        );
    }

    #[test]
    fn the_order_is_fixed_by_the_seed_and_varies_between_blocks() {
        let units: Vec<String> = (0..12).map(|i| format!("task-{i}")).collect();
        let conditions = strings(&["C0", "C1", "C2"]);
        let first = plan(&units, &conditions, 3, 7);
        assert_eq!(first, plan(&units, &conditions, 3, 7));
        assert_ne!(first, plan(&units, &conditions, 3, 8));
        let orders: HashSet<Vec<String>> = first
            .chunks(3)
            .map(|b| b.iter().map(|r| r.condition.clone()).collect())
            .collect();
        assert!(orders.len() > 1, "blocks are not all in one order");
    }

    #[test]
    fn adding_a_unit_keeps_the_other_blocks() {
        let conditions = strings(&["C0", "C1", "C2"]);
        let small = plan(&strings(&["a", "b"]), &conditions, 1, 1);
        let large = plan(&strings(&["a", "new", "b"]), &conditions, 1, 1);
        let block = |runs: &[PlannedRun], unit: &str| -> Vec<String> {
            runs.iter()
                .filter(|r| r.unit == unit)
                .map(|r| r.condition.clone())
                .collect()
        };
        assert_eq!(block(&small, "a"), block(&large, "a"));
        assert_eq!(block(&small, "b"), block(&large, "b"));
    }

    /// Tasks (weight 1) and sequences (weight = steps) in one plan.
    fn mixed() -> (Vec<String>, impl Fn(&str) -> u64) {
        let mut units: Vec<String> = (0..9).map(|i| format!("task-{i}")).collect();
        units.extend(strings(&["cuentas", "tiny-seq"]));
        let weight = |unit: &str| match unit {
            "cuentas" => 6,
            "tiny-seq" => 3,
            _ => 1,
        };
        (units, weight)
    }

    fn shard(index: u32, count: u32) -> Shard {
        Shard { index, count }
    }

    #[test]
    fn the_shards_partition_the_plan_in_whole_blocks() {
        let (units, weight) = mixed();
        let conditions = strings(&["C0", "C1", "C2"]);
        let whole = plan(&units, &conditions, 3, 5);
        for count in [1, 2, 3, 7] {
            let mut union = Vec::new();
            let mut work = Vec::new();
            for index in 1..=count {
                let part = select_shard(whole.clone(), shard(index, count), &weight);
                let blocks: HashSet<_> = part.iter().map(|r| (&r.unit, r.rep)).collect();
                for (unit, rep) in blocks {
                    let in_whole = whole.iter().filter(|r| &r.unit == unit && r.rep == rep);
                    let in_part = part.iter().filter(|r| &r.unit == unit && r.rep == rep);
                    assert_eq!(
                        in_whole.count(),
                        in_part.count(),
                        "{unit} rep {rep} is split"
                    );
                }
                work.push(part.iter().map(|r| weight(&r.unit)).sum::<u64>());
                union.extend(part);
            }
            assert_eq!(union.len(), whole.len(), "N = {count}: no run twice");
            let unique: HashSet<_> = union.iter().collect();
            assert_eq!(
                unique,
                whole.iter().collect(),
                "N = {count}: every run once"
            );
            let (min, max) = (work.iter().min().unwrap(), work.iter().max().unwrap());
            assert!(max - min <= 6 * 3, "N = {count}: unbalanced {work:?}");
        }
    }

    #[test]
    fn equal_weights_balance_by_count_and_keep_the_plan_order() {
        let units: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let whole = plan(&units, &strings(&["C0", "C2"]), 2, 1);
        let sizes: Vec<usize> = (1..=3)
            .map(|k| select_shard(whole.clone(), shard(k, 3), |_| 1).len())
            .collect();
        assert_eq!(sizes, [8, 6, 6], "10 blocks of 2 runs over 3 shards");
        let part = select_shard(whole.clone(), shard(2, 3), |_| 1);
        let positions: Vec<usize> = part
            .iter()
            .map(|r| whole.iter().position(|w| w == r).unwrap())
            .collect();
        assert!(positions.is_sorted(), "a shard runs in plan order");
    }

    #[test]
    fn the_split_ignores_the_order_units_are_given_in() {
        let conditions = strings(&["C0", "C2"]);
        let forward = plan(&strings(&["a", "b", "c", "d"]), &conditions, 2, 1);
        let backward = plan(&strings(&["d", "c", "b", "a"]), &conditions, 2, 1);
        for k in 1..=3 {
            let mut one = select_shard(forward.clone(), shard(k, 3), |_| 1);
            let mut other = select_shard(backward.clone(), shard(k, 3), |_| 1);
            one.sort_by_key(|r| (r.unit.clone(), r.rep, r.condition.clone()));
            other.sort_by_key(|r| (r.unit.clone(), r.rep, r.condition.clone()));
            assert_eq!(one, other);
        }
    }

    /// The child half of the test below: prints its split when asked to. Ignored,
    /// so that it is never counted as a test of its own.
    #[test]
    #[ignore = "the child process of the_split_is_the_same_in_another_process, which runs it"]
    fn print_the_split_for_another_process() {
        let Some(path) = std::env::var_os("SENS_PLAN_SPLIT_OUT") else {
            return;
        };
        std::fs::write(path, serde_json::to_string(&split_of_seven()).unwrap()).unwrap();
    }

    fn split_of_seven() -> Vec<Vec<PlannedRun>> {
        let (units, weight) = mixed();
        let whole = plan(&units, &strings(&["C0", "C1", "C2"]), 3, 11);
        (1..=7)
            .map(|k| select_shard(whole.clone(), shard(k, 7), &weight))
            .collect()
    }

    #[test]
    fn the_split_is_the_same_in_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("split.json");
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "--ignored",
                "batch::plan::tests::print_the_split_for_another_process",
            ])
            .env("SENS_PLAN_SPLIT_OUT", &out)
            .status()
            .unwrap();
        assert!(status.success());
        let theirs: Vec<Vec<PlannedRun>> =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(theirs, split_of_seven());
    }

    #[test]
    fn shards_parse_and_weights_are_checked() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), shard(2, 4));
        assert_eq!(shard(2, 4).to_string(), "2/4");
        for bad in ["0/2", "3/2", "2", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("weights.toml");
        let units = strings(&["a", "b"]);
        std::fs::write(&path, "a = 3\n").unwrap();
        assert_eq!(load_weights(&path, &units).unwrap()["a"], 3);
        std::fs::write(&path, "zz = 3\n").unwrap();
        let err = load_weights(&path, &units).unwrap_err().to_string();
        assert!(
            err.contains("weights.toml") && err.contains("`zz`"),
            "{err}"
        );
        std::fs::write(&path, "a = 0\n").unwrap();
        assert!(load_weights(&path, &units).is_err());
    }
}
