//! `sens-bench report` and `sens-bench sequence report` through the real binary, on
//! the batches under `tests/fixtures/` and on batches written here: failed runs, a
//! single rep, a missing condition, an empty batch, malformed lines.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use common::binary::sens_bench;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// Runs `sens-bench` and expects success.
fn ok(args: &[&str]) -> Output {
    let output = sens_bench(args);
    assert!(
        output.status.success(),
        "sens-bench {args:?} failed: {}",
        stderr(&output)
    );
    output
}

/// Runs `sens-bench` and expects the error exit (2) with a message, not a panic.
fn fails(args: &[&str]) -> String {
    let output = sens_bench(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "sens-bench {args:?}: {}",
        stderr(&output)
    );
    let message = stderr(&output);
    assert!(message.starts_with("error: "), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    message
}

/// A complete run record.
fn record(task: &str, condition: &str, rep: u32, status: &str, loc_added: u64) -> Value {
    let ok = status == "ok";
    json!({
        "batch": "t", "task": task, "sequence": null, "step": null,
        "condition": condition, "rep": rep, "status": status,
        "hidden_pass": if ok { json!(loc_added.is_multiple_of(2)) } else { Value::Null },
        "project_pass": if ok { json!(true) } else { Value::Null },
        "regression": false, "flaky": false,
        "loc_added": if ok { json!(loc_added) } else { Value::Null },
        "loc_removed": if ok { json!(1) } else { Value::Null },
        "loc_total": if ok { json!(300 + loc_added) } else { Value::Null },
        "functions_added": 1, "function_lines_median": 5.0,
        "dup_lines_engine": 0, "dup_lines_jscpd": null, "probes": {},
        "tokens": if ok { json!({"input": 100, "output": 200, "cache_read": 3000 + loc_added * 10, "cache_creation": 50}) } else { Value::Null },
        "cost_usd": if ok { json!(0.1 + loc_added as f64 / 1000.0) } else { Value::Null },
        "turns": 3, "duration_s": 30.0,
        "hooks": {"denials": 0, "blocks": 0, "pauses": 0, "suggestions": 0},
        "integrity": {"touched_task_files": false, "edited_tests": false},
        "agent": {"name": "oracle", "version": "2.1.197", "model": "oracle", "effort": "medium"},
        "started_at": "2026-11-30T10:00:00Z", "engine_rev": "abc"
    })
}

fn write_batch(dir: &Path, records: &[Value]) {
    fs::create_dir_all(dir).unwrap();
    let lines: String = records.iter().map(|r| format!("{r}\n")).collect();
    fs::write(dir.join("runs.jsonl"), lines).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&path).unwrap(),
                ));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn report_writes_markdown_csv_and_plots_into_the_batch() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("batch-small");
    copy_dir(&fixture("batch-small"), &batch);
    let output = ok(&["report", arg(&batch)]);
    let listed = stdout(&output);
    for name in [
        "report.md",
        "runs.csv",
        "plots/differences_loc_added.svg",
        "plots/differences_loc_added.png",
        "plots/tokens_per_condition.svg",
        "plots/tokens_per_condition.png",
    ] {
        let path = batch.join(name);
        assert!(path.is_file(), "{name} missing; listed: {listed}");
        assert!(listed.contains(arg(&path)), "{listed}");
    }
    let png = fs::read(batch.join("plots/differences_loc_added.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = fs::read_to_string(batch.join("plots/differences_loc_added.svg")).unwrap();
    assert!(svg.contains("py-progress-final") && svg.contains("C2"));

    let md = fs::read_to_string(batch.join("report.md")).unwrap();
    // Counted and listed apart; only ok runs in the statistics.
    assert!(
        md.contains("20 task runs (17 ok, 1 agent_error, 1 timeout, 1 infra_error)"),
        "{md}"
    );
    assert!(md.contains("Only `ok` runs enter the statistics"));
    assert!(
        md.contains("| py-progress-final | C2 | 4 | infra_error | setup failed"),
        "{md}"
    );
    assert!(md.contains("| rs-retry-policy | C1 | 3 | timeout | no result after 900 s |"));
    // n counts ok runs only: the C2 cell of py-progress-final has 4 records, 3 ok.
    assert!(
        md.contains("| py-progress-final | C2 | 4 | 3 | 3/3 | 12 | 38000 | 0.74 |"),
        "{md}"
    );
    // C2 adds fewer lines on both tasks: per task p = 2/20, stratified 2/400.
    assert!(
        md.contains("| py-progress-final | C2 | 3 | 3 | -43 | [-52, -33] | 0.1000 |"),
        "{md}"
    );
    assert!(md.contains("| all | C2 | 6 | 6 | -49.5 |"), "{md}");
    assert!(md.contains("| 0.0050 |"), "{md}");
    assert!(
        md.contains("| C2 | 7 | 12 | 6 | 0 | 24 |"),
        "hook sums: {md}"
    );
    assert!(
        md.contains("| py-progress-final | C0 | 3 | ok | no | yes |"),
        "integrity: {md}"
    );
    assert!(
        md.contains("[tasks]\npy-progress-final = \"sha256:1f0c\""),
        "manifest: {md}"
    );

    let csv = fs::read_to_string(batch.join("runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 21);
    assert!(csv.starts_with("batch,task,sequence,step,condition,rep,status,"));
}

#[test]
fn report_json_has_the_binding_fields_for_every_metric() {
    let output = ok(&["report", arg(&fixture("batch-small")), "--format", "json"]);
    let value: Value = serde_json::from_str(&stdout(&output)).expect("JSON on stdout");
    let comparisons = value["comparisons"].as_array().expect("comparisons");
    // 4 metrics x 2 conditions x (2 tasks + all).
    assert_eq!(comparisons.len(), 24);
    let keys = [
        "scope",
        "metric",
        "condition",
        "baseline",
        "n",
        "n_baseline",
        "median_diff",
        "ci_low",
        "ci_high",
        "p_exact",
    ];
    for c in comparisons {
        let object = c.as_object().unwrap();
        assert_eq!(object.len(), keys.len(), "{c}");
        assert!(keys.iter().all(|k| object.contains_key(*k)), "{c}");
    }
    let metrics: Vec<&str> = comparisons
        .iter()
        .filter_map(|c| c["metric"].as_str())
        .collect();
    for metric in ["loc_added", "hidden_pass", "tokens", "cost_usd"] {
        assert!(metrics.contains(&metric), "{metric}");
    }
    let all_c2 = comparisons
        .iter()
        .find(|c| c["scope"] == "all" && c["metric"] == "loc_added" && c["condition"] == "C2")
        .unwrap();
    assert_eq!(all_c2["baseline"], "C0");
    assert_eq!(all_c2["n"], 6);
    assert_eq!(all_c2["median_diff"], -49.5);
    assert_eq!(all_c2["p_exact"], 0.005);
    assert!(all_c2["ci_low"].as_f64().unwrap() <= -49.5);
    assert!(all_c2["ci_high"].as_f64().unwrap() >= -49.5);
    let c1_rs = comparisons
        .iter()
        .find(|c| {
            c["scope"] == "rs-retry-policy" && c["metric"] == "loc_added" && c["condition"] == "C1"
        })
        .unwrap();
    // The timed-out C1 run is left out.
    assert_eq!(
        (c1_rs["n"].as_u64(), c1_rs["n_baseline"].as_u64()),
        (Some(2), Some(3))
    );
}

#[test]
fn the_same_records_in_another_order_give_byte_identical_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("one/batch");
    let second = tmp.path().join("two/batch");
    copy_dir(&fixture("batch-small"), &first);
    copy_dir(&fixture("batch-small"), &second);
    let text = fs::read_to_string(second.join("runs.jsonl")).unwrap();
    let reversed: String = text.lines().rev().map(|l| format!("{l}\n")).collect();
    fs::write(second.join("runs.jsonl"), reversed).unwrap();
    let out_one = tmp.path().join("out-one");
    let out_two = tmp.path().join("out-two");
    ok(&["report", arg(&first), "--out", arg(&out_one)]);
    ok(&["report", arg(&second), "--out", arg(&out_two)]);
    let one = files_under(&out_one);
    // report.md, runs.csv, 10 plots, report.html and one page per run (20).
    assert_eq!(one.len(), 33);
    assert_eq!(one, files_under(&out_two));
    // And a second run over the same folder rewrites the same bytes.
    ok(&["report", arg(&first), "--out", arg(&out_two)]);
    assert_eq!(one, files_under(&out_two));
    let json_one = stdout(&ok(&["report", arg(&first), "--format", "json"]));
    let json_two = stdout(&ok(&["report", arg(&second), "--format", "json"]));
    assert_eq!(json_one, json_two);
}

#[test]
fn a_single_rep_gives_point_intervals_and_p_of_one() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("single");
    write_batch(
        &batch,
        &[
            record("a", "C0", 1, "ok", 40),
            record("a", "C2", 1, "ok", 10),
        ],
    );
    let value: Value =
        serde_json::from_str(&stdout(&ok(&["report", arg(&batch), "--format", "json"]))).unwrap();
    let loc = value["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scope"] == "a" && c["metric"] == "loc_added")
        .unwrap()
        .clone();
    assert_eq!(loc["median_diff"], -30.0);
    assert_eq!(
        (loc["ci_low"].as_f64(), loc["ci_high"].as_f64()),
        (Some(-30.0), Some(-30.0))
    );
    assert_eq!(loc["p_exact"], 1.0);
    ok(&["report", arg(&batch)]);
    assert!(batch.join("report.md").is_file());
}

