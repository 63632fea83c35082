//! Suggestions (docs/contract.md, "Suggestions"): a far-reuse helper is found by what it
//! does, a request with nothing relevant gets no list, and test code and local closures
//! are never offered.

use std::fs;

use sens_engine::Engine;
use sens_engine::config::RuleConfig;
use sens_engine::judge::Judge;
use sens_engine::suggest::Steps;

/// A small ledger project in three languages, with distractors, tests and closures.
fn ledger() -> (tempfile::TempDir, Engine) {
    let files: [(&str, &str); 8] = [
        (
            "ledger/text.py",
            "def fold(text):\n    \"\"\"Lower-cases text and strips accents, so that 'Café' and 'cafe' compare equal.\"\"\"\n    decomposed = unicodedata.normalize(\"NFKD\", text)\n    return \"\".join(c for c in decomposed if not unicodedata.combining(c)).lower()\n",
        ),
        (
            "ledger/money.py",
            "def cents_of(amount):\n    \"\"\"Parses an amount such as '12,50' or '12.5' into cents.\"\"\"\n    return round(float(amount.replace(',', '.')) * 100)\n\ndef format_cents(cents):\n    return f\"{cents / 100:.2f}\"\n",
        ),
        (
            "ledger/report.py",
            "def totals(expenses):\n    \"\"\"Sums expenses per category.\"\"\"\n    out = {}\n    for e in expenses:\n        out[e.category] = out.get(e.category, 0) + e.cents\n    return out\n\ndef test_totals_sum_per_category():\n    assert totals([]) == {}\n",
        ),
        (
            "tests/test_money.py",
            "def check_amount_parsing_of_accents():\n    assert cents_of('1') == 100\n",
        ),
        (
            "src/period.rs",
            "/// The first and last day of the month holding `day`.\npub fn month_bounds(day: Date) -> (Date, Date) {\n    (day.with_day(1), day.last_of_month())\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    /// Accents and capitals in the month bounds.\n    fn accent_month_bounds_helper() -> bool {\n        true\n    }\n}\n",
        ),
        (
            "web/list.ts",
            "/** Renders the expenses as rows of an HTML table. */\nexport function renderRows(expenses: Expense[]): string {\n  const accentRow = (e: Expense) => `<tr><td>${e.description}</td></tr>`;\n  return expenses.map(accentRow).join(\"\");\n}\n",
        ),
        (
            "web/dist/list.js",
            "function renderRows(expenses) {\n  return expenses.map(function (e) { return '<tr><td>' + e.description + '</td></tr>'; }).join('');\n}\n",
        ),
        (
            "src/notes.rs",
            &format!(
                "/// {}The zeppelin word comes last.\npub fn long_note() -> u32 {{\n    1\n}}\n",
                "Describes the ledger at length. ".repeat(20)
            ),
        ),
    ];
    project(&files)
}

/// An engine over a project of these files (path, text).
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    (dir, engine)
}

