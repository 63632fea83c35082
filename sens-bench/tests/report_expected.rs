//! `sens-bench report` and `sens-bench sequence report` on the fixture batches give
//! the files of their snapshots (`tests/snapshots/`, one per output file and one
//! listing each case's files), in every format, the HTML viewer (`report.html`,
//! `view/`) included.
//!
//! PNGs are not compared: their pixels are the glyphs of whatever font fontconfig
//! resolves `sans-serif` to on the machine (a different font gives other bytes, while
//! the SVGs, which name the font, stay identical). They are only checked to be
//! written, once per SVG, and the same on a second run.
//!
//! After an intended change of output, `INSTA_UPDATE=always cargo test -p
//! sens-bench --test report_expected` rewrites the snapshots (or `cargo insta
//! review`, with cargo-insta installed, shows each change to accept); review the
//! diff before committing it.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::files::fixture;

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
    fixture("")
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

/// An output file's snapshot name: the case and the file's path, `/` as `__`.
fn snapshot_name(case: &Case, relative: &Path) -> String {
    format!(
        "{}__{}__{}",
        case.batch,
        case.folder,
        relative.display().to_string().replace('/', "__")
    )
}

#[test]
fn reports_on_the_fixture_batches_match_their_snapshots() {
    let tmp = tempfile::tempdir().expect("a temp folder");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let _bound = settings.bind_to_scope();
    for case in &CASES {
        let out = tmp.path().join(case.batch).join(case.folder);
        generate(case, &out);
        let files = files_under(&out);
        let (compared, pngs) = split_pngs(files.clone());
        let names = |set: &[(PathBuf, Vec<u8>)]| -> Vec<PathBuf> {
            set.iter().map(|(p, _)| p.clone()).collect()
        };
        let listing: Vec<String> = names(&compared)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        insta::assert_snapshot!(
            format!("{}__{}__files", case.batch, case.folder),
            listing.join("\n")
        );
        for (path, bytes) in &compared {
            let text = std::str::from_utf8(bytes).expect("every compared output is text");
            insta::assert_snapshot!(snapshot_name(case, path), text);
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
