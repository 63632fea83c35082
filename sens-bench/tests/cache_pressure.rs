//! The on-disk index cache filled by a process that runs out of memory
//! (`ulimit -v`): the process fails, and what it left is whole. The next
//! process reads every entry it finds or rebuilds it, never a torn one, and
//! indexes the project as a process without a cache does (docs/caches.md).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sens-bench");

/// `engine index --json` on `project`, with `cache` when given, under a
/// virtual memory limit in KiB when given.
fn index(project: &Path, cache: Option<&Path>, limit_kib: Option<u64>) -> Output {
    let mut line = format!(
        "exec \"{BIN}\" engine index \"{}\" --json",
        project.display()
    );
    if let Some(cache) = cache {
        line.push_str(&format!(" --cache \"{}\"", cache.display()));
    }
    if let Some(limit) = limit_kib {
        line = format!("ulimit -v {limit} && {line}");
    }
    Command::new("bash")
        .args(["-c", &line])
        .output()
        .expect("bash runs")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the index's JSON")
}

#[test]
fn a_cache_filled_under_memory_pressure_is_never_read_torn() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sens-engine/src");
    let cold = json(&index(&project, None, None));
    let mut failed = 0;
    // From too little memory to start, through running out midway, to enough:
    // where a process runs out depends on the machine, so every step is tried.
    for limit_mib in (150..=550).step_by(50) {
        let cache = tempfile::tempdir().unwrap();
        let pressed = index(&project, Some(cache.path()), Some(limit_mib * 1024));
        if !pressed.status.success() {
            failed += 1;
        }
        let after = json(&index(&project, Some(cache.path()), None));
        let counts = &after["cache"];
        assert_eq!(counts["rejected"], 0, "{limit_mib} MiB: {after}");
        assert_eq!(counts["unwritten"], 0, "{limit_mib} MiB: {after}");
        assert_eq!(
            counts["hits"].as_u64().unwrap() + counts["misses"].as_u64().unwrap(),
            cold["files"].as_u64().unwrap(),
            "{limit_mib} MiB: {after}"
        );
        for key in ["files", "units", "functions", "classes", "windows"] {
            assert_eq!(after[key], cold[key], "{limit_mib} MiB, {key}: {after}");
        }
    }
    assert!(failed > 0, "no limit made the index run out of memory");
}