fn names(engine: &Engine, prompt: &str) -> Vec<String> {
    engine
        .suggest(prompt)
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn a_helper_is_found_by_its_doc_and_body_words_when_no_name_word_is_in_the_prompt() {
    let (_dir, engine) = ledger();
    let prompt = "Searching for 'cafe' must also find the expense described as 'Café': ignore accents and capitals";
    let found = names(&engine, prompt);
    assert_eq!(found.first().map(String::as_str), Some("fold"), "{found:?}");
}

#[test]
fn a_request_with_nothing_relevant_gets_no_list() {
    let (_dir, engine) = ledger();
    for prompt in [
        "Write a poem about autumn leaves",
        "Add a dark mode toggle to the settings screen",
        "",
    ] {
        assert_eq!(names(&engine, prompt), Vec::<String>::new(), "{prompt}");
    }
}

#[test]
fn test_code_and_local_closures_are_never_suggested() {
    let (_dir, engine) = ledger();
    // Each prompt names what only a test or a closure holds.
    for prompt in [
        "accent month bounds helper",
        "test totals sum per category",
        "check amount parsing of accents",
        "accent row of the expenses table",
    ] {
        let ranking = sens_engine::suggest::rank(engine.index(), prompt);
        let offered: Vec<&str> = ranking
            .items
            .iter()
            .map(|r| r.suggestion.name.as_str())
            .collect();
        for never in [
            "accent_month_bounds_helper",
            "test_totals_sum_per_category",
            "check_amount_parsing_of_accents",
            "accentRow",
        ] {
            assert!(!offered.contains(&never), "{prompt}: {offered:?}");
        }
    }
}

#[test]
fn the_doc_comment_above_an_exported_typescript_function_is_indexed() {
    let (_dir, engine) = ledger();
    let ranking = sens_engine::suggest::rank(engine.index(), "html table of the expenses");
    let item = ranking
        .items
        .iter()
        .find(|r| r.suggestion.name == "renderRows")
        .expect("renderRows is ranked");
    assert!(
        item.matches
            .iter()
            .any(|m| m.word == "html" && m.fields.iter().any(|&(f, _)| f == "doc")),
        "{:?}",
        item.matches
    );
}

#[test]
fn a_docstring_counts_once_and_a_long_doc_is_searched_to_its_end() {
    let (_dir, engine) = ledger();
    let ranking = sens_engine::suggest::rank(engine.index(), "strip the accents");
    let fold = ranking
        .items
        .iter()
        .find(|r| r.suggestion.name == "fold")
        .expect("fold is ranked");
    let accent = fold.matches.iter().find(|m| m.word == "accent").unwrap();
    assert_eq!(accent.fields, vec![("doc", 1)], "{:?}", fold.matches);
    // Past the first 400 bytes kept for display.
    let ranking = sens_engine::suggest::rank(engine.index(), "zeppelin");
    let first = ranking.items.first().map(|r| r.suggestion.name.as_str());
    assert_eq!(first, Some("long_note"));
}

#[test]
fn built_copies_are_not_suggested_when_the_source_is_there() {
    let (_dir, engine) = ledger();
    let ranking = sens_engine::suggest::rank(engine.index(), "html table rows of the expenses");
    assert!(
        ranking
            .items
            .iter()
            .any(|r| r.suggestion.name == "renderRows")
    );
    for item in &ranking.items {
        assert!(
            !item.suggestion.file.contains("dist/"),
            "{}",
            item.suggestion.file
        );
    }
}

/// An npm package as published: compiled code under `dist/` and a top-level
/// stub that only re-exports it.
#[test]
fn a_package_of_built_files_and_stubs_that_reexport_them_keeps_its_built_files() {
    let (_dir, engine) = project(&[
        ("array.d.ts", "export * from './dist/array';\n"),
        (
            "dist/array/chunk.mjs",
            "function chunk(arr, size) {\n  const batches = [];\n  for (let i = 0; i < arr.length; i += size) {\n    batches.push(arr.slice(i, i + size));\n  }\n  return batches;\n}\n\nexport { chunk };\n",
        ),
    ]);
    assert_eq!(
        first_suggested(&engine, "send the addresses in batches of fifty").as_deref(),
        Some("chunk")
    );
}

/// An engine over a project of one file.
fn one_file(path: &str, text: &str) -> (tempfile::TempDir, Engine) {
    project(&[(path, text)])
}

/// The engine's first unit of that name.
fn unit<'e>(engine: &'e Engine, name: &str) -> Option<&'e sens_engine::index::Unit> {
    engine
        .index()
        .units()
        .map(|(_, u)| u)
        .find(|u| u.data.name == name)
}

/// The best-ranked item for the prompt, silenced or not.
fn first_suggested(engine: &Engine, prompt: &str) -> Option<String> {
    let ranking = sens_engine::suggest::rank(engine.index(), prompt);
    ranking.items.first().map(|r| r.suggestion.name.clone())
}

