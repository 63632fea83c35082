//! What a project path is by convention: a test file, or test fixtures. One
//! definition, used by the rules, the suggestions and any caller that measures a
//! project.

/// Path segments that hold tests' fixtures and test data: copies there never block.
const FIXTURE_DIRS: &[&str] = &[
    "fixtures",
    "fixture",
    "__fixtures__",
    "testdata",
    "test_data",
    "__snapshots__",
];
const TEST_DIRS: &[&str] = &["tests", "test", "__tests__", "spec", "specs"];

pub fn is_fixture_path(path: &str) -> bool {
    path.split('/').any(|seg| FIXTURE_DIRS.contains(&seg))
}

/// Test files by the usual conventions of the supported languages.
pub fn is_test_path(path: &str) -> bool {
    let mut segments: Vec<&str> = path.split('/').collect();
    let file = segments.pop().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    segments.iter().any(|seg| TEST_DIRS.contains(seg))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// Folders of benchmarks (Rust's `benches/`, asv's and others' `benchmarks/`).
const BENCH_DIRS: &[&str] = &["benches", "benchmarks"];

/// A file under a benchmark folder: it measures the project's API, it is not
/// part of it (not a test either: editing one touches no test).
pub fn is_bench_path(path: &str) -> bool {
    in_folder_of(path, BENCH_DIRS)
}

/// Folders of copies built from the source (bundles, transpiled JavaScript).
const BUILD_DIRS: &[&str] = &["dist", "build"];

/// A file under a build output folder: a copy of source found elsewhere.
pub fn is_build_output(path: &str) -> bool {
    in_folder_of(path, BUILD_DIRS)
}

/// Whether a folder of the path (not its file name) is one of `dirs`.
fn in_folder_of(path: &str, dirs: &[&str]) -> bool {
    path.split('/').rev().skip(1).any(|seg| dirs.contains(&seg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_folders() {
        assert!(is_bench_path("benches/bench1.rs"));
        assert!(is_bench_path("asv/benchmarks/suite.py"));
        assert!(!is_bench_path("src/benches.rs"));
        assert!(!is_bench_path("bench/tasks/a.py"));
    }

    #[test]
    fn build_output_folders() {
        assert!(is_build_output("dist/cjs/index.js"));
        assert!(is_build_output("pkg/build/lib.js"));
        assert!(!is_build_output("src/build.rs"));
        assert!(!is_build_output("src/distance.ts"));
    }

    #[test]
    fn test_files_of_every_convention() {
        for path in [
            "tests/cli.rs",
            "src/test/java/AppTest.java",
            "pkg/__tests__/a.ts",
            "spec/models/user_spec.rb",
            "test_core.py",
            "src/click/core_test.py",
            "server/handler_test.go",
            "src/parser_test.rs",
            "web/app.test.ts",
            "web/app.spec.js",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "src/core.py",
            "src/testing.rs",
            "latest/app.ts",
            "contest.go",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }

    #[test]
    fn fixture_folders_anywhere_in_the_path() {
        assert!(is_fixture_path("tests/fixtures/a.py"));
        assert!(is_fixture_path("pkg/testdata/x.go"));
        assert!(!is_fixture_path("src/fixture.rs"));
    }
}
