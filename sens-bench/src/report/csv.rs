//! Every record of the batch as one CSV row: nested fields flattened
//! (`tokens_input`, `hooks_denials`, `probe_<concept>`...), `null` as an empty cell.

use std::collections::BTreeSet;

use anyhow::Context;

use super::Exporter;
use super::analysis::Analysis;
use crate::record::RunRecord;

pub struct Csv;

const FIXED_COLUMNS: [&str; 39] = [
    "batch",
    "task",
    "sequence",
    "step",
    "condition",
    "rep",
    "status",
    "hidden_pass",
    "project_pass",
    "regression",
    "flaky",
    "loc_added",
    "loc_removed",
    "loc_total",
    "functions_added",
    "function_lines_median",
    "dup_lines_engine",
    "dup_lines_jscpd",
    "tokens_input",
    "tokens_output",
    "tokens_cache_read",
    "tokens_cache_creation",
    "tokens_total",
    "cost_usd",
    "turns",
    "duration_s",
    "hooks_denials",
    "hooks_blocks",
    "hooks_pauses",
    "hooks_suggestions",
    "integrity_touched_task_files",
    "integrity_edited_tests",
    "agent_name",
    "agent_version",
    "agent_model",
    "agent_effort",
    "started_at",
    "engine_rev",
    "error",
];

fn cell<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

fn row(r: &RunRecord, concepts: &BTreeSet<&str>) -> Vec<String> {
    let tokens = r.tokens;
    let mut row = vec![
        r.batch.clone(),
        r.task.clone(),
        cell(r.sequence.as_ref()),
        cell(r.step),
        r.condition.clone(),
        r.rep.to_string(),
        r.status.to_string(),
        cell(r.hidden_pass),
        cell(r.project_pass),
        cell(r.regression),
        cell(r.flaky),
        cell(r.loc_added),
        cell(r.loc_removed),
        cell(r.loc_total),
        cell(r.functions_added),
        cell(r.function_lines_median),
        cell(r.dup_lines_engine),
        cell(r.dup_lines_jscpd),
        cell(tokens.map(|t| t.input)),
        cell(tokens.map(|t| t.output)),
        cell(tokens.map(|t| t.cache_read)),
        cell(tokens.map(|t| t.cache_creation)),
        cell(tokens.map(|t| t.total())),
        cell(r.cost_usd),
        cell(r.turns),
        r.duration_s.to_string(),
        r.hooks.denials.to_string(),
        r.hooks.blocks.to_string(),
        r.hooks.pauses.to_string(),
        r.hooks.suggestions.to_string(),
        r.integrity.touched_task_files.to_string(),
        r.integrity.edited_tests.to_string(),
        r.agent.name.clone(),
        r.agent.version.clone(),
        r.agent.model.clone(),
        r.agent.effort.clone(),
        r.started_at.to_rfc3339(),
        r.engine_rev.clone(),
        cell(r.error.as_ref()),
    ];
    row.extend(concepts.iter().map(|c| cell(r.probes.get(*c))));
    row
}

impl Exporter<Analysis> for Csv {
    fn render(&self, a: &Analysis) -> anyhow::Result<String> {
        let concepts: BTreeSet<&str> = a
            .records
            .iter()
            .flat_map(|r| r.probes.keys().map(String::as_str))
            .collect();
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        let mut head: Vec<String> = FIXED_COLUMNS.iter().map(|c| c.to_string()).collect();
        head.extend(concepts.iter().map(|c| format!("probe_{c}")));
        writer
            .write_record(&head)
            .context("cannot write the CSV header")?;
        for record in &a.records {
            writer
                .write_record(row(record, &concepts))
                .context("cannot write a CSV row")?;
        }
        let bytes = writer.into_inner().context("cannot finish the CSV")?;
        String::from_utf8(bytes).context("the CSV is not UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::sample_json;
    use crate::report::analysis::analyse;
    use crate::stats::Bootstrap;

    #[test]
    fn a_row_per_record_with_nested_fields_flattened() {
        let mut failed = sample_json();
        failed["status"] = "infra_error".into();
        failed["rep"] = 2.into();
        failed["tokens"] = serde_json::Value::Null;
        failed["error"] = "setup failed (see setup.log)".into();
        failed["probes"] = serde_json::json!({"csv": 2});
        let text = format!("{}\n{}\n", sample_json(), failed);
        let records =
            crate::record::parse_records(&text, std::path::Path::new("runs.jsonl")).unwrap();
        let analysis = analyse("b", records, None, "C0", Bootstrap::default()).unwrap();
        let csv = Csv.render(&analysis).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].ends_with("error,probe_csv,probe_dates"),
            "{}",
            lines[0]
        );
        let columns = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == columns));
        let ok_row = lines.iter().find(|l| l.contains(",ok,")).unwrap();
        assert!(ok_row.contains(",10,20,30,40,100,0.25,"), "{ok_row}");
        let bad_row = lines.iter().find(|l| l.contains("infra_error")).unwrap();
        assert!(bad_row.contains(",,,,,,0.25,"), "{bad_row}");
        assert!(
            bad_row.ends_with("setup failed (see setup.log),2,"),
            "{bad_row}"
        );
    }
}
