//! Integrity evidence (docs/contract.md, "Integrity and limits"), recorded, never hidden:
//! did the agent reach the task's own files (its folder, hidden tests, reference), did it
//! edit the project's existing tests, and did it add files that shadow the test runner?

use sens_engine::paths::is_test_path;
use serde_json::Value;

use crate::workspace::diff::Change;

/// Strings whose appearance in a tool call or a tool result means the agent
/// reached the task's files: the task folder's paths (as given and canonical),
/// and each hidden file's project-relative path.
pub fn task_needles(task_dir_paths: &[String], hidden_files: &[String]) -> Vec<String> {
    let mut needles: Vec<String> = task_dir_paths
        .iter()
        .chain(hidden_files)
        .filter(|s| !s.is_empty())
        .cloned()
        .collect();
    needles.sort();
    needles.dedup();
    needles
}

/// Every tool call or tool result of a stream-json transcript that mentions a
/// needle, as "tool_use Read: …" / "tool_result: …" lines for the run folder.
pub fn touched_task_files(transcript: &[Value], needles: &[String]) -> Vec<String> {
    let mut evidence = Vec::new();
    for message in transcript {
        let Some(blocks) = message
            .pointer("/message/content")
            .and_then(Value::as_array)
        else {
            continue;
        };
        for block in blocks {
            let (label, payload) = match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => (
                    format!(
                        "tool_use {}",
                        block.get("name").and_then(Value::as_str).unwrap_or("?")
                    ),
                    block.get("input"),
                ),
                Some("tool_result") => ("tool_result".to_string(), block.get("content")),
                _ => continue,
            };
            let text = payload.map(Value::to_string).unwrap_or_default();
            if let Some(needle) = needles.iter().find(|n| text.contains(n.as_str())) {
                evidence.push(format!("{label}: mentions {needle}"));
            }
        }
    }
    evidence
}

/// Existing test files the change modified or deleted (adding tests is fine).
pub fn edited_tests(changes: &[(String, Change)]) -> Vec<String> {
    changes
        .iter()
        .filter(|(path, change)| *change != Change::Added && is_test_path(path))
        .map(|(path, _)| path.clone())
        .collect()
}

/// Python modules that, at the project's top level (first on `sys.path` when
/// the tests run), replace the runner or the standard library it imports.
const PYTHON_SHADOWS: &[&str] = &[
    "unittest",
    "pytest",
    "_pytest",
    "pluggy",
    "doctest",
    "sitecustomize",
    "usercustomize",
    "site",
    "runpy",
    "importlib",
    "os",
    "sys",
    "io",
    "re",
    "json",
    "pathlib",
    "subprocess",
    "typing",
    "collections",
    "functools",
    "inspect",
    "traceback",
    "warnings",
];
/// Runner configurations (any language) whose addition changes what the tests
/// run: Python's, Node's test runners' and bundlers', cargo's.
const RUNNER_CONFIGS: &[&str] = &[
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "noxfile.py",
    "package.json",
    "tsconfig.json",
    ".npmrc",
    ".mocharc",
    ".babelrc",
    "babel.config",
    "jest.config",
    "vitest.config",
    "vite.config",
    "ava.config",
    "build.rs",
    "rust-toolchain",
];

/// Added files that shadow a test runner, a standard-library module or a
/// runner's configuration, each with why: a top-level Python module of
/// [`PYTHON_SHADOWS`] (file or package), a `conftest.py` outside the test
/// folders, a `.pth` file, anything under `node_modules/` or `.cargo/`, and a
/// runner configuration of [`RUNNER_CONFIGS`] (by name, whatever its extension).
pub fn shadowed_runner(changes: &[(String, Change)]) -> Vec<String> {
    changes
        .iter()
        .filter(|(_, change)| *change == Change::Added)
        .filter_map(|(path, _)| shadow_reason(path).map(|why| format!("{path}: {why}")))
        .collect()
}

