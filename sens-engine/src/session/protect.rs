//! The engine's own paths. An agent that edits them could switch the engine off
//! or rewrite its state (`.sens/`, and its refs under `.git/refs/sens/`), so
//! every tool that writes is checked against them: Write, Edit and NotebookEdit
//! by path, Bash by what the command touches.
//! A path is judged both as spelled and as the file system reaches it
//! ([`resolve`]): a symlink the agent made (`ln -s .sens s`) does not make
//! `s/x` another file than `.sens/x`.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The engine's refs in the project's repository (approved point, checkpoints):
/// protected as its files are, since a new engine resumes from them.
pub const ENGINE_REFS: &str = "refs/sens";

/// What the Canon and the deny reasons call the protected paths.
pub const PROTECTED_DESCRIPTION: &str = "`.sens/`, `.claude/settings*.json` and `.mcp.json`";

/// Collapses `.` and `..` without touching the file system: the path may not exist
/// yet (a write creates it), and a model's spelling `src/../.sens/x` must not hide
/// the target. Relative paths are taken against `cwd`.
pub fn normalize(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Symlinks followed in one path before it counts as a loop (as Linux's limit).
const MAX_LINKS: usize = 40;

/// What `path` (relative paths taken against `cwd`) names on disk: each symlink
/// on the way replaced by its target, `..` taken after the link as the kernel
/// does. The path may not exist yet: a name that does not exist is kept, and a
/// dangling link is followed to where a write would create its file. With
/// `follow_last` false the last name is kept as it is, as `rm` and `mv` treat a
/// link. A link that cannot be read is kept as a name.
pub fn resolve(cwd: &Path, path: &Path, follow_last: bool) -> PathBuf {
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, &cwd.join(path));
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&name);
        let last = pending.is_empty();
        match std::fs::read_link(&next) {
            Ok(target) if links < MAX_LINKS && (follow_last || !last) => {
                links += 1;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            _ => out = next,
        }
    }
    out
}

/// Pushes `path`'s names onto a stack read from its end (the first name last).
fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => stack.push(name.to_os_string()),
            Component::ParentDir => stack.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// Whether writing `path` (as spelled, against `cwd`) would change a protected
/// path, by its spelling, through the symlinks on its way, or as a hard link to
/// one of the project at `root`; returns the protected path it reaches then.
pub fn written_protected(cwd: &Path, path: &Path, root: &Path) -> Option<PathBuf> {
    let spelled = normalize(cwd, path);
    if is_protected(&spelled) {
        return Some(spelled);
    }
    let real = resolve(cwd, path, true);
    if is_protected(&real) {
        return Some(real);
    }
    hard_linked_protected(&real, root)
}

/// When `path` is a file with more than one name, the protected file of the
/// project at `root` among them (its settings, `.mcp.json`, a file under
/// `.sens/`): writing any name of a file writes them all.
fn hard_linked_protected(path: &Path, root: &Path) -> Option<PathBuf> {
    let file = std::fs::metadata(path)
        .ok()
        .filter(|meta| meta.is_file() && meta.nlink() > 1)?;
    let mut candidates = protected_candidates(root);
    files_under(&root.join(".sens"), &mut candidates);
    candidates.into_iter().find(|candidate| {
        std::fs::symlink_metadata(candidate)
            .is_ok_and(|meta| meta.dev() == file.dev() && meta.ino() == file.ino())
    })
}

/// Every file under `dir` (links not followed), appended to `out`.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_under(&entry.path(), out),
            Ok(kind) if kind.is_file() => out.push(entry.path()),
            _ => {}
        }
    }
}

/// Whether a link to `target` would give another name to a protected path: the
/// path itself, or a `.claude` folder (whose settings the name then reaches).
pub fn links_to_protected(target: &Path) -> bool {
    is_protected(target) || target.file_name().is_some_and(|name| name == ".claude")
}

/// Whether `path` (absolute) is a symlink that gives a protected path another
/// name (see [`links_to_protected`]).
pub fn is_link_to_protected(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
        && links_to_protected(&resolve(Path::new("/"), path, true))
}

/// Whether writing `path` (normalized) would change one of the engine's paths.
/// Matched by components anywhere in the path, so a nested project or the user's
/// own `~/.claude/settings.json` count too.
pub fn is_protected(path: &Path) -> bool {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    if names.contains(&".sens") || names.windows(3).any(|w| w == [".git", "refs", "sens"]) {
        return true;
    }
    match names.as_slice() {
        [.., last] if *last == ".mcp.json" => true,
        [.., dir, file] => *dir == ".claude" && is_settings_file(file),
        _ => false,
    }
}

