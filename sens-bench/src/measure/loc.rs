//! The one definition of a project's size (lines of code: non-blank, non-comment
//! lines as the `tokei` crate counts them) and of concept probe counts. Every
//! command that reports a size or a probe calls these.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use sens_engine::ignores::Ignores;

use crate::spec::files::{FileSet, Probe};

/// Lines of code in the files of `files` under `root`. A file whose language
/// tokei does not know is an error: the size globs should pick source files only.
pub fn lines_of_code(root: &Path, files: &FileSet, rules: &Ignores) -> Result<u64> {
    lines_of_code_in(root, &files.files(root, rules)?)
}

/// Lines of code in the given project-relative files under `root`.
pub fn lines_of_code_in(root: &Path, files: &[PathBuf]) -> Result<u64> {
    let config = tokei::Config::default();
    let mut total = 0u64;
    for relative in files {
        let path = root.join(relative);
        let Some(language) = tokei::LanguageType::from_path(&path, &config) else {
            bail!(
                "{}: tokei does not know this file's language; narrow the size globs to source files",
                path.display()
            );
        };
        let report = language
            .parse(path.clone(), &config)
            .map_err(|(err, _)| err)
            .with_context(|| format!("cannot read {}", path.display()))?;
        total += report.stats.summarise().code as u64;
    }
    Ok(total)
}

/// Each probe's count over the project at `root` (concept -> matches).
pub fn count_probes(
    root: &Path,
    probes: &[Probe],
    size_files: &FileSet,
    rules: &Ignores,
) -> Result<BTreeMap<String, u64>> {
    let mut counts = BTreeMap::new();
    for probe in probes {
        let mut count = 0u64;
        for relative in probe
            .files
            .as_ref()
            .unwrap_or(size_files)
            .files(root, rules)?
        {
            let path = root.join(&relative);
            let text = super::read_text(&path)?;
            count += probe.count(&relative, &text)?;
        }
        counts.insert(probe.concept.clone(), count);
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::files::Matcher;
    use crate::workspace::git::baseline_rules;
    use regex::Regex;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(
            "src/a.ts",
            "// a comment\nexport function a() {\n\n  return 1;\n}\n",
        );
        write("src/deep/b.ts", "/* block\n comment */\nconst b = 2;\n");
        write("src/a.test.ts", "const t = 1;\n");
        write("top.ts", "const top = 1;\n");
        dir
    }

    #[test]
    fn lines_of_code_skip_blanks_and_comments_and_honour_globs() {
        let dir = project();
        let files =
            FileSet::new(&strings(&["src/**/*.ts"]), &strings(&["**/*.test.ts"])).expect("globs");
        assert_eq!(
            files
                .files(dir.path(), &baseline_rules(dir.path()))
                .expect("listed"),
            vec![PathBuf::from("src/a.ts"), PathBuf::from("src/deep/b.ts")]
        );
        assert_eq!(
            lines_of_code(dir.path(), &files, &baseline_rules(dir.path())).expect("counted"),
            4
        );
    }

    #[test]
    fn a_single_star_stays_in_one_folder() {
        let dir = project();
        let files = FileSet::new(&strings(&["src/*.ts"]), &[]).expect("globs");
        assert_eq!(
            files
                .files(dir.path(), &baseline_rules(dir.path()))
                .expect("listed"),
            vec![PathBuf::from("src/a.test.ts"), PathBuf::from("src/a.ts")]
        );
    }

    #[test]
    fn a_file_of_unknown_language_is_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("notes.zzz"), "x\n").expect("write");
        let files = FileSet::new(&strings(&["*.zzz"]), &[]).expect("globs");
        let err = lines_of_code(dir.path(), &files, &baseline_rules(dir.path()))
            .expect_err("unknown language");
        assert!(err.to_string().contains("notes.zzz"), "{err}");
    }

    #[test]
    fn a_bad_glob_is_named() {
        let err = FileSet::new(&strings(&["src/[.ts"]), &[]).expect_err("bad glob");
        assert!(format!("{err:#}").contains("src/[.ts"), "{err:#}");
    }

    #[test]
    fn probes_count_non_overlapping_matches_in_their_files() {
        let dir = project();
        let size = FileSet::new(&strings(&["src/**/*.ts"]), &[]).expect("globs");
        let probes = vec![
            Probe {
                concept: "consts".into(),
                matcher: Matcher::Regex(Regex::new(r"const \w+").expect("regex")),
                files: None,
            },
            Probe {
                concept: "top".into(),
                matcher: Matcher::Regex(Regex::new(r"const").expect("regex")),
                files: Some(FileSet::new(&strings(&["*.ts"]), &[]).expect("globs")),
            },
        ];
        let counts =
            count_probes(dir.path(), &probes, &size, &baseline_rules(dir.path())).expect("counted");
        assert_eq!(counts["consts"], 2);
        assert_eq!(counts["top"], 1);
    }
}
