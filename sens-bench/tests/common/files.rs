//! The fixtures and files the tests write.

use std::path::{Path, PathBuf};

/// `rel` below the tests' fixtures folder (`sens-bench/tests/fixtures`).
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Writes `text` to `rel` below `root`, making its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("a folder");
    std::fs::write(path, text).expect("a written file");
}
