//! The calibration's Markdown report.

use super::mutation::KINDS;
use super::sweep::Calibration;

pub(super) fn markdown(c: &Calibration) -> String {
    let mut md = String::new();
    let pct = |x: f64| format!("{:.1}", 100.0 * x);
    md.push_str(&format!(
        "# Calibration\n\nCorpora: {}. Defaults: threshold {}, containment {}, floor {}, min shingles {}, k {}, {} bands x {} rows.\n\n",
        c.corpora.join(", "),
        c.config.threshold,
        c.config.containment,
        c.config.floor,
        c.config.min_shingles,
        c.config.k,
        c.config.bands,
        c.config.rows()
    ));
    md.push_str("Formatter settings:\n\n");
    for (lang, settings) in &c.formatters {
        for f in settings {
            md.push_str(&format!("- {lang}: {f}\n"));
        }
    }
    let languages: Vec<&str> = {
        let mut l: Vec<&str> = c.rates.iter().map(|r| r.language.as_str()).collect();
        l.dedup();
        l.sort_unstable();
        l.dedup();
        l
    };
    md.push_str("\n## Denied % per kind at the defaults (unrelated: allowed %), pairs in brackets\n\n| kind |");
    for l in &languages {
        md.push_str(&format!(" {l} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(languages.len()));
    md.push('\n');
    for kind in KINDS {
        md.push_str(&format!("| {kind} |"));
        for l in &languages {
            match c.rates.iter().find(|r| r.kind == *kind && r.language == *l) {
                Some(r) => md.push_str(&format!(" {} ({}) |", pct(r.rate), r.pairs)),
                None => md.push_str(" - |"),
            }
        }
        md.push('\n');
    }
    md.push_str("\n## Denied % of reformatted copies per formatter setting at the defaults\n\nPairs in brackets; `same fingerprint`: copies whose exact (renamed) fingerprint is the original's; `changed`: formatter outputs that differ from their input.\n\n| language | setting | reformatted | renamed+reformatted | same fingerprint | changed | failed |\n|---|---|---|---|---|---|---|\n");
    for s in &c.settings {
        let cell = |kind: &str| {
            s.kinds
                .iter()
                .find(|r| r.kind == kind)
                .map_or("-".to_string(), |r| {
                    format!("{} ({})", pct(r.rate), r.pairs)
                })
        };
        let same: Vec<String> = s.same_fingerprint.iter().map(usize::to_string).collect();
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            s.language,
            s.setting,
            cell("reformatted"),
            cell("renamed+reformatted"),
            same.join(" / "),
            s.changed,
            s.failed
        ));
    }
    md.push_str(
        "\n## Sweep (all languages)\n\n| threshold | floor | min shingles | containment | recall | precision |",
    );
    for kind in KINDS {
        md.push_str(&format!(" {kind} |"));
    }
    md.push_str("\n|---|---|---|---|---|---|");
    md.push_str(&"---|".repeat(KINDS.len()));
    md.push('\n');
    for row in &c.sweep {
        md.push_str(&format!(
            "| {:.2} | {} | {} | {:.2} | {} | {} |",
            row.threshold,
            row.floor,
            row.min_shingles,
            row.containment,
            pct(row.recall),
            pct(row.precision)
        ));
        for kind in KINDS {
            md.push_str(&format!(
                " {} |",
                row.kinds.get(*kind).map_or("-".to_string(), |r| pct(*r))
            ));
        }
        md.push('\n');
    }
    md.push_str("\n## LSH candidate recall of near pairs\n\n| Jaccard | pairs | recall % | theory % | with leave-one-out keys % |\n|---|---|---|---|---|\n");
    for bin in &c.lsh {
        md.push_str(&format!(
            "| {:.2}-{:.2} | {} | {} | {} | {} |\n",
            bin.from,
            bin.to,
            bin.pairs,
            pct(bin.recall),
            pct(bin.theory),
            pct(bin.with_leave_one_out)
        ));
    }
    md
}
