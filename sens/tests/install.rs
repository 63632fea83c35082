//! Sens installed the way a person installs it: `cargo install --locked --path
//! sens --root PREFIX` from a fresh clone of this repository (its committed
//! HEAD), then `PREFIX/bin/sens install .` in a scratch project, then one real CLI
//! session through the installed hooks whose copy is denied.
//!
//! The install builds in this build's target folder (`CARGO_TARGET_DIR`, which
//! `cargo install` honours) with the test build's profile (`--debug`), so only
//! what changed is compiled again.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use sens_bench::agent::script::{Block, Script, Turn};
use sens_bench::exec::group::kill_group;
use sens_bench::measure::ledger::{LedgerLine, read_ledger};
use sens_engine::session::ledger::Verdict;
use serde_json::Value;

use common::cli::{amounts_project, cli_env, copied_report, play, repo_root, write_report};

/// The target folder this test was built in: `<target>/debug/deps/install-HASH`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

fn run(command: &mut Command, what: &str) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Ends the engine the installed hook started, whatever the test's outcome.
struct Engine(PathBuf);

impl Drop for Engine {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.0.join(".sens/engine.pid")) {
            let _ = kill_group(pid.trim().parse().unwrap_or(0));
            common::processes::wait_until_ended(&pid);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sens_installed_by_cargo_from_a_clean_clone_denies_a_copy_in_a_real_session() {
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    run(
        Command::new("git")
            .args(["clone", "-q"])
            .arg(repo_root())
            .arg(&clone),
        "git clone",
    );
    let prefix = dir.path().join("prefix");
    run(
        Command::new(env!("CARGO"))
            // `--debug` reuses this build's compiled crates; the release profile
            // is the same code, and building it would double the test run's time.
            .args(["install", "--locked", "--debug", "--path"])
            .arg(clone.join("sens"))
            .arg("--root")
            .arg(&prefix)
            .env("CARGO_TARGET_DIR", target_dir()),
        "cargo install",
    );
    let sens = prefix.join("bin/sens");
    assert!(sens.is_file(), "{} is not installed", sens.display());

    let root = dir.path().join("p");
    amounts_project(&root);
    let _engine = Engine(root.clone());
    run(
        Command::new(&sens)
            .args(["install", ".", "--idle-secs", "120"])
            .current_dir(&root),
        "sens install .",
    );
    let settings: Value =
        serde_json::from_slice(&std::fs::read(root.join(".claude/settings.json")).unwrap())
            .unwrap();
    let hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let words = shlex::split(hook).unwrap();
    assert_eq!(Path::new(&words[0]), sens.canonicalize().unwrap(), "{hook}");
    assert_eq!(words[1], "hook", "{hook}");

    // The CLI's PATH holds no `sens`: the hooks reach the installed binary by
    // its absolute path.
    let home = dir.path().join("home");
    let env = cli_env(&home, &root, Path::new("/nonexistent"));
    let copy = copied_report();
    play(
        &root,
        env,
        dir.path().join("claude.log"),
        Script {
            main: vec![
                Turn::new(vec![write_report(&copy)]),
                Turn::new(vec![Block::text("Done.")]),
                Turn::new(vec![Block::text("Done.")]),
                Turn::new(vec![Block::text("Done.")]),
            ],
            agent: Vec::new(),
            decisions: Vec::new(),
        },
    )
    .await;
    let ledger: Vec<LedgerLine> = read_ledger(&root.join(".sens/hooks.jsonl")).unwrap();
    let write = ledger
        .iter()
        .find(|l| l.event == "PreToolUse" && l.tool.as_deref() == Some("Write"))
        .expect("the installed PreToolUse hook reached the engine");
    assert_eq!(write.verdict, Verdict::Deny);
    assert!(
        !root.join("src/report.py").exists(),
        "the denied copy was not written"
    );

    run(
        Command::new(&sens)
            .args(["uninstall", "."])
            .current_dir(&root),
        "sens uninstall .",
    );
}
