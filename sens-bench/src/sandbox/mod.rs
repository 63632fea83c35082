//! The sandbox every command of a run executes in
//! (docs/integrity.md, "The sandbox: what each command sees"): the agent's CLI and
//! everything it starts, and the task's own commands (set-up, baseline, project and
//! hidden tests) run under bubblewrap, in a mount namespace that shows only what they
//! need and a pid namespace of their own, so that when the sandbox's first process ends
//! every process in it ends. The agent's sandbox shares the network namespace (the
//! scripted model server on 127.0.0.1 and the API stay reachable); a task's tests get
//! loopback only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tokio::process::Command;

pub mod limits;

/// The program that builds the sandbox.
pub const BWRAP: &str = "bwrap";

/// System folders shown read-only (a symlink, as `/bin -> usr/bin`, is recreated).
const SYSTEM: &[&str] = &[
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// What the sandbox shows besides the system folders, `/proc`, `/dev` and an
/// empty `/tmp`; every path at its own place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// Read-write: the workspace, the run's HOME, the folders the copy's
    /// commands build into (a Rust task's leased `CARGO_TARGET_DIR`).
    pub writable: Vec<PathBuf>,
    /// Read-only: the CLI's install and the interpreters' folders.
    pub readable: Vec<PathBuf>,
    /// Read-only although inside a writable folder: a task's hidden files
    /// while the tests run.
    pub fixed: Vec<PathBuf>,
    /// The host's network namespace is shared; without it only a loopback of
    /// the sandbox's own is up.
    pub network: bool,
}

impl View {
    /// The view of one agent session: [`View::for_commands`] with the network,
    /// and the install of `cli` (the folder holding its `node_modules`, or its
    /// own folder) read-only.
    pub fn for_session(writable: Vec<PathBuf>, cli: &Path, path: &OsString) -> Result<View> {
        let cli = cli
            .canonicalize()
            .with_context(|| format!("the CLI {} cannot be found", cli.display()))?;
        let install = cli
            .ancestors()
            .find(|dir| dir.file_name().is_some_and(|n| n == "node_modules"))
            .and_then(Path::parent)
            .or_else(|| cli.parent())
            .map(Path::to_path_buf)
            .context("the CLI's path has no folder")?;
        Ok(View::with_tools(writable, vec![install], path, true))
    }

    /// The view of a task's commands: `writable` as given, and read-only the
    /// tool folders of `path` (a `PATH` value) outside the system folders: a
    /// `bin` or `shims` entry stands for its parent (`~/.pyenv`, `~/.cargo`), and
    /// rustup's toolchains come with `~/.cargo`. A folder holding a writable one
    /// (HOME's parent, `/`) is never shown.
    pub fn for_commands(writable: Vec<PathBuf>, path: &OsString, network: bool) -> View {
        View::with_tools(writable, Vec::new(), path, network)
    }

    fn with_tools(
        writable: Vec<PathBuf>,
        mut readable: Vec<PathBuf>,
        path: &OsString,
        network: bool,
    ) -> View {
        for entry in std::env::split_paths(path) {
            let Ok(entry) = entry.canonicalize() else {
                continue;
            };
            if SYSTEM.iter().any(|s| entry.starts_with(s)) {
                continue;
            }
            let home = match entry.file_name().and_then(|n| n.to_str()) {
                Some("bin" | "shims") => entry.parent().map_or(entry.clone(), Path::to_path_buf),
                _ => entry.clone(),
            };
            if home.join("bin/rustup").exists()
                && let Some(rustup) = home.parent().map(|p| p.join(".rustup"))
                && rustup.is_dir()
            {
                readable.push(rustup);
            }
            readable.push(home);
        }
        readable.retain(|r| r.parent().is_some() && !writable.iter().any(|w| w.starts_with(r)));
        readable.sort();
        readable.dedup_by(|inner, outer| inner.starts_with(outer));
        View {
            writable,
            readable,
            fixed: Vec::new(),
            network,
        }
    }

