//! The Horizonte sequences of `sequences/`. Their concept probes (`probes.toml`):
//! every probe reads 1 on the final reference state, and on its fixtures
//! (`fixtures/probes/<sequence>/<concept>/`) it reads 1 on `first.*`, one
//! implementation of its concept, and 2 once `second.*`, another implementation
//! written differently, stands beside it. And horas played end to end by the
//! oracle through the pinned Claude Code CLI under C0 and C2.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sens_bench::exec::{self, CommandLine, Status};
use sens_bench::measure::loc::{count_probes, lines_of_code};
use sens_bench::record::{RunStatus, read_records};
use sens_bench::spec::files::FileSet;
use sens_bench::spec::sequence::{Sequence, load_sequence};
use sens_bench::workspace::git::apply_patch;
use sens_bench::workspace::hidden::{copy_hidden, remove_hidden};
use sens_engine::ignores::Ignores;

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

/// A copy of reference state `state`: the start with the first `state` steps'
/// reference patches applied.
fn reference_state(sequence: &Sequence, state: usize) -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("temp dir");
    copy_tree(&sequence.start, copy.path());
    git2::Repository::init(copy.path()).expect("git init");
    for step in &sequence.steps[..state] {
        apply_patch(copy.path(), &step.reference).expect("the reference applies");
    }
    copy
}

/// A copy of the sequence's last reference state.
fn final_reference_state(sequence: &Sequence) -> tempfile::TempDir {
    reference_state(sequence, sequence.steps.len())
}

/// Runs one of a sequence's command lines in `dir` as the validator does, its
/// output into `log`; its status and that output.
fn run_line(line: &str, dir: &Path, log: &Path) -> (Status, String) {
    let outcome = exec::run(&CommandLine {
        line,
        dir,
        env: &[],
        timeout: Duration::from_secs(1800),
        log,
        sandbox: None,
    })
    .expect("the command runs");
    let text = std::fs::read_to_string(log).expect("the log");
    (outcome.status, text)
}

/// The ignore rules of a folder measured outside a run.
fn no_baseline() -> Ignores {
    Ignores::fixed(&[]).expect("no patterns")
}

/// The probes that read 1 on a sequence's start state (an inline implementation in
/// the start's code, as its README says); every other probe reads 0 there.
const ON_AT_START: [(&str, &[&str]); 2] =
    [("cuentas", &["dates"]), ("horas", &["dates", "durations"])];

