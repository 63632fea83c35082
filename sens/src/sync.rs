//! The one way the bench takes a lock.

use std::sync::{Mutex, MutexGuard};

/// Locks `value`, going on when another thread panicked while holding it: every
/// value the bench guards is changed by single inserts, pushes or assignments,
/// so it is still consistent after such a panic.
pub fn lock<T>(value: &Mutex<T>) -> MutexGuard<'_, T> {
    value
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
