//! The HTML viewer in a real browser: Debian's headless Chromium (installed by
//! `.ci/run`) opens `report.html` and a run page of the `batch-viewer` fixture (a
//! script batch under C0 and C2: the agent's first write copies `parse_amount`, the
//! engine denies it, the agent reuses it) from `file://`, with scripts running.
//! The dumped DOM must hold every task, condition, the run page's tool calls and
//! the denial's reason; agent output holding markup must stay text; the console
//! must show no error; screenshots go to `<target tmp>/viewer/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/batch-viewer")
}

/// The test's output folder (kept after the test for a look at the screenshots).
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viewer");
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

#[test]
fn chromium_shows_the_batch_the_matrix_and_a_run_page_with_its_denial() {
    let out = output_dir();
    let report = out.join("report");
    let status = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
        .arg("report")
        .arg(fixture())
        .arg("--out")
        .arg(&report)
        .status()
        .expect("sens-bench runs");
    assert!(status.success());
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
