//! Detection that survives layout: per language, a real-sized function and its
//! copy through the language's formatter at other settings (committed as
//! fixtures: black -l 40 -S, prettier --no-semi --trailing-comma all
//! --print-width 40 --single-quote, rustfmt max_width=40; Go and Java rewrapped
//! by hand with added semicolons, trailing commas and grouping parentheses) are
//! one copy: exact when only layout changed, renamed when names changed too.
//! The `settings_` fixtures are formatter outputs at settings that changed
//! tokens the first normalization kept: rustfmt `match_arm_leading_pipes=Always,
//! use_field_init_shorthand=true,match_block_trailing_comma=true,
//! fn_params_layout=Vertical,hard_tabs=true,max_width=60` (leading `|`, `x: x`
//! to `x`, a long arm wrapped in braces, a closure's braces dropped); prettier
//! `--quote-props as-needed --arrow-parens avoid --no-semi --trailing-comma none
//! --print-width 60` and biome `--semicolons=as-needed
//! --javascript-formatter-quote-style=single --trailing-commas=none
//! --arrow-parentheses=as-needed --line-width=40` (unquoted keys); black `-l 40
//! --skip-magic-trailing-comma` and ruff `quote-style='single'
//! indent-style='tab' --line-length 50` (a returned tuple wrapped in brackets,
//! a docstring re-indented); `gofmt -s` (implied element types
//! left out); astyle `--style=google --add-braces` and `--style=allman
//! --add-braces` (braces around single statements). An
//! unrelated function of the same size and shape is not a copy. And a whole
//! function of repetitive statements copied exactly blocks, while a table of the
//! same size in a larger function does not.

use std::path::PathBuf;

use sens_engine::config::RuleConfig;
use sens_engine::fingerprint::NearRule;
use sens_engine::index::{CopyKind, Index};
use sens_engine::rules::copy_findings;
use sens_engine::units::UnitKind;

const LANGUAGES: &[&str] = &["py", "ts", "rs", "go", "java"];

fn fixture(name: &str, ext: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "layout",
        &format!("{name}.{ext}"),
    ]
    .iter()
    .collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The strongest copy kind of the new text's largest function against the
/// indexed original's functions.
fn copy_kind(ext: &str, original: &str, copy: &str) -> Option<CopyKind> {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    index
        .update_file(&format!("src/original.{ext}"), original)
        .unwrap();
    let path = format!("src/new.{ext}");
    let parsed = index.parse(&path, copy).unwrap().unwrap();
    let function = parsed
        .units
        .iter()
        .filter(|u| u.kind == UnitKind::Function)
        .max_by_key(|u| u.tokens)
        .unwrap();
    assert!(function.tokens >= 80, "{ext}: {} tokens", function.tokens);
    index
        .copies(function, |_, u| {
            *u.file == *path || u.data.kind != UnitKind::Function
        })
        .into_iter()
        .map(|m| m.kind)
        .min()
}

#[test]
fn a_reformatted_copy_is_exact_and_renamed_when_names_changed_too() {
    for (set, ext) in ["", "settings_"]
        .iter()
        .flat_map(|set| LANGUAGES.iter().map(move |ext| (set, ext)))
    {
        let original = fixture(&format!("{set}original"), ext);
        assert_eq!(
            copy_kind(ext, &original, &fixture(&format!("{set}reformatted"), ext)),
            Some(CopyKind::Exact),
            "{set}{ext}: only the layout changed"
        );
        assert_eq!(
            copy_kind(
                ext,
                &original,
                &fixture(&format!("{set}renamed_reformatted"), ext)
            ),
            Some(CopyKind::Renamed),
            "{set}{ext}: layout and names changed"
        );
        assert_eq!(
            copy_kind(ext, &original, &fixture("unrelated", ext)),
            None,
            "{set}{ext}: an unrelated function of the same size"
        );
    }
}

/// A constructor-like function of 20 field assignments (repetitive: few
/// distinct shingles), and a table of the same rows inside another function.
fn assignments(name: &str) -> String {
    let fields: String = (0..20)
        .map(|i| format!("    self.field{i} = row[{i}]\n"))
        .collect();
    format!("def {name}(self, row):\n{fields}")
}

