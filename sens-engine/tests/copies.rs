//! Per required language: an exact copy, a renamed copy (identifiers and literals
//! changed) and a near copy (a statement added) of a real-sized function are found
//! in the index; an unrelated function of the same size is not.

use std::path::PathBuf;

use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::index::{CopyKind, Index};
use sens_engine::units::UnitKind;

/// (extension of the indexed file, fixture extension)
const LANGUAGES: &[(&str, &str)] = &[
    ("rs", "rs"),
    ("ts", "ts"),
    ("tsx", "ts"),
    ("js", "js"),
    ("py", "py"),
];

fn fixture(name: &str, ext: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        &format!("{name}.{ext}.txt"),
    ]
    .iter()
    .collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn indexed(ext: &str, fixture_ext: &str) -> Index {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    assert!(
        index
            .update_file(
                &format!("src/original.{ext}"),
                &fixture("original", fixture_ext)
            )
            .unwrap()
    );
    assert!(
        index
            .update_file(
                &format!("src/other.{ext}"),
                &fixture("unrelated", fixture_ext)
            )
            .unwrap()
    );
    index
}

/// The strongest match of the new file's function against the original's function.
fn match_of(index: &Index, ext: &str, text: &str) -> Option<(CopyKind, f64, u32)> {
    let path = format!("src/new.{ext}");
    let parsed = index.parse(&path, text).unwrap().unwrap();
    let function = parsed
        .units
        .iter()
        .find(|u| u.kind == UnitKind::Function)
        .unwrap();
    index
        .copies(function, |_, u| *u.file == *path)
        .into_iter()
        .filter(|m| {
            index.unit(m.id).is_some_and(|u| {
                u.data.kind == UnitKind::Function && u.file.starts_with("src/original")
            })
        })
        .map(|m| (m.kind, m.similarity, function.tokens))
        .min_by(|a, b| a.0.cmp(&b.0))
}

#[test]
fn exact_renamed_and_near_copies_are_found_in_every_required_language() {
    for &(ext, fx) in LANGUAGES {
        let index = indexed(ext, fx);
        let exact = match_of(&index, ext, &fixture("original", fx));
        assert!(
            matches!(exact, Some((CopyKind::Exact, s, t)) if s == 1.0 && t >= 80),
            "{ext} exact: {exact:?}"
        );
        let renamed = match_of(&index, ext, &fixture("renamed", fx));
        assert!(
            matches!(renamed, Some((CopyKind::Renamed, s, t)) if s == 1.0 && t >= 80),
            "{ext} renamed: {renamed:?}"
        );
        let near = match_of(&index, ext, &fixture("near", fx));
        assert!(
            matches!(near, Some((CopyKind::Near, s, t)) if (0.8..1.0).contains(&s) && t >= 80),
            "{ext} near: {near:?}"
        );
    }
}

#[test]
fn an_unrelated_function_of_the_same_size_is_not_a_copy() {
    for &(ext, fx) in LANGUAGES {
        let mut index = Index::new(RuleConfig::default()).unwrap();
        index
            .update_file(&format!("src/original.{ext}"), &fixture("original", fx))
            .unwrap();
        let path = format!("src/new.{ext}");
        let parsed = index
            .parse(&path, &fixture("unrelated", fx))
            .unwrap()
            .unwrap();
        for unit in &parsed.units {
            let found = index.copies(unit, |_, u| *u.file == *path);
            assert!(found.is_empty(), "{ext}: {} matched {found:?}", unit.name);
        }
    }
}

#[test]
fn dupes_report_real_sized_copies_but_not_short_ones() {
    let short = "def area(w, h):\n    return w * h\n";
    let mut index = Index::new(RuleConfig::default()).unwrap();
    index
        .update_file("a.py", &format!("{}\n{short}", fixture("original", "py")))
        .unwrap();
    index
        .update_file("b.py", &format!("{}\n{short}", fixture("renamed", "py")))
        .unwrap();
    let groups = dupes::groups(&index, index.config().floor);
    assert_eq!(groups.len(), 1, "{groups:?}");
    let names: Vec<_> = groups[0]
        .units
        .iter()
        .map(|&id| index.unit(id).unwrap().data.name.clone())
        .collect();
    assert_eq!(names, ["summarize_orders", "tally_invoices"]);
    assert_eq!(groups[0].kind, CopyKind::Renamed);
    // 13 + 13 lines: the two functions.
    assert_eq!(dupes::duplicated_lines(&index, &groups), 26);
    // With no floor the short function is a group of its own.
    let all = dupes::groups(&index, 0);
    assert_eq!(all.len(), 2);
    assert_eq!(dupes::duplicated_lines(&index, &all), 30);
}
