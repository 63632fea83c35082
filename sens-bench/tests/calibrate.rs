//! `calibrate` on the small fixture corpus: every mutation kind is built, and
//! the rates are counts of verdicts over the labelled pairs.

use std::path::{Path, PathBuf};

use sens_bench::calibrate::{CalibrateArgs, KINDS, calibrate, parse_formatter};

fn fixture_corpus() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calibrate");
    vec![root.join("ledger"), root.join("shapes")]
}

/// The fixture corpus with 40 functions per language of 60-600 tokens, seed 7,
/// written to `out`.
fn fixture_args(out: &Path) -> CalibrateArgs {
    CalibrateArgs {
        corpus: fixture_corpus(),
        out: out.to_path_buf(),
        per_language: 40,
        unrelated: 10,
        min_tokens: 60,
        max_tokens: 600,
        seed: 7,
        formatters: Vec::new(),
        misses: None,
        labels: None,
        projects: None,
    }
}

#[test]
fn calibrate_builds_every_kind_and_counts_against_the_labels() {
    let dir = tempfile::tempdir().unwrap();
    let args = fixture_args(dir.path());
    let c = calibrate(&args).unwrap();
    for kind in KINDS {
        let all = c
            .rates
            .iter()
            .find(|r| r.language == "all" && r.kind == *kind)
            .unwrap_or_else(|| panic!("no pairs of kind {kind}: {:?}", c.formatters));
        assert!(all.pairs > 0, "{kind}");
        // The rate is the labelled share: denied copies, or allowed unrelated pairs.
        let share = all.denied as f64 / all.pairs as f64;
        let expected = if *kind == "unrelated" {
            1.0 - share
        } else {
            share
        };
        assert!((all.rate - expected).abs() < 1e-12, "{kind}");
    }
    let rate = |kind: &str| {
        c.rates
            .iter()
            .find(|r| r.language == "all" && r.kind == kind)
            .map(|r| r.rate)
    };
    // By construction an exact copy is a copy and another file's function is not.
    assert_eq!(rate("exact"), Some(1.0));
    assert_eq!(rate("unrelated"), Some(1.0));
    // A threshold of 0.90 cannot deny more near copies than one of 0.65.
    let near = |t: f64| {
        c.sweep
            .iter()
            .find(|r| (r.threshold - t).abs() < 1e-9 && r.floor == 80)
            .map(|r| r.kinds["near.insert3"])
            .unwrap()
    };
    assert!(near(0.90) <= near(0.65));
    assert!(!c.lsh.is_empty());
}

#[test]
fn a_missing_corpus_folder_is_named() {
    let args = CalibrateArgs {
        corpus: vec![PathBuf::from("/nonexistent/calibration-corpus")],
        ..fixture_args(Path::new("/tmp/unused"))
    };
    let err = format!("{:#}", calibrate(&args).unwrap_err());
    assert!(err.contains("/nonexistent/calibration-corpus"), "{err}");
}

/// Formatter settings given on the command line replace the built-in ones of
/// their language; each is measured on its own, and a missing one is named.
#[test]
fn calibrate_measures_each_given_formatter_setting() {
    let dir = tempfile::tempdir().unwrap();
    let setting = "rustfmt --edition 2021 --config max_width=30,hard_tabs=true";
    let args = CalibrateArgs {
        unrelated: 1,
        formatters: [
            format!("rust={setting}"),
            "python=no-such-formatter --fast -".to_string(),
        ]
        .iter()
        .map(|f| parse_formatter(f).unwrap())
        .collect(),
        ..fixture_args(dir.path())
    };
    let c = calibrate(&args).unwrap();
    assert!(
        c.formatters["python"].contains(&"missing: no-such-formatter --fast -".to_string()),
        "{:?}",
        c.formatters
    );
    assert!(!c.settings.iter().any(|s| s.language == "python"));
    let [rust] = &c.settings[..] else {
        panic!("one setting expected: {:?}", c.settings);
    };
    assert_eq!(rust.setting, setting);
    assert_eq!(rust.failed, 0);
    let reformatted = c
        .rates
        .iter()
        .find(|r| r.language == "rust" && r.kind == "reformatted")
        .unwrap();
    // Every reformatted Rust pair is this setting's, and each changed its text.
    assert_eq!(rust.kinds[0].pairs, reformatted.pairs);
    assert_eq!(rust.changed, 2 * reformatted.pairs);
    // rustfmt only moves layout: every copy keeps the original's fingerprint.
    assert_eq!(
        rust.same_fingerprint,
        vec![reformatted.pairs, rust.kinds[1].pairs]
    );
}

