//! `integrity::hidden_files` lists a task's hidden folder as the project-relative
//! paths `task_needles` takes: every file, sorted, `/`-separated.

use std::path::Path;

use sens_bench::integrity::{hidden_files, task_needles};

fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file has a parent"))
        .expect("the test creates its folders");
    std::fs::write(path, content).expect("the test writes its files");
}

#[test]
fn every_file_in_every_subfolder_sorted() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let hidden = dir.path().join("hidden");
    write(&hidden, "src/conftest.py", "import pytest\n");
    write(&hidden, "hidden_tests/test_x.py", "def test_x(): pass\n");
    write(&hidden, "hidden_tests/a/b/c/deep.rs", "fn main() {}\n");
    write(&hidden, "hidden_tests/Zed.txt", "upper case sorts first\n");
    std::fs::create_dir_all(hidden.join("empty/nested")).expect("empty folders");
    assert_eq!(
        hidden_files(&hidden).expect("the folder is listed"),
        [
            "hidden_tests/Zed.txt",
            "hidden_tests/a/b/c/deep.rs",
            "hidden_tests/test_x.py",
            "src/conftest.py",
        ]
    );
}

#[test]
fn dot_files_and_files_a_gitignore_names_are_listed_too() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let hidden = dir.path().join("hidden");
    write(&hidden, ".gitignore", "*.csv\nhidden_tests/build/\n");
    write(&hidden, ".env", "TZ=UTC\n");
    write(&hidden, "hidden_tests/.gitkeep", "");
    write(&hidden, "hidden_tests/data/input.csv", "a,b\n1,2\n");
    write(&hidden, "hidden_tests/build/fixture.json", "{}\n");
    write(&hidden, ".config/settings.toml", "x = 1\n");
    write(&hidden, "hidden_tests/test_y.py", "def test_y(): pass\n");
    assert_eq!(
        hidden_files(&hidden).expect("the folder is listed"),
        [
            ".config/settings.toml",
            ".env",
            ".gitignore",
            "hidden_tests/.gitkeep",
            "hidden_tests/build/fixture.json",
            "hidden_tests/data/input.csv",
            "hidden_tests/test_y.py",
        ]
    );
}

#[test]
fn the_list_feeds_the_needles() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let hidden = dir.path().join("hidden");
    write(&hidden, "hidden_tests/test_x.py", "");
    let files = hidden_files(&hidden).expect("the folder is listed");
    let needles = task_needles(&["/bench/tasks/py-x".into()], &files);
    assert_eq!(needles, ["/bench/tasks/py-x", "hidden_tests/test_x.py"]);
}

#[test]
fn an_empty_folder_has_no_files() {
    let dir = tempfile::tempdir().expect("a temp folder");
    assert!(
        hidden_files(dir.path())
            .expect("the folder is listed")
            .is_empty()
    );
}

#[test]
fn a_missing_folder_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let missing = dir.path().join("no-such-hidden-folder");
    let err = hidden_files(&missing).expect_err("a missing folder cannot be listed");
    let text = format!("{err:#}");
    assert!(text.contains("no-such-hidden-folder"), "{text}");
}