    /// bubblewrap's arguments for this view, up to the `--` before the program.
    fn bwrap_args(&self, workdir: &Path) -> Result<Vec<OsString>> {
        // Root keeps no capability inside: it could otherwise make a device
        // node for the host's disk and mount it, or undo the read-only binds.
        let mut args: Vec<OsString> = [
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--cap-drop",
            "ALL",
        ]
        .map(OsString::from)
        .to_vec();
        if !self.network {
            args.push("--unshare-net".into());
        }
        let mut push = |words: &[&std::ffi::OsStr]| args.extend(words.iter().map(OsString::from));
        for dir in SYSTEM.iter().map(Path::new) {
            match std::fs::read_link(dir) {
                Ok(target) => push(&["--symlink".as_ref(), target.as_os_str(), dir.as_os_str()]),
                Err(_) if dir.is_dir() => push(&["--ro-bind".as_ref(), dir.as_ref(), dir.as_ref()]),
                Err(_) => {}
            }
        }
        push(&[
            "--proc".as_ref(),
            "/proc".as_ref(),
            "--dev".as_ref(),
            "/dev".as_ref(),
            "--tmpfs".as_ref(),
            "/tmp".as_ref(),
        ]);
        for dir in &self.readable {
            push(&["--ro-bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
        }
        for dir in &self.writable {
            push(&["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
        }
        for file in &self.fixed {
            push(&["--ro-bind".as_ref(), file.as_os_str(), file.as_os_str()]);
        }
        if !self.writable.iter().any(|w| workdir.starts_with(w)) {
            bail!(
                "the sandbox would not show the workspace {}",
                workdir.display()
            );
        }
        push(&["--chdir".as_ref(), workdir.as_os_str()]);
        Ok(args)
    }

    /// bubblewrap with this view's arguments up to the `--`: the program to run
    /// inside, in `workdir`, and its arguments are the caller's to add.
    pub fn wrapper(&self, workdir: &Path) -> Result<std::process::Command> {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new(BWRAP);
        command
            .args(self.bwrap_args(workdir)?)
            .arg("--")
            // The host's TMPDIR is not shown; the sandbox has its own /tmp.
            .env("TMPDIR", "/tmp");
        // SAFETY: the hook only calls getrlimit and setrlimit, which are safe
        // between fork and exec.
        unsafe { command.pre_exec(limits::apply) };
        Ok(command)
    }

    /// `program` to be run inside the sandbox, in `workdir`.
    pub fn command(&self, program: &Path, workdir: &Path) -> Result<Command> {
        let program = program
            .canonicalize()
            .with_context(|| format!("{} cannot be found", program.display()))?;
        let mut command = Command::from(self.wrapper(workdir)?);
        command.arg(program);
        Ok(command)
    }
}

/// Whether bubblewrap can build a sandbox here; the error says why not and what
/// to do.
pub fn check_available() -> Result<()> {
    let output = std::process::Command::new(BWRAP)
        .args(["--ro-bind", "/", "/", "--unshare-pid", "true"])
        .output();
    let why = match output {
        Ok(out) if out.status.success() => return Ok(()),
        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
        Err(err) => format!("{BWRAP} cannot be started ({err})"),
    };
    bail!(
        "the agent's sandbox cannot start: {why}. Install bubblewrap (scripts/setup.sh, as root) \
         on a machine with user namespaces, or pass --no-sandbox (recorded in the manifest)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_shows_tools_read_only_and_never_a_folder_holding_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cli = root.join("tools/node_modules/pkg/bin/cli");
        let python = root.join("py/shims");
        for d in [cli.parent().unwrap(), &python, &root.join("run/work")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&cli, "").unwrap();
        let path =
            std::env::join_paths([python.clone(), root.join("run"), "/usr/bin".into()]).unwrap();
        let view = View::for_session(vec![root.join("run/work")], &cli, &path).unwrap();
        assert_eq!(view.readable, [root.join("py"), root.join("tools")]);
        let args = view.bwrap_args(&root.join("run/work/sub")).unwrap();
        let text: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        let joined = text.join(" ");
        assert!(joined.contains(&format!("--bind {0} {0}", root.join("run/work").display())));
        assert!(joined.contains(&format!("--ro-bind {0} {0}", root.join("tools").display())));
        assert!(!joined.contains(&format!("{} ", root.join("run").display())));
        assert!(view.bwrap_args(&root.join("elsewhere")).is_err());
    }
}