#[test]
fn a_missing_condition_is_reported_not_guessed() {
    let tmp = tempfile::tempdir().unwrap();
    // Task b has no C2 runs; the baseline is absent from the second batch.
    let batch = tmp.path().join("partial");
    write_batch(
        &batch,
        &[
            record("a", "C0", 1, "ok", 40),
            record("a", "C0", 2, "ok", 44),
            record("a", "C2", 1, "ok", 10),
            record("a", "C2", 2, "ok", 12),
            record("b", "C0", 1, "ok", 30),
        ],
    );
    let output = ok(&["report", arg(&batch), "--format", "json"]);
    assert!(
        stderr(&output).contains("C2 vs C0: no comparison for b"),
        "{}",
        stderr(&output)
    );
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let scopes: Vec<&str> = value["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["scope"].as_str())
        .collect();
    assert!(scopes.contains(&"a") && scopes.contains(&"all") && !scopes.contains(&"b"));
    ok(&["report", arg(&batch)]);
    let md = fs::read_to_string(batch.join("report.md")).unwrap();
    assert!(md.contains("no comparison for b"), "{md}");

    let no_baseline = tmp.path().join("no-baseline");
    write_batch(
        &no_baseline,
        &[
            record("a", "C1", 1, "ok", 40),
            record("a", "C2", 1, "ok", 10),
        ],
    );
    let output = ok(&["report", arg(&no_baseline), "--format", "json"]);
    assert!(
        stderr(&output).contains("the baseline C0 has no ok runs"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("C1, C2"));
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["comparisons"], json!([]));
    let value: Value = serde_json::from_str(&stdout(&ok(&[
        "report",
        arg(&no_baseline),
        "--format",
        "json",
        "--baseline",
        "C1",
    ])))
    .unwrap();
    assert_eq!(value["comparisons"].as_array().unwrap().len(), 8);
}

#[test]
fn a_batch_of_failed_runs_only_reports_them() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("all-failed");
    write_batch(
        &batch,
        &[
            record("a", "C0", 1, "infra_error", 0),
            record("a", "C2", 1, "timeout", 0),
        ],
    );
    ok(&["report", arg(&batch)]);
    let md = fs::read_to_string(batch.join("report.md")).unwrap();
    assert!(
        md.contains("2 task runs (1 timeout, 1 infra_error)"),
        "{md}"
    );
    assert!(md.contains("| a | C0 | 1 | infra_error |"), "{md}");
    assert!(
        md.contains("No comparisons: the baseline C0 has no ok runs"),
        "{md}"
    );
}

