//! A child process measured to its end: its wall time and its peak resident
//! memory (from `wait4`, which also counts the children it waited for), for
//! the benchmark commands that set the engine beside jscpd.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// What one child process took.
#[derive(Debug, Clone)]
pub struct Measured {
    pub wall: Duration,
    /// Its peak resident memory (and that of the children it waited for).
    pub peak_bytes: u64,
    pub stdout: String,
}

/// Runs `command` to its end, measuring its wall time and peak memory; its
/// standard error is passed through. A failure is an error naming `what`.
pub fn measured(command: &mut Command, what: &str) -> Result<Measured> {
    let start = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {what}"))?;
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout)
            .with_context(|| format!("cannot read the output of {what}"))?;
    }
    let pid = libc::pid_t::try_from(child.id()).context("a pid out of range")?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our unreaped child; `status` and `usage` are writable.
    if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } != pid {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot wait for {what}"));
    }
    let wall = start.elapsed();
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("{what} failed (wait status {status})");
    }
    Ok(Measured {
        wall,
        // Linux counts ru_maxrss in KiB.
        peak_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        stdout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_measured_by_its_own_wall_and_memory() {
        // A child that holds about 64 MB resident.
        let mut command = Command::new("python3");
        command.args(["-c", "b = bytearray(64 << 20); print(len(b))"]);
        let out = measured(&mut command, "python3").unwrap();
        assert_eq!(out.stdout.trim(), (64u64 << 20).to_string());
        assert!(out.peak_bytes >= 64 << 20, "{}", out.peak_bytes);
        assert!(measured(&mut Command::new("false"), "false").is_err());
    }
}
