//! The engine's own paths. An agent that edits them could switch the engine off
//! or rewrite its state (`.sens/`), so every tool that writes is checked against
//! them: Write, Edit and NotebookEdit by path, Bash by what the command touches.

use std::path::{Component, Path, PathBuf};

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
    if names.contains(&".sens") {
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
    fn removal_of_a_parent_counts() {
        let root = Path::new("/p");
        assert!(removal_touches_protected(Path::new("/p/.claude"), root));
        assert!(removal_touches_protected(Path::new("/p"), root));
        assert!(removal_touches_protected(Path::new("/"), root));
        assert!(!removal_touches_protected(Path::new("/p/src"), root));
    }
}
