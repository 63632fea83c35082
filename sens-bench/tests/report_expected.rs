//! `sens-bench report` and `sens-bench sequence report` on the fixture batches give
//! byte for byte the files committed under `tests/fixtures/expected/`, in every
//! format, the HTML viewer (`report.html`, `view/`) included. The expected files were written before the statistics were reshaped, so
//! this test shows that reshaping changed no output.
//!
//! PNGs are not compared: their pixels are the glyphs of whatever font fontconfig
//! resolves `sans-serif` to on the machine (a different font gives other bytes, while
//! the SVGs, which name the font, stay identical). They are only checked to be
//! written, once per SVG, and the same on a second run.
//!
//! `SENS_BENCH_BLESS=1 cargo test -p sens-bench --test report_expected` rewrites the
//! expected files after an intended change of output.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One report of one fixture batch: the sub-command's arguments before the batch
/// folder, and the folder under `expected/<batch>/` that holds its files.
struct Case {
    batch: &'static str,
    command: &'static [&'static str],
    folder: &'static str,
}

const CASES: [Case; 6] = [
    Case {
        batch: "batch-small",
        command: &["report"],
        folder: "md",
    },
    Case {
        batch: "batch-small",
        command: &["report", "--format", "json"],
        folder: "json",
    },
    Case {
        batch: "batch-small",
        command: &["report", "--format", "csv"],
        folder: "csv",
    },
    // Run folders with a transcript and a ledger: the viewer's run pages.
    Case {
        batch: "batch-viewer",
        command: &["report"],
        folder: "md",
    },
    Case {
        batch: "sequence-small",
        command: &["sequence", "report"],
        folder: "md",
    },
    Case {
        batch: "sequence-small",
        command: &["sequence", "report", "--format", "json"],
        folder: "json",
    },
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Runs the case's report into `out`.
fn generate(case: &Case, out: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .args(case.command)
        .arg(fixtures().join(case.batch))
        .arg("--out")
        .arg(out)
        .output()
        .expect("the sens-bench binary runs");
    assert!(
        output.status.success(),
        "sens-bench {:?} {}: {}",
        case.command,
        case.batch,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every file under `dir` (relative path and bytes), sorted by path.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = fs::read(&path).expect("a readable file");
                let relative = path.strip_prefix(dir).expect("under dir").to_path_buf();
                files.push((relative, bytes));
            }
        }
    }
    files.sort();
    files
}

fn is_png(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "png")
}

/// The files of one case's output, PNGs split off.
fn split_pngs(files: Vec<(PathBuf, Vec<u8>)>) -> (Vec<(PathBuf, Vec<u8>)>, Vec<PathBuf>) {
    let (pngs, compared): (Vec<_>, Vec<_>) = files.into_iter().partition(|(p, _)| is_png(p));
    (compared, pngs.into_iter().map(|(p, _)| p).collect())
}

fn bless(expected: &Path, files: &[(PathBuf, Vec<u8>)]) {
    if expected.exists() {
        fs::remove_dir_all(expected).expect("the old expected files can be removed");
    }
    for (relative, bytes) in files {
        let path = expected.join(relative);
        fs::create_dir_all(path.parent().expect("a file has a folder")).expect("a folder");
        fs::write(&path, bytes).expect("an expected file is written");
    }
}

#[test]
fn reports_on_the_fixture_batches_match_the_expected_files() {
    let tmp = tempfile::tempdir().expect("a temp folder");
    let blessing = std::env::var_os("SENS_BENCH_BLESS").is_some();
    for case in &CASES {
        let out = tmp.path().join(case.batch).join(case.folder);
        generate(case, &out);
        let files = files_under(&out);
        let (compared, pngs) = split_pngs(files.clone());
        let expected = fixtures()
            .join("expected")
            .join(case.batch)
            .join(case.folder);
        if blessing {
            bless(&expected, &compared);
            continue;
        }
        let want = files_under(&expected);
        let names = |set: &[(PathBuf, Vec<u8>)]| -> Vec<PathBuf> {
            set.iter().map(|(p, _)| p.clone()).collect()
        };
        assert_eq!(
            names(&compared),
            names(&want),
            "{} {:?}: other files",
            case.batch,
            case.command
        );
        for ((path, ours), (_, theirs)) in compared.iter().zip(&want) {
            assert!(
                ours == theirs,
                "{} {:?}: {} differs from {}",
                case.batch,
                case.command,
                out.join(path).display(),
                expected.join(path).display()
            );
        }
        let svgs: Vec<PathBuf> = names(&compared)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "svg"))
            .map(|p| p.with_extension("png"))
            .collect();
        assert_eq!(pngs, svgs, "one PNG per SVG");
        let again = tmp.path().join("again").join(case.batch).join(case.folder);
        generate(case, &again);
        assert!(
            files_under(&again) == files,
            "a second run gives other bytes"
        );
    }
}
