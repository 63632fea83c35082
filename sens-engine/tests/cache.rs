//! The on-disk index cache on a real project (the engine's own source, with a
//! copied file so that there are findings): a warm index equals a cold one, and
//! a cache whose entries were spoiled is rebuilt to the same index.

use std::path::Path;

use sens_engine::cache::IndexCache;
use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::index::{BuildReport, Index, IndexDigest};
use sens_engine::walk::WalkOptions;

/// The engine's source and one of its files copied under another name.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|ext| ext == "rs") {
            let name = path.file_name().expect("a name");
            std::fs::copy(&path, dir.path().join(name)).expect("copy");
        }
    }
    std::fs::copy(src.join("dupes.rs"), dir.path().join("dupes_again.rs")).expect("copy");
    dir
}

/// What a build gives, independent of unit ids: the index's digest, every
/// unit's whole data, and the duplicate groups by file and lines.
#[derive(Debug, PartialEq)]
struct Built {
    digest: IndexDigest,
    units: Vec<String>,
    findings: Vec<String>,
}

fn build(root: &Path, cache: Option<&IndexCache>) -> (Built, BuildReport) {
    let (index, report, _) = Index::build_with_sources(
        root,
        RuleConfig::default(),
        WalkOptions::default(),
        None,
        cache,
    )
    .expect("index");
    let mut units: Vec<String> = index
        .units()
        .map(|(_, unit)| format!("{} {:?}", unit.file, unit.data))
        .collect();
    units.sort();
    let describe = |id| {
        let unit = index.unit(id).expect("a unit of the index");
        format!(
            "{}:{}-{}",
            unit.file, unit.data.start_line, unit.data.end_line
        )
    };
    let mut findings: Vec<String> = dupes::groups(&index, index.config().floor)
        .into_iter()
        .map(|group| {
            let units: Vec<String> = group.units.iter().map(|&id| describe(id)).collect();
            format!(
                "{:?} {:.6} {}",
                group.kind,
                group.similarity,
                units.join(" ")
            )
        })
        .collect();
    findings.sort();
    let built = Built {
        digest: index.digest(),
        units,
        findings,
    };
    (built, report)
}

#[test]
fn a_warm_index_equals_a_cold_one() {
    let project = project();
    let folder = tempfile::tempdir().expect("temp dir");
    let (cold, _) = build(project.path(), None);
    assert!(
        cold.findings.iter().any(|f| f.contains("dupes_again.rs")),
        "the copied file is a finding: {:?}",
        cold.findings
    );
    let cache = IndexCache::open(folder.path(), &RuleConfig::default()).expect("open");
    let (filling, report) = build(project.path(), Some(&cache));
    assert_eq!(filling, cold);
    let stats = report.cache.expect("cache stats");
    assert_eq!(stats.rejected, 0, "{stats:?}");
    // The copied file has the content of dupes.rs: whichever is parsed second
    // may find the other's entry.
    assert!(stats.hits <= 1, "{stats:?}");
    assert_eq!(stats.hits + stats.misses, report.files, "{stats:?}");

    let cache = IndexCache::open(folder.path(), &RuleConfig::default()).expect("open");
    let (warm, report) = build(project.path(), Some(&cache));
    assert_eq!(warm, cold);
    let stats = report.cache.expect("cache stats");
    assert_eq!(
        stats.hits, report.files,
        "every file from the cache: {stats:?}"
    );
}

#[test]
fn a_spoiled_cache_is_rebuilt_to_the_same_index() {
    let project = project();
    let folder = tempfile::tempdir().expect("temp dir");
    let (cold, _) = build(project.path(), None);
    let cache = IndexCache::open(folder.path(), &RuleConfig::default()).expect("open");
    build(project.path(), Some(&cache));
    // Every entry spoiled a different way: cut short, a byte flipped, emptied.
    let mut entries = Vec::new();
    for shard in std::fs::read_dir(folder.path()).expect("cache") {
        for entry in std::fs::read_dir(shard.expect("shard").path()).expect("shard") {
            entries.push(entry.expect("entry").path());
        }
    }
    entries.sort();
    for (n, path) in entries.iter().enumerate() {
        let mut bytes = std::fs::read(path).expect("entry");
        match n % 3 {
            0 => bytes.truncate(bytes.len() / 2),
            1 => {
                let middle = bytes.len() / 2;
                bytes[middle] ^= 0x01;
            }
            _ => bytes.clear(),
        }
        std::fs::write(path, bytes).expect("spoil");
    }
    let cache = IndexCache::open(folder.path(), &RuleConfig::default()).expect("open");
    let (rebuilt, report) = build(project.path(), Some(&cache));
    assert_eq!(rebuilt, cold);
    let stats = report.cache.expect("cache stats");
    // Only the second of the two equal files may find its entry rewritten.
    assert!(stats.hits <= 1, "no spoiled entry is trusted: {stats:?}");
    assert!(stats.rejected >= entries.len(), "{stats:?}");

    let cache = IndexCache::open(folder.path(), &RuleConfig::default()).expect("open");
    let (warm, report) = build(project.path(), Some(&cache));
    assert_eq!(warm, cold);
    assert_eq!(report.cache.expect("cache stats").hits, report.files);
}