#[test]
fn empty_missing_and_malformed_batches_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    write_batch(&empty, &[]);
    let message = fails(&["report", arg(&empty)]);
    assert!(message.contains("holds no records"), "{message}");
    let message = fails(&["sequence", "report", arg(&empty)]);
    assert!(message.contains("holds no records"), "{message}");

    let message = fails(&["report", arg(&tmp.path().join("nowhere"))]);
    assert!(message.contains("is not a folder"), "{message}");
    let no_runs = tmp.path().join("no-runs");
    fs::create_dir_all(&no_runs).unwrap();
    let message = fails(&["report", arg(&no_runs)]);
    assert!(message.contains("runs.jsonl"), "{message}");

    let broken = tmp.path().join("broken");
    write_batch(&broken, &[record("a", "C0", 1, "ok", 4)]);
    let mut text = fs::read_to_string(broken.join("runs.jsonl")).unwrap();
    text.push_str("{\"batch\": \"t\", \"task\": \n");
    fs::write(broken.join("runs.jsonl"), text).unwrap();
    let message = fails(&["report", arg(&broken)]);
    assert!(message.contains("runs.jsonl:2"), "{message}");

    let twice = tmp.path().join("twice");
    write_batch(
        &twice,
        &[
            record("a", "C0", 1, "ok", 4),
            record("a", "C0", 1, "timeout", 0),
        ],
    );
    let message = fails(&["report", arg(&twice)]);
    assert!(
        message.contains("runs.jsonl:2") && message.contains("already recorded on line 1"),
        "{message}"
    );

    let message = fails(&["report", arg(&fixture("sequence-small"))]);
    assert!(message.contains("sequence report"), "{message}");
    let message = fails(&["sequence", "report", arg(&fixture("batch-small"))]);
    assert!(message.contains("no sequence steps"), "{message}");
}

