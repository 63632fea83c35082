//! One writer per batch folder: `batch.lock`, held with an exclusive file lock
//! (`File::try_lock`) for the life of the command that writes the folder, and
//! holding that process's pid and host so a refused second process can name it.
//!
//! Who takes it: `run` and `sequence run` (records, run folders, the manifest),
//! `label` (it appends to `labels.jsonl`) and `merge` (its output folder). `report`
//! and `gate` only read complete lines of `runs.jsonl` and take no lock, so a live
//! batch can be reported while it runs.
//!
//! The lock is the kernel's, so it ends with the process however it ends (a
//! SIGKILL included); the file's text is only the holder's name, cleared when
//! the holder ends normally.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::{Context, bail};

/// The lock file's name inside a batch folder.
pub const LOCK_FILE: &str = "batch.lock";

/// The held lock of one batch folder; released when dropped.
#[derive(Debug)]
pub struct BatchLock {
    file: File,
}

impl BatchLock {
    /// Takes the lock of `folder` (which must exist), or refuses at once naming
    /// the process that holds it.
    pub fn acquire(folder: &Path) -> anyhow::Result<BatchLock> {
        let path = folder.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the batch lock {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // The holder's name is only informative: an unreadable one is shown as
                // such, and any text is escaped (the file may hold anything).
                let holder = match file.read_to_string(&mut holder) {
                    Ok(_) if !holder.trim().is_empty() => {
                        holder.trim().replace('\n', ", ").escape_debug().to_string()
                    }
                    _ => "an unnamed process".to_string(),
                };
                bail!(
                    "the batch folder {} is in use by {holder} (lock {}): one writer per batch; \
                     wait for it to end or use another --out",
                    folder.display(),
                    path.display()
                );
            }
            Err(TryLockError::Error(err)) => {
                return Err(err).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let (pid, host) = (std::process::id(), host_name());
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "pid {pid}\nhost {host}"))
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(BatchLock { file })
    }
}

impl Drop for BatchLock {
    /// Clears the holder's name, so a free lock names nobody and a folder reads
    /// the same after every command. The lock itself ends with the descriptor; a
    /// name that cannot be cleared only misleads a reader of the file, never the lock.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// This machine's host name (`gethostname`), `unknown` when it has none.
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its whole length, which is passed.
    let status = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    match std::str::from_utf8(&buffer[..end]) {
        Ok(name) if status == 0 && !name.is_empty() => name.to_string(),
        _ => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_a_dropped_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let first = BatchLock::acquire(dir.path()).unwrap();
        let err = BatchLock::acquire(dir.path()).unwrap_err().to_string();
        let pid = format!("pid {}", std::process::id());
        assert!(
            err.contains(&pid) && err.contains("host ") && err.contains("in use"),
            "{err}"
        );
        drop(first);
        BatchLock::acquire(dir.path()).expect("free after drop");
    }
}
