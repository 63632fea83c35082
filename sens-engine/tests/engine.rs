//! The engine's view of the disk: rescans find what any tool changed (new,
//! edited, same-size rewrites, deleted files) and judge each change once.

use std::fs;
use std::path::Path;
use std::time::Duration;

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::judge::{FileChange, Judge};
use sens_engine::units::DEFAULT_PARSE_BUDGET;

fn fixture(name: &str, ext: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.{ext}.txt"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rescan_finds_changes_by_any_tool_and_judges_them_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/orders.rs"), fixture("original", "rs")).unwrap();
    fs::write(root.join("src/small.rs"), "fn alpha() -> u8 {\n    1\n}\n").unwrap();
    let mut engine = Engine::open(root, RuleConfig::default()).unwrap();
    assert!(engine.rescan().unwrap().is_empty(), "nothing changed");

    // A copy written behind the engine's back (`cp`, `cat >`).
    fs::write(root.join("src/copy.rs"), fixture("renamed", "rs")).unwrap();
    let findings = engine.rescan().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(findings[0].blocks && findings[0].rule == "copy.renamed");
    assert!(engine.rescan().unwrap().is_empty(), "judged once");

    // A rewrite of the same size right after the last look.
    fs::write(root.join("src/small.rs"), "fn gamma() -> u8 {\n    2\n}\n").unwrap();
    engine.rescan().unwrap();
    assert_eq!(engine.index().definitions("gamma").count(), 1);
    assert_eq!(engine.index().definitions("alpha").count(), 0);

    // A deletion.
    fs::remove_file(root.join("src/copy.rs")).unwrap();
    engine.rescan().unwrap();
    assert!(engine.index().file("src/copy.rs").is_none());
    assert_eq!(engine.index().definitions("tally_invoices").count(), 0);
}

#[test]
fn writes_are_judged_by_project_path_whatever_form_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/orders.py"), fixture("original", "py")).unwrap();
    let mut engine = Engine::open(root, RuleConfig::default()).unwrap();
    let copy = fixture("renamed", "py");
    let absolute = engine.root().join("src/new.py");
    for path in [
        Path::new("src/new.py"),
        Path::new("./src/../src/new.py"),
        absolute.as_path(),
    ] {
        let findings = engine.check_write(path, &copy).unwrap();
        assert_eq!(findings.len(), 1, "{}", path.display());
        assert_eq!(findings[0].new.file, "src/new.py");
    }
    // Outside the project, or a language without a grammar: nothing to judge.
    assert!(
        engine
            .check_write(Path::new("/tmp/elsewhere.py"), &copy)
            .unwrap()
            .is_empty()
    );
    assert!(
        engine
            .check_write(Path::new("notes.txt"), &copy)
            .unwrap()
            .is_empty()
    );
    // check_write does not change the index.
    assert!(engine.index().file("src/new.py").is_none());
}

/// A Python function of `lines` statements: enough parse steps for the budget to be checked.
fn long_python(lines: usize) -> String {
    let mut source = String::from("def total(items):\n    acc = 0\n");
    for i in 0..lines {
        source.push_str(&format!("    acc += items[{i}] * {i}\n"));
    }
    source.push_str("    return acc\n");
    source
}

#[test]
fn a_parse_over_its_budget_is_a_blocking_unjudged_finding_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/small.py"), "def one():\n    return 1\n").unwrap();
    let mut engine = Engine::open(root, RuleConfig::default()).unwrap();
    let content = long_python(300);
    let unjudged = |findings: Vec<sens_engine::finding::Finding>| {
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let f = &findings[0];
        assert!(f.blocks && f.rule == "unjudged", "{f:#?}");
        assert_eq!(f.new.file, "src/big.py");
        assert!(f.message.contains("budget of 0 ms"), "{}", f.message);
    };
    engine.set_parse_budget(Duration::ZERO);
    unjudged(
        engine
            .check_write(Path::new("src/big.py"), &content)
            .unwrap(),
    );
    fs::write(root.join("src/big.py"), &content).unwrap();
    unjudged(engine.rescan().unwrap());
    let change = FileChange {
        path: "src/big.py".into(),
        before: None,
        after: Some(content.clone()),
    };
    unjudged(engine.audit(std::slice::from_ref(&change)).unwrap());
    assert!(engine.index().file("src/big.py").is_none());

    // Within the default budget the same file is judged, by a parser the
    // cancelled parse left clean.
    engine.set_parse_budget(DEFAULT_PARSE_BUDGET);
    engine.audit(&[change]).unwrap();
    assert_eq!(engine.index().definitions("total").count(), 1);
}

#[test]
fn large_and_non_utf8_files_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/orders.py"), fixture("original", "py")).unwrap();
    let mut engine = Engine::open(root, RuleConfig::default()).unwrap();
    // An exact copy at the top of a 1.5 MB file, and one next to a byte that is not UTF-8.
    let mut large = fixture("original", "py");
    while large.len() < 1_500_000 {
        large.push_str("# padding that makes the file large\n");
    }
    let mut invalid = b"# caf\xe9\n".to_vec();
    invalid.extend_from_slice(fixture("original", "py").as_bytes());
    let blocking_copy = |findings: &[sens_engine::finding::Finding]| {
        findings
            .iter()
            .any(|f| f.blocks && f.rule.starts_with("copy."))
    };
    let findings = engine
        .check_write(Path::new("src/large.py"), &large)
        .unwrap();
    assert!(blocking_copy(&findings), "{findings:#?}");
    fs::write(root.join("src/large.py"), &large).unwrap();
    fs::write(root.join("src/latin1.py"), &invalid).unwrap();
    let findings = engine.rescan().unwrap();
    for file in ["src/large.py", "src/latin1.py"] {
        let of_file: Vec<_> = findings
            .iter()
            .filter(|f| f.new.file == file)
            .cloned()
            .collect();
        assert!(blocking_copy(&of_file), "{file}: {findings:#?}");
    }
}
