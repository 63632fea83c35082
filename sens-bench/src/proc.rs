//! Process groups. Every child the bench starts leads its own process group
//! (`CommandExt::process_group(0)`), so a timeout or Ctrl-C ends it together with
//! everything it spawned (test runners, node, language servers).

use std::io;

/// Sends `signal` to the whole process group led by `pid`.
/// A group that no longer exists is not an error: it has already ended.
pub fn signal_group(pid: u32, signal: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pid).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("pid {pid} out of range"),
        )
    })?;
    // SAFETY: killpg has no memory-safety preconditions; it only sends a signal.
    let rc = unsafe { libc::killpg(pgid, signal) };
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        Ok(())
    } else {
        Err(err)
    }
}

/// Ends a process group for good.
pub fn kill_group(pid: u32) -> io::Result<()> {
    signal_group(pid, libc::SIGKILL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn kill_group_ends_the_child_and_its_children() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .process_group(0)
            .spawn()
            .expect("sh runs");
        kill_group(child.id()).expect("group signalled");
        let status = child.wait().expect("child reaped");
        assert!(!status.success());
        // The group is gone: signalling it again is not an error.
        kill_group(child.id()).expect("a finished group is not an error");
    }
}
