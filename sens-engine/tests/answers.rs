//! The engine's answers do not move when the index's layout does: units, their
//! copies, duplicate groups, write verdicts and suggestions on the test fixtures
//! equal a reviewed text (`tests/answers/fixtures.txt`), and on a large corpus
//! their digest equals one recorded before the change (an ignored test, run by
//! hand: see docs/experiments/scale.md).
//!
//! `SENS_BLESS=1` rewrites the fixtures' text after a change meant to move answers.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::index::{Index, Unit, UnitId};
use sens_engine::judge::Judge;
use sens_engine::suggest;
use sha2::{Digest, Sha256};

/// Prompts whose word-only rankings are part of the answers.
const PROMPTS: [&str; 4] = [
    "parse the settings file into a config",
    "sum the totals of the values",
    "render the rows of a table",
    "find the user by name",
];

/// Tokens a unit needs to join a duplicate group, as `engine dupes` defaults.
const DUPE_MIN_TOKENS: usize = 20;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixtures as a project: every source fixture under its own extension.
fn fixture_project() -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for sub in ["", "layout"] {
        let mut entries: Vec<PathBuf> = fs::read_dir(fixtures().join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "json"))
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy();
            let rel = format!("{sub}/{}", name.trim_end_matches(".txt"))
                .trim_start_matches('/')
                .to_string();
            let text = fs::read_to_string(&path).unwrap();
            let dest = dir.path().join(&rel);
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::write(&dest, &text).unwrap();
            files.push((rel, text));
        }
    }
    (dir, files)
}

fn describe(index: &Index, id: UnitId) -> String {
    index.unit(id).map_or_else(
        || format!("dangling unit {id}"),
        |u| {
            format!(
                "{}:{}-{}:{:?}:{}",
                u.file, u.data.start_line, u.data.end_line, u.data.kind, u.data.name
            )
        },
    )
}

/// Every unit with its fingerprints and its copies in other files, the
/// duplicate groups and the prompts' rankings, one line each, in an order
/// independent of unit ids.
fn index_answers(index: &Index, out: &mut dyn FnMut(&str)) {
    let mut units: Vec<(String, UnitId)> = index
        .units()
        .map(|(id, _)| (describe(index, id), id))
        .collect();
    units.sort();
    for (name, id) in &units {
        let Some(unit) = index.unit(*id) else {
            continue;
        };
        let data = &unit.data;
        out(&format!(
            "unit {name} {:x} {:x} {} {}",
            data.exact,
            data.renamed,
            data.tokens,
            data.shingles.len()
        ));
        let other_file = |_: UnitId, other: &Unit| other.file == unit.file;
        let mut copies: Vec<String> = index
            .copies(data, other_file)
            .iter()
            .map(|m| {
                format!(
                    "  copy {} {} {:.9}",
                    m.kind.rule(),
                    describe(index, m.id),
                    m.similarity
                )
            })
            .collect();
        copies.sort();
        copies.iter().for_each(|line| out(line));
    }
    let mut groups: Vec<String> = dupes::groups(index, DUPE_MIN_TOKENS)
        .iter()
        .map(|g| {
            let mut members: Vec<String> = g.units.iter().map(|&id| describe(index, id)).collect();
            members.sort();
            format!(
                "group {} {:.9} {}",
                g.kind.rule(),
                g.similarity,
                members.join(" ")
            )
        })
        .collect();
    groups.sort();
    groups.iter().for_each(|line| out(line));
    for prompt in PROMPTS {
        let ranking = suggest::rank_with(index, prompt, None);
        out(&format!("prompt {prompt:?} silent {}", ranking.silent));
        for item in &ranking.items {
            let s = &item.suggestion;
            out(&format!(
                "  offer {} {}:{} {:.9}",
                s.name, s.file, s.line, s.score
            ));
        }
    }
}

/// The fixtures' answers: the index's, then the verdict on writing each
/// fixture again under a new name.
fn fixture_answers() -> String {
    let (dir, files) = fixture_project();
    let mut engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    let mut text = String::new();
    index_answers(engine.index(), &mut |line| {
        text.push_str(line);
        text.push('\n');
    });
    for (rel, content) in &files {
        let path = dir.path().join("written").join(rel);
        for f in engine.check_write(&path, content).unwrap() {
            let existing = f
                .existing
                .map(|e| format!("{}:{} {}", e.file, e.line, e.usages))
                .unwrap_or_default();
            writeln!(
                text,
                "verdict {}:{}:{} {} blocks {} {:.9} {existing}",
                f.new.file, f.new.line, f.new.name, f.rule, f.blocks, f.similarity
            )
            .unwrap();
        }
    }
    text
}

#[test]
fn the_fixtures_answers_equal_the_reviewed_text() {
    let expected_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/answers/fixtures.txt");
    let got = fixture_answers();
    for kind in [
        "unit ",
        "  copy copy.exact",
        "  copy copy.near",
        "group ",
        "verdict ",
        "  offer ",
    ] {
        assert!(
            got.lines().any(|l| l.starts_with(kind)),
            "the fixtures give no {kind:?} line"
        );
    }
    if std::env::var_os("SENS_BLESS").is_some() {
        fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
        fs::write(&expected_path, &got).unwrap();
    }
    let expected = fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e} (SENS_BLESS=1 writes it)", expected_path.display()));
    if got != expected {
        let first = got
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(expected.lines().count()));
        panic!(
            "answers differ from {} at line {}: got {:?}, expected {:?} (after a change meant to move answers, SENS_BLESS=1 rewrites it)",
            expected_path.display(),
            first + 1,
            got.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}

/// `SENS_ANSWERS_CORPUS=DIR SENS_ANSWERS_DIGEST=HEX cargo test --release -p
/// sens-engine --test answers -- --ignored`: the answers' SHA-256 on a
/// corpus (printed), equal to the digest recorded before a layout change.
#[test]
#[ignore = "needs a corpus: SENS_ANSWERS_CORPUS and SENS_ANSWERS_DIGEST"]
fn a_corpus_answers_equal_the_recorded_digest() {
    let corpus = std::env::var_os("SENS_ANSWERS_CORPUS").expect("SENS_ANSWERS_CORPUS: a folder");
    let (index, _) = Index::build(
        Path::new(&corpus),
        RuleConfig::default(),
        sens_engine::walk::WalkOptions::default(),
    )
    .unwrap();
    let (mut hasher, mut lines) = (Sha256::new(), 0usize);
    index_answers(&index, &mut |line| {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
        lines += 1;
    });
    let got = hex::encode(hasher.finalize());
    println!("answers digest {got} over {lines} lines");
    let expected = std::env::var("SENS_ANSWERS_DIGEST")
        .unwrap_or_else(|_| panic!("SENS_ANSWERS_DIGEST unset; this corpus gives {got}"));
    assert_eq!(got, expected, "the answers changed");
}
