//! A task file reached through a path spelled with `.` or `..` segments is
//! integrity evidence, reported as the plain spelling of the same path is.

use sens_bench::integrity::{task_needles, touched_task_files};
use serde_json::{Value, json};

fn needles() -> Vec<String> {
    task_needles(
        &[
            "/srv/bench/tasks/rs-x".into(),
            "/data/checkout/bench/tasks/rs-x".into(),
        ],
        &["hidden_tests/test_x.py".into()],
    )
}

fn call(tool: &str, field: &str, path: &str) -> Vec<Value> {
    let mut input = json!({field: path});
    if tool == "Grep" || tool == "Glob" {
        input["pattern"] = json!("*.py");
    }
    if tool == "Write" {
        input["content"] = json!("x");
    }
    vec![json!({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "toolu_1", "name": tool, "input": input}]}})]
}

/// (tool, field, spelled with dots, the same path spelled plainly)
const REACHED: &[(&str, &str, &str, &str)] = &[
    (
        "Read",
        "file_path",
        "/srv/bench/tasks/./rs-x/reference.patch",
        "/srv/bench/tasks/rs-x/reference.patch",
    ),
    (
        "Read",
        "file_path",
        "/srv/bench/tasks/rs-y/../rs-x/prompt.md",
        "/srv/bench/tasks/rs-x/prompt.md",
    ),
    (
        "Read",
        "file_path",
        "/data/checkout/src/../bench/tasks/rs-x/task.toml",
        "/data/checkout/bench/tasks/rs-x/task.toml",
    ),
    (
        "Write",
        "file_path",
        "/srv/bench/./tasks/rs-x/hidden/notes.txt",
        "/srv/bench/tasks/rs-x/hidden/notes.txt",
    ),
    (
        "Edit",
        "file_path",
        "/tmp/run/hidden_tests/sub/../test_x.py",
        "/tmp/run/hidden_tests/test_x.py",
    ),
    (
        "NotebookEdit",
        "notebook_path",
        "/srv/bench/tasks/rs-y/../../tasks/rs-x/hidden/n.ipynb",
        "/srv/bench/tasks/rs-x/hidden/n.ipynb",
    ),
    (
        "Glob",
        "path",
        "/srv/bench/tasks/rs-y/../rs-x",
        "/srv/bench/tasks/rs-x",
    ),
    (
        "Grep",
        "path",
        "hidden_tests/../hidden_tests/./test_x.py",
        "hidden_tests/test_x.py",
    ),
];

#[test]
fn dotted_paths_are_evidence_like_plain_ones() {
    let needles = needles();
    for &(tool, field, dotted, plain) in REACHED {
        let expected = touched_task_files(&call(tool, field, plain), &needles);
        assert_eq!(expected.len(), 1, "{tool} {plain} is evidence already");
        assert_eq!(
            touched_task_files(&call(tool, field, dotted), &needles),
            expected,
            "{tool} {field}={dotted} reaches {plain}"
        );
    }
}

#[test]
fn dotted_paths_elsewhere_are_not_evidence() {
    let needles = needles();
    for (tool, field, path) in [
        ("Read", "file_path", "/srv/bench/tasks/./rs-y/prompt.md"),
        ("Read", "file_path", "/tmp/run/hidden_tests/../src/lib.rs"),
        ("Grep", "path", "hidden_tests/./other_test.py"),
        ("Glob", "path", "/srv/bench/./tasks"),
        ("Write", "file_path", "/tmp/run/src/./bench.rs"),
    ] {
        let evidence = touched_task_files(&call(tool, field, path), &needles);
        assert!(evidence.is_empty(), "{tool} {path}: {evidence:?}");
    }
}

#[test]
fn several_calls_keep_their_order_and_plain_mentions_still_count() {
    let needles = needles();
    let transcript = vec![
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "cat /srv/bench/tasks/rs-x/reference.patch"}},
            {"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "/tmp/run/src/lib.rs"}},
            {"type": "tool_use", "id": "c", "name": "Read", "input": {"file_path": "/srv/bench/tasks/rs-y/../rs-x/reference.patch"}}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "see hidden_tests/test_x.py"}]}}),
    ];
    let evidence = touched_task_files(&transcript, &needles);
    assert_eq!(evidence.len(), 3, "{evidence:?}");
    assert!(evidence[0].starts_with("tool_use Bash"), "{evidence:?}");
    assert!(evidence[1].starts_with("tool_use Read"), "{evidence:?}");
    assert!(evidence[2].starts_with("tool_result"), "{evidence:?}");
}
