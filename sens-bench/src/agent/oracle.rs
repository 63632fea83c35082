//! The `oracle` agent: plays a task's reference patch as tool calls, so the whole
//! pipeline (CLI, hooks, grading, records) runs without a model.
//!
//! The post-image of every file is computed by applying the patch with git2 to a
//! scratch tree that holds only the files the patch touches, so a large workspace
//! is never copied. Claude Code refuses to Write over a file it has not Read, so
//! modified files are read first.

use std::path::Path;

use anyhow::Context;
use git2::{Delta, DiffFile, FileMode, Repository};
use serde_json::json;

use super::script::{Block, Script, Turn};

/// Bash's own limit is 2 minutes unless the call asks for more (at most 10).
const TEST_TIMEOUT_MS: u64 = 600_000;
pub const FINAL_TEXT: &str = "Applied the reference solution and ran the project tests.";

/// One file the patch leaves in place, with its content after the patch.
#[derive(Debug, PartialEq)]
struct PostImage {
    path: String,
    content: String,
    executable: bool,
    /// Executable before the patch (a mode the Write tool does not reset).
    was_executable: bool,
    /// It exists before the patch, so the CLI must Read it before the Write.
    existed: bool,
}

/// The oracle's scenario for `patch` (git diff text, paths relative to
/// `workspace`): Read the modified files, Write every created or modified file in
/// full, remove deleted ones and mark executables through Bash, run
/// `test_command` through Bash, then end with a text.
pub fn oracle_script(workspace: &Path, patch: &str, test_command: &str) -> anyhow::Result<Script> {
    let (images, removed) = apply_patch(workspace, patch)?;
    let mut main = Vec::new();
    let reads: Vec<Block> = images
        .iter()
        .filter(|image| image.existed)
        .map(|image| Block::tool("Read", json!({"file_path": image.path})))
        .collect();
    if !reads.is_empty() {
        main.push(Turn::new(reads));
    }
    let writes: Vec<Block> = images
        .iter()
        .map(|image| {
            Block::tool(
                "Write",
                json!({"file_path": image.path, "content": image.content}),
            )
        })
        .collect();
    if !writes.is_empty() {
        main.push(Turn::new(writes));
    }
    let executables: Vec<&str> = images
        .iter()
        .filter(|image| image.executable)
        .map(|image| image.path.as_str())
        .collect();
    let mut commands = Vec::new();
    if !removed.is_empty() {
        commands.push(shell_command("rm --", removed.iter().map(String::as_str))?);
    }
    if !executables.is_empty() {
        commands.push(shell_command("chmod +x --", executables)?);
    }
    let plain: Vec<&str> = images
        .iter()
        .filter(|image| image.was_executable && !image.executable)
        .map(|image| image.path.as_str())
        .collect();
    if !plain.is_empty() {
        commands.push(shell_command("chmod -x --", plain)?);
    }
    if !commands.is_empty() {
        main.push(Turn::new(vec![Block::tool(
            "Bash",
            json!({"command": commands.join(" && "), "description": "Remove deleted files and set modes"}),
        )]));
    }
    main.push(Turn::new(vec![Block::tool(
        "Bash",
        json!({"command": test_command, "description": "Run the project tests", "timeout": TEST_TIMEOUT_MS}),
    )]));
    main.push(Turn::new(vec![Block::text(FINAL_TEXT)]));
    Ok(Script {
        main,
        agent: Vec::new(),
        decisions: Vec::new(),
    })
}

fn shell_command<'a>(
    program: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<String> {
    let quoted =
        shlex::try_join(paths).context("a path in the patch cannot be quoted for the shell")?;
    Ok(format!("{program} {quoted}"))
}

