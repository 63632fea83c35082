//! `sens-bench engine index|dupes` through the real binary: counts on a messy
//! project, the binding JSON, and bad input.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_sens-bench");

fn fixture(name: &str, ext: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sens-engine/tests/fixtures")
        .join(format!("{name}.{ext}.txt"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A project with two copies, a file that does not parse, a binary file, a huge
/// minified file and a .gitignored folder.
fn messy_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["src", "web", "ignored"] {
        fs::create_dir_all(root.join(sub)).unwrap();
    }
    fs::write(root.join("src/orders.rs"), fixture("original", "rs")).unwrap();
    fs::write(root.join("src/invoices.rs"), fixture("renamed", "rs")).unwrap();
    fs::write(
        root.join("src/broken.py"),
        "def broken(:\n    pass\n\ndef fine(a):\n    return a + 1\n",
    )
    .unwrap();
    fs::write(root.join("src/blob.rs"), b"\x7fELF\0\0\x01binary").unwrap();
    fs::write(
        root.join("web/app.js"),
        format!("var a=[{}];\n", "1,".repeat(300_000)),
    )
    .unwrap();
    fs::write(root.join("ignored/copy.rs"), fixture("original", "rs")).unwrap();
    fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    dir
}

#[test]
fn index_counts_a_messy_project_without_crashing() {
    let dir = messy_project();
    let out = run(&["engine", "index", dir.path().to_str().unwrap(), "--json"]);
    let v = json(&out);
    assert_eq!(v["files"], 3, "{v}");
    assert_eq!(v["languages"]["rust"], 2);
    assert_eq!(v["languages"]["python"], 1);
    assert_eq!(v["parse_errors"], 1);
    assert_eq!(v["skipped"]["binary"], 1);
    assert_eq!(v["skipped"]["minified"], 1);
    // summarize_orders, tally_invoices, and the Python file's two functions.
    assert_eq!(v["functions"], 4, "{v}");
    assert_eq!(v["classes"], 0, "{v}");
    let count = |key: &str| v[key].as_u64().unwrap_or_else(|| panic!("{key}: {v}"));
    assert!(count("windows") > 0, "{v}");
    assert_eq!(
        count("units"),
        count("functions") + count("classes") + count("windows"),
        "{v}"
    );
    let seconds = |phase: &str| {
        v["seconds"][phase]
            .as_f64()
            .unwrap_or_else(|| panic!("seconds.{phase}: {v}"))
    };
    let total = seconds("total");
    for phase in ["walk", "read", "parse", "fingerprint", "insert"] {
        let spent = seconds(phase);
        assert!(
            (0.0..=total).contains(&spent),
            "{phase} outside the total: {v}"
        );
    }

    let table = run(&["engine", "index", dir.path().to_str().unwrap()]);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("files") && l.ends_with(" 3")),
        "{text}"
    );
}

