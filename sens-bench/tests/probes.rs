//! The concept probes of the Horizonte sequences (`sequences/*/probes.toml`): every
//! probe reads 1 on the final reference state, and on its fixtures
//! (`fixtures/probes/<sequence>/<concept>/`) it reads 1 on `first.*`, one
//! implementation of its concept, and 2 once `second.*`, another implementation
//! written differently, stands beside it.

use std::path::{Path, PathBuf};

use sens_bench::measure::loc::count_probes;
use sens_bench::spec::files::FileSet;
use sens_bench::spec::sequence::{Sequence, load_sequence};
use sens_bench::workspace::git::apply_patch;

const SEQUENCES: [&str; 2] = ["cuentas", "horas"];

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_path_buf()
}

fn sequence(name: &str) -> Sequence {
    load_sequence(&repository_root().join("sequences").join(name)).expect("the sequence loads")
}

fn globs(items: &[&str]) -> FileSet {
    let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    FileSet::new(&items, &[]).expect("globs")
}

/// Copies `from` into `to`, files and folders.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the folder") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[test]
fn every_probe_reads_one_on_the_final_reference_state() {
    for name in SEQUENCES {
        let sequence = sequence(name);
        let copy = tempfile::tempdir().expect("temp dir");
        copy_tree(&sequence.start, copy.path());
        git2::Repository::init(copy.path()).expect("git init");
        for step in &sequence.steps {
            apply_patch(copy.path(), &step.reference).expect("the reference applies");
        }
        let counts =
            count_probes(copy.path(), &sequence.probes, &sequence.size).expect("probes counted");
        assert_eq!(counts.len(), sequence.probes.len(), "{name}");
        for (concept, count) in &counts {
            assert_eq!(*count, 1, "{name}: probe `{concept}` on the last state");
        }
    }
}

#[test]
fn a_second_implementation_beside_the_first_raises_every_probe() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/probes");
    let mut wrong = Vec::new();
    for name in SEQUENCES {
        let sequence = sequence(name);
        assert!(sequence.probes.len() >= 8, "{name} has a probe per concept");
        for probe in &sequence.probes {
            let folder = fixtures.join(name).join(&probe.concept);
            let probes = std::slice::from_ref(probe);
            for (files, expected) in [
                (&["first.*"][..], 1),
                (&["second.*"][..], 1),
                (&["first.*", "second.*"][..], 2),
            ] {
                let counts = count_probes(&folder, probes, &globs(files))
                    .unwrap_or_else(|e| panic!("{name}/{}: {e:#}", probe.concept));
                let count = counts[&probe.concept];
                if count != expected {
                    wrong.push(format!(
                        "{name}/{} on {files:?}: {count}, expected {expected}",
                        probe.concept
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
