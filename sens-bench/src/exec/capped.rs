//! A command's output into its log, capped: the first [`HEAD`] bytes and the
//! last [`TAIL`] are kept, with a line between them saying how much was cut. A
//! test that prints a gigabyte leaves a log of a few megabytes, and the runner's
//! summary, which comes last, is still in it.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, PipeReader, Read, Write};
use std::sync::mpsc;
use std::time::Duration;

/// Bytes kept from the start of the output.
pub const HEAD: usize = 2 << 20;
/// Bytes kept from the end of the output.
pub const TAIL: usize = 2 << 20;

/// The thread that copies one command's output into its log.
pub struct Capture {
    done: mpsc::Receiver<io::Result<u64>>,
}

impl Capture {
    /// Starts copying what `output` yields into `log`, until every writer of
    /// the pipe has closed it.
    pub fn start(output: PipeReader, log: File) -> io::Result<Capture> {
        let (send, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("command-log".into())
            .spawn(move || {
                // The receiver is gone only when the command was given up on.
                let _ = send.send(copy_capped(output, log, HEAD, TAIL));
            })?;
        Ok(Capture { done })
    }

    /// The bytes cut, once the output has ended; `None` when it is still open
    /// after `grace` (a process outside the command's reach holds the pipe: the
    /// log then has what came until now, and its copying goes on alone).
    pub fn finish(self, grace: Duration) -> io::Result<Option<u64>> {
        match self.done.recv_timeout(grace) {
            Ok(cut) => cut.map(Some),
            Err(_) => Ok(None),
        }
    }
}

/// Copies `from` into `to`, keeping the first `head` and the last `tail` bytes;
/// returns the number of bytes left out.
fn copy_capped(
    mut from: impl Read,
    mut to: impl Write,
    head: usize,
    tail: usize,
) -> io::Result<u64> {
    let mut buffer = vec![0u8; 64 << 10];
    let mut written = 0usize;
    let mut kept: VecDeque<u8> = VecDeque::new();
    let mut cut = 0u64;
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let mut chunk = &buffer[..n];
        if written < head {
            let now = chunk.len().min(head - written);
            to.write_all(&chunk[..now])?;
            written += now;
            chunk = &chunk[now..];
        }
        kept.extend(chunk);
        if kept.len() > tail {
            let excess = kept.len() - tail;
            kept.drain(..excess);
            cut += excess as u64;
        }
    }
    if cut > 0 {
        writeln!(
            to,
            "\n[sens-bench: {cut} bytes of output cut here; the log keeps the first {head} and the last {tail} bytes]"
        )?;
    }
    let (front, back) = kept.as_slices();
    to.write_all(front)?;
    to.write_all(back)?;
    to.flush()?;
    Ok(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_cap_keeps_its_head_and_tail_and_says_what_was_cut() {
        let output: Vec<u8> = (0..10_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut log = Vec::new();
        let cut = copy_capped(&output[..], &mut log, 100, 50).unwrap();
        assert_eq!(cut, output.len() as u64 - 150);
        let text = String::from_utf8(log).unwrap();
        assert!(text.starts_with("0\n1\n2\n"), "{text}");
        assert!(text.ends_with("9998\n9999\n"), "{text}");
        assert!(
            text.contains(&format!("[sens-bench: {cut} bytes of output cut here;")),
            "{text}"
        );

        let mut short = Vec::new();
        assert_eq!(
            copy_capped(&b"all of it\n"[..], &mut short, 100, 50).unwrap(),
            0
        );
        assert_eq!(short, b"all of it\n");
    }
}
