//! Whether a command in a sandbox without the network tried to reach outside
//! it. The sandbox's network namespace has only its own loopback, and the
//! kernel counts there every packet it found no route for (`OutNoRoutes`, IPv4
//! and IPv6): a connection, a DNS query, anything. A wrapper runs the command
//! line without access to the report's descriptor, then writes the
//! namespace's counters to it; a wrapper that never reports was ended by the
//! command itself.

use std::io::{self, PipeReader, PipeWriter, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The script `bash -c` runs in place of the line (given as `$1`); the report
/// goes to descriptor [`REPORT_FD`], which the line does not inherit.
pub const WRAPPER: &str = r#"bash -c "$1" 3>&-; status=$?; cat /proc/net/snmp /proc/net/snmp6 >&3 2>/dev/null; exit $status"#;
/// The descriptor the wrapper reports on.
pub const REPORT_FD: i32 = 3;
/// More than the two counter tables ever hold.
pub const REPORT_LIMIT: u64 = 64 << 10;

/// The read end of a watched command's report.
pub struct Watch {
    report: PipeReader,
}

impl Watch {
    /// Gives `command` (a `bash` about to start) the wrapper running `line`,
    /// and the report's write end as descriptor [`REPORT_FD`]. The returned
    /// writer is to be dropped once the command has started.
    pub fn start(command: &mut Command, line: &str) -> io::Result<(Watch, PipeWriter)> {
        let (report, writer) = io::pipe()?;
        let fd = writer.as_raw_fd();
        command.arg("-c").arg(WRAPPER).arg("sens-bench").arg(line);
        // SAFETY: the hook only calls dup2 and fcntl on descriptors it owns,
        // which is safe between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let moved = if fd == REPORT_FD {
                    libc::fcntl(fd, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, REPORT_FD)
                };
                if moved < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            })
        };
        Ok((Watch { report }, writer))
    }

    /// What the wrapper reported, once every process of the sandbox has ended.
    pub fn reach(self) -> io::Result<Reach> {
        let mut text = String::new();
        self.report.take(REPORT_LIMIT).read_to_string(&mut text)?;
        Ok(Reach::of(&text))
    }
}

/// What a watched command did with the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Nothing left the sandbox's loopback.
    Contained,
    /// This many packets had no route out.
    Tried(u64),
    /// The command ended its wrapper before the wrapper could report.
    Unreported,
}

impl Reach {
    /// What the wrapper's `report` says (empty when it wrote nothing).
    pub fn of(report: &str) -> Reach {
        match unrouted(report) {
            None => Reach::Unreported,
            Some(0) => Reach::Contained,
            Some(n) => Reach::Tried(n),
        }
    }

    /// Whether it is evidence that the command tried to reach outside.
    pub fn suspect(self) -> bool {
        self != Reach::Contained
    }
}

/// IPv4's `OutNoRoutes` (a header line and a value line in `/proc/net/snmp`)
/// plus IPv6's `Ip6OutNoRoutes` (a name and a value per line in
/// `/proc/net/snmp6`); `None` without the IPv4 table.
fn unrouted(report: &str) -> Option<u64> {
    let mut ip = report.lines().filter(|line| line.starts_with("Ip: "));
    let (names, values) = (ip.next()?, ip.next()?);
    let v4 = names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "OutNoRoutes")
        .and_then(|(_, value)| value.parse::<u64>().ok())?;
    let v6: u64 = report
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("Ip6OutNoRoutes")).then(|| words.next()?.parse::<u64>().ok())?
        })
        .sum();
    Some(v4 + v6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_say_whether_anything_had_no_route() {
        let report = "Ip: Forwarding DefaultTTL OutRequests OutNoRoutes\nIp: 2 64 7 5\n\
                      Icmp: InMsgs\nIcmp: 0\nIp6InReceives 4\nIp6OutNoRoutes 2\n";
        assert_eq!(Reach::of(report), Reach::Tried(7));
        assert_eq!(
            Reach::of("Ip: Forwarding OutNoRoutes\nIp: 2 0\n"),
            Reach::Contained
        );
        assert_eq!(Reach::of(""), Reach::Unreported);
        assert!(!Reach::Contained.suspect() && Reach::Unreported.suspect());
    }
}
