//! Updating the index file by file gives the same index as a full rebuild, after
//! edits, additions and removals.

use std::fs;
use std::path::Path;

use sens_engine::config::RuleConfig;
use sens_engine::index::Index;
use sens_engine::walk::WalkOptions;

fn fixture(name: &str, ext: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.{ext}.txt"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn build(dir: &Path) -> Index {
    Index::build(dir, RuleConfig::default(), WalkOptions::default())
        .unwrap()
        .0
}

#[test]
fn incremental_updates_equal_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    let initial = [
        ("src/a.rs", fixture("original", "rs")),
        ("src/b.rs", fixture("unrelated", "rs")),
        ("src/c.py", fixture("original", "py")),
        ("src/d.ts", fixture("renamed", "ts")),
    ];
    for (path, text) in &initial {
        fs::write(root.join(path), text).unwrap();
    }
    let mut index = build(root);
    assert_eq!(index.files().count(), 4);

    // Edit, add, remove, and re-add under a new name; mirror each on disk.
    let edits: [(&str, Option<String>); 5] = [
        ("src/a.rs", Some(fixture("near", "rs"))),
        ("src/e.py", Some(fixture("renamed", "py"))),
        ("src/c.py", None),
        ("src/f.js", Some(fixture("original", "js"))),
        (
            "src/d.ts",
            Some(format!(
                "{}\n{}",
                fixture("renamed", "ts"),
                fixture("unrelated", "ts")
            )),
        ),
    ];
    for (path, text) in &edits {
        match text {
            Some(text) => {
                fs::write(root.join(path), text).unwrap();
                assert!(index.update_file(path, text).unwrap());
            }
            None => {
                fs::remove_file(root.join(path)).unwrap();
                assert!(index.remove_file(path));
            }
        }
    }
    assert!(!index.remove_file("src/c.py"), "already removed");
    let rebuilt = build(root);
    let (a, b) = (index.digest(), rebuilt.digest());
    assert_eq!(a.units, b.units);
    assert_eq!(a.symbols, b.symbols);
    assert_eq!(a.usages, b.usages);
    assert_eq!(a, b);
    assert!(index.definitions("summarize_orders").count() == 1);
    assert!(
        index.definitions("tally_invoices").count() == 1,
        "from e.py"
    );
}

#[test]
fn usages_count_references_outside_the_definition() {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    index
        .update_file(
            "lib.py",
            "def helper(x):\n    return helper(x - 1) if x else 0\n",
        )
        .unwrap();
    assert_eq!(
        index.usages("helper"),
        0,
        "the definition and its recursion do not count"
    );
    index
        .update_file("main.py", "from lib import helper\nprint(helper(3))\n")
        .unwrap();
    assert_eq!(index.usages("helper"), 2);
    index.remove_file("main.py");
    assert_eq!(index.usages("helper"), 0);
    let (_, def) = index.definitions("helper").next().unwrap();
    assert_eq!(def.data.signature, "def helper(x)");
    assert_eq!((&*def.file, def.data.start_line), ("lib.py", 1));
}

#[test]
fn an_incremental_reparse_finds_the_same_changed_units_as_a_full_parse() {
    let index = Index::new(RuleConfig::default()).unwrap();
    for ext in ["rs", "ts", "py"] {
        let path = format!("src/a.{ext}");
        let old = format!(
            "{}\n{}",
            fixture("unrelated", ext),
            fixture("original", ext)
        );
        let new = format!("{}\n{}", fixture("unrelated", ext), fixture("near", ext));
        let (old_parsed, old_tree) = index.parse_with_tree(&path, &old).unwrap().unwrap();
        let full = index.parse(&path, &new).unwrap().unwrap();
        let focused = index
            .parse_edit(&path, &old, Some(&old_tree), &new)
            .unwrap()
            .unwrap();
        // Without the old tree (not kept): parsed whole, the same units.
        let without_tree = index.parse_edit(&path, &old, None, &new).unwrap();
        assert_eq!(without_tree.as_ref(), Some(&focused), "{ext}");
        let old_prints: Vec<u64> = old_parsed.units.iter().map(|u| u.renamed).collect();
        let added: Vec<_> = full
            .units
            .iter()
            .filter(|u| !old_prints.contains(&u.renamed))
            .collect();
        assert!(!added.is_empty(), "{ext}");
        for unit in &added {
            assert!(focused.units.contains(unit), "{ext}: {} missing", unit.name);
        }
        for unit in &focused.units {
            assert!(
                full.units.contains(unit),
                "{ext}: {} is not in the full parse",
                unit.name
            );
        }
        assert!(
            focused.units.len() < full.units.len(),
            "{ext}: the unchanged function is skipped"
        );
    }
}
