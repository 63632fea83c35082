//! The change rules through the engine, with labelled violating and compliant
//! cases in Rust, TypeScript and Python, including the classic false alarms.

use std::fs;
use std::path::Path;

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::finding::Finding;
use sens_engine::judge::{FileChange, Judge};

const LANGS: &[&str] = &["rs", "ts", "py"];

fn fixture(name: &str, ext: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.{ext}.txt"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A project holding the original function and an unrelated one.
fn project(ext: &str) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join(format!("src/orders.{ext}")),
        fixture("original", ext),
    )
    .unwrap();
    fs::write(
        dir.path().join(format!("src/other.{ext}")),
        fixture("unrelated", ext),
    )
    .unwrap();
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    (dir, engine)
}

fn blocking(findings: &[Finding]) -> Vec<&str> {
    findings
        .iter()
        .filter(|f| f.blocks)
        .map(|f| f.rule.as_str())
        .collect()
}

#[test]
fn copies_block_with_their_rule_and_say_what_to_reuse() {
    for &ext in LANGS {
        let (_dir, mut engine) = project(ext);
        let path = format!("src/new.{ext}");
        for (variant, rule) in [
            ("original", "copy.exact"),
            ("renamed", "copy.renamed"),
            ("near", "copy.near"),
        ] {
            let findings = engine
                .check_write(Path::new(&path), &fixture(variant, ext))
                .unwrap();
            assert_eq!(
                blocking(&findings),
                [rule],
                "{ext} {variant}: {findings:#?}"
            );
            let f = &findings[0];
            let existing = f.existing.as_ref().unwrap();
            assert_eq!(existing.file, format!("src/orders.{ext}"));
            assert_eq!(existing.line, 1);
            assert!(
                existing.signature.contains("ummarize"),
                "{ext}: {}",
                existing.signature
            );
            assert_eq!((f.new.file.as_str(), f.new.line), (path.as_str(), 1));
            assert!(
                f.message.contains(&format!("src/orders.{ext}:1")),
                "{}",
                f.message
            );
            assert!(f.similarity >= 0.8);
        }
    }
}

#[test]
fn unrelated_code_and_untouched_units_pass() {
    for &ext in LANGS {
        let (dir, mut engine) = project(ext);
        // Unrelated new code.
        fs::remove_file(dir.path().join(format!("src/other.{ext}"))).unwrap();
        engine.rescan().unwrap();
        let findings = engine
            .check_write(
                Path::new(&format!("src/new.{ext}")),
                &fixture("unrelated", ext),
            )
            .unwrap();
        assert!(blocking(&findings).is_empty(), "{ext}: {findings:#?}");
        // Appending to a file that already held a copy: the copy is not judged again.
        let both = format!(
            "{}\n{}",
            fixture("original", ext),
            fixture("unrelated", ext)
        );
        fs::write(engine.root().join(format!("src/legacy.{ext}")), &both).unwrap();
        assert!(
            !blocking(&engine.rescan().unwrap()).is_empty(),
            "{ext}: the legacy copy is seen once"
        );
        let edited = format!("{both}\n{}", short_getter(ext, "region_name"));
        let findings = engine
            .check_write(Path::new(&format!("src/legacy.{ext}")), &edited)
            .unwrap();
        assert!(findings.is_empty(), "{ext}: {findings:#?}");
    }
}

fn short_getter(ext: &str, name: &str) -> String {
    match ext {
        "rs" => format!("fn {name}(order: &Order) -> &str {{\n    &order.region\n}}\n"),
        "ts" => format!("function {name}(order: Order): string {{\n  return order.region;\n}}\n"),
        _ => format!("def {name}(order):\n    return order.region\n"),
    }
}