#[test]
fn a_formatter_without_a_language_or_a_command_is_refused() {
    for bad in ["rustfmt", "rust=", "rust=\"unclosed"] {
        let err = parse_formatter(bad).unwrap_err();
        assert!(err.contains("--formatter"), "{bad}: {err}");
    }
}

/// A function of 80 tokens or more, whose body is `body`.
fn rust_function(name: &str, body: &str) -> String {
    format!(
        "pub fn {name}(items: &[u32], limit: u32) -> Vec<u32> {{\n    let mut out = Vec::new();\n    for &item in items {{\n        if item > limit {{\n            out.push(item * 2 + 1);\n        }} else if item == limit {{\n            out.push(item);\n        }}\n    }}\n    {body}\n    let total: u32 = out.iter().sum();\n    if total > limit * 4 {{\n        out.truncate(out.len() / 2);\n        out.retain(|x| x % 3 != 0);\n    }}\n    out.sort_unstable();\n    out.dedup();\n    out\n}}\n"
    )
}

#[test]
fn precision_counts_denied_groups_against_their_labels() {
    use sens_bench::calibrate::precision::{Truth, measure, read_labels};
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("a.rs"),
        rust_function("first", "out.reverse();"),
    )
    .unwrap();
    std::fs::write(
        project.join("b.rs"),
        rust_function("second", "out.reverse();"),
    )
    .unwrap();
    let label = |truth: &str| {
        format!(
            r#"{{"project":"demo","language":"rust","version":"0","kind":"renamed","similarity":1.0,"group_size":2,"a":"a.rs:1","b":"b.rs:1","label":"{truth}","why":"test"}}"#
        )
    };
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        format!("{}\n{}\n", label("copy"), label("not_copy")),
    )
    .unwrap();
    assert_eq!(read_labels(&labels).unwrap()[1].label, Truth::NotCopy);
    let p = measure(&labels, &dir.path().join("projects"), &[0.7, 0.9]).unwrap();
    let all = p
        .rows
        .iter()
        .find(|r| r.threshold == 0.7 && r.language == "all" && r.kind == "all")
        .unwrap();
    // The same renamed function, labelled once each way: both denied, one unjustly.
    assert_eq!(
        (all.groups, all.copies, all.denied, all.denied_copies),
        (2, 1, 2, 1)
    );
    assert_eq!(all.precision(), Some(0.5));
    assert_eq!(all.unjust(), Some(1.0));
    assert_eq!(p.wrong.len(), 1);
    assert!(p.wrong[0].denied && p.wrong[0].label.label == Truth::NotCopy);
}

#[test]
fn a_label_naming_no_unit_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.rs"), rust_function("first", "")).unwrap();
    let labels = dir.path().join("labels.jsonl");
    std::fs::write(
        &labels,
        r#"{"project":"demo","language":"rust","version":"0","kind":"near","similarity":0.8,"group_size":2,"a":"a.rs:1","b":"a.rs:99","label":"copy","why":"test"}"#,
    )
    .unwrap();
    let err =
        sens_bench::calibrate::precision::measure(&labels, &dir.path().join("projects"), &[0.7])
            .unwrap_err();
    assert!(format!("{err:#}").contains("a.rs:99"), "{err:#}");
}