#[test]
fn every_probe_reads_its_start_count_first_and_one_on_the_final_reference_state() {
    for (name, on) in ON_AT_START {
        let sequence = sequence(name);
        let counts = count_probes(
            &sequence.start,
            &sequence.probes,
            &sequence.size,
            &no_baseline(),
        )
        .expect("probes counted");
        for (concept, count) in &counts {
            let expected = u64::from(on.contains(&concept.as_str()));
            assert_eq!(*count, expected, "{name}: probe `{concept}` on the start");
        }
    }
    for name in SEQUENCES {
        let sequence = sequence(name);
        let copy = final_reference_state(&sequence);
        let counts = count_probes(
            copy.path(),
            &sequence.probes,
            &sequence.size,
            &no_baseline(),
        )
        .expect("probes counted");
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
                let counts = count_probes(&folder, probes, &globs(files), &no_baseline())
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

/// cuentas' hidden command runs every test file in one process and its harness runs a
/// build of the program instead of tsx (sequences/cuentas/README.md,
/// "Running the hidden tests"): state 29 still fails step 30's tests and only those, and
/// on state 30 a program that checks it runs as tsx runs it passes, whether it is built
/// (it checks its command line and `process.argv[1]`) or must run through tsx (it reads
/// `import.meta.url`).
#[test]
fn cuentas_hidden_tests_fail_on_the_step_they_test_and_run_the_program_as_tsx_does() {
    let sequence = sequence("cuentas");
    let (last, earlier) = sequence.steps.split_last().expect("steps");
    let copy = reference_state(&sequence, earlier.len());
    let root = copy.path();
    let logs = tempfile::tempdir().expect("temp dir");
    let log_file = logs.path().join("command.log");
    for step in &sequence.steps {
        copy_hidden(&step.hidden, root).expect("hidden files copied");
    }
    let setup = sequence.commands.setup().expect("cuentas has a set-up");
    let (status, output) = run_line(setup, root, &log_file);
    assert!(status.passed(), "set-up: {output}");
    let hidden = &sequence.commands.hidden;
    let (status, output) = run_line(hidden, root, &log_file);
    assert!(status.failed(), "state 29 fails step 30's tests: {output}");
    let failing: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("not ok "))
        .collect();
    assert!(!failing.is_empty(), "{output}");
    assert!(
        failing.iter().all(|line| line.contains(" - step 30: ")),
        "only step 30's tests fail: {failing:?}"
    );

    apply_patch(root, &last.reference).expect("the reference applies");
    // Step 01's tests alone suffice to run the program each way.
    for step in &sequence.steps[1..] {
        remove_hidden(&step.hidden, root).expect("hidden files removed");
    }
    copy_hidden(&sequence.steps[0].hidden, root).expect("its harness copied back");
    let cli = root.join("src/cli.ts");
    let program = std::fs::read_to_string(&cli).expect("cli.ts");
    for (check, how) in [
        (
            r#"
import { readFileSync as readOwn } from "node:fs";
const ownCommandLine = readOwn("/proc/self/cmdline", "utf8");
if (ownCommandLine.includes("--import") || !process.argv[1].endsWith("/src/cli.ts")) process.exitCode = 3;
"#,
            "built, with tsx's argv[1]",
        ),
        (
            r#"
if (!import.meta.url.endsWith("/src/cli.ts")) process.exitCode = 3;
"#,
            "through tsx",
        ),
    ] {
        std::fs::write(&cli, format!("{program}{check}")).expect("cli.ts written");
        let (status, output) = run_line(hidden, root, &log_file);
        assert!(status.passed(), "the program runs {how}: {output}");
    }
}

#[test]
#[ignore = "plays 30 steps twice through the CLI (about 3 minutes); .ci/run runs it by name"]
fn the_oracle_plays_horas_under_c0_and_c2_and_the_report_draws_its_growth() {
    let sequence = sequence("horas");
    let final_state = final_reference_state(&sequence);
    let final_size =
        lines_of_code(final_state.path(), &sequence.size, &no_baseline()).expect("measured");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("batch");
    let sens_bench = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_sens-bench"))
            .args(args)
            .env_remove("ANTHROPIC_API_KEY")
            .output()
            .expect("sens-bench starts");
        assert!(
            output.status.success(),
            "sens-bench {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    };
    let conditions = repository_root().join("bench/conditions.toml");
    let out_arg = out.to_str().expect("UTF-8 path");
    sens_bench(&[
        "sequence",
        "run",
        sequence.dir.to_str().expect("UTF-8 path"),
        "--condition",
        "C0,C2",
        "--reps",
        "1",
        "--jobs",
        "2",
        "--agent",
        "oracle",
        "--conditions",
        conditions.to_str().expect("UTF-8 path"),
        "--out",
        out_arg,
    ]);
    let records = read_records(&out.join("runs.jsonl")).expect("records");
    assert_eq!(records.len(), 2 * sequence.steps.len());
    for record in &records {
        let at = format!("{} step {:?}", record.condition, record.step);
        assert_eq!(record.status, RunStatus::Ok, "{at}: {:?}", record.error);
        assert_eq!(record.hidden_pass, Some(true), "{at}");
        assert_eq!(record.project_pass, Some(true), "{at}");
        // The reference is correct work: the engine never stops it.
        assert_eq!((record.hooks.denials, record.hooks.blocks), (0, 0), "{at}");
    }
    let last = sequence.steps.len() as u32;
    for condition in ["C0", "C2"] {
        let end = records
            .iter()
            .find(|r| r.condition == condition && r.step == Some(last))
            .expect("the last step is recorded");
        assert_eq!(end.loc_total, Some(final_size), "{condition}");
        assert!(
            end.probes.values().all(|count| *count == 1),
            "{condition}: {:?}",
            end.probes
        );
    }
    sens_bench(&["sequence", "report", out_arg]);
    let md = std::fs::read_to_string(out.join("sequence-report.md")).expect("the report");
    assert!(
        md.contains("# Sequence report: batch batch (horas)"),
        "{md}"
    );
    assert!(md.contains("## Size after each step"), "{md}");
    let svg = std::fs::read_to_string(out.join("plots/growth.svg")).expect("the growth plot");
    assert!(svg.contains("horas"), "the plot names the sequence");
}
