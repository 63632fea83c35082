//! What a Bash command would do, as far as the engine cares: does it end the
//! turn (`git commit`, `git push`), and does it write one of the engine's own
//! paths? The command is split into simple commands by a small quote-aware lexer
//! ([`lexer`]); each simple command's words come from `shlex`. This stops a model's shortcuts, not a hostile program: a
//! script file or an interpreter that writes a path is not seen here (PostToolUse
//! and the Stop audit still see what it changed).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use globset::GlobBuilder;

mod lexer;

pub use lexer::split_commands;

use super::protect::{
    ENGINE_REFS, is_protected, links_to_protected, normalize, protected_candidates,
    removal_touches_protected, resolve, written_protected,
};

/// The git subcommands that end a turn: they publish the change.
const TURN_ENDING_GIT: &[&str] = &["commit", "push"];

/// Words that may precede a command without being it.
const RESERVED: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// Commands that run their arguments as another command.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout",
    "stdbuf", "setsid", "xargs",
];

/// A wrapper's options that take the next word as their value.
fn wrapper_value_options(wrapper: &str) -> &'static [&'static str] {
    match wrapper {
        "sudo" | "doas" => &["-u", "-g", "-C", "-h", "-p"],
        "env" => &["-u", "-C", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "xargs" => &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"],
        _ => &[],
    }
}

/// git's global options that take the next word as their value.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
];

/// Commands that change every path they name.
const WRITES_EVERY_ARG: &[&str] = &[
    "rm", "rmdir", "unlink", "shred", "touch", "truncate", "tee", "mkdir", "chmod", "chown",
    "chgrp", "mv",
];

/// Commands whose last path argument is the one written.
const WRITES_LAST_ARG: &[&str] = &["cp", "ln", "install", "rsync", "scp"];

/// Commands that change the files they name only with an in-place option.
const WRITES_IN_PLACE: &[&str] = &["sed", "perl", "ruby"];

/// git subcommands that overwrite or remove the paths they name.
const GIT_PATH_WRITERS: &[&str] = &["rm", "mv", "checkout", "restore"];

/// git subcommands that write the refs they name (a refspec's destination too).
const GIT_REF_WRITERS: &[&str] = &[
    "update-ref",
    "symbolic-ref",
    "fetch",
    "pull",
    "push",
    "replace",
];

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

/// What the engine found in one Bash command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ShellAnalysis {
    /// Each simple command that ends the turn, as `git <subcommand>` words.
    pub turn_ending: Vec<String>,
    /// Protected paths the command would write, remove or move.
    pub protected_writes: Vec<PathBuf>,
}

/// Analyzes `command` as Bash would run it in `cwd`, for the project at `root`.
/// Fails only when the command cannot be split (unbalanced quotes or
/// substitutions), which Bash would reject as well.
pub fn analyze(command: &str, cwd: &Path, root: &Path) -> anyhow::Result<ShellAnalysis> {
    let mut analysis = ShellAnalysis::default();
    let mut cwd = cwd.to_path_buf();
    analyze_into(command, &mut cwd, root, &mut analysis, 0)?;
    Ok(analysis)
}

/// Nesting limit for `bash -c`, `eval` and substitutions within each other.
const MAX_DEPTH: usize = 8;

fn analyze_into(
    script: &str,
    cwd: &mut PathBuf,
    root: &Path,
    out: &mut ShellAnalysis,
    depth: usize,
) -> anyhow::Result<()> {
    if depth > MAX_DEPTH {
        bail!("commands nested more than {MAX_DEPTH} levels deep (bash -c, eval, $(...))");
    }
    for segment in split_commands(script)? {
        let words = shlex::split(&segment)
            .with_context(|| format!("unbalanced quotes in `{}`", segment.trim()))?;
        analyze_simple(&words, cwd, root, out, depth)?;
    }
    Ok(())
}

