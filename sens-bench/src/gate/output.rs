//! The gate's output: Markdown (summary line, table by rule, each change) and
//! the binding JSON with the same content. In Markdown, what a run's files or a
//! person wrote (file names, labels' reasons, errors) is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use sens_engine::finding::Finding;
use sens_engine::session::ledger::Verdict;
use serde::Serialize;

use super::{Decision, GateResult, Unreplayable};
use crate::batch::labels::Label;
use crate::measure::ledger::objects;
use crate::report::markdown::escape;

/// The summary counts: denials and blocks gained and lost.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub plus_deny: usize,
    pub minus_deny: usize,
    pub plus_block: usize,
    pub minus_block: usize,
}

impl Counts {
    fn add(&mut self, d: &Decision) {
        let deny = |v| matches!(v, Verdict::Deny | Verdict::Error) && d.event == "PreToolUse";
        let block = |v| objects(&d.event, v) && d.event != "PreToolUse";
        self.plus_deny += usize::from(deny(d.new) && !deny(d.old));
        self.minus_deny += usize::from(deny(d.old) && !deny(d.new));
        self.plus_block += usize::from(block(d.new) && !block(d.old));
        self.minus_block += usize::from(block(d.old) && !block(d.new));
    }
}

/// One changed decision as both formats show it.
#[derive(Debug, Serialize)]
struct Change<'a> {
    run: &'a str,
    seq: u64,
    event: &'a str,
    rule: String,
    old: Verdict,
    new: Verdict,
    /// `file:line` of the new unit.
    unit: Option<String>,
    name: Option<&'a str>,
    /// `file:line` of the existing unit it copies.
    existing: Option<String>,
    similarity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a Label>,
}

/// The finding that makes the difference: a blocking one of the side that
/// objects (the new side first), else any finding.
fn deciding(d: &Decision) -> Option<&Finding> {
    let (first, second) = if objects(&d.event, d.new) {
        (&d.new_findings, &d.old_findings)
    } else {
        (&d.old_findings, &d.new_findings)
    };
    first
        .iter()
        .find(|f| f.blocks)
        .or_else(|| second.iter().find(|f| f.blocks))
        .or_else(|| first.first())
        .or_else(|| second.first())
}

fn changes<'a>(
    result: &'a GateResult,
    labels: &'a BTreeMap<(String, u64), Label>,
) -> Vec<Change<'a>> {
    result
        .decisions
        .iter()
        .filter(|d| d.changed())
        .map(|d| {
            let finding = deciding(d);
            Change {
                run: &d.run,
                seq: d.seq,
                event: &d.event,
                rule: finding.map_or_else(|| "-".into(), |f| f.rule.clone()),
                old: d.old,
                new: d.new,
                unit: finding.map(|f| format!("{}:{}", f.new.file, f.new.line)),
                name: finding.map(|f| f.new.name.as_str()),
                existing: finding
                    .and_then(|f| f.existing.as_ref())
                    .map(|e| format!("{}:{}", e.file, e.line)),
                similarity: finding
                    .filter(|f| f.existing.is_some())
                    .map(|f| f.similarity),
                label: labels.get(&(d.run.clone(), d.seq)),
            }
        })
        .collect()
}

fn totals(result: &GateResult) -> (Counts, BTreeMap<String, Counts>, usize) {
    let mut all = Counts::default();
    let mut by_rule: BTreeMap<String, Counts> = BTreeMap::new();
    let mut runs: Vec<&str> = Vec::new();
    for d in result.decisions.iter().filter(|d| d.changed()) {
        all.add(d);
        let rule = deciding(d).map_or_else(|| "-".into(), |f| f.rule.clone());
        by_rule.entry(rule).or_default().add(d);
        if !runs.contains(&d.run.as_str()) {
            runs.push(&d.run);
        }
    }
    (all, by_rule, runs.len())
}

