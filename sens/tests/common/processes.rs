//! Waiting for processes to end, for tests that check a process was ended.

use std::time::Duration;

/// Whether process `pid` still runs: a zombie (killed, waiting to be reaped) has
/// ended.
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        // The state follows the command name in parentheses.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Waits for process `pid` to end, however long that takes. Tests pair it with a
/// file the process would write had it ended on its own, so a process that was not
/// killed fails the test instead of passing it late.
pub fn wait_until_ended(pid: &str) {
    while !ends_within(pid, Duration::from_secs(60)) {}
}

/// Whether process `pid` ends within `limit`, for a process that must end on
/// its own: the test fails instead of hanging when it does not.
pub fn ends_within(pid: &str, limit: Duration) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while running(pid) {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}
