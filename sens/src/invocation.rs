//! The binary that runs Sens, as it was invoked: `sens`, or `sens-bench engine` in
//! the harness (whose `engine` level runs the same commands). The hooks and the
//! MCP server `install` writes call it, the resident engine is started with it,
//! and a message that tells the person to run a command names it so: a `sens`
//! install says `sens uninstall DIR`, the harness's `sens-bench engine uninstall DIR`.

use std::path::PathBuf;

use anyhow::Context;

/// The executable and the words that come before a Sens command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The executable, absolute: what a hook runs whatever the CLI's PATH.
    pub exe: PathBuf,
    /// The words between the executable and a Sens command: none for `sens`,
    /// `engine` for `sens-bench`.
    pub prefix: Vec<String>,
}

impl Invocation {
    /// The running executable, with `prefix` before its Sens commands.
    pub fn current(prefix: &[&str]) -> anyhow::Result<Invocation> {
        Ok(Invocation {
            exe: std::env::current_exe().context("cannot find the running binary")?,
            prefix: prefix.iter().map(|word| word.to_string()).collect(),
        })
    }

    /// What a person types for the Sens command `rest` (e.g. `uninstall '/p'`):
    /// the executable's file name (on the person's PATH after `cargo install`),
    /// the prefix, then `rest`.
    pub fn command(&self, rest: &str) -> String {
        let name = self
            .exe
            .file_name()
            .map_or_else(|| "sens".into(), |name| name.to_string_lossy());
        let mut words = vec![name.into_owned()];
        words.extend(self.prefix.iter().cloned());
        words.push(rest.to_string());
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_named_by_the_binary_and_its_prefix() {
        let sens = Invocation {
            exe: "/home/p/.cargo/bin/sens".into(),
            prefix: Vec::new(),
        };
        assert_eq!(sens.command("uninstall /p"), "sens uninstall /p");
        let bench = Invocation {
            exe: "/t/debug/sens-bench".into(),
            prefix: vec!["engine".into()],
        };
        assert_eq!(bench.command("approve /p"), "sens-bench engine approve /p");
    }
}