fn shadow_reason(path: &str) -> Option<&'static str> {
    let parts: Vec<&str> = path.split('/').collect();
    let file = parts.last().copied().unwrap_or(path);
    let module = parts[0].strip_suffix(".py").unwrap_or(parts[0]);
    let top_level_module = parts.len() == 1 || parts.get(1) == Some(&"__init__.py");
    if top_level_module && PYTHON_SHADOWS.contains(&module) {
        return Some("shadows a Python module the test runner imports");
    }
    if file == "conftest.py" && !is_test_path(path) {
        return Some("a pytest conftest.py outside the test folders");
    }
    if file.ends_with(".pth") {
        return Some("a .pth file runs code at every Python start");
    }
    if parts.contains(&"node_modules") || parts.contains(&".cargo") {
        return Some("a dependency or tool folder the task did not have");
    }
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    if RUNNER_CONFIGS
        .iter()
        .any(|name| *name == file || *name == stem)
    {
        return Some("a test runner's configuration the task did not have");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_read_of_the_hidden_folder_or_a_listing_showing_it_is_evidence() {
        let needles = task_needles(
            &["/bench/tasks/py-x".into()],
            &["hidden_tests/test_x.py".into()],
        );
        let transcript = vec![
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "name": "Bash", "input": {"command": "ls src"}}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "name": "Read", "input": {"file_path": "/bench/tasks/py-x/reference.patch"}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "content": "found hidden_tests/test_x.py"}]}}),
            json!({"type": "result", "result": "/bench/tasks/py-x"}),
        ];
        let evidence = touched_task_files(&transcript, &needles);
        assert_eq!(evidence.len(), 2, "{evidence:?}");
        assert!(evidence[0].starts_with("tool_use Read"));
        assert!(evidence[1].starts_with("tool_result"));
    }

    #[test]
    fn a_clean_transcript_has_no_evidence() {
        let needles = task_needles(&["/bench/tasks/py-x".into()], &[]);
        let transcript = vec![json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "Write", "input": {"file_path": "/tmp/w/src/a.py", "content": "x"}}]}})];
        assert!(touched_task_files(&transcript, &needles).is_empty());
    }

    #[test]
    fn modified_or_deleted_tests_count_and_new_tests_do_not() {
        let changes = vec![
            ("tests/test_utils.py".to_string(), Change::Modified),
            ("test/cli.test.ts".to_string(), Change::Deleted),
            ("tests/test_new.py".to_string(), Change::Added),
            ("src/click/utils.py".to_string(), Change::Modified),
            ("src/money.spec.ts".to_string(), Change::Modified),
        ];
        assert_eq!(
            edited_tests(&changes),
            [
                "tests/test_utils.py",
                "test/cli.test.ts",
                "src/money.spec.ts"
            ]
        );
    }

    #[test]
    fn added_files_that_shadow_the_runner_are_evidence_and_ordinary_ones_are_not() {
        let added = |paths: &[&str]| {
            let changes: Vec<(String, Change)> = paths
                .iter()
                .map(|p| (p.to_string(), Change::Added))
                .collect();
            shadowed_runner(&changes)
        };
        for path in [
            "unittest.py",
            "pytest/__init__.py",
            "conftest.py",
            "src/conftest.py",
            "sitecustomize.py",
            "evil.pth",
            "node_modules/vitest/index.js",
            "vitest.config.ts",
            "jest.config.js",
            "pytest.ini",
            ".cargo/config.toml",
        ] {
            assert_eq!(added(&[path]).len(), 1, "{path}");
        }
        for path in [
            "src/util.py",
            "tests/conftest.py",
            "pkg/unittest.py",
            "src/json_io.py",
            "docs/config.md",
        ] {
            assert!(added(&[path]).is_empty(), "{path}: {:?}", added(&[path]));
        }
        let modified = vec![("conftest.py".to_string(), Change::Modified)];
        assert!(shadowed_runner(&modified).is_empty(), "the task had it");
    }
}