#[test]
fn classic_false_alarms_never_block() {
    for &ext in LANGS {
        let (dir, mut engine) = project(ext);
        // A short getter copied: a hint at most.
        fs::write(
            dir.path().join(format!("src/get.{ext}")),
            short_getter(ext, "region_of"),
        )
        .unwrap();
        engine.rescan().unwrap();
        let findings = engine
            .check_write(
                Path::new(&format!("src/get2.{ext}")),
                &short_getter(ext, "region_of"),
            )
            .unwrap();
        assert!(
            !findings.is_empty() && blocking(&findings).is_empty(),
            "{ext}: {findings:#?}"
        );
        // A generated file copying real code.
        let generated = format!(
            "{} @generated by a tool, do not edit\n{}",
            comment(ext),
            fixture("original", ext)
        );
        let findings = engine
            .check_write(Path::new(&format!("src/gen.{ext}")), &generated)
            .unwrap();
        assert!(
            !findings.is_empty() && blocking(&findings).is_empty(),
            "{ext}: {findings:#?}"
        );
        // A test fixture.
        let findings = engine
            .check_write(
                Path::new(&format!("tests/fixtures/orders.{ext}")),
                &fixture("original", ext),
            )
            .unwrap();
        assert!(blocking(&findings).is_empty(), "{ext}: {findings:#?}");
        // The same block of imports in two files.
        let imports = import_block(ext);
        fs::write(dir.path().join(format!("src/a.{ext}")), &imports).unwrap();
        engine.rescan().unwrap();
        let findings = engine
            .check_write(Path::new(&format!("src/b.{ext}")), &imports)
            .unwrap();
        assert!(blocking(&findings).is_empty(), "{ext}: {findings:#?}");
    }
}

fn comment(ext: &str) -> &'static str {
    if ext == "py" { "#" } else { "//" }
}

fn import_block(ext: &str) -> String {
    let names = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    ];
    names
        .iter()
        .map(|n| match ext {
            "rs" => format!("use crate::{n}::{{{n}_one, {n}_two, {n}_three, {n}_four}};\n"),
            "ts" => format!("import {{ {n}One, {n}Two, {n}Three, {n}Four }} from \"./{n}\";\n"),
            _ => format!("from .{n} import {n}_one, {n}_two, {n}_three, {n}_four\n"),
        })
        .collect()
}

fn helper(ext: &str, exported: bool) -> String {
    match (ext, exported) {
        ("rs", false) => "fn unused_helper(a: i32) -> i32 {\n    a * 2\n}\n".into(),
        ("rs", true) => "pub fn unused_helper(a: i32) -> i32 {\n    a * 2\n}\n".into(),
        ("ts", false) => "function unusedHelper(a: number): number {\n  return a * 2;\n}\n".into(),
        ("ts", true) => {
            "export function unusedHelper(a: number): number {\n  return a * 2;\n}\n".into()
        }
        // A module-level Python function without a leading underscore is public.
        (_, false) => "def _unused_helper(a):\n    return a * 2\n".into(),
        (_, true) => "def unused_helper(a):\n    return a * 2\n".into(),
    }
}

fn added(path: &str, text: String) -> FileChange {
    FileChange {
        path: path.into(),
        before: None,
        after: Some(text),
    }
}

#[test]
fn orphans_are_added_functions_nothing_references() {
    for &ext in LANGS {
        let (_dir, mut engine) = project(ext);
        let findings = engine
            .audit(&[added(&format!("src/helper.{ext}"), helper(ext, false))])
            .unwrap();
        let orphans: Vec<_> = findings.iter().filter(|f| f.rule == "orphan").collect();
        assert_eq!(orphans.len(), 1, "{ext}: {findings:#?}");
        assert!(orphans[0].blocks && orphans[0].existing.is_none());
        assert_eq!(orphans[0].new.line, 1);

        // Called from another changed file: not an orphan.
        let name = match ext {
            "ts" => "unusedHelper",
            "py" => "_unused_helper",
            _ => "unused_helper",
        };
        let caller = match ext {
            "rs" => format!("pub fn run() -> i32 {{\n    {name}(2)\n}}\n"),
            "ts" => format!("export function run(): number {{\n  return {name}(2);\n}}\n"),
            _ => format!("def run():\n    return {name}(2)\n"),
        };
        let findings = engine
            .audit(&[
                added(&format!("src/helper.{ext}"), helper(ext, false)),
                added(&format!("src/run.{ext}"), caller),
            ])
            .unwrap();
        assert!(
            findings.iter().all(|f| f.new.name != name),
            "{ext}: {findings:#?}"
        );
    }
}