fn blocking_rules(original: &str, new: &str) -> Vec<String> {
    let mut index = Index::new(RuleConfig::default()).unwrap();
    index.update_file("src/model.py", original).unwrap();
    let parsed = index.parse("src/copy.py", new).unwrap().unwrap();
    copy_findings(&index, "src/copy.py", new, &parsed, &[])
        .into_iter()
        .filter(|f| f.blocks)
        .map(|f| f.rule)
        .collect()
}

#[test]
fn a_whole_repetitive_function_copied_blocks_but_a_table_does_not() {
    let original = assignments("load");
    assert_eq!(
        blocking_rules(&original, &assignments("load")),
        ["copy.exact"]
    );
    // The same rows as a table: a window of statements inside a new function
    // that does something else around them is a repetitive fragment.
    let rows: String = (0..20)
        .map(|i| format!("    table.field{i} = row[{i}]\n"))
        .collect();
    let table = format!(
        "def fill(table, row, log):\n    log.write('filling')\n{rows}    log.write('done')\n    return table\n"
    );
    assert!(blocking_rules(&original, &table).is_empty());
}

/// The original Rust function with one long statement (almost half its
/// shingles again: the copy's Jaccard is under the threshold, and its size just
/// within containment's bound) inserted before its `i`-th body line, for every
/// body line.
fn with_statement_inserted() -> Vec<String> {
    let original = fixture("original", "rs");
    let statement = concat!(
        "    let audit = [1, 2].iter().zip(\"ab\".chars()).fold(0u64, |acc, (n, c)| acc ^ (*n as u64) << (c as u8 % 7)) >= 0x10",
        " && mode != Mode::Dry;\n"
    );
    let lines: Vec<&str> = original.lines().collect();
    (1..lines.len() - 1)
        .filter(|&i| lines[i].starts_with("    ") && !lines[i].starts_with("     "))
        .map(|i| {
            let mut out: String = lines[..i].iter().map(|l| format!("{l}\n")).collect();
            out.push_str(statement);
            out.extend(lines[i..].iter().map(|l| format!("{l}\n")));
            out
        })
        .collect()
}

/// Whether `copy` is denied as a near copy of the original under `cfg`, and
/// whether containment can judge the pair at all: the two functions are LSH
/// candidates (by a band key of the copy or one of its leave-one-out keys) and
/// the copy is at most half again the original's shingles.
fn near_verdict(cfg: &RuleConfig, copy: &str) -> (bool, bool) {
    let original = fixture("original", "rs");
    let mut index = Index::new(cfg.clone()).unwrap();
    index.update_file("src/original.rs", &original).unwrap();
    let parsed = index.parse("src/new.rs", copy).unwrap().unwrap();
    let function = |p: &sens_engine::units::ParsedFile| {
        p.units
            .iter()
            .filter(|u| u.kind == UnitKind::Function)
            .max_by_key(|u| u.tokens)
            .cloned()
            .unwrap()
    };
    let old = function(&index.parse("src/original.rs", &original).unwrap().unwrap());
    let new = function(&parsed);
    let candidate = old.bands.iter().zip(new.bands.iter()).any(|(a, b)| a == b)
        || new.leave_one_out.iter().any(|key| old.bands.contains(key));
    let admitted = NearRule::new(cfg).contains(new.shingles.len(), old.shingles.len(), true);
    let denied = copy_findings(&index, "src/new.rs", copy, &parsed, &[])
        .iter()
        .any(|f| f.blocks && f.rule == "copy.near");
    (denied, candidate && admitted)
}

#[test]
fn a_long_inserted_statement_keeps_a_near_copy_by_containment() {
    let copies = with_statement_inserted();
    assert!(copies.len() >= 5);
    let defaults = RuleConfig::default();
    let jaccard_only = RuleConfig {
        containment: 1.0,
        ..defaults.clone()
    };
    let (mut by_default, mut by_jaccard) = (0, 0);
    for copy in &copies {
        let (denied, judged) = near_verdict(&defaults, copy);
        // Wherever the LSH offers the pair and its sizes admit it, the rule
        // denies it.
        assert_eq!(denied, judged, "{copy}");
        by_default += usize::from(denied);
        by_jaccard += usize::from(near_verdict(&jaccard_only, copy).0);
    }
    // The statement takes the Jaccard under the threshold: only containment
    // keeps these copies near.
    assert!(by_jaccard < by_default, "{by_jaccard} vs {by_default}");
}