fn is_settings_file(name: &str) -> bool {
    name.starts_with("settings") && name.ends_with(".json")
}

/// Whether removing or moving `path` recursively would take a protected path with
/// it: the path itself, a `.claude` folder, or a folder that holds the project root.
pub fn removal_touches_protected(path: &Path, root: &Path) -> bool {
    is_protected(path)
        || path.file_name().is_some_and(|name| name == ".claude")
        || root.starts_with(path)
}

/// Concrete protected locations in `dir`, for matching shell globs against.
pub fn protected_candidates(dir: &Path) -> Vec<PathBuf> {
    [
        ".sens",
        ".sens/index",
        ".mcp.json",
        ".claude",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ]
    .iter()
    .map(|rel| dir.join(rel))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_match_by_component() {
        for p in [
            "/p/.sens",
            "/p/.sens/index.bin",
            "/p/.mcp.json",
            "/p/.claude/settings.json",
            "/p/.claude/settings.local.json",
            "/home/u/.claude/settings.json",
            "/p/sub/.sens/x",
        ] {
            assert!(is_protected(Path::new(p)), "{p} must be protected");
        }
        for p in [
            "/p/src/sens.rs",
            "/p/.sensible",
            "/p/mcp.json",
            "/p/.claude/agents/a.md",
            "/p/.claude/settings.toml",
            "/p/settings.json",
        ] {
            assert!(!is_protected(Path::new(p)), "{p} must not be protected");
        }
    }

    #[test]
    fn normalize_resolves_dot_dot_lexically() {
        let cwd = Path::new("/p/src");
        assert_eq!(
            normalize(cwd, Path::new("../.sens/x")),
            PathBuf::from("/p/.sens/x")
        );
        assert_eq!(
            normalize(cwd, Path::new("/p/a/./b/../.mcp.json")),
            PathBuf::from("/p/a/.mcp.json")
        );
        assert!(is_protected(&normalize(cwd, Path::new("lib/../../.sens"))));
    }

    #[test]
    fn a_path_is_protected_under_every_link_that_reaches_it() -> std::io::Result<()> {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::create_dir_all(root.join(".claude"))?;
        std::fs::create_dir_all(root.join(".sens/index"))?;
        std::fs::create_dir_all(root.join("src"))?;
        symlink(".claude", root.join("cfg"))?;
        symlink(root.join(".sens"), root.join("s"))?;
        symlink("../.sens/index", root.join("src/deep"))?;
        symlink(".mcp.json", root.join("dangling"))?;
        symlink("settings.json", root.join(".claude/alias.json"))?;
        for path in [
            "cfg/settings.json",
            "s/x",
            "s",
            "src/deep/../state",
            "src/deep/new/file",
            "dangling",
            ".claude/alias.json",
            "./s/../s/y",
        ] {
            assert!(
                written_protected(&root, Path::new(path), &root).is_some(),
                "{path} reaches a protected path"
            );
        }
        for path in ["src/a.py", "cfg/agents/a.md", "new/dir/x", "/tmp/else"] {
            assert_eq!(
                written_protected(&root, Path::new(path), &root),
                None,
                "{path}"
            );
        }
        assert_eq!(
            resolve(&root, Path::new("cfg/settings.json"), true),
            root.join(".claude/settings.json")
        );
        assert_eq!(
            resolve(&root, Path::new("s"), false),
            root.join("s"),
            "a removal takes the link, not its target"
        );
        assert!(is_link_to_protected(&root.join("cfg")));
        std::fs::write(root.join("src/.claude"), "a plain file of that name\n")?;
        assert!(!is_link_to_protected(&root.join("src/.claude")));
        assert!(
            !is_link_to_protected(&root.join(".claude")),
            "the folder itself"
        );
        Ok(())
    }

    #[test]
    fn a_loop_of_links_ends() -> std::io::Result<()> {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir()?;
        symlink("b", dir.path().join("a"))?;
        symlink("a", dir.path().join("b"))?;
        let _ = resolve(dir.path(), Path::new("a/x"), true);
        Ok(())
    }

    #[test]
    fn removal_of_a_parent_counts() {
        let root = Path::new("/p");
        assert!(removal_touches_protected(Path::new("/p/.claude"), root));
        assert!(removal_touches_protected(Path::new("/p"), root));
        assert!(removal_touches_protected(Path::new("/"), root));
        assert!(!removal_touches_protected(Path::new("/p/src"), root));
    }
}