#[test]
fn dupes_lists_the_copy_but_not_the_ignored_one() {
    let dir = messy_project();
    let v = json(&run(&[
        "engine",
        "dupes",
        dir.path().to_str().unwrap(),
        "--json",
    ]));
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    assert_eq!(groups[0]["rule"], "copy.renamed");
    assert_eq!(groups[0]["similarity"], 1.0);
    let units = groups[0]["units"].as_array().unwrap();
    let files: Vec<&str> = units.iter().map(|u| u["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["src/invoices.rs", "src/orders.rs"]);
    assert_eq!(
        groups[0]["units"],
        json!([
            {"file": "src/invoices.rs", "line": 1, "end_line": 17, "name": "tally_invoices"},
            {"file": "src/orders.rs", "line": 1, "end_line": 17, "name": "summarize_orders"},
        ]),
        "{v}"
    );
    // Why they match: a renamed copy shares every shingle, and its lines have
    // their twins' shape, not their text.
    let why = &groups[0]["why"];
    assert_eq!(why["shingles"], why["of"][0], "{v}");
    let lines = why["lines"].as_array().unwrap();
    assert!(lines.len() >= 10, "{v}");
    assert!(lines.iter().any(|l| l[2] == false), "{v}");
}

#[test]
fn bad_input_is_a_clear_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let file = dir.path().join("file.rs");
    fs::write(&file, "fn a() {}\n").unwrap();
    for (cmd, path) in [("index", &missing), ("dupes", &missing), ("index", &file)] {
        let out = run(&["engine", cmd, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd} {}", path.display());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(path.to_str().unwrap()) && err.contains("not a folder"),
            "{err}"
        );
    }
}

#[test]
fn check_denies_a_copy_allows_new_code_and_rejects_bad_input() {
    let dir = messy_project();
    let root = dir.path().to_str().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("copy.rs");
    fs::write(&copy, fixture("near", "rs")).unwrap();
    let fresh = scratch.path().join("fresh.rs");
    fs::write(&fresh, "fn fresh() -> u8 {\n    7\n}\n").unwrap();

    let out = run(&[
        "engine",
        "check",
        root,
        "--file",
        "src/report.rs",
        "--content",
        copy.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "deny");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1), "{v}");
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "copy.near");
    assert_eq!(f["blocks"], true);
    // A near copy: at or over the threshold, and not the 1.0 of an exact one.
    let similarity = f["similarity"].as_f64().unwrap();
    assert!((0.8..1.0).contains(&similarity), "{v}");
    assert!(f["message"].as_str().unwrap().contains("src/orders.rs:1"));
    assert_eq!(f["new"]["file"], "src/report.rs");
    assert_eq!(f["new"]["line"], 1);
    assert_eq!(f["new"]["name"], "summarize_orders");
    assert_eq!(f["existing"]["file"], "src/orders.rs");
    assert_eq!(f["existing"]["line"], 1);
    assert_eq!(
        f["existing"]["signature"],
        "pub fn summarize_orders(orders: &[Order], region: &str) -> Summary"
    );
    assert_eq!(f["existing"]["usages"], 0);

    let out = run(&[
        "engine",
        "check",
        root,
        "--file",
        "src/fresh.rs",
        "--content",
        fresh.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&out),
        json!({"verdict": "allow", "findings": []}),
        "a new function is neither denied nor hinted"
    );

    let missing = scratch.path().join("missing.rs");
    for args in [
        vec![
            "engine",
            "check",
            root,
            "--file",
            "src/x.rs",
            "--content",
            missing.to_str().unwrap(),
        ],
        vec![
            "engine",
            "check",
            root,
            "--file",
            "/elsewhere/x.rs",
            "--content",
            fresh.to_str().unwrap(),
        ],
        vec![
            "engine",
            "check",
            "/no/such/dir",
            "--file",
            "x.rs",
            "--content",
            fresh.to_str().unwrap(),
        ],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn suggest_lists_the_helper_for_a_related_prompt_only() {
    let dir = messy_project();
    let root = dir.path().to_str().unwrap();
    let v = json(&run(&[
        "engine",
        "suggest",
        root,
        "summarize the orders of one region",
        "--json",
    ]));
    let helper = v["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "summarize_orders")
        .unwrap_or_else(|| panic!("summarize_orders is not suggested: {v}"));
    assert_eq!(helper["file"], "src/orders.rs", "{v}");
    assert_eq!(helper["line"], 1, "{v}");
    assert_eq!(
        helper["signature"],
        "pub fn summarize_orders(orders: &[Order], region: &str) -> Summary"
    );
    assert_eq!(helper["usages"], 0, "{v}");
    assert!(helper["score"].as_f64().is_some_and(|s| s > 0.0), "{v}");
    let v = json(&run(&[
        "engine",
        "suggest",
        root,
        "write a poem about autumn leaves",
        "--json",
    ]));
    assert_eq!(v["suggestions"].as_array().unwrap().len(), 0, "{v}");
}

/// `engine suggest --json` on `root` with the installed model: the output and
/// stderr.
fn suggest_with_model(root: &Path) -> (Value, String) {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/minilm");
    let out = Command::new(BIN)
        .args(["engine", "suggest", root.to_str().unwrap()])
        .args(["send the orders to the shop", "--json"])
        .env("SENS_SUGGEST_MODEL", model)
        .output()
        .unwrap();
    (
        json(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The symbol vectors this call embedded, read, and the corrupt files it found.
fn vector_counts(v: &Value) -> (u64, u64, u64) {
    let n = |field: &str| {
        v["vectors"][field]
            .as_u64()
            .unwrap_or_else(|| panic!("{v}"))
    };
    (n("embedded"), n("read"), n("rejected"))
}

/// Every command that suggests keeps the symbol vectors in the project's cache:
/// a second call embeds nothing, a changed file re-embeds only its changed
/// symbol, and a corrupt file is said, rebuilt and never trusted.
#[test]
fn suggest_keeps_the_symbol_vectors_for_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let shop = |doc: &str| {
        format!(
            "def send_order(order, client):\n    \"\"\"{doc}\"\"\"\n    return client.post(order)\n"
        )
    };
    fs::write(root.join("shop.py"), shop("Post one order to the shop.")).unwrap();
    fs::write(
        root.join("batches.py"),
        "def chunked(items, size):\n    \"\"\"Split items into lists of size.\"\"\"\n    return [items[i:i + size] for i in range(0, len(items), size)]\n\n\ndef flatten(lists):\n    \"\"\"Join lists into one.\"\"\"\n    return [x for l in lists for x in l]\n",
    )
    .unwrap();
    let (first, _) = suggest_with_model(root);
    assert_eq!(vector_counts(&first), (3, 0, 0), "{first}");
    let (second, _) = suggest_with_model(root);
    assert_eq!(vector_counts(&second), (0, 3, 0), "{second}");
    assert_eq!(first["suggestions"], second["suggestions"]);
    fs::write(
        root.join("shop.py"),
        shop("Post one order to the shop's API."),
    )
    .unwrap();
    let (changed, _) = suggest_with_model(root);
    assert_eq!(vector_counts(&changed), (1, 3, 0), "{changed}");
    let cache = root.join(".sens/index-cache");
    let file = fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "vec"))
        .expect("a vectors file in the project's index cache");
    let mut bytes = fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    fs::write(&file, bytes).unwrap();
    let (rebuilt, stderr) = suggest_with_model(root);
    assert_eq!(vector_counts(&rebuilt), (3, 0, 1), "{rebuilt}");
    assert!(stderr.contains("is corrupt"), "{stderr}");
    assert_eq!(rebuilt["suggestions"], changed["suggestions"]);
    let (after, _) = suggest_with_model(root);
    assert_eq!(vector_counts(&after), (0, 3, 0), "{after}");
}

/// A project whose `fold` helper is found by its doc comment, and a case file on it.
fn suggest_cases(cases: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("proj")).unwrap();
    fs::write(
        dir.path().join("proj/text.py"),
        "def fold(text):\n    \"\"\"Lower-cases text and strips accents, so that 'Café' and 'cafe' compare equal.\"\"\"\n    return text.lower()\n\ndef cents_of(amount):\n    \"\"\"Parses an amount such as '12,50' into cents.\"\"\"\n    return round(float(amount) * 100)\n",
    )
    .unwrap();
    fs::write(dir.path().join("cases.toml"), cases).unwrap();
    dir
}

#[test]
fn suggest_eval_computes_its_figures_against_the_labels() {
    let dir = suggest_cases(
        r#"
[projects.p]
path = "proj"

[[cases]]
project = "p"
kind = "far"
prompt = "Searching for cafe must find Café too: ignore accents"
expected = ["fold"]

[[cases]]
project = "p"
kind = "near"
prompt = "Searching for cafe must find Café too: ignore accents"
expected = ["cents_of"]
holdout = true

[[cases]]
project = "p"
kind = "none"
prompt = "Write a poem about autumn leaves"
"#,
    );
    let cases = dir.path().join("cases.toml");
    // The words alone (`SENS_SUGGEST_MODEL` empty), whose lists these labels were
    // written for: the model lists `cents_of` after `fold` too.
    let out = Command::new(BIN)
        .args(["engine", "suggest-eval", cases.to_str().unwrap(), "--json"])
        .env("SENS_SUGGEST_MODEL", "")
        .output()
        .unwrap();
    let v = json(&out);
    let all = &v["all"];
    assert_eq!(
        (&all["reuse_cases"], &all["hits"], &all["wrong_lists"]),
        (&json!(2), &json!(1), &json!(1)),
        "{v}"
    );
    assert_eq!(all["mrr"], 0.5, "{v}");
    assert_eq!(
        (&all["none_cases"], &all["empty_lists"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(v["holdout"]["wrong_lists"], 1, "{v}");
    assert_eq!(v["tuning"]["hits"], 1, "{v}");
}

#[test]
fn suggest_eval_names_the_file_and_field_of_a_bad_case() {
    for (cases, field) in [
        (
            "[projects.p]\npath = \"proj\"\n[[cases]]\nproject = \"q\"\nkind = \"far\"\nprompt = \"x\"\nexpected = [\"a\"]\n",
            "project",
        ),
        (
            "[projects.p]\npath = \"proj\"\n[[cases]]\nproject = \"p\"\nkind = \"far\"\nprompt = \"x\"\n",
            "expected",
        ),
        (
            "[projects.p]\npath = \"proj\"\npypi = \"a==1\"\n[[cases]]\nproject = \"p\"\nkind = \"none\"\nprompt = \"x\"\n",
            "exactly one of",
        ),
        (
            "[projects.p]\npath = \"proj\"\n[[cases]]\nproject = \"p\"\nkind = \"sideways\"\nprompt = \"x\"\n",
            "kind",
        ),
    ] {
        let dir = suggest_cases(cases);
        let file = dir.path().join("cases.toml");
        let out = run(&["engine", "suggest-eval", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("cases.toml") && err.contains(field), "{err}");
    }
}

#[test]
fn commands_that_print_exit_quietly_when_the_reader_goes_away() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let dir = messy_project();
    let root = dir.path().to_str().unwrap();
    for args in [
        vec![
            "engine",
            "suggest",
            root,
            "summarize the orders of one region",
        ],
        vec!["engine", "suggest", root, "summarize orders", "--explain"],
        vec!["engine", "index", root],
        vec!["engine", "dupes", root],
    ] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader (`| head -0`) is gone before the first line is printed.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{args:?}: {err}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}",
            out.status
        );
    }
}

#[test]
fn processes_filling_one_index_cache_at_once_leave_every_entry_whole() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sens-engine/src");
    let project = project.to_str().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let index = |cached: bool| {
        let mut command = Command::new(BIN);
        command.args(["engine", "index", project, "--json"]);
        if cached {
            command.args(["--cache", cache]);
        }
        command.stdout(std::process::Stdio::piped());
        command.stderr(std::process::Stdio::piped());
        command.spawn().unwrap()
    };
    let at_once: Vec<_> = (0..3).map(|_| index(true)).collect();
    for child in at_once {
        let v = json(&child.wait_with_output().unwrap());
        // A reader meeting a half-written entry would reject it.
        assert_eq!(v["cache"]["rejected"], 0, "{v}");
        assert_eq!(v["cache"]["unwritten"], 0, "{v}");
    }
    let warm = json(&index(true).wait_with_output().unwrap());
    let cold = json(&index(false).wait_with_output().unwrap());
    assert_eq!(warm["cache"]["hits"], cold["files"], "{warm}");
    assert_eq!(warm["cache"]["misses"], 0, "{warm}");
    assert_eq!(warm["cache"]["rejected"], 0, "{warm}");
    assert_eq!(cold["cache"], Value::Null, "{cold}");
    for key in [
        "files",
        "units",
        "functions",
        "classes",
        "windows",
        "parse_errors",
    ] {
        assert_eq!(warm[key], cold[key], "{key}: {warm} / {cold}");
    }
}

