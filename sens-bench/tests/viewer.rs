//! The HTML viewer in a real browser: Debian's headless Chromium (installed by
//! `.ci/run`) opens `report.html` and a run page of the `batch-viewer` fixture (a
//! script batch under C0 and C2: the agent's first write copies `parse_amount`, the
//! engine denies it, the agent reuses it) from `file://`, with scripts running.
//! The dumped DOM must hold every task, condition, the run page's tool calls and
//! the denial's reason; agent output holding markup must stay text; the console
//! must show no error; screenshots go to `<target tmp>/viewer/`. A second test does
//! the same on a batch it runs: the main job's scenario
//! (`bench/scenarios/copy-then-reuse.json`) through `sens-bench run`, the pinned
//! CLI and the engine, under C0 and C2.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/batch-viewer")
}

/// A test's output folder (kept after the test for a look at the screenshots).
fn output_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("the old output can be removed");
    }
    std::fs::create_dir_all(&dir).expect("the output folder");
    dir
}

fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("Chromium is not installed: `apt-get install -y chromium` (.ci/run does)")
}

/// Chromium headless on `page` with `extra` arguments; a fresh profile each time.
fn browse(page: &Path, extra: &[String]) -> Output {
    let profile = tempfile::tempdir().expect("a profile folder");
    let output = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium on {} failed: {}",
        page.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The DOM after scripts ran; fails on any console error or refused script.
fn dump_dom(page: &Path) -> String {
    let output = browse(page, &["--dump-dom".to_string()]);
    let log = String::from_utf8_lossy(&output.stderr);
    for bad in ["Uncaught", "Refused to", ":ERROR:CONSOLE"] {
        assert!(
            !log.contains(bad),
            "console error ({bad}) on {}:\n{log}",
            page.display()
        );
    }
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn screenshot(page: &Path, file: &Path) {
    browse(
        page,
        &[
            format!("--screenshot={}", file.display()),
            "--window-size=1280,1600".to_string(),
        ],
    );
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    assert!(size > 0, "no screenshot at {}", file.display());
}

fn sens_bench(args: &[&std::ffi::OsStr]) {
    let output = common::binary::sens_bench(args);
    assert!(
        output.status.success(),
        "sens-bench {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn chromium_shows_a_scripted_batch_with_the_engines_denial_and_its_outcome() {
    let out = output_dir("viewer-scenario");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let batch = out.join("batch");
    let agent = format!(
        "script:{}",
        root.join("bench/scenarios/copy-then-reuse.json").display()
    );
    let tasks = root.join("bench/scenarios/tasks");
    let conditions = root.join("bench/conditions.toml");
    sens_bench(&[
        "run".as_ref(),
        "--tasks".as_ref(),
        tasks.as_os_str(),
        "--task".as_ref(),
        "amount-total".as_ref(),
        "--condition".as_ref(),
        "C0,C2".as_ref(),
        "--agent".as_ref(),
        agent.as_ref(),
        "--conditions".as_ref(),
        conditions.as_os_str(),
        "--out".as_ref(),
        batch.as_os_str(),
    ]);
    sens_bench(&["report".as_ref(), batch.as_os_str()]);
    let index = batch.join("report.html");
    let dom = dump_dom(&index);
    assert!(
        dom.contains("data-ready=\"1\""),
        "the matrix script did not run"
    );
    for needle in ["amount-total", ">C0<", ">C2<", "complied 1"] {
        assert!(dom.contains(needle), "the index lacks {needle}");
    }
    let run = batch.join("view/amount-total/C2/1.html");
    let dom = dump_dom(&run);
    for needle in [
        "Sens denied this Write of src/report.py",
        "copy.near",
        "src/report.py:1",
        "src/util.py:4",
        "complied",
        "Add `total(items)`",
        "reusing it",
    ] {
        assert!(dom.contains(needle), "the run page lacks {needle}");
    }
    screenshot(&run, &out.join("run.png"));
}

#[test]
fn chromium_shows_the_batch_the_matrix_and_a_run_page_with_its_denial() {
    let out = output_dir("viewer");
    let report = out.join("report");
    sens_bench(&[
        "report".as_ref(),
        fixture().as_os_str(),
        "--out".as_ref(),
        report.as_os_str(),
    ]);
    let index = report.join("report.html");
    let dom = dump_dom(&index);
    assert!(
        dom.contains("data-ready=\"1\""),
        "the matrix script did not run"
    );
    for needle in [
        "py-amount",
        ">C0<",
        ">C2<",
        "complied",
        "view/py-amount/C2/1.html",
    ] {
        assert!(dom.contains(needle), "the index lacks {needle}");
    }
    screenshot(&index, &out.join("index.png"));

    let run = report.join("view/py-amount/C2/1.html");
    let dom = dump_dom(&run);
    for needle in [
        "Write",
        "Bash",
        "Denied: to_cents copies parse_amount (src/util.py:4). Call parse_amount instead.",
        "src/report.py:1",
        "complied",
        "Add a total of the amounts",
    ] {
        assert!(dom.contains(needle), "the run page lacks {needle}");
    }
    // The tool result's markup is text: escaped in the DOM, no element made of it.
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{dom}"
    );
    assert!(
        dom.contains("\"&gt;&lt;img src=x onerror=alert(2)&gt;"),
        "{dom}"
    );
    assert!(
        !dom.contains("<img"),
        "an img element came from agent output"
    );
    assert_eq!(
        dom.matches("<script").count(),
        0,
        "a run page runs no script"
    );
    screenshot(&run, &out.join("run.png"));
}
