//! The units a write adds: the functions, methods and classes of the file after
//! the write whose name it did not define before (an edit of an existing unit
//! is no new unit), that a suggestion could name (no test code, callbacks,
//! protocol methods or `main`), in a file that is neither a test nor a benchmark.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::index::Unit;
use crate::paths::{is_bench_path, is_test_path};
use crate::suggest::is_candidate;
use crate::units::{ParsedFile, UnitData, UnitKind};

/// The units `after` adds to the file at `path`, which held `before`.
pub fn added(path: &str, before: Option<&ParsedFile>, after: ParsedFile) -> Vec<Unit> {
    if is_test_path(path) || is_bench_path(path) {
        return Vec::new();
    }
    let defined: FxHashSet<&str> = before
        .iter()
        .flat_map(|p| &p.units)
        .filter(|u| u.kind.is_symbol())
        .map(|u| u.name.as_str())
        .collect();
    let functions: Vec<(u32, u32)> = after
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Function)
        .map(|u| (u.start_line, u.end_line))
        .collect();
    // A function local to another (a closure, a default argument) is part of it.
    let local = |u: &UnitData| {
        functions.iter().any(|&(start, end)| {
            start <= u.start_line && u.end_line <= end && (start, end) != (u.start_line, u.end_line)
        })
    };
    let file: Arc<str> = path.into();
    after
        .units
        .into_iter()
        .filter(|u| u.kind == UnitKind::Function && !defined.contains(u.name.as_str()))
        .filter(|u| !local(u))
        .map(|data| Unit {
            file: file.clone(),
            data,
        })
        .filter(is_candidate)
        .collect()
}
