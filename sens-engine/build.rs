//! Names this build of the engine for its on-disk cache: a hash of its sources
//! and of the workspace's lock file (grammar versions), so a cache written by
//! any other build is never trusted.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let mut inputs = Vec::new();
    files(Path::new("src"), &mut inputs);
    inputs.sort();
    inputs.push(PathBuf::from("Cargo.toml"));
    inputs.push(PathBuf::from("../Cargo.lock"));
    let mut hasher = DefaultHasher::new();
    for path in &inputs {
        hasher.write(path.to_string_lossy().as_bytes());
        hasher.write(&std::fs::read(path).unwrap_or_default());
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=../Cargo.lock");
    println!(
        "cargo:rustc-env=SENS_ENGINE_BUILD={}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        hasher.finish()
    );
}