fn analyze_simple(
    words: &[String],
    cwd: &mut PathBuf,
    root: &Path,
    out: &mut ShellAnalysis,
    depth: usize,
) -> anyhow::Result<()> {
    let (args, redirect_targets) = take_redirections(words);
    for target in redirect_targets {
        record_writes(&target, cwd, root, false, out);
    }
    let args = strip_prefixes(&args);
    let Some((name, rest)) = args.split_first() else {
        return Ok(());
    };
    let name = command_name(name);
    match name {
        "cd" | "pushd" => {
            if let Some(dir) = rest.iter().find(|a| !a.starts_with('-')) {
                *cwd = normalize(cwd, Path::new(dir));
            }
        }
        "git" => analyze_git(rest, cwd, root, out),
        "eval" => analyze_into(&rest.join(" "), cwd, root, out, depth + 1)?,
        "dd" => {
            for arg in rest {
                if let Some(path) = arg.strip_prefix("of=") {
                    record_writes(path, cwd, root, false, out);
                }
            }
        }
        _ if SHELLS.contains(&name) => {
            if let Some(script) = shell_script_arg(rest) {
                let mut inner_cwd = cwd.clone();
                analyze_into(script, &mut inner_cwd, root, out, depth + 1)?;
            }
        }
        _ if WRITES_EVERY_ARG.contains(&name) => {
            let removal = matches!(name, "rm" | "rmdir" | "unlink" | "shred" | "mv");
            for path in path_args(rest) {
                record_writes(path, cwd, root, removal, out);
            }
        }
        _ if WRITES_LAST_ARG.contains(&name) => {
            if let Some(dest) = destination_arg(rest) {
                record_writes(dest, cwd, root, false, out);
            }
            if name == "ln" {
                let symbolic =
                    has_short_flag(rest, &['s']) || rest.iter().any(|a| a == "--symbolic");
                record_links(rest, cwd, symbolic, out);
            } else if name == "cp"
                && (has_short_flag(rest, &['l', 's'])
                    || rest.iter().any(|a| a == "--link" || a == "--symbolic-link"))
            {
                // cp takes a symbolic link's target as written, against its folder
                // only in the current one: read every source against the cwd.
                record_links(rest, cwd, false, out);
            }
        }
        _ if WRITES_IN_PLACE.contains(&name) && has_in_place_option(rest) => {
            for path in path_args(rest) {
                record_writes(path, cwd, root, false, out);
            }
        }
        _ => {}
    }
    Ok(())
}

fn analyze_git(args: &[String], cwd: &Path, root: &Path, out: &mut ShellAnalysis) {
    let Some((sub, sub_args)) = git_subcommand(args) else {
        return;
    };
    if TURN_ENDING_GIT.contains(&sub) {
        out.turn_ending.push(format!("git {sub}"));
    }
    if GIT_PATH_WRITERS.contains(&sub) {
        for path in path_args(sub_args) {
            record_writes(path, cwd, root, sub == "rm" || sub == "mv", out);
        }
    }
    if GIT_REF_WRITERS.contains(&sub) {
        // The approved point and checkpoints: a forged one would be resumed.
        for arg in sub_args.iter().filter(|a| a.contains(ENGINE_REFS)) {
            let named = PathBuf::from(arg);
            if !out.protected_writes.contains(&named) {
                out.protected_writes.push(named);
            }
        }
    }
    let engine_dir = root.join(".sens");
    if removes_untracked(sub, sub_args) && engine_dir.exists() {
        out.protected_writes.push(engine_dir);
    }
}

/// `git clean -d/-x/-X` and `git stash -u/-a` remove untracked folders such as
/// `.sens/`.
fn removes_untracked(sub: &str, args: &[String]) -> bool {
    match sub {
        "clean" => has_short_flag(args, &['d', 'x', 'X']),
        "stash" => {
            has_short_flag(args, &['u', 'a'])
                || args
                    .iter()
                    .any(|a| a == "--include-untracked" || a == "--all")
        }
        _ => false,
    }
}

