//! The re-implementation finder (issue 43): a function written again under a name
//! that shares no word with the project's helper is named with that helper; a
//! function the project has nothing like gets nothing; test code never does.

use std::fs;

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::reuse::{self, Lookup};
use sens_engine::suggest;

mod ledger_project;

/// The shared ledger project in a scratch folder, and its engine.
fn project() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in ledger_project::FILES {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    suggest::prepare(engine.index());
    (dir, engine)
}

/// What the finder says of `code` written as the new file `path`.
fn lookups(engine: &Engine, path: &str, code: &str) -> Vec<Lookup> {
    reuse::find(engine.index(), path, None, code).unwrap()
}

#[test]
fn a_reimplementation_sharing_no_name_word_with_its_helper_is_named() {
    let (_dir, engine) = project();
    let code = "import unicodedata\n\n\ndef normalize_for_search(s):\n    \"\"\"Make 'Crème' match 'creme' in searches: drop diacritics, ignore case.\"\"\"\n    out = []\n    for ch in unicodedata.normalize(\"NFD\", s):\n        if unicodedata.category(ch) != \"Mn\":\n            out.append(ch.lower())\n    return \"\".join(out)\n";
    let found = lookups(&engine, "ledger/search.py", code);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].exists, "{found:#?}");
    let best = &found[0].candidates[0].suggestion;
    assert_eq!(
        (best.name.as_str(), best.file.as_str(), best.line),
        ("fold", "ledger/text.py", 4)
    );
}

#[test]
fn a_new_function_with_nothing_like_it_gets_no_note() {
    let (_dir, engine) = project();
    let code = "import math\n\n\ndef haversine_km(lat1, lon1, lat2, lon2):\n    \"\"\"Great-circle distance between two points on Earth, in kilometres.\"\"\"\n    p1, p2 = math.radians(lat1), math.radians(lat2)\n    dl = math.radians(lon2 - lon1)\n    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2\n    return 2 * 6371.0 * math.asin(math.sqrt(a))\n";
    let found = lookups(&engine, "ledger/geo.py", code);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(!found[0].exists, "{found:#?}");
}

#[test]
fn test_code_is_never_looked_up() {
    let (_dir, engine) = project();
    let test = "import unicodedata\n\n\ndef test_search_ignores_accents():\n    \"\"\"Make 'Crème' match 'creme': drop diacritics, ignore case.\"\"\"\n    s = \"\".join(c for c in unicodedata.normalize(\"NFD\", \"Crème\") if unicodedata.category(c) != \"Mn\")\n    assert s.lower() == \"creme\"\n";
    assert!(lookups(&engine, "ledger/search.py", test).is_empty());
    let helper = test.replace("test_search_ignores_accents", "strip_marks");
    assert!(lookups(&engine, "tests/search_helpers.py", &helper).is_empty());
}

#[test]
fn a_function_the_file_already_defined_is_not_new() {
    let (dir, engine) = project();
    let before = fs::read_to_string(dir.path().join("ledger/money.py")).unwrap();
    let after = before.replace("* 100)", "* 100 + 0.5)");
    let found = reuse::find(engine.index(), "ledger/money.py", Some(&before), &after).unwrap();
    assert!(found.is_empty(), "{found:#?}");
}

/// The Stop reviewer's candidates: the finder's first candidates of each unit a
/// change adds, as hints naming the existing unit, never denials.
#[test]
fn the_reviewer_reads_the_finders_candidates_of_each_unit_a_change_adds() {
    use sens_engine::judge::{FileChange, Judge};
    let (_dir, engine) = project();
    let code = "import unicodedata\n\n\ndef normalize_for_search(s):\n    \"\"\"Make 'Crème' match 'creme' in searches: drop diacritics, ignore case.\"\"\"\n    out = []\n    for ch in unicodedata.normalize(\"NFD\", s):\n        if unicodedata.category(ch) != \"Mn\":\n            out.append(ch.lower())\n    return \"\".join(out)\n";
    let change = FileChange {
        path: "ledger/search.py".into(),
        before: None,
        after: Some(code.into()),
    };
    let candidates = engine.reuse_candidates(&[change]).unwrap();
    assert!(!candidates.is_empty());
    assert!(
        candidates.len() <= reuse::REVIEW_CANDIDATES,
        "{candidates:#?}"
    );
    assert!(
        candidates
            .iter()
            .all(|f| !f.blocks && f.rule == reuse::REVIEW_RULE)
    );
    let first = candidates[0].existing.as_ref().unwrap();
    assert_eq!((first.file.as_str(), first.line), ("ledger/text.py", 4));
    assert_eq!(candidates[0].new.name, "normalize_for_search");

    let unchanged = FileChange {
        path: "ledger/search.py".into(),
        before: Some(code.into()),
        after: Some(code.into()),
    };
    assert!(engine.reuse_candidates(&[unchanged]).unwrap().is_empty());
}
