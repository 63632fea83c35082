//! Per required language: an exact copy, a renamed copy (identifiers and literals
//! changed) and a near copy (a statement added) of a real-sized function are found
//! in the index; an unrelated function of the same size is not.

use std::path::PathBuf;

use sens_engine::config::RuleConfig;
use sens_engine::dupes;
use sens_engine::fingerprint::{self, NearRule};
use sens_engine::index::{CopyKind, Index};
use sens_engine::units::{LEAVE_OUT_BANDS, UnitKind};

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

/// A short function, long statements to insert into it (about a third of its
/// tokens: the copy's Jaccard with it falls near or under the threshold while
/// the copy stays within containment's size bound), and the indentation of its
/// body.
struct Insertions {
    ext: &'static str,
    original: &'static str,
    statements: &'static [&'static str],
    indent: &'static str,
}

const INSERTIONS: &[Insertions] = &[
    Insertions {
        ext: "py",
        original: r#"def parse_amount(text, currency="EUR"):
    cleaned = text.strip().replace(",", ".")
    if not cleaned:
        raise ValueError(f"empty amount for {currency}")
    sign = -1 if cleaned.startswith("-") else 1
    whole, _, cents = cleaned.lstrip("+-").partition(".")
    value = int(whole or "0") * 100 + int((cents + "00")[:2])
    return sign * value
"#,
        statements: &[
            r#"with open(os.devnull, "w") as sink: print(*[c for c in cleaned if c.isdigit()], sep="|", file=sink)"#,
            r#"while len(cleaned) > 32 and cleaned[0] in "0 ": cleaned = cleaned[1:] if cleaned[0] == "0" else cleaned.lstrip()"#,
            r#"total = sum(ord(c) ** 2 % 7 for c in cleaned if not c.isspace()) // max(1, len(cleaned) - 1) << 2 ^ ~len(currency)"#,
            r#"digits = {k: v for k, v in enumerate(cleaned) if v.isdigit() or v in ("-", "+") and k == 0} | {-1: None}"#,
        ],
        indent: "    ",
    },
    Insertions {
        ext: "rs",
        original: r#"fn parse_amount(text: &str, currency: &str) -> Result<i64, String> {
    let mut cleaned = text.trim().replace(',', ".");
    let (whole, cents) = cleaned.split_once('.').unwrap_or((&cleaned, "0"));
    let whole = whole.parse::<i64>().map_err(|e| format!("{currency}: {e}"))?;
    Ok(whole * 100 + cents.parse::<i64>().unwrap_or(0))
}
"#,
        statements: &[
            r#"match cleaned.len() { 0..=2 => return Err(String::new()), n @ 33.. => return Err(format!("{n} characters")), _ => {} }"#,
            r#"for (i, c) in cleaned.char_indices().rev().skip(1) { match c { '0'..='9' => continue, '_' if i > 0 => break, other => return Err(format!("{other:?} at {i}")) } }"#,
            r#"match cleaned.len() { 0..=2 => return Err(String::new()), n @ 33.. => return Err(format!("{n} characters")), _ if cleaned.contains("..") => { cleaned.retain(|c| c != '.'); } _ => {} }"#,
            r#"let digits = cleaned.bytes().filter(u8::is_ascii_digit).map(|b| u32::from(b - b'0') << 1 ^ 0x5a).take_while(|&d| d != 0).fold([0u32; 4], |mut acc, d| { acc[0] += d; acc });"#,
        ],
        indent: "    ",
    },
];

/// A long statement inserted into a short function drops the copy's Jaccard
/// under the threshold, and then its whole-unit band keys often share none with
/// the original's: no LSH candidate, although containment would confirm it.
/// Leaving the inserted statement out gives back the original's tokens, so one
/// run of the copy's leave-one-out keys equals the original's keys and the
/// lookup finds it. Every long statement at every statement of the body: each
/// copy under the threshold that containment admits by size is a near copy,
/// and some were so only through the leave-one-out keys.
#[test]
fn a_long_statement_inserted_into_a_short_function_is_a_near_copy_by_leaving_it_out() {
    let cfg = RuleConfig::default();
    let mut without_leave_one_out = 0;
    for case in INSERTIONS {
        let mut index = Index::new(cfg.clone()).unwrap();
        let original_path = format!("src/original.{}", case.ext);
        index.update_file(&original_path, case.original).unwrap();
        let function = |path: &str, text: &str| {
            let parsed = index.parse(path, text).unwrap().unwrap();
            parsed
                .units
                .into_iter()
                .find(|u| u.kind == UnitKind::Function)
                .unwrap()
        };
        let original = function(&original_path, case.original);
        let body_lines: Vec<usize> = case
            .original
            .match_indices(&format!("\n{}", case.indent))
            .map(|(at, _)| at + 1)
            .filter(|&at| !case.original[at + case.indent.len()..].starts_with(' '))
            .collect();
        let mut copies = 0;
        for statement in case.statements {
            for &at in &body_lines {
                let mut text = case.original.to_string();
                text.insert_str(at, &format!("{}{statement}\n", case.indent));
                let path = format!("src/copy.{}", case.ext);
                let copy = function(&path, &text);
                let common = fingerprint::common_at_least(&copy.shingles, &original.shingles, 0)
                    .unwrap_or(0);
                let jaccard =
                    common as f64 / (copy.shingles.len() + original.shingles.len() - common) as f64;
                // Over the threshold the whole-unit bands find it; more than half
                // again the original's size, containment refuses it.
                if jaccard >= cfg.threshold
                    || !NearRule::new(&cfg).contains(
                        copy.shingles.len(),
                        original.shingles.len(),
                        true,
                    )
                {
                    continue;
                }
                assert!(
                    copy.leave_one_out
                        .chunks(LEAVE_OUT_BANDS)
                        .any(|keys| *keys == original.bands[..LEAVE_OUT_BANDS]),
                    "{}: no leave-one-out run is the original's keys\n{text}",
                    case.ext
                );
                let found = index.copies(&copy, |_, u| *u.file == *path);
                assert!(
                    found.iter().any(|m| m.kind == CopyKind::Near),
                    "{}: not a near copy ({found:?})\n{text}",
                    case.ext
                );
                copies += 1;
                let shared_band = copy.bands.iter().any(|k| original.bands.contains(k));
                without_leave_one_out += usize::from(!shared_band);
            }
        }
        assert!(copies >= 4, "{}: {copies} copies", case.ext);
    }
    assert!(
        without_leave_one_out > 0,
        "every copy shared a whole-unit band with the original"
    );
}
