//! Detection that survives layout: per language, a real-sized function and its
//! copy through the language's formatter at other settings (committed as
//! fixtures: black -l 40 -S, prettier --no-semi --trailing-comma all
//! --print-width 40 --single-quote, rustfmt max_width=40; Go and Java rewrapped
//! by hand with added semicolons, trailing commas and grouping parentheses) are
//! one copy: exact when only layout changed, renamed when names changed too. An
//! unrelated function of the same size and shape is not a copy. And a whole
//! function of repetitive statements copied exactly blocks, while a table of the
//! same size in a larger function does not.

use std::path::PathBuf;

use sens_engine::config::RuleConfig;
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
    for ext in LANGUAGES {
        let original = fixture("original", ext);
        assert_eq!(
            copy_kind(ext, &original, &fixture("reformatted", ext)),
            Some(CopyKind::Exact),
            "{ext}: only the layout changed"
        );
        assert_eq!(
            copy_kind(ext, &original, &fixture("renamed_reformatted", ext)),
            Some(CopyKind::Renamed),
            "{ext}: layout and names changed"
        );
        assert_eq!(
            copy_kind(ext, &original, &fixture("unrelated", ext)),
            None,
            "{ext}: an unrelated function of the same size"
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