/// The number after `label` on the line that holds it.
fn number_after(text: &str, label: &str) -> f64 {
    let rest = text
        .lines()
        .find_map(|line| line.split_once(label).map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no `{label}` in:\n{text}"));
    let number: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    number
        .parse()
        .unwrap_or_else(|_| panic!("no number after `{label}` in:\n{text}"))
}

#[test]
fn engine_bench_prints_the_ratio_rows_the_readme_quotes() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sens-engine/src");
    let out = run(&[
        "engine",
        "bench",
        project.to_str().unwrap(),
        "--runs",
        "1",
        "--verdict-runs",
        "2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for label in [
        "full index, best of 1: total",
        "warm / cold =",
        "copy lookup: median",
        "copy lookup without the sketch filter: median",
        "with / without =",
        "PreToolUse verdict over",
        "PreToolUse verdict, worst CPU p99 over 2 runs:",
        "engine resident memory:",
        "jscpd, best of 1: wall",
        "engine full index / jscpd =",
    ] {
        let value = number_after(&text, label);
        assert!(value.is_finite() && value >= 0.0, "{label} {value}: {text}");
    }
    // Every file of the warm run came from the cache.
    let warm = text
        .lines()
        .find(|line| line.starts_with("warm full index"))
        .unwrap_or_else(|| panic!("no warm row: {text}"));
    let counts: Vec<&str> = warm
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(" files from the cache"))
        .map(|(counts, _)| counts.split(" of ").collect())
        .unwrap_or_default();
    assert!(counts.len() == 2 && counts[0] == counts[1], "{warm}");
    // One verdict row per run, the worst p99 the largest of theirs.
    let p99s: Vec<f64> = text
        .lines()
        .filter(|line| line.starts_with("PreToolUse verdict over"))
        .map(|line| number_after(line.rsplit_once("CPU").map_or(line, |(_, cpu)| cpu), "p99"))
        .collect();
    assert_eq!(p99s.len(), 2, "{text}");
    let worst = number_after(&text, "worst CPU p99 over 2 runs:");
    assert_eq!(worst, p99s.iter().copied().fold(0.0, f64::max), "{text}");
}

