//! What one process in a sandbox may take: its writable memory, and the
//! processes and threads of the user it runs as, so that a test that leaks or
//! forks without end fails by itself instead of taking the machine. Set with
//! `setrlimit` on bubblewrap, whose every process inherits them.
//!
//! Linux never applies the process count to the host's root user, whatever
//! its capabilities: there the sandbox's own pid namespace is what ends every
//! process when the command ends.

use std::io;

/// Writable memory of one process (`RLIMIT_DATA`): more than a test or a
/// build needs, less than the machine.
pub const MEMORY_PER_PROCESS: u64 = 8 << 30;
/// Processes and threads of the sandbox's user (`RLIMIT_NPROC`).
pub const TASKS: u64 = 8192;

/// Lowers this process's limits to the sandbox's (never raises one the user
/// already set lower). Called between `fork` and `exec`: it only makes system
/// calls.
pub fn apply() -> io::Result<()> {
    for (resource, wanted) in [
        (libc::RLIMIT_DATA, MEMORY_PER_PROCESS),
        (libc::RLIMIT_NPROC, TASKS),
    ] {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid rlimit for the call to fill.
        if unsafe { libc::getrlimit(resource, &mut limit) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let max = wanted.min(limit.rlim_max);
        let lowered = libc::rlimit {
            rlim_cur: limit.rlim_cur.min(max),
            rlim_max: max,
        };
        // SAFETY: `lowered` is a valid rlimit; lowering a limit needs no privilege.
        if unsafe { libc::setrlimit(resource, &lowered) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
