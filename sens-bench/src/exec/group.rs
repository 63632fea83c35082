//! The one process-killing stack. Every child the bench starts leads its own
//! process group (`CommandExt::process_group(0)`), so a timeout or Ctrl-C ends it
//! together with everything it spawned (test runners, node, language servers).
//! Processes that leave the group (the CLI detaches its Bash commands into their
//! own sessions) are found through their /proc parent links while their parent
//! still lives, and killed with the group ([`kill_tree`]).

use std::io;
use std::process::ExitStatus;

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

/// Ends `root`'s process group and every process below it, its detached
/// descendants included. Best effort: what cannot be signalled has ended.
pub fn kill_tree(root: u32) {
    let spawned = descendants(root);
    let _ = kill_group(root);
    kill_all(&spawned);
}

/// Every process below `root`, read from /proc. The CLI starts its Bash commands
/// detached (their own session and group), so ending the CLI's group leaves them
/// running: they are found through the parent links while the CLI still lives.
pub fn descendants(root: u32) -> Vec<u32> {
    // Without /proc (not Linux) there is nothing more to find than the group.
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            // A process may end while we look; it needs no killing then.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_in_stat(&stat)?))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for &(pid, _) in parents.iter().filter(|(_, ppid)| *ppid == parent) {
            found.push(pid);
            frontier.push(pid);
        }
    }
    found
}

/// The parent pid in a /proc/PID/stat line: `pid (comm) state ppid ...`; the
/// command name may hold spaces and parentheses, so parse after the last `)`.
fn parent_in_stat(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        // Each may lead its own group (detached commands) or already be gone;
        // either way nothing is left to report.
        let _ = kill_group(pid);
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill has no memory-safety preconditions; it only sends a signal.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// The exit status of `pid` if it has exited, leaving it a zombie so its process
/// group id stays reserved until we reap it.
pub(super) fn exit_status_without_reaping(pid: u32) -> io::Result<Option<ExitStatus>> {
    use std::os::unix::process::ExitStatusExt;
    let id = libc::id_t::from(pid);
    // SAFETY: `info` is plain data that waitid fills in; no pointers are kept.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid only writes into `info`.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: with WEXITED the union holds the child's pid and status.
    let (child, status) = unsafe { (info.si_pid(), info.si_status()) };
    if child == 0 {
        return Ok(None);
    }
    let raw = if info.si_code == libc::CLD_EXITED {
        (status & 0xff) << 8
    } else {
        status & 0x7f
    };
    Ok(Some(ExitStatus::from_raw(raw)))
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

    #[test]
    fn parent_pid_is_read_after_the_command_name() {
        assert_eq!(parent_in_stat("42 (node) S 7 42 42 0"), Some(7));
        assert_eq!(parent_in_stat("42 (a) b (c)) R 9 1"), Some(9));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[test]
    fn descendants_include_detached_grandchildren() {
        let mut child = Command::new("sh")
            .args(["-c", "setsid sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut found = Vec::new();
        for _ in 0..50 {
            found = descendants(pid);
            if !found.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(found.len(), 1, "{found:?}");
        kill_all(&found);
        child.wait().unwrap();
        assert!(descendants(pid).is_empty());
    }
}