#[test]
fn semble_eval_without_its_corpus_or_with_an_unknown_repository_says_so() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/semble");
    let dir = dir.to_str().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let out = run(&[
        "engine",
        "semble-eval",
        dir,
        "--corpus",
        empty.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no repository to measure"), "{err}");
    assert!(err.contains("scripts/semble-corpus.sh"), "{err}");

    let out = run(&["engine", "semble-eval", dir, "--repo", "nope"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--repo [\"nope\"]") && err.contains("repos.toml"),
        "{err}"
    );
}

/// `sens-bench engine install` is `sens install` run by the harness's binary: the
/// hooks and the MCP server it writes call `sens-bench engine`, and what it tells
/// the person to run names that command.
#[test]
fn engine_install_writes_hooks_calling_sens_bench_engine_and_names_its_commands() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("a.py"), "def a():\n    return 1\n").unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-qm", "start"],
    ] {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
    let root_text = root.to_str().unwrap();
    let out = run(&["engine", "install", root_text]);
    assert!(out.status.success(), "{out:?}");
    let settings: Value =
        serde_json::from_slice(&fs::read(root.join(".claude/settings.json")).unwrap()).unwrap();
    let hook = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let words = shlex::split(hook).unwrap();
    assert_eq!(Path::new(&words[0]), Path::new(BIN).canonicalize().unwrap());
    assert_eq!(words[1..3], ["engine", "hook"], "{hook}");
    let servers: Value =
        serde_json::from_slice(&fs::read(root.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(servers["mcpServers"]["sens"]["args"][0], "engine");
    // Installed with other settings: the message names this binary's uninstall.
    let out = run(&["engine", "install", root_text, "--idle-secs", "5"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`sens-bench engine uninstall "), "{stderr}");
    assert!(run(&["engine", "uninstall", root_text]).status.success());
    assert!(!root.join(".mcp.json").exists());
}