#[test]
fn sequence_report_gives_sizes_and_the_decision() {
    let output = ok(&[
        "sequence",
        "report",
        arg(&fixture("sequence-small")),
        "--format",
        "json",
    ]);
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let sequences = value["sequences"].as_array().unwrap();
    assert_eq!(sequences.len(), 6);
    assert_eq!(
        sequences[0],
        json!({"sequence": "mini", "condition": "C0", "rep": 1, "final_size": 150, "sizes": [95, 120, 150]})
    );
    assert_eq!(
        value["decision"],
        json!({"metric": "final_size", "condition": "C2", "baseline": "C0", "all_below": true, "p_exact": 0.05})
    );

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    ok(&[
        "sequence",
        "report",
        arg(&fixture("sequence-small")),
        "--out",
        arg(&out),
    ]);
    let md = fs::read_to_string(out.join("sequence-report.md")).unwrap();
    assert!(
        md.contains("every C2 final size below every C0 one: **yes** (3 vs 3"),
        "{md}"
    );
    assert!(md.contains("p = 0.0500"), "{md}");
    assert!(md.contains("| C0 | 2 | 2 | 02-step | timeout |"), "{md}");
    assert!(
        md.contains("| 3 | 150 | 149 | 160 | 118 | 121 | 127 |"),
        "{md}"
    );
    assert!(out.join("plots/growth.svg").is_file() && out.join("plots/growth.png").is_file());
    let first = files_under(&out);
    ok(&[
        "sequence",
        "report",
        arg(&fixture("sequence-small")),
        "--out",
        arg(&out),
    ]);
    assert_eq!(first, files_under(&out));
}

#[test]
fn sequence_report_without_the_compared_condition_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("c0-only");
    let mut step = record("01", "C0", 1, "ok", 10);
    step["sequence"] = json!("mini");
    step["step"] = json!(1);
    write_batch(&batch, &[step]);
    let output = ok(&["sequence", "report", arg(&batch), "--format", "json"]);
    assert!(
        stderr(&output).contains("C2 has no complete sequence"),
        "{}",
        stderr(&output)
    );
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["decision"], Value::Null);
    assert_eq!(value["sequences"][0]["sizes"], json!([310]));
}

