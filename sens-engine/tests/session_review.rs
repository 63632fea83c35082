//! The reviewer in the Stop audit, with a test reviewer: asked only when the
//! change rules pass and code changed, and a failing reviewer approves nothing.

// The fixture is shared with `session.rs`; this file uses only part of it.
#[allow(dead_code)]
#[path = "session_common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use sens_engine::session::review::{ReviewAnswer, ReviewInput, ReviewOptions, Reviewer};
use sens_engine::session::{Session, SessionOptions};

/// Counts its calls; fails on every call when `fails`.
#[derive(Debug, Default)]
struct CountingReviewer {
    calls: AtomicUsize,
    fails: bool,
}

impl Reviewer for CountingReviewer {
    fn review(&self, input: &ReviewInput) -> anyhow::Result<ReviewAnswer> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        anyhow::ensure!(!self.fails, "the provider is down");
        assert!(input.patch.contains("+pub fn gamma"), "{}", input.patch);
        assert_eq!(input.files, ["src/gamma.rs"]);
        Ok(ReviewAnswer::default())
    }
}

fn reviewed(reviewer: Arc<CountingReviewer>) -> anyhow::Result<Project> {
    let mut project = Project::new()?;
    let mut options = SessionOptions::new(project.ledger.clone());
    options.review = Some(ReviewOptions {
        reviewer,
        block_at: 0.9,
    });
    let judge = MarkerJudge::new(&project.root, project.fail.clone());
    project.session = Session::new(&project.root, Box::new(judge), options)?;
    Ok(project)
}

#[test]
fn the_reviewer_is_asked_only_when_code_changed_and_rules_pass() -> anyhow::Result<()> {
    let reviewer = Arc::new(CountingReviewer::default());
    let mut project = reviewed(reviewer.clone())?;
    project.handle(&project.prompt("add gamma"));
    assert_eq!(project.handle(&project.stop(false)), serde_json::json!({}));
    assert_eq!(reviewer.calls.load(Ordering::SeqCst), 0, "nothing changed");

    project.write(
        "src/beta.rs",
        &format!("pub fn beta() {{\n    // {MARKER}\n}}\n"),
    )?;
    assert_eq!(project.handle(&project.stop(false))["decision"], "block");
    assert_eq!(
        reviewer.calls.load(Ordering::SeqCst),
        0,
        "a change rule failed first"
    );

    std::fs::remove_file(project.root.join("src/beta.rs"))?;
    project.write("src/gamma.rs", "pub fn gamma() -> i32 { 3 }\n")?;
    let before = project.approved_tree();
    assert_eq!(project.handle(&project.stop(false)), serde_json::json!({}));
    assert_eq!(reviewer.calls.load(Ordering::SeqCst), 1);
    assert_ne!(project.approved_tree(), before, "a passing review approves");
    let last = project.ledger_lines()?.pop().unwrap();
    assert_eq!(
        last["review"]["calls"], 0,
        "the test reviewer reports no calls"
    );
    Ok(())
}

#[test]
fn a_failing_reviewer_blocks_and_approves_nothing() -> anyhow::Result<()> {
    let reviewer = Arc::new(CountingReviewer {
        fails: true,
        ..CountingReviewer::default()
    });
    let mut project = reviewed(reviewer.clone())?;
    project.handle(&project.prompt("add gamma"));
    let approved = project.approved_tree();
    project.write("src/gamma.rs", "pub fn gamma() -> i32 { 3 }\n")?;
    let output = project.handle(&project.stop(false));
    assert_eq!(output["decision"], "block", "{output}");
    let reason = output["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the provider is down") && reason.contains("Nothing was approved"),
        "{output}"
    );
    assert_eq!(project.approved_tree(), approved);
    let last = project.ledger_lines()?.pop().unwrap();
    assert_eq!(last["verdict"], "error");
    Ok(())
}