/// The subcommand after git's global options, and its arguments.
pub fn git_subcommand(args: &[String]) -> Option<(&str, &[String])> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if GIT_VALUE_OPTIONS.contains(&arg) {
            i += 2;
        } else if arg.starts_with('-') {
            i += 1;
        } else {
            return Some((arg, &args[i + 1..]));
        }
    }
    None
}

/// The basename of a command word: `/usr/bin/git` runs git.
fn command_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Drops reserved words, variable assignments and wrapper commands (with their
/// options) in front of the command that actually runs.
fn strip_prefixes(words: &[String]) -> Vec<String> {
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        if RESERVED.contains(&word) || is_assignment(word) {
            i += 1;
        } else if WRAPPERS.contains(&command_name(word)) {
            let wrapper = command_name(word);
            i += 1;
            while i < words.len() {
                let arg = words[i].as_str();
                if wrapper_value_options(wrapper).contains(&arg) {
                    i += 2;
                } else if arg.starts_with('-') || is_assignment(arg) {
                    i += 1;
                } else if wrapper == "timeout" && arg.starts_with(|c: char| c.is_ascii_digit()) {
                    // the duration comes before the command
                    i += 1;
                    break;
                } else {
                    break;
                }
            }
        } else {
            break;
        }
    }
    words[i.min(words.len())..].to_vec()
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The script of `bash -c SCRIPT` (also `-lc`, `-ec`, `-c` after other options).
fn shell_script_arg(args: &[String]) -> Option<&str> {
    let mut saw_c = false;
    for arg in args {
        if arg.starts_with('-') && !arg.starts_with("--") {
            saw_c |= arg.contains('c');
        } else if arg.starts_with("--") {
            continue;
        } else if saw_c {
            return Some(arg);
        } else {
            return None;
        }
    }
    None
}

/// Arguments that name paths: everything but options, and everything after `--`.
fn path_args(args: &[String]) -> Vec<&str> {
    let mut paths = Vec::new();
    let mut options_done = false;
    for arg in args {
        if !options_done && arg == "--" {
            options_done = true;
        } else if options_done || !arg.starts_with('-') {
            paths.push(arg.as_str());
        }
    }
    paths
}

/// The written path of `cp`-like commands: `-t DIR`/`--target-directory=DIR`, else
/// the last path argument.
fn destination_arg(args: &[String]) -> Option<&str> {
    for (i, arg) in args.iter().enumerate() {
        if arg == "-t" {
            return args.get(i + 1).map(String::as_str);
        }
        if let Some(dir) = arg.strip_prefix("--target-directory=") {
            return Some(dir);
        }
    }
    path_args(args).last().copied()
}

fn has_in_place_option(args: &[String]) -> bool {
    has_short_flag(args, &['i']) || args.iter().any(|a| a.starts_with("--in-place"))
}

/// Whether a group of short options (`-rf`) holds one of `letters`.
fn has_short_flag(args: &[String], letters: &[char]) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letters))
}

/// Records `path` if writing it (or, for `removal`, removing it) touches a
/// protected path, as spelled or through the links on its way (a removal takes
/// a link itself, not its target). Globs are matched against the protected
/// locations they could expand to, in the folder their literal part reaches.
fn record_writes(path: &str, cwd: &Path, root: &Path, removal: bool, out: &mut ShellAnalysis) {
    let spelled = normalize(cwd, Path::new(path));
    let touches =
        |path: &Path| is_protected(path) || (removal && removal_touches_protected(path, root));
    let hit = if is_glob(path) {
        let literal = literal_parent(&spelled);
        let real = resolve(cwd, literal, true);
        let real_pattern = real.join(spelled.strip_prefix(literal).unwrap_or(Path::new("")));
        is_protected(&real)
            || [&spelled, &real_pattern]
                .iter()
                .any(|pattern| glob_hits_protected(pattern, cwd, root, removal))
    } else if removal {
        touches(&spelled) || touches(&resolve(cwd, Path::new(path), false))
    } else {
        written_protected(cwd, Path::new(path), root).is_some()
    };
    if hit && !out.protected_writes.contains(&spelled) {
        out.protected_writes.push(spelled);
    }
}

fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The folders of `pattern` before its first glob component.
fn literal_parent(pattern: &Path) -> &Path {
    pattern
        .ancestors()
        .skip(1)
        .find(|dir| !is_glob(&dir.to_string_lossy()))
        .unwrap_or(Path::new("/"))
}

/// Records the links a `ln` (or a `cp` that links) would make to a protected
/// path: each source, read as the link will read it (a symbolic link's target
/// against the link's folder, unless `-r`), that reaches one.
fn record_links(args: &[String], cwd: &Path, symbolic: bool, out: &mut ShellAnalysis) {
    let Some(dest) = destination_arg(args) else {
        return;
    };
    let dest_path = normalize(cwd, Path::new(dest));
    let into_dir = args
        .iter()
        .any(|a| a == "-t" || a.starts_with("--target-directory"))
        || resolve(cwd, Path::new(dest), true).is_dir();
    let link_dir = match dest_path.parent() {
        Some(parent) if !into_dir => parent.to_path_buf(),
        _ => dest_path.clone(),
    };
    let relative = has_short_flag(args, &['r']) || args.iter().any(|a| a == "--relative");
    let base = if symbolic && !relative {
        &link_dir
    } else {
        cwd
    };
    for source in path_args(args).into_iter().filter(|arg| *arg != dest) {
        let spelled = normalize(base, Path::new(source));
        let reaches = links_to_protected(&spelled)
            || links_to_protected(&resolve(base, Path::new(source), true));
        if reaches && !out.protected_writes.contains(&spelled) {
            out.protected_writes.push(spelled);
        }
    }
}

fn glob_hits_protected(pattern: &Path, cwd: &Path, root: &Path, removal: bool) -> bool {
    let Some(text) = pattern.to_str() else {
        return false;
    };
    // A pattern globset cannot read is not a glob Bash would expand either.
    let Ok(glob) = GlobBuilder::new(text).literal_separator(true).build() else {
        return false;
    };
    let matcher = glob.compile_matcher();
    let mut dirs = vec![cwd.to_path_buf(), root.to_path_buf()];
    if let Some(parent) = pattern
        .parent()
        .filter(|p| !p.to_string_lossy().contains(['*', '?', '[']))
    {
        dirs.push(parent.to_path_buf());
    }
    dirs.iter()
        .flat_map(|dir| protected_candidates(dir))
        .filter(|candidate| matcher.is_match(candidate) && dot_names_spelled(pattern, candidate))
        .any(|candidate| {
            is_protected(&candidate) || (removal && removal_touches_protected(&candidate, root))
        })
}

/// Bash globs do not match names that start with a dot unless the pattern's
/// component starts with one too (`rm -rf *` spares `.sens`, `rm -rf .*` does not).
fn dot_names_spelled(pattern: &Path, candidate: &Path) -> bool {
    let pattern: Vec<_> = pattern.components().collect();
    let candidate: Vec<_> = candidate.components().collect();
    if pattern.len() != candidate.len() {
        // `**` spans folders: stay cautious.
        return true;
    }
    let dotted = |c: &std::path::Component<'_>| c.as_os_str().to_string_lossy().starts_with('.');
    pattern
        .iter()
        .zip(&candidate)
        .all(|(p, c)| !dotted(c) || dotted(p))
}

/// Splits redirections off a simple command's words: the remaining words, and the
/// files written by output redirections (`>f`, `> f`, `>>f`, `2>f`, `&>f`, `>|f`).
fn take_redirections(words: &[String]) -> (Vec<String>, Vec<String>) {
    let mut args = Vec::new();
    let mut targets = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        match parse_redirection(word) {
            Some((writes, attached)) => {
                let target = if attached.is_empty() {
                    i += 1;
                    words.get(i).cloned()
                } else {
                    Some(attached.to_string())
                };
                if let Some(target) = target.filter(|_| writes) {
                    targets.push(target);
                }
            }
            None => args.push(word.clone()),
        }
        i += 1;
    }
    (args, targets)
}

