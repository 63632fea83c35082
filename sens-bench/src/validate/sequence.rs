//! `sens-bench sequence validate DIR` (SPEC 3.7): one copy walks from the
//! start through every reference state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{CheckOutcome, CheckResult, CheckedCopy, Expect, Table, align, logs_folder, open_copy};
use crate::exec;
use crate::measure::loc;
use crate::spec::sequence::{Sequence, load_sequence};
use crate::workspace::Workspace;
use crate::workspace::cache::Cache;
use crate::workspace::git::apply_patch;
use crate::workspace::hidden::{copy_hidden, remove_hidden};

/// Options of `sens-bench sequence validate`.
#[derive(Debug, Clone)]
pub struct SequenceOptions {
    pub sequence: PathBuf,
    pub timeout: Duration,
    pub logs: Option<PathBuf>,
}

/// `sens-bench sequence validate DIR` (SPEC 3.7): exit 0 only if the start and
/// every step are valid and every probe reads 1 on the final reference state.
pub fn validate_sequence(options: &SequenceOptions) -> Result<ExitCode> {
    let sequence = load_sequence(&options.sequence)?;
    exec::install_interrupt_guard()?;
    let cache = Cache::from_env()?;
    let logs = logs_folder(
        options.logs.as_deref(),
        &cache,
        &format!("sequence-{}", sequence.name),
    )?;
    let mut walk = SequenceWalk {
        sequence: &sequence,
        rows: Vec::new(),
        sizes: Vec::new(),
    };
    walk.run(&logs, options.timeout)?;
    let mut table = Table::new("state", false);
    for (state, row) in &walk.rows {
        table.push(state, row);
    }
    print!("{}", table.render());
    print!("{}", render_sizes(&sequence, &walk.sizes));
    println!("logs: {}", logs.display());
    if walk
        .rows
        .iter()
        .any(|(_, row)| row.verdict.counts_against())
    {
        println!("sequence `{}` is invalid", sequence.name);
        Ok(ExitCode::from(1))
    } else {
        println!(
            "sequence `{}` is valid ({} steps)",
            sequence.name,
            sequence.steps.len()
        );
        Ok(ExitCode::SUCCESS)
    }
}

/// Size and probe counts of one state.
struct StateSize {
    state: String,
    loc: u64,
    probes: BTreeMap<String, u64>,
}

struct SequenceWalk<'a> {
    sequence: &'a Sequence,
    rows: Vec<(String, CheckResult)>,
    sizes: Vec<StateSize>,
}

impl SequenceWalk<'_> {
    /// One copy walks from the start through every reference state; each step's
    /// hidden files join the earlier ones, so the hidden command runs them all.
    fn run(&mut self, logs: &Path, timeout: Duration) -> Result<()> {
        let sequence = self.sequence;
        let mut rows = Vec::new();
        let copy = open_copy(
            "",
            || Workspace::for_sequence_start(sequence),
            sequence.commands.setup(),
            logs.to_path_buf(),
            timeout,
            &mut rows,
        )?;
        self.add("start", rows);
        let Some(mut copy) = copy else { return Ok(()) };
        let test = &sequence.commands.test;
        let hidden = &sequence.commands.hidden;
        let row = copy.check("tests pass", test, Expect::Pass, true)?;
        self.add("start", vec![row]);
        if !self.measure("start", &copy) {
            return Ok(());
        }
        for (index, step) in sequence.steps.iter().enumerate() {
            copy.state.clone_from(&step.id);
            // On state k-1 only step k's hidden tests run: earlier steps' tests are
            // checked on every state after it, and running them here too would
            // double the walk's cost, which grows with the square of its length.
            let earlier = &sequence.steps[..index];
            let root = copy.workspace.root.clone();
            let before = match earlier
                .iter()
                .try_for_each(|e| remove_hidden(&e.hidden, &root))
            {
                Ok(()) => copy.check_hidden(
                    "hidden tests fail before",
                    &step.hidden,
                    hidden,
                    Expect::Fail,
                )?,
                Err(err) => {
                    CheckResult::action("hidden tests fail before", Instant::now(), Err(err))
                }
            };
            self.add(&step.id, vec![before]);
            let started = Instant::now();
            let restored = earlier
                .iter()
                .try_for_each(|e| copy_hidden(&e.hidden, &root));
            if restored.is_err() {
                self.add(
                    &step.id,
                    vec![CheckResult::action(
                        "earlier hidden tests restored",
                        started,
                        restored,
                    )],
                );
                return Ok(());
            }
            let started = Instant::now();
            let applied = apply_patch(&copy.workspace.root, &step.reference);
            let usable = applied.is_ok();
            self.add(
                &step.id,
                vec![CheckResult::action("reference applies", started, applied)],
            );
            if !usable {
                // Later states do not exist without this one.
                return Ok(());
            }
            let after = copy.check(
                "hidden tests pass (this and earlier steps)",
                hidden,
                Expect::Pass,
                true,
            )?;
            let tests = copy.check("tests pass", test, Expect::Pass, true)?;
            self.add(&step.id, vec![after, tests]);
            if !self.measure(&step.id, &copy) {
                return Ok(());
            }
            let worst = self
                .rows
                .iter()
                .filter(|(state, _)| *state == step.id)
                .map(|(_, row)| row.verdict)
                .max()
                .unwrap_or(CheckOutcome::Ok);
            eprintln!("{}: {}", step.id, worst.word());
        }
        self.check_final_probes();
        Ok(())
    }

    fn add(&mut self, state: &str, rows: Vec<CheckResult>) {
        self.rows
            .extend(rows.into_iter().map(|row| (state.to_string(), row)));
    }

    /// Records the state's size; false (and an error row) when it cannot be measured.
    fn measure(&mut self, state: &str, copy: &CheckedCopy) -> bool {
        let started = Instant::now();
        let root = &copy.workspace.root;
        let measured = loc::lines_of_code(root, &self.sequence.size).and_then(|loc| {
            Ok(StateSize {
                state: state.to_string(),
                loc,
                probes: loc::count_probes(root, &self.sequence.probes, &self.sequence.size)?,
            })
        });
        match measured {
            Ok(size) => {
                self.sizes.push(size);
                true
            }
            Err(err) => {
                self.add(
                    state,
                    vec![CheckResult::action("size and probes", started, Err(err))],
                );
                false
            }
        }
    }

    fn check_final_probes(&mut self) {
        let Some(last) = self.sizes.last() else {
            return;
        };
        let off: Vec<String> = last
            .probes
            .iter()
            .filter(|(_, count)| **count != 1)
            .map(|(concept, count)| format!("{concept} = {count}"))
            .collect();
        let state = last.state.clone();
        let result = if off.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!("expected 1 each, found {}", off.join(", ")))
        };
        let mut row = CheckResult::action("every probe reads 1", Instant::now(), result);
        if row.verdict == CheckOutcome::Error {
            row.verdict = CheckOutcome::Failed;
        }
        self.add(&state, vec![row]);
    }
}

fn render_sizes(sequence: &Sequence, sizes: &[StateSize]) -> String {
    let mut header = vec!["state".to_string(), "lines".to_string()];
    header.extend(sequence.probes.iter().map(|probe| probe.concept.clone()));
    let mut lines = vec![header];
    for size in sizes {
        let mut line = vec![size.state.clone(), size.loc.to_string()];
        line.extend(sequence.probes.iter().map(|probe| {
            size.probes
                .get(&probe.concept)
                .map_or(String::new(), u64::to_string)
        }));
        lines.push(line);
    }
    format!("\n{}", align(&lines))
}