#[test]
fn entry_points_tests_trait_impls_and_exported_api_are_not_orphans() {
    let cases: &[(&str, &str)] = &[
        ("src/lib.rs", "pub fn exported(a: i32) -> i32 {\n    a\n}\n"),
        ("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n"),
        (
            "src/t.rs",
            "#[test]\nfn checks_things() {\n    assert!(true);\n}\n",
        ),
        (
            "src/d.rs",
            "struct P;\nimpl std::fmt::Display for P {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {\n        write!(f, \"p\")\n    }\n}\n",
        ),
        (
            "src/api.ts",
            "export function exported(a: number): number {\n  return a;\n}\n",
        ),
        (
            "src/arrow.ts",
            "export const exported = (a: number): number => a;\n",
        ),
        (
            "tests/orders.test.ts",
            "function checksThings() {\n  expect(1).toBe(1);\n}\n",
        ),
        ("pkg/__init__.py", "def exported(a):\n    return a\n"),
        ("pkg/total.py", "def total(rows):\n    return sum(rows)\n"),
        ("pkg/later.py", "async def fetch(a):\n    return a\n"),
        (
            "pkg/mod.py",
            "__all__ = [\"listed\"]\n\ndef listed(a):\n    return a\n",
        ),
        (
            "pkg/app.py",
            "@app.route(\"/\")\ndef index():\n    return \"hi\"\n",
        ),
        (
            "tests/test_orders.py",
            "def test_orders():\n    assert True\n",
        ),
        (
            "pkg/model.py",
            "class Money:\n    def __str__(self):\n        return \"m\"\n",
        ),
    ];
    let (_dir, mut engine) = project("py");
    for (path, text) in cases {
        let findings = engine.audit(&[added(path, text.to_string())]).unwrap();
        assert!(
            findings.iter().all(|f| f.rule != "orphan"),
            "{path}: {findings:#?}"
        );
    }
}

#[test]
fn a_function_the_prompt_names_is_not_an_orphan_but_an_unnamed_private_one_is() {
    let (_dir, mut engine) = project("rs");
    let change = || added("src/helper.rs", helper("rs", false));
    let orphans = |findings: Vec<Finding>| findings.iter().filter(|f| f.rule == "orphan").count();
    assert_eq!(orphans(engine.audit(&[change()]).unwrap()), 1);
    engine.note_prompt("Add `unused_helper_two`, which doubles a number.");
    assert_eq!(
        orphans(engine.audit(&[change()]).unwrap()),
        1,
        "a longer word"
    );
    engine.note_prompt("Add unused_helper(a), which doubles a number.");
    assert_eq!(orphans(engine.audit(&[change()]).unwrap()), 0);

    // A public method of a Python class is not module API: still an orphan.
    let (_dir, mut engine) = project("py");
    let method =
        "class Tally:\n    def bump(self):\n        return 1\n\n\ndef _private(a):\n    return a\n";
    let findings = engine
        .audit(&[added("pkg/tally.py", method.into())])
        .unwrap();
    let mut names: Vec<&str> = findings
        .iter()
        .filter(|f| f.rule == "orphan")
        .map(|f| f.new.name.as_str())
        .collect();
    names.sort();
    assert_eq!(names, ["_private", "bump"], "{findings:#?}");
}

#[test]
fn suggestions_name_the_helper_for_a_related_prompt_and_nothing_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "src/money.py",
            "def format_money(cents):\n    \"\"\"Formats an amount of cents as euros with two decimals.\"\"\"\n    return f\"{cents / 100:.2f} EUR\"\n",
        ),
        (
            "src/dates.py",
            "def month_of(day):\n    \"\"\"The first day of the month holding day.\"\"\"\n    return day.replace(day=1)\n",
        ),
        (
            "src/csv_io.py",
            "def read_expenses_csv(path):\n    with open(path) as f:\n        return list(csv.reader(f))\n",
        ),
        (
            "src/main.py",
            "from money import format_money\n\ndef main():\n    print(format_money(1200))\n",
        ),
        (
            "src/money.ts",
            "/** Formats cents as euros. */\nexport function formatMoney(cents: number): string {\n  return `${(cents / 100).toFixed(2)} EUR`;\n}\n",
        ),
    ];
    for (path, text) in files {
        fs::create_dir_all(dir.path().join(path).parent().unwrap()).unwrap();
        fs::write(dir.path().join(path), text).unwrap();
    }
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    let found = engine
        .suggest("Show the total of each month formatted as money")
        .unwrap();
    let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
    assert!(
        names.contains(&"format_money") && names.contains(&"formatMoney"),
        "{names:?}"
    );
    assert!(found.len() <= 8);
    let money = found.iter().find(|s| s.name == "format_money").unwrap();
    assert_eq!(
        (money.file.as_str(), money.line, money.usages),
        ("src/money.py", 1, 2)
    );
    assert_eq!(money.signature, "def format_money(cents)");
    for unrelated in [
        "Write a poem about autumn leaves",
        "Refactor the login page styles",
        "",
    ] {
        assert!(engine.suggest(unrelated).unwrap().is_empty(), "{unrelated}");
    }
}