/// Mean of `values` picked by `chosen` minus mean of the others.
fn mean_difference(values: &[f64], chosen: &[usize]) -> f64 {
    let picked: Vec<f64> = chosen.iter().map(|&i| values[i]).collect();
    let rest: Vec<f64> = (0..values.len())
        .filter(|i| !chosen.contains(i))
        .map(|i| values[i])
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    mean(&picked) - mean(&rest)
}

/// Every way to pick 3 of 6 runs as the condition's, by brute force.
fn three_of_six() -> Vec<Vec<usize>> {
    let mut picks = Vec::new();
    for a in 0..6 {
        for b in a + 1..6 {
            for c in b + 1..6 {
                picks.push(vec![a, b, c]);
            }
        }
    }
    picks
}

#[test]
fn sequence_report_of_two_sequences_decides_each_and_tests_across_them() {
    // Final sizes: alpha's C2 runs all end below its C0 runs, beta's do not.
    let finals: [(&str, [f64; 3], [f64; 3]); 2] = [
        ("alpha", [100.0, 110.0, 120.0], [130.0, 150.0, 140.0]),
        ("beta", [200.0, 260.0, 215.0], [250.0, 240.0, 270.0]),
    ];
    let mut records = Vec::new();
    for (sequence, c2, c0) in &finals {
        for (condition, sizes) in [("C2", c2), ("C0", c0)] {
            for (rep, size) in sizes.iter().enumerate() {
                for step in 1..=2u32 {
                    let mut r =
                        record(&format!("0{step}-step"), condition, rep as u32 + 1, "ok", 4);
                    r["sequence"] = json!(sequence);
                    r["step"] = json!(step);
                    r["loc_total"] = json!(*size as u64 - 10 * u64::from(2 - step));
                    records.push(r);
                }
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("two");
    write_batch(&batch, &records);

    // The independent computation: C2's 3 of each sequence's 6 runs, every choice.
    let pooled: Vec<Vec<f64>> = finals
        .iter()
        .map(|(_, c2, c0)| c2.iter().chain(c0).copied().collect())
        .collect();
    let observed: Vec<f64> = pooled
        .iter()
        .map(|v| mean_difference(v, &[0, 1, 2]))
        .collect();
    let picks = three_of_six();
    let at_most = |stat: f64, bound: f64| stat <= bound + 1e-9;
    let per_sequence: Vec<f64> = (0..2)
        .map(|s| {
            let hits = picks
                .iter()
                .filter(|p| at_most(mean_difference(&pooled[s], p), observed[s]))
                .count();
            hits as f64 / picks.len() as f64
        })
        .collect();
    let mut hits = 0;
    for first in &picks {
        for second in &picks {
            let stat = mean_difference(&pooled[0], first) + mean_difference(&pooled[1], second);
            if at_most(stat, observed[0] + observed[1]) {
                hits += 1;
            }
        }
    }
    let stratified = hits as f64 / (picks.len() * picks.len()) as f64;
    assert_eq!(per_sequence[0], 0.05);
    assert!(
        stratified > 0.0 && stratified < per_sequence[1],
        "{stratified}"
    );

    let output = ok(&["sequence", "report", arg(&batch), "--format", "json"]);
    let value: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(value["sequences"].as_array().unwrap().len(), 12);
    let decisions = value["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 2);
    for (decision, (sequence, all_below, p)) in decisions.iter().zip([
        ("alpha", true, per_sequence[0]),
        ("beta", false, per_sequence[1]),
    ]) {
        assert_eq!(decision["sequence"], json!(sequence));
        assert_eq!(decision["all_below"], json!(all_below), "{sequence}");
        let p_exact = decision["p_exact"].as_f64().unwrap();
        assert!((p_exact - p).abs() < 1e-12, "{sequence}: {p_exact} vs {p}");
    }
    let across = &value["stratified"];
    assert_eq!(across["sequences"], json!(["alpha", "beta"]));
    assert_eq!(across["condition"], json!("C2"));
    let p_exact = across["p_exact"].as_f64().unwrap();
    assert!(
        (p_exact - stratified).abs() < 1e-12,
        "{p_exact} vs {stratified}"
    );

    let out = tmp.path().join("md");
    ok(&["sequence", "report", arg(&batch), "--out", arg(&out)]);
    let md = fs::read_to_string(out.join("sequence-report.md")).unwrap();
    assert!(
        md.starts_with("# Sequence report: batch two (alpha, beta)"),
        "{md}"
    );
    assert!(
        md.contains("| alpha | C2 vs C0 | yes | 3 vs 3 | 0.0500 |"),
        "{md}"
    );
    assert!(md.contains("| beta | C2 vs C0 | no | 3 vs 3 |"), "{md}");
    assert!(
        md.contains(&format!(
            "Across sequences (alpha, beta): p = {stratified:.4}"
        )),
        "{md}"
    );
    assert!(md.contains("## Sequence report: batch two (beta)"), "{md}");
    for name in ["alpha", "beta"] {
        assert!(
            out.join(format!("plots/growth-{name}.svg")).is_file(),
            "{name}"
        );
    }
}

#[test]
fn a_torn_last_line_is_skipped_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("torn");
    write_batch(
        &batch,
        &[record("a", "C0", 1, "ok", 4), record("a", "C2", 1, "ok", 6)],
    );
    let runs = batch.join("runs.jsonl");
    let torn = "{\"batch\": \"t\", \"task\": \"a\", \"cond";
    let text = fs::read_to_string(&runs).unwrap() + torn;
    fs::write(&runs, &text).unwrap();
    let output = ok(&["report", arg(&batch)]);
    let said = stderr(&output);
    assert!(
        said.contains("runs.jsonl")
            && said.contains("torn last line")
            && said.contains(&format!("{} bytes", torn.len())),
        "{said}"
    );
    let md = fs::read_to_string(batch.join("report.md")).unwrap();
    assert!(md.contains("2 task runs (2 ok)"), "{md}");
    assert_eq!(
        fs::read_to_string(&runs).unwrap(),
        text,
        "report only reads"
    );
    let output = ok(&["report", arg(&batch), "--format", "json"]);
    assert!(stderr(&output).contains("torn last line"));
}

#[test]
fn untrusted_text_is_escaped_in_the_markdown_report() {
    let tmp = tempfile::tempdir().unwrap();
    let batch = tmp.path().join("hostile");
    let mut failed = record("a", "C2", 1, "agent_error", 0);
    failed["error"] = json!("line one\nline two | <img src=x onerror=alert(1)> `tick`\u{7}");
    write_batch(&batch, &[record("a", "C0", 1, "ok", 4), failed]);
    let run = batch.join("runs/a/C0/1");
    fs::create_dir_all(&run).unwrap();
    fs::write(
        run.join("hooks.jsonl"),
        "{\"seq\":1,\"event\":\"PreToolUse\",\"verdict\":\"deny\"}\n",
    )
    .unwrap();
    let why = "unjust:\nthe copy | was <b>fine</b> ```\u{1b}[31m";
    ok(&["label", arg(&batch), "a/C0/1", "1", "unjust", "--why", why]);
    ok(&["report", arg(&batch)]);
    let md = fs::read_to_string(batch.join("report.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| a/C0/1 |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert_eq!(
        row,
        "| a/C0/1 | 1 | PreToolUse | deny | unjust | unjust: the copy \\| was &lt;b&gt;fine&lt;/b&gt; \
         \\`\\`\\`\\u{1b}[31m |"
    );
    let row = md
        .lines()
        .find(|l| l.contains("agent_error |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert_eq!(
        row,
        "| a | C2 | 1 | agent_error | line one line two \\| &lt;img src=x onerror=alert(1)&gt; \
         \\`tick\\`\\u{7} |"
    );
    assert!(
        !md.chars().any(|c| c.is_control() && c != '\n'),
        "a control byte in the report"
    );
}