#[test]
fn a_function_wrapped_by_a_call_and_bound_to_a_name_is_that_names_definition() {
    let (_dir, engine) = one_file(
        "list.js",
        "/**\n * Cuts a list into slices of the given length.\n */\nvar splitEvery = /*#__PURE__*/_curry2(_dispatchable([], function splitEvery(n, list) {\n  var out = [];\n  for (var i = 0; i < list.length; i += n) { out.push(list.slice(i, i + n)); }\n  return out;\n}));\n\n/** Shows a price as a badge. */\nexport const PriceBadge = memo((props) => `<b>${props.cents}</b>`);\n\ndescribe(\"slices\", () => {\n  it(\"cuts\", () => splitEvery(2, [1, 2, 3]));\n});\n\nexport function yearsBetween(from, to) {\n  const [first, last] = [from, to].map((date) => Number(date.slice(0, 4)));\n  const span = [first, last].map(function (y) { return y - first; });\n  return span;\n}\n",
    );
    let split = &unit(&engine, "splitEvery").expect("splitEvery").data.facts;
    assert!(!split.callback && split.doc.contains("slices"), "{split:?}");
    let badge = &unit(&engine, "PriceBadge").expect("PriceBadge").data.facts;
    assert!(
        !badge.callback && badge.exported && badge.doc.contains("badge"),
        "{badge:?}"
    );
    // A callback stays one: it is used where it stands; inside a function a
    // binding holds the call's value, not the function.
    let callback = unit(&engine, "describe(\"slices\") callback").expect("the callback");
    assert!(callback.data.facts.callback);
    for name in ["[first, last]", "span"] {
        assert!(unit(&engine, name).is_none(), "{name} is not a definition");
    }
    assert_eq!(
        first_suggested(&engine, "chop the rows into slices of fifty").as_deref(),
        Some("splitEvery")
    );
}

#[test]
fn a_traits_required_method_is_a_candidate_with_its_doc() {
    let (_dir, engine) = one_file(
        "lib.rs",
        "pub trait Integer {\n    /// Returns `true` if the number is divisible by two.\n    fn is_even(&self) -> bool;\n\n    /// The greatest common divisor.\n    fn gcd(&self, other: &Self) -> Self;\n}\n",
    );
    let even = &unit(&engine, "is_even")
        .expect("the declaration is a unit")
        .data
        .facts;
    // Called through the trait: never an orphan.
    assert!(
        even.doc.contains("divisible") && even.implements,
        "{even:?}"
    );
    assert_eq!(
        first_suggested(&engine, "tell whether a count is divisible by two").as_deref(),
        Some("is_even")
    );
}

#[test]
fn benchmarks_are_not_suggested() {
    let (_dir, engine) = one_file(
        "benches/totals.rs",
        "/// Sums the totals of a thousand invoices, timed.\npub fn bench_invoice_totals(b: &mut Bencher) {\n    b.iter(|| invoice_totals(1000));\n}\n",
    );
    assert!(unit(&engine, "bench_invoice_totals").is_some());
    assert_eq!(first_suggested(&engine, "sum the invoice totals"), None);
}

#[test]
fn a_python_protocol_method_is_not_suggested_but_its_class_is() {
    let (_dir, engine) = one_file(
        "version.py",
        "class Version:\n    \"\"\"A parsed release.\"\"\"\n\n    def __lt__(self, other):\n        \"\"\"Whether this release number sorts before the other one, in the order installers use.\"\"\"\n        return self._key < other._key\n",
    );
    assert!(unit(&engine, "__lt__").is_some());
    let ranking = sens_engine::suggest::rank(
        engine.index(),
        "sort release numbers in the order installers use",
    );
    let names: Vec<&str> = ranking
        .items
        .iter()
        .map(|r| r.suggestion.name.as_str())
        .collect();
    assert_eq!(names, ["Version"]);
}

#[test]
fn a_module_ranks_but_the_list_a_prompt_is_shown_keeps_its_place_for_a_symbol() {
    let (dir, _) = ledger();
    fs::write(
        dir.path().join("ledger/__init__.py"),
        "\"\"\"Text helpers: accents and capitals folded away, so that searches for cafe find Café.\"\"\"\nfrom .text import fold\n",
    )
    .unwrap();
    let engine = Engine::open(dir.path(), RuleConfig::default()).unwrap();
    let prompt = "Searching for 'cafe' must also find the expense described as 'Café': ignore accents and capitals";
    let ranked: Vec<String> =
        sens_engine::suggest::rank_deep(engine.index(), prompt, None, 50, Steps::SHIPPED)
            .items
            .into_iter()
            .map(|r| r.suggestion.name)
            .collect();
    assert!(
        ranked.contains(&"ledger/__init__.py".to_string()),
        "{ranked:?}"
    );
    let listed = names(&engine, prompt);
    assert_eq!(
        listed.first().map(String::as_str),
        Some("fold"),
        "{listed:?}"
    );
    assert!(!listed.iter().any(|n| n.ends_with(".py")), "{listed:?}");
}