/// `Some((writes_a_file, attached_target))` when `word` starts a redirection.
fn parse_redirection(word: &str) -> Option<(bool, &str)> {
    let rest = word.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest
        .strip_prefix('&')
        .map_or(rest, |r| if r.starts_with('>') { r } else { rest });
    if let Some(input) = rest.strip_prefix('<') {
        let target = input.trim_start_matches(['<', '&']);
        return Some((false, target));
    }
    let output = rest.strip_prefix('>')?;
    let output = output
        .strip_prefix('>')
        .or_else(|| output.strip_prefix('|'))
        .unwrap_or(output);
    if let Some(dup) = output.strip_prefix('&') {
        // `>&2` duplicates a descriptor; `>&file` writes a file.
        let is_fd = dup.is_empty() || dup == "-" || dup.chars().all(|c| c.is_ascii_digit());
        return Some((!is_fd, if is_fd { "-" } else { dup }));
    }
    Some((true, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str) -> ShellAnalysis {
        analyze(command, Path::new("/p/src"), Path::new("/p"))
            .unwrap_or_else(|e| panic!("`{command}` failed: {e:#}"))
    }

    #[test]
    fn git_commit_and_push_in_every_spelling() {
        for command in [
            "git commit -m x",
            "git commit",
            "git push origin main",
            "git -C /p commit -am wip",
            "git -c user.name=x -c user.email=y commit -m m",
            "git --git-dir=/p/.git --work-tree /p commit",
            "git --no-pager commit",
            "/usr/bin/git commit",
            "cargo test && git commit -m ok",
            "false || git commit -m ok",
            "make; git push",
            "echo hi | git commit -F -",
            "cd .. && git commit -m x",
            "bash -c 'git commit -m x'",
            "sh -lc \"git add . && git commit -m 'a b'\"",
            "GIT_AUTHOR_NAME=a GIT_COMMITTER_NAME=b git commit -m x",
            "env GIT_EDITOR=true git commit",
            "sudo -u me git push",
            "timeout 10 git push",
            "nohup git push &",
            "(cd sub && git commit -m x)",
            "if true; then git commit -m x; fi",
            "echo $(git commit -m x)",
            "x=`git push`",
            "eval 'git commit -m x'",
            "git add -A\ngit commit -m x",
            "{ git commit -m x; }",
        ] {
            let found = run(command).turn_ending;
            assert!(
                !found.is_empty(),
                "`{command}` must count as a commit or push"
            );
        }
    }

    #[test]
    fn mentions_of_commit_do_not_count() {
        for command in [
            "echo \"git commit\"",
            "echo 'git push'",
            "git log --grep commit",
            "git log --grep=push",
            "git show HEAD -- commit.rs",
            "git commit-tree abc",
            "git help commit",
            "grep -r 'git commit' .",
            "printf '%s\\n' git commit",
            "cat <<EOF\ngit commit -m x\nEOF\necho done",
            "# git commit\nls",
            "git status",
            "git diff --stat",
            "ls commit push",
        ] {
            assert_eq!(
                run(command).turn_ending,
                Vec::<String>::new(),
                "`{command}` must not count"
            );
        }
    }

    #[test]
    fn writes_to_protected_paths_are_found() {
        for command in [
            "echo x > /p/.sens/state",
            "echo x >> ../.mcp.json",
            "echo '{}' >../.claude/settings.json",
            "cd .. && echo x > .mcp.json",
            "cd /p/.claude && echo '{}' > settings.local.json",
            "printf x | tee ../.sens/a",
            "tee -a /p/.mcp.json < x",
            "cp /tmp/s.json /p/.claude/settings.json",
            "cp -t /p/.sens x y",
            "mv ../.sens /tmp/gone",
            "rm -rf /p/.sens",
            "rm -rf ../.claude",
            "rm -f ../.s*",
            "rm ../.*",
            "sed -i 's/a/b/' /p/.mcp.json",
            "sed -i.bak -e s/a/b/ ../.claude/settings.json",
            "perl -pi -e 's/a/b/' /p/.mcp.json",
            "touch ../.sens/x",
            "truncate -s 0 /p/.mcp.json",
            "dd if=/dev/zero of=/p/.mcp.json",
            "bash -c 'cat > /p/.mcp.json'",
            "true && cat x 2>/p/.sens/log",
            "cat x &>/p/.sens/log",
            "git checkout -- /p/.mcp.json",
            "cd /p && rm -rf .",
            "ln -sf /tmp/x /p/.mcp.json",
            "echo x > \"/p/.claude/settings.json\"",
            "cat <<'EOF' > /p/.mcp.json\n{}\nEOF",
            "rm /p/.claude/*",
            "cd /p && rm -rf .[a-z]*",
        ] {
            assert!(
                !run(command).protected_writes.is_empty(),
                "`{command}` writes a protected path"
            );
        }
    }

    #[test]
    fn reads_and_other_writes_are_not_protected_writes() {
        for command in [
            "cat /p/.mcp.json",
            "cp /p/.mcp.json /tmp/copy.json",
            "grep x ../.sens/index",
            "ls -la /p/.claude",
            "echo x > /p/src/main.rs",
            "rm -rf target",
            "sed 's/a/b/' /p/.mcp.json",
            "cat x 2>&1 | head",
            "cmd >&2",
            "echo '.sens' > notes.txt",
            "diff <(cat a) b",
            "rm -rf *",
            "rm -f ../*.json",
            "git clean -n",
            "git stash",
        ] {
            assert_eq!(
                run(command).protected_writes,
                Vec::<PathBuf>::new(),
                "`{command}` does not write a protected path"
            );
        }
    }

    #[test]
    fn removing_untracked_folders_touches_the_engine_folder_when_it_exists() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        let removes = |command: &str| -> anyhow::Result<bool> {
            Ok(!analyze(command, root, root)?.protected_writes.is_empty())
        };
        assert!(!removes("git clean -fdx")?, "no .sens folder yet");
        std::fs::create_dir_all(root.join(".sens"))?;
        for command in [
            "git clean -fd",
            "git clean -fX",
            "git stash -u",
            "git stash push --all",
        ] {
            assert!(removes(command)?, "`{command}` removes .sens/");
        }
        for command in ["git clean -n", "git stash", "git stash pop", "git clean -f"] {
            assert!(!removes(command)?, "`{command}` leaves .sens/");
        }
        Ok(())
    }

    #[test]
    fn the_engines_refs_are_protected_and_readable() {
        for command in [
            "git update-ref refs/sens/approved HEAD",
            "git update-ref -d refs/sens/approved",
            "git -C /p update-ref refs/sens/checkpoints/9 HEAD",
            "git fetch . HEAD:refs/sens/approved",
            "git symbolic-ref refs/sens/approved refs/heads/main",
            "git push . HEAD:refs/sens/approved",
            "echo 0000 > /p/.git/refs/sens/approved",
            "cd /p/.git && rm -rf refs/sens",
        ] {
            assert!(
                !run(command).protected_writes.is_empty(),
                "`{command}` changes the engine's refs"
            );
        }
        for command in [
            "git log refs/sens/approved",
            "git show refs/sens/approved:src/a.py",
            "git update-ref refs/heads/topic HEAD",
            "git fetch origin",
        ] {
            assert_eq!(
                run(command).protected_writes,
                Vec::<PathBuf>::new(),
                "`{command}` leaves the engine's refs"
            );
        }
    }

    #[test]
    fn cd_is_followed_between_commands() {
        let found = run("cd /p && cd .sens; rm index").protected_writes;
        assert_eq!(found, vec![PathBuf::from("/p/.sens/index")]);
    }

    #[test]
    fn unbalanced_quotes_fail() {
        assert!(analyze("echo 'x", Path::new("/p"), Path::new("/p")).is_err());
        assert!(analyze("echo \"x", Path::new("/p"), Path::new("/p")).is_err());
        assert!(analyze("echo $(ls", Path::new("/p"), Path::new("/p")).is_err());
    }
}
