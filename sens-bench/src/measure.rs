//! Measurement of a run (SPEC 3.8). One definition per quantity, used by task
//! runs and sequence steps alike:
//!
//! - `loc_added` / `loc_removed`: lines of code (tokei's code lines: non-blank,
//!   non-comment) among the lines the diff adds / removes, each file read as its
//!   language by its name; files tokei does not know (data, config) hold no code.
//! - `loc_total`: lines of code of the project's size files after the change
//!   (`loc.rs`, the one definition of size).

use std::path::Path;

use crate::grade::FileDiff;

/// Lines of code among the added and removed lines of `files`, by each file's
/// language (from its name, under `root`). Comment lines and blank lines do not
/// count, as in every size the bench reports.
pub fn diff_loc(root: &Path, files: &[FileDiff]) -> (u64, u64) {
    let config = tokei::Config::default();
    let mut added = 0;
    let mut removed = 0;
    for file in files {
        let Some(language) = tokei::LanguageType::from_path(root.join(&file.path), &config) else {
            continue;
        };
        added += language.parse_from_str(&file.added, &config).code as u64;
        removed += language.parse_from_str(&file.removed, &config).code as u64;
    }
    (added, removed)
}

/// The median of `values`; `None` for none.
pub fn median(values: &mut [u64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid] as f64
    } else {
        (values[mid - 1] + values[mid]) as f64 / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrity::Change;

    fn file(path: &str, added: &str, removed: &str) -> FileDiff {
        FileDiff {
            path: path.into(),
            change: Change::Modified,
            added: added.into(),
            removed: removed.into(),
        }
    }

    #[test]
    fn counts_code_lines_only_and_skips_unknown_languages() {
        let files = [
            file(
                "src/a.py",
                "# a comment\n\ndef f():\n    return 1\n",
                "x = 1\n",
            ),
            file("src/b.rs", "// note\nfn g() {}\n", ""),
            file("data.unknownext", "lots\nof\nlines\n", "more\n"),
        ];
        assert_eq!(diff_loc(Path::new("/nonexistent"), &files), (3, 1));
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [5, 1, 3]), Some(3.0));
        assert_eq!(median(&mut [4, 1, 3, 2]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