fn verdict_name(v: Verdict) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub fn markdown(
    batch: &Path,
    result: &GateResult,
    labels: &BTreeMap<(String, u64), Label>,
) -> String {
    let (all, by_rule, changed_runs) = totals(result);
    let changes = changes(result, labels);
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = (|| -> std::fmt::Result {
        writeln!(out, "# Gate: {}\n", batch.display())?;
        writeln!(
            out,
            "rules {} against {}: {} decisions replayed in {} runs\n",
            result.rules,
            result.against,
            result.decisions.len(),
            result.runs
        )?;
        writeln!(
            out,
            "**+{} denials, -{} denials, +{} blocks, -{} blocks in {changed_runs} runs**",
            all.plus_deny, all.minus_deny, all.plus_block, all.minus_block
        )?;
        if !by_rule.is_empty() {
            writeln!(out, "\n| rule | +deny | -deny | +block | -block |")?;
            writeln!(out, "| --- | --- | --- | --- | --- |")?;
            for (rule, c) in &by_rule {
                writeln!(
                    out,
                    "| {rule} | {} | {} | {} | {} |",
                    c.plus_deny, c.minus_deny, c.plus_block, c.minus_block
                )?;
            }
        }
        if !changes.is_empty() {
            writeln!(out, "\n## Changes\n")?;
        }
        for c in &changes {
            let mut line = format!(
                "- {} seq {} {}: {} -> {} ({})",
                c.run,
                c.seq,
                c.event,
                verdict_name(c.old),
                verdict_name(c.new),
                c.rule
            );
            if let (Some(unit), Some(name)) = (&c.unit, c.name) {
                line.push_str(&format!(" {} `{name}`", escape(unit)));
            }
            if let (Some(existing), Some(similarity)) = (&c.existing, c.similarity) {
                line.push_str(&format!(
                    " copies {} (similarity {similarity:.2})",
                    escape(existing)
                ));
            }
            if let Some(label) = c.label {
                line.push_str(&format!(
                    " [labelled {}: {}]",
                    format!("{:?}", label.label).to_lowercase(),
                    escape(&label.reason)
                ));
            }
            writeln!(out, "{line}")?;
        }
        unreplayable(&mut out, &result.unreplayable)
    })();
    out
}

fn unreplayable(out: &mut String, lost: &[Unreplayable]) -> std::fmt::Result {
    if lost.is_empty() {
        return Ok(());
    }
    writeln!(out, "\n## Unreplayable\n")?;
    for u in lost {
        match u.seq {
            Some(seq) => writeln!(out, "- {} seq {seq}: {}", u.run, escape(&u.error))?,
            None => writeln!(out, "- {}: {}", u.run, escape(&u.error))?,
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(flatten)]
    counts: Counts,
    runs_changed: usize,
    runs: usize,
    decisions: usize,
    rules: &'a str,
    against: &'a str,
}

#[derive(Serialize)]
struct Json<'a> {
    summary: Summary<'a>,
    by_rule: BTreeMap<String, Counts>,
    changes: Vec<Change<'a>>,
    unreplayable: &'a [Unreplayable],
}

pub fn json(
    result: &GateResult,
    labels: &BTreeMap<(String, u64), Label>,
) -> anyhow::Result<String> {
    let (counts, by_rule, runs_changed) = totals(result);
    let out = Json {
        summary: Summary {
            counts,
            runs_changed,
            runs: result.runs,
            decisions: result.decisions.len(),
            rules: &result.rules,
            against: &result.against,
        },
        by_rule,
        changes: changes(result, labels),
        unreplayable: &result.unreplayable,
    };
    Ok(format!("{}\n", serde_json::to_string_pretty(&out)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::labels::Judgement;

    #[test]
    fn labels_and_errors_stay_one_inert_line_each() {
        let result = GateResult {
            runs: 1,
            decisions: vec![Decision {
                run: "t/C2/1".into(),
                seq: 3,
                event: "PreToolUse".into(),
                old: Verdict::Deny,
                new: Verdict::Allow,
                old_findings: Vec::new(),
                new_findings: Vec::new(),
            }],
            unreplayable: vec![Unreplayable {
                run: "t/C2/2".into(),
                seq: None,
                error: "broken\n<script>x</script>".into(),
            }],
            rules: "r".into(),
            against: "a".into(),
        };
        let label = Label {
            run: "t/C2/1".into(),
            seq: 3,
            label: Judgement::Unjust,
            reason: "fine\n# not a heading <b>".into(),
            time: chrono::Utc::now(),
        };
        let labels = BTreeMap::from([(("t/C2/1".to_string(), 3), label)]);
        let text = markdown(Path::new("b"), &result, &labels);
        assert!(
            text.contains("[labelled unjust: fine # not a heading &lt;b&gt;]\n"),
            "{text}"
        );
        assert!(
            text.contains("- t/C2/2: broken &lt;script&gt;x&lt;/script&gt;\n"),
            "{text}"
        );
    }
}
