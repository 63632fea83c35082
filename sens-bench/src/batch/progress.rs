//! The progress bar of a batch (stderr, only on a terminal): runs done, ETA
//! and running tallies (ok / failed / hidden pass).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::record::{RunRecord, RunStatus};
use crate::sync::lock;

/// Running tallies shown on the progress bar.
#[derive(Debug, Default)]
struct Tallies {
    ok: u64,
    failed: u64,
    hidden_pass: u64,
}

/// The progress bar on stderr; hidden when stderr is not a terminal.
pub struct Progress {
    bar: ProgressBar,
    tallies: Mutex<Tallies>,
}

impl Progress {
    pub(super) fn new() -> Progress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta}  {msg}")
        {
            bar.set_style(style);
        }
        Progress {
            bar,
            tallies: Mutex::new(Tallies::default()),
        }
    }

    /// `total` runs (or steps) planned, `done` of them already recorded.
    pub(super) fn start(&self, total: u64, done: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        self.bar.reset_eta();
    }

    pub(super) fn record(&self, record: &RunRecord) {
        let mut tallies = lock(&self.tallies);
        if record.status == RunStatus::Ok {
            tallies.ok += 1;
        } else {
            tallies.failed += 1;
        }
        tallies.hidden_pass += u64::from(record.hidden_pass == Some(true));
        self.bar.set_message(format!(
            "ok {} / failed {} / hidden pass {}",
            tallies.ok, tallies.failed, tallies.hidden_pass
        ));
        self.bar.inc(1);
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    pub(super) fn summary(&self, out: &Path) -> String {
        let (ok, failed, hidden) = {
            let tallies = lock(&self.tallies);
            (tallies.ok, tallies.failed, tallies.hidden_pass)
        };
        format!(
            "{} runs recorded in {} this time: {ok} ok ({hidden} with hidden tests passing), {failed} failed",
            ok + failed,
            out.join("runs.jsonl").display()
        )
    }
}
