//! The worker pool of every command that runs independent jobs at once (batch
//! runs, task validation): `jobs` threads, each taking the next item in order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::exec;
use crate::sync::lock;

/// What a pool did: the results of the items that ran, in item order, and how
/// many items were never started.
#[derive(Debug)]
pub struct Pooled<R> {
    pub done: Vec<(usize, R)>,
    pub not_started: usize,
}

/// Runs `job` on `items` with `jobs` threads. Items stop being handed out at
/// Ctrl-C and once `stop` holds for a result (those running finish).
pub fn run<T: Sync, R: Send>(
    jobs: usize,
    items: &[T],
    job: impl Fn(&T) -> R + Sync,
    stop: impl Fn(&R) -> bool + Sync,
) -> Pooled<R> {
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::new());
    let take = || -> Option<usize> {
        if exec::interrupted() || stopped.load(Ordering::SeqCst) {
            return None;
        }
        let index = next.fetch_add(1, Ordering::SeqCst);
        (index < items.len()).then_some(index)
    };
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(items.len()) {
            scope.spawn(|| {
                while let Some(index) = take() {
                    let result = job(&items[index]);
                    if stop(&result) {
                        stopped.store(true, Ordering::SeqCst);
                    }
                    lock(&done).push((index, result));
                }
            });
        }
    });
    let mut done = std::mem::take(&mut *lock(&done));
    done.sort_by_key(|(index, _)| *index);
    Pooled {
        not_started: items.len() - done.len(),
        done,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_and_results_come_back_in_item_order() {
        let items: Vec<u32> = (0..20).collect();
        let pooled = run(3, &items, |n| n * 2, |_| false);
        assert_eq!(pooled.not_started, 0);
        let results: Vec<(usize, u32)> = pooled.done;
        assert_eq!(
            results,
            (0..20).map(|i| (i, i as u32 * 2)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_stopping_result_ends_the_handing_out() {
        let items: Vec<u32> = (0..50).collect();
        let pooled = run(1, &items, |n| *n, |n| *n == 4);
        assert_eq!(pooled.done.len(), 5);
        assert_eq!(pooled.not_started, 45);
    }
}