/// The git mode of a workspace file: a patch without `index` or mode lines
/// (which `git apply` accepts) leaves the mode to the file on disk.
fn workspace_mode(workspace: &Path, path: &str) -> anyhow::Result<FileMode> {
    use std::os::unix::fs::PermissionsExt;
    let full = workspace.join(path);
    let meta = std::fs::symlink_metadata(&full).with_context(|| {
        format!(
            "the reference patch changes {path}, which cannot be read in {}",
            workspace.display()
        )
    })?;
    Ok(if meta.file_type().is_symlink() {
        FileMode::Link
    } else if meta.permissions().mode() & 0o111 != 0 {
        FileMode::BlobExecutable
    } else {
        FileMode::Blob
    })
}

fn delta_path(file: &DiffFile<'_>) -> anyhow::Result<String> {
    let path = file.path().context("a file in the patch has no path")?;
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("the path {} is not UTF-8", path.display()))
}

/// Applies the patch to a scratch tree of the touched files; returns the files
/// it leaves (with their new content) and the paths it removes.
fn apply_patch(workspace: &Path, patch: &str) -> anyhow::Result<(Vec<PostImage>, Vec<String>)> {
    let diff = git2::Diff::from_buffer(patch.as_bytes())
        .context("the reference patch is not a git diff")?;
    let scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
    let repo =
        Repository::init_bare(scratch.path()).context("cannot create a scratch repository")?;
    let empty = repo.treebuilder(None)?.write()?;
    let mut pre = git2::build::TreeUpdateBuilder::new();
    let mut removed = Vec::new();
    let mut kept: Vec<(String, bool, bool)> = Vec::new();
    for delta in diff.deltas() {
        let (old, new) = (delta.old_file(), delta.new_file());
        // The mode a patch states, else the workspace file's.
        let old_mode = match old.mode() {
            FileMode::Unreadable if delta.status() != Delta::Added => {
                workspace_mode(workspace, &delta_path(&old)?)?
            }
            mode => mode,
        };
        match delta.status() {
            Delta::Added => {
                let path = delta_path(&new)?;
                anyhow::ensure!(
                    !workspace.join(&path).exists(),
                    "the reference patch creates {path}, which already exists in {}",
                    workspace.display()
                );
            }
            Delta::Modified | Delta::Deleted | Delta::Renamed | Delta::Copied => {
                let path = delta_path(&old)?;
                let bytes = std::fs::read(workspace.join(&path)).with_context(|| {
                    format!(
                        "the reference patch changes {path}, which cannot be read in {}",
                        workspace.display()
                    )
                })?;
                pre.upsert(path.as_str(), repo.blob(&bytes)?, old_mode);
            }
            other => anyhow::bail!("the reference patch has an unsupported change ({other:?})"),
        }
        if matches!(delta.status(), Delta::Deleted | Delta::Renamed) {
            removed.push(delta_path(&old)?);
        }
        if delta.status() != Delta::Deleted {
            let path = delta_path(&new)?;
            let was = delta.status() != Delta::Added && old_mode == FileMode::BlobExecutable;
            // Without mode lines `git apply` keeps the mode the file had.
            let executable = match new.mode() {
                FileMode::Unreadable => was,
                mode => mode == FileMode::BlobExecutable,
            };
            kept.push((path, executable, was));
        }
    }
    let pre_tree = repo.find_tree(pre.create_updated(&repo, &repo.find_tree(empty)?)?)?;
    let index = repo
        .apply_to_tree(&pre_tree, &diff, None)
        .context("the reference patch does not apply to the workspace's files")?;
    let images = kept
        .into_iter()
        .map(|(path, executable, was_executable)| {
            let entry = index
                .get_path(Path::new(&path), 0)
                .with_context(|| format!("applying the patch left no {path}"))?;
            let blob = repo.find_blob(entry.id)?;
            let content = String::from_utf8(blob.content().to_vec()).with_context(|| {
                format!("{path} is not UTF-8 text after the patch: the Write tool cannot create it")
            })?;
            let existed = workspace.join(&path).exists();
            Ok(PostImage {
                path,
                content,
                executable,
                was_executable,
                existed,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((images, removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "\
diff --git a/keep.txt b/keep.txt
old mode 100755
new mode 100644
index 3b18e51..8c7e5a6
--- a/keep.txt
+++ b/keep.txt
@@ -1,2 +1,2 @@
 one
-two
+TWO
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 5626abf..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/src/new.sh b/src/new.sh
new file mode 100755
index 0000000..e69de29
--- /dev/null
+++ b/src/new.sh
@@ -0,0 +1 @@
+echo hi
";

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        dir
    }

    #[test]
    fn post_images_and_removals_follow_the_patch() {
        let dir = workspace();
        let (images, removed) = apply_patch(dir.path(), PATCH).unwrap();
        assert_eq!(
            images,
            vec![
                PostImage {
                    path: "keep.txt".into(),
                    content: "one\nTWO\n".into(),
                    executable: false,
                    was_executable: true,
                    existed: true
                },
                PostImage {
                    path: "src/new.sh".into(),
                    content: "echo hi\n".into(),
                    executable: true,
                    was_executable: false,
                    existed: false
                },
            ]
        );
        assert_eq!(removed, ["gone.txt"]);
    }

    #[test]
    fn script_reads_writes_removes_tests_and_ends() {
        let dir = workspace();
        let script = oracle_script(dir.path(), PATCH, "make test").unwrap();
        let names: Vec<Vec<&str>> = script
            .main
            .iter()
            .map(|turn| {
                turn.blocks
                    .iter()
                    .map(|b| match b {
                        Block::ToolUse { name, .. } => name.as_str(),
                        Block::Text { .. } => "text",
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            names,
            [
                vec!["Read"],
                vec!["Write", "Write"],
                vec!["Bash"],
                vec!["Bash"],
                vec!["text"]
            ]
        );
        let Block::ToolUse { input, .. } = &script.main[2].blocks[0] else {
            panic!("not a tool");
        };
        assert_eq!(
            input["command"],
            "rm -- gone.txt && chmod +x -- src/new.sh && chmod -x -- keep.txt"
        );
        let Block::ToolUse { input, .. } = &script.main[3].blocks[0] else {
            panic!("not a tool");
        };
        assert_eq!(input["command"], "make test");
    }

    #[test]
    fn a_change_without_mode_lines_keeps_the_modes_of_the_workspace() {
        use std::os::unix::fs::PermissionsExt;
        let dir = workspace();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "echo 1\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        // What `git apply` accepts: no `index` lines, so no modes.
        let patch = "diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n\
                     -echo 1\n+echo 2\ndiff --git a/keep.txt b/keep.txt\n--- a/keep.txt\n\
                     +++ b/keep.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
        let (images, removed) = apply_patch(dir.path(), patch).unwrap();
        let mut modes: Vec<(&str, &str, bool, bool)> = images
            .iter()
            .map(|i| {
                let path = i.path.as_str();
                (path, i.content.as_str(), i.executable, i.was_executable)
            })
            .collect();
        modes.sort();
        assert_eq!(
            modes,
            [
                ("keep.txt", "one\nTWO\n", false, false),
                ("run.sh", "echo 2\n", true, true)
            ]
        );
        assert!(removed.is_empty());
    }

    #[test]
    fn a_patch_that_does_not_apply_is_a_clear_error() {
        let dir = workspace();
        std::fs::write(dir.path().join("keep.txt"), "other\n").unwrap();
        let err = oracle_script(dir.path(), PATCH, "true").unwrap_err();
        assert!(format!("{err:#}").contains("does not apply"), "{err:#}");
        std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
        let err = oracle_script(dir.path(), PATCH, "true").unwrap_err();
        assert!(format!("{err:#}").contains("gone.txt"), "{err:#}");
        let err = oracle_script(dir.path(), "not a diff", "true").unwrap_err();
        assert!(format!("{err:#}").contains("not a git diff"), "{err:#}");
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/new.sh"), "").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        let err = oracle_script(dir.path(), PATCH, "true").unwrap_err();
        assert!(
            format!("{err:#}").contains("creates src/new.sh, which already exists"),
            "{err:#}"
        );
    }
}
