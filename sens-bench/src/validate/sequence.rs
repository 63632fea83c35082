//! `sens-bench sequence validate DIR` (docs/contract.md, "Horizonte sequences"): copies
//! walk from the start through every reference state, `--jobs` stretches of the sequence
//! at once.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::{CheckOutcome, CheckResult, CheckedCopy, Expect, Table, align, logs_folder, open_copy};
use crate::batch::pool;
use crate::exec;
use crate::measure::loc;
use crate::spec::sequence::{Sequence, load_sequence};
use crate::workspace::Workspace;
use crate::workspace::cache::Cache;
use crate::workspace::git::{apply_patch, copy_rules};
use crate::workspace::hidden::{copy_hidden, remove_hidden};

/// Options of `sens-bench sequence validate`.
#[derive(Debug, Clone)]
pub struct SequenceOptions {
    pub sequence: PathBuf,
    pub timeout: Duration,
    pub logs: Option<PathBuf>,
    /// Stretches of the sequence walked at once, each on its own copy.
    pub jobs: usize,
}

/// `sens-bench sequence validate DIR` (docs/contract.md, "Horizonte sequences"): exit 0
/// only if the start and every step are valid and every probe reads 1 on the final
/// reference state.
///
/// Reference states do not depend on each other's checks (state k is the start
/// plus patches 1..k), so with `--jobs N` the steps are cut into N stretches of
/// about equal cost and each is walked on its own copy, rebuilt up to the state
/// before its first step. The checks, their order and the table are those of one
/// walk from the start; a stretch after one that stopped early is left out, as
/// its states would not exist in that walk.
pub fn validate_sequence(options: &SequenceOptions) -> Result<ExitCode> {
    anyhow::ensure!(options.jobs >= 1, "--jobs must be at least 1");
    let sequence = load_sequence(&options.sequence)?;
    exec::install_interrupt_guard()?;
    let cache = Cache::from_env()?;
    let logs = logs_folder(
        options.logs.as_deref(),
        &cache,
        &format!("sequence-{}", sequence.name),
    )?;
    let stretches = stretches(sequence.steps.len(), options.jobs);
    let walk_one = |steps: &Range<usize>| {
        let mut walk = SequenceWalk {
            sequence: &sequence,
            rows: Vec::new(),
            sizes: Vec::new(),
            complete: false,
        };
        let folder = logs.join(format!("from-{}", walk.state_before(steps.start)));
        walk.run(steps.clone(), folder, options.timeout)
            .map(|()| walk)
    };
    let pooled = pool::run(options.jobs, &stretches, walk_one, |_| false);
    if exec::interrupted() {
        anyhow::bail!("interrupted; logs so far are in {}", logs.display());
    }
    let mut walk = SequenceWalk {
        sequence: &sequence,
        rows: Vec::new(),
        sizes: Vec::new(),
        complete: true,
    };
    for (_, part) in pooled.done {
        let part = part?;
        walk.rows.extend(part.rows);
        walk.sizes.extend(part.sizes);
        if !part.complete {
            walk.complete = false;
            break;
        }
    }
    if walk.complete {
        walk.check_final_probes();
    }
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

/// Cuts steps `0..steps` into `jobs` contiguous stretches (fewer when there are
/// fewer steps) of about equal cost. State k runs the hidden tests of k steps,
/// so step k (1-based) weighs k.
fn stretches(steps: usize, jobs: usize) -> Vec<Range<usize>> {
    let parts = jobs.clamp(1, steps.max(1));
    let total: usize = (1..=steps).sum();
    let mut cuts = vec![0];
    for part in 1..parts {
        // The step count whose weight comes closest to this part's share,
        // leaving at least one step to each later part.
        let share = total * part / parts;
        let closest = (1..=steps)
            .min_by_key(|&k| (k * (k + 1) / 2).abs_diff(share))
            .unwrap_or(steps);
        let previous = cuts[cuts.len() - 1];
        cuts.push(closest.clamp(previous + 1, steps - (parts - part)));
    }
    cuts.push(steps);
    cuts.windows(2).map(|pair| pair[0]..pair[1]).collect()
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
    /// Every state of the walk was reached and measured.
    complete: bool,
}

impl SequenceWalk<'_> {
    /// The name of the state before step `index` (0-based).
    fn state_before(&self, index: usize) -> &str {
        match index {
            0 => "start",
            _ => &self.sequence.steps[index - 1].id,
        }
    }

    /// One copy walks through the reference states of `steps`: from the start
    /// (whose checks it makes) or, for a later stretch, from the state before its
    /// first step, rebuilt as a walk from the start leaves it. Each step's hidden
    /// files join the earlier ones, so the hidden command runs them all.
    fn run(&mut self, steps: Range<usize>, logs: PathBuf, timeout: Duration) -> Result<()> {
        let sequence = self.sequence;
        let from_start = steps.start == 0;
        let mut rows = Vec::new();
        let prefix = if from_start { "" } else { "rebuild: " };
        let copy = open_copy(
            prefix,
            || Workspace::for_sequence_start(sequence),
            sequence.commands.setup(),
            logs,
            timeout,
            &mut rows,
        )?;
        let test = &sequence.commands.test;
        let hidden = &sequence.commands.hidden;
        if from_start {
            self.add("start", rows);
        } else {
            // A rebuild is no check of its own: only its failures are shown.
            let first = &sequence.steps[steps.start].id;
            rows.retain(|row| row.verdict != CheckOutcome::Ok);
            self.add(first, rows);
        }
        let Some(mut copy) = copy else { return Ok(()) };
        if from_start {
            let row = copy.check("tests pass", test, Expect::Pass, true)?;
            self.add("start", vec![row]);
            if !self.measure("start", &copy) {
                return Ok(());
            }
        } else if !self.rebuild(steps.start, &copy) {
            return Ok(());
        }
        for (index, step) in sequence
            .steps
            .iter()
            .enumerate()
            .take(steps.end)
            .skip(steps.start)
        {
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
        self.complete = true;
        Ok(())
    }

    /// Brings a fresh copy of the start to the state before step `index` as a
    /// walk from the start leaves it (every earlier step's hidden files copied in
    /// before its patch); false (and an error row on step `index`) when it fails.
    fn rebuild(&mut self, index: usize, copy: &CheckedCopy) -> bool {
        let started = Instant::now();
        let root = &copy.workspace.root;
        let rebuilt = self.sequence.steps[..index].iter().try_for_each(|earlier| {
            copy_hidden(&earlier.hidden, root)?;
            apply_patch(root, &earlier.reference).with_context(|| format!("step `{}`", earlier.id))
        });
        if rebuilt.is_ok() {
            return true;
        }
        let first = self.sequence.steps[index].id.clone();
        self.add(
            &first,
            vec![CheckResult::action(
                "rebuild: earlier references apply",
                started,
                rebuilt,
            )],
        );
        false
    }

    fn add(&mut self, state: &str, rows: Vec<CheckResult>) {
        self.rows
            .extend(rows.into_iter().map(|row| (state.to_string(), row)));
    }

    /// Records the state's size; false (and an error row) when it cannot be measured.
    fn measure(&mut self, state: &str, copy: &CheckedCopy) -> bool {
        let started = Instant::now();
        let root = &copy.workspace.root;
        let size = &self.sequence.size;
        let measured = copy_rules(root, copy.workspace.baseline, &copy.workspace.excluded)
            .and_then(|rules| {
                Ok(StateSize {
                    state: state.to_string(),
                    loc: loc::lines_of_code(root, size, &rules)?,
                    probes: loc::count_probes(root, &self.sequence.probes, size, &rules)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_cover_every_step_once_in_order_and_share_the_cost() {
        assert_eq!(stretches(30, 1), vec![0..30]);
        // Steps 1..=21 weigh 231, steps 22..=30 weigh 234.
        assert_eq!(stretches(30, 2), vec![0..21, 21..30]);
        assert_eq!(stretches(2, 2), vec![0..1, 1..2]);
        assert_eq!(stretches(3, 8), vec![0..1, 1..2, 2..3]);
        assert_eq!(stretches(0, 2), vec![0..0]);
        for jobs in 1..6 {
            let parts = stretches(30, jobs);
            assert_eq!(parts.len(), jobs);
            assert!(parts.windows(2).all(|pair| pair[0].end == pair[1].start));
            assert!(parts.iter().all(|part| !part.is_empty()));
        }
    }
}
