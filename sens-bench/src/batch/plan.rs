//! The plan of a batch (SPEC 3.5): every task x condition x repetition, with the
//! conditions ordered randomly within each (task, rep) block so that drift over
//! time (API load, caches, machine noise) does not favour one condition. The order
//! comes from a fixed seed and depends only on (seed, task, rep): adding a task to
//! a batch does not reshuffle the blocks already planned.

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

/// Repetitions outermost (every task's rep 1 before any rep 2), then units in the
/// order given, then the block's conditions in seeded random order.
pub fn plan(units: &[String], conditions: &[String], reps: u32, seed: u64) -> Vec<PlannedRun> {
    let mut runs = Vec::with_capacity(units.len() * conditions.len() * reps as usize);
    for rep in 1..=reps {
        for unit in units {
            let mut block = conditions.to_vec();
            block.shuffle(&mut ChaCha8Rng::seed_from_u64(block_seed(seed, unit, rep)));
            runs.extend(block.into_iter().map(|condition| PlannedRun {
                unit: unit.clone(),
                condition,
                rep,
            }));
        }
    }
    runs
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

    #[test]
    fn every_combination_once_and_blocks_stay_together() {
        let units = strings(&["a", "b", "c"]);
        let conditions = strings(&["C0", "C1", "C2"]);
        let runs = plan(&units, &conditions, 2, DEFAULT_SEED);
        assert_eq!(runs.len(), 18);
        let unique: std::collections::HashSet<_> = runs.iter().collect();
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
        let orders: std::collections::HashSet<Vec<String>> = first
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
}
