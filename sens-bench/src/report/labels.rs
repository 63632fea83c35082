//! The report's section on labelled decisions and the unjust-block rate.

use std::fmt::Write as _;
use std::path::Path;

use sens_engine::session::ledger::Verdict;
use serde_json::Value;

use crate::batch::labels::{Judgement, ledger_dirs, load, run_dir};
use crate::measure::ledger::{ledger_lines, objects};

/// The report's section on labels: each labelled decision and the unjust-block
/// rate. Empty when the batch has no labels.
pub fn report_section(batch: &Path) -> anyhow::Result<String> {
    let labels = load(batch)?;
    if labels.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from("\n## Labelled decisions\n\n");
    let mut rows = Vec::new();
    let (mut objecting, mut unjust) = (0usize, 0usize);
    for ((run, seq), label) in &labels {
        let line = run_dir(batch, run)
            .and_then(|dir| ledger_lines(&dir))?
            .into_iter()
            .find(|l| l.get("seq").and_then(Value::as_u64) == Some(*seq));
        let verdict = line.as_ref().and_then(line_verdict);
        let event = line
            .as_ref()
            .and_then(|l| l["event"].as_str().map(str::to_string))
            .unwrap_or_default();
        if verdict.is_some_and(|v| objects(&event, v)) {
            objecting += 1;
            unjust += usize::from(label.label == Judgement::Unjust);
        }
        rows.push(vec![
            run.clone(),
            seq.to_string(),
            event,
            verdict.map_or("?".into(), |v| format!("{v:?}").to_lowercase()),
            format!("{:?}", label.label).to_lowercase(),
            label.reason.clone(),
        ]);
    }
    crate::report::markdown::table(
        &mut out,
        &["run", "seq", "event", "verdict", "label", "why"],
        &rows,
    )?;
    let all = all_objecting(batch)?;
    if objecting == 0 {
        writeln!(out, "\nNo labelled decision denies or blocks.")?;
    } else {
        writeln!(
            out,
            "\nUnjust-block rate: {unjust} of {objecting} labelled denials and blocks ({:.1}%; \
             target under 5%); {objecting} of the batch's {all} denials and blocks are labelled.",
            100.0 * unjust as f64 / objecting as f64
        )?;
    }
    Ok(out)
}

/// Every denial and block recorded in the batch's ledgers.
fn all_objecting(batch: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for dir in ledger_dirs(batch)? {
        count += ledger_lines(&dir)?
            .iter()
            .filter(|l| {
                let event = l["event"].as_str().unwrap_or_default();
                line_verdict(l).is_some_and(|v| objects(event, v))
            })
            .count();
    }
    Ok(count)
}

fn line_verdict(line: &Value) -> Option<Verdict> {
    serde_json::from_value(line["verdict"].clone()).ok()
}
