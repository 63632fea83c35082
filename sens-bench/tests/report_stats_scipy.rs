//! The statistics module against scipy on fixed inputs. `scripts/scipy_expectations.py`
//! holds the inputs and computes what scipy gives; this test runs it and compares.

use std::path::Path;
use std::process::Command;

use sens_bench::stats::{
    Alternative, Bootstrap, Cells, Counts, Sample, Statistic, fisher_exact, permutation_test,
    stratified_permutation_test,
};
use serde_json::Value;

fn expectations() -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/scipy_expectations.py");
    let output = Command::new("python3")
        .arg(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "{} failed (scipy missing? run scripts/setup.sh): {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the script prints JSON")
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

fn alternative(value: &Value) -> Alternative {
    match value.as_str() {
        Some("two-sided") => Alternative::TwoSided,
        Some("less") => Alternative::Less,
        Some("greater") => Alternative::Greater,
        other => panic!("unknown alternative {other:?}"),
    }
}

fn task_cells(tasks: &Value) -> Vec<(Vec<f64>, Vec<f64>)> {
    tasks
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (floats(&t["condition"]), floats(&t["baseline"])))
        .collect()
}

fn as_cells(owned: &[(Vec<f64>, Vec<f64>)]) -> Vec<Cells<'_>> {
    owned
        .iter()
        .map(|(condition, baseline)| Cells::new(condition, baseline).expect("valid cells"))
        .collect()
}

fn assert_p(ours: f64, theirs: f64, case: &Value) {
    assert!(
        (ours - theirs).abs() <= 1e-12,
        "p = {ours}, scipy {theirs}: {case}"
    );
}

#[test]
fn statistics_agree_with_scipy() {
    let expected = expectations();

    let permutation = expected["permutation"].as_array().expect("cases");
    assert!(permutation.len() >= 30);
    for case in permutation {
        let statistic = match case["statistic"].as_str() {
            Some("mean") => Statistic::MeanDiff,
            _ => Statistic::MedianDiff,
        };
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        let p = permutation_test(
            Sample::new(&x).expect("a valid sample"),
            Sample::new(&y).expect("a valid sample"),
            statistic,
            alternative(&case["alternative"]),
        )
        .expect("small enough to enumerate");
        assert_p(p, case["p"].as_f64().expect("p"), case);
    }

    for case in expected["stratified"].as_array().expect("cases") {
        let owned = task_cells(&case["strata"]);
        let p = stratified_permutation_test(&as_cells(&owned), alternative(&case["alternative"]))
            .expect("small enough to enumerate");
        assert_p(p, case["p"].as_f64().expect("p"), case);
    }

    for case in expected["fisher"].as_array().expect("cases") {
        let count = |field: &str| case[field].as_u64().expect("a count");
        let p = fisher_exact(
            Counts {
                successes: count("a"),
                n: count("a_n"),
            },
            Counts {
                successes: count("b"),
                n: count("b_n"),
            },
            alternative(&case["alternative"]),
        )
        .expect("a valid table");
        assert_p(p, case["p"].as_f64().expect("p"), case);
    }

    for case in expected["bootstrap"].as_array().expect("cases") {
        let owned = task_cells(&case["tasks"]);
        let diffs = Bootstrap::default()
            .median_diffs(&as_cells(&owned))
            .expect("non-empty cells");
        let intervals = diffs
            .per_task
            .iter()
            .zip(case["per_task"].as_array().expect("per task"))
            .chain([(&diffs.across, &case["across"])]);
        for (ours, theirs) in intervals {
            let theirs = floats(theirs);
            // Different random streams: the percentiles agree within a tenth of the
            // interval's width (a bootstrap of medians moves in steps of the data).
            let tolerance = 0.1 * (theirs[1] - theirs[0]);
            assert!(
                (ours.ci.low - theirs[0]).abs() <= tolerance
                    && (ours.ci.high - theirs[1]).abs() <= tolerance,
                "ours {:?}, scipy {theirs:?}: {case}",
                ours.ci
            );
        }
    }
}

/// The published study's inference, stated on its own numbers.
#[test]
fn the_published_study_numbers() {
    let p = permutation_test(
        Sample::new(&[101.0, 96.0, 110.0]).expect("a valid sample"),
        Sample::new(&[180.0, 150.0, 163.0]).expect("a valid sample"),
        Statistic::MeanDiff,
        Alternative::Less,
    )
    .expect("20 relabellings");
    assert_eq!(p, 1.0 / 20.0);
    let one_of_three = Counts { successes: 1, n: 3 };
    let six_of_six = Counts { successes: 6, n: 6 };
    let p = fisher_exact(one_of_three, six_of_six, Alternative::TwoSided).expect("valid");
    assert!((p - 1.0 / 12.0).abs() < 1e-12, "{p}");
    let none_of_three = Counts { successes: 0, n: 3 };
    let three_of_six = Counts { successes: 3, n: 6 };
    let p = fisher_exact(none_of_three, three_of_six, Alternative::TwoSided).expect("valid");
    assert!((p - 13.0 / 28.0).abs() < 1e-12, "{p}");
}
