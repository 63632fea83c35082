//! `runs.jsonl`, the batch's record file (docs/contract.md, "The run record"): one JSON
//! record per line, appended atomically, never duplicated, and read back to resume a
//! batch.
//!
//! A record is appended with [`jsonl::append_line`]: one `write` of the whole line
//! under an exclusive file lock, then synced, and cut back when the write fails (a
//! full disk), so a reader never sees half a record from a live writer and no
//! record is glued onto a torn one. Only a crash in the middle of that write (power
//! loss) can leave a line without its newline; opening the log cuts such a torn
//! tail, since its run was never complete and will run again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::jsonl;
use crate::record::{AttemptKey, RunKey, RunStatus};
use crate::sync::lock;

/// The latest recorded attempt at a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latest {
    pub attempt: u32,
    pub status: RunStatus,
}

/// What the log reads of a record line.
#[derive(Deserialize)]
struct Logged {
    #[serde(flatten)]
    key: AttemptKey,
    status: RunStatus,
    #[serde(default)]
    cost_usd: Option<f64>,
}

pub struct RunLog {
    path: PathBuf,
    file: Mutex<File>,
    done: Mutex<HashMap<RunKey, Latest>>,
    /// The summed `cost_usd` of every record, all attempts.
    cost_usd: Mutex<f64>,
    /// Bytes cut from a torn final line when the log was opened.
    pub repaired_bytes: u64,
}

impl RunLog {
    /// Opens (or creates) the log, cuts a torn tail, and reads the keys already recorded.
    /// A complete line that is not a record is an error naming the line: nothing is
    /// thrown away.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let mut text = String::new();
        file.read_to_string(&mut text)
            .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
        let (complete, torn) = jsonl::complete_lines(&text);
        let repaired_bytes = torn.len() as u64;
        if repaired_bytes > 0 {
            file.set_len(complete.len() as u64)
                .with_context(|| format!("cannot cut the torn last line of {}", path.display()))?;
        }
        let mut done = HashMap::new();
        let mut cost_usd = 0.0;
        for line in jsonl::lines::<Logged>(complete, path, "a run record") {
            let (number, logged) = line?;
            let latest = Latest {
                attempt: logged.key.attempt,
                status: logged.status,
            };
            check_later(&done, &logged.key.run, logged.key.attempt)
                .with_context(|| format!("{}:{number}", path.display()))?;
            cost_usd += logged.cost_usd.unwrap_or(0.0);
            done.insert(logged.key.run, latest);
        }
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
            done: Mutex::new(done),
            cost_usd: Mutex::new(cost_usd),
            repaired_bytes,
        })
    }

    /// The latest recorded attempt at `key`, if any.
    pub fn latest(&self, key: &RunKey) -> Option<Latest> {
        lock(&self.done).get(key).copied()
    }

    /// What every recorded attempt cost, in dollars.
    pub fn cost_usd(&self) -> f64 {
        *lock(&self.cost_usd)
    }

    pub fn len(&self) -> usize {
        lock(&self.done).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one record. Refuses a record whose attempt is not later than the
    /// key's latest recorded one.
    pub fn append<T: Serialize>(&self, record: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record).context("cannot serialize a run record")?;
        let logged: Logged =
            serde_json::from_slice(&line).context("a run record lacks its key fields")?;
        line.push(b'\n');
        let latest = Latest {
            attempt: logged.key.attempt,
            status: logged.status,
        };
        let mut done = lock(&self.done);
        check_later(&done, &logged.key.run, logged.key.attempt)
            .with_context(|| format!("{}", self.path.display()))?;
        jsonl::append_line(&lock(&self.file), &line, &self.path)?;
        done.insert(logged.key.run, latest);
        *lock(&self.cost_usd) += logged.cost_usd.unwrap_or(0.0);
        Ok(())
    }
}

/// Refuses `attempt` at `key` when an attempt as late is already recorded.
fn check_later(done: &HashMap<RunKey, Latest>, key: &RunKey, attempt: u32) -> anyhow::Result<()> {
    match done.get(key) {
        Some(held) if held.attempt >= attempt => bail!(
            "{key:?} attempt {attempt} is already recorded (latest attempt {})",
            held.attempt
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(task: &str, condition: &str, rep: u32) -> serde_json::Value {
        json!({"batch": "b", "task": task, "sequence": null, "step": null,
               "condition": condition, "rep": rep, "status": "ok"})
    }

    #[test]
    fn appends_then_resumes_with_the_same_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.jsonl");
        let log = RunLog::open(&path).unwrap();
        log.append(&record("t1", "C0", 1)).unwrap();
        log.append(&record("t1", "C2", 1)).unwrap();
        let err = log.append(&record("t1", "C0", 1)).unwrap_err();
        assert!(format!("{err:#}").contains("already recorded"), "{err:#}");
        drop(log);

        let log = RunLog::open(&path).unwrap();
        assert_eq!(log.len(), 2);
        let key = RunKey {
            task: "t1".into(),
            sequence: None,
            step: None,
            condition: "C2".into(),
            rep: 1,
        };
        assert_eq!(
            log.latest(&key),
            Some(Latest {
                attempt: 1,
                status: RunStatus::Ok
            })
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }

    #[test]
    fn a_later_attempt_supersedes_and_an_earlier_or_equal_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.jsonl");
        let log = RunLog::open(&path).unwrap();
        let mut failed = record("t1", "C0", 1);
        failed["status"] = json!("infra_error");
        log.append(&failed).unwrap();
        let mut retried = record("t1", "C0", 1);
        retried["attempt"] = json!(2);
        log.append(&retried).unwrap();
        let err = log.append(&failed).unwrap_err();
        assert!(
            format!("{err:#}").contains("attempt 1 is already recorded"),
            "{err:#}"
        );
        drop(log);
        let log = RunLog::open(&path).unwrap();
        let key: RunKey = serde_json::from_value(retried).unwrap();
        assert_eq!(
            log.latest(&key),
            Some(Latest {
                attempt: 2,
                status: RunStatus::Ok
            })
        );
        assert_eq!(log.len(), 1, "one run, two attempts");
    }

    #[test]
    fn a_torn_tail_is_cut_and_complete_records_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.jsonl");
        let whole = serde_json::to_string(&record("t1", "C0", 1)).unwrap();
        std::fs::write(&path, format!("{whole}\n{{\"batch\": \"b\", \"task\": \"t")).unwrap();
        let log = RunLog::open(&path).unwrap();
        assert_eq!(log.len(), 1);
        assert!(log.repaired_bytes > 0);
        log.append(&record("t2", "C0", 1)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
        );
    }

    #[test]
    fn a_corrupt_complete_line_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.jsonl");
        let whole = serde_json::to_string(&record("t1", "C0", 1)).unwrap();
        std::fs::write(&path, format!("{whole}\nnot json\n")).unwrap();
        let err = format!("{:#}", RunLog::open(&path).err().expect("refused"));
        assert!(err.contains("runs.jsonl:2"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap().lines().count(),
            2,
            "nothing was cut"
        );
    }

    #[test]
    fn sequence_steps_are_distinct_records() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::open(&dir.path().join("runs.jsonl")).unwrap();
        for step in 1..=3 {
            log.append(
                &json!({"task": format!("s{step}"), "sequence": "cuentas", "step": step,
                                "condition": "C0", "rep": 1, "status": "ok"}),
            )
            .unwrap();
        }
        assert_eq!(log.len(), 3);
    }
}
