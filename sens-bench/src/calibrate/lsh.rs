//! LSH candidate recall of the near pairs per Jaccard bin, set against
//! 1 - (1 - s^r)^b.

use anyhow::Result;
use serde::Serialize;

use sens_engine::config::RuleConfig;
use sens_engine::fingerprint::jaccard_at_least;
use sens_engine::units;

use super::judge::largest_function;
use super::mutation::Pair;

#[derive(Debug, Clone, Serialize)]
pub struct LshBin {
    pub from: f64,
    pub to: f64,
    pub pairs: usize,
    /// The copy's band keys share one with the original's.
    pub recall: f64,
    pub theory: f64,
    /// Its band or leave-one-out keys do: what a copy lookup gets candidates from.
    pub with_leave_one_out: f64,
}

/// Candidate recall of the near pairs per Jaccard bin of 0.05 from 0.50 (pairs
/// under the threshold are near by containment): the share whose function
/// units share an LSH band, against the theory, and the share that gets a
/// candidate from the copy's band or leave-one-out keys.
pub(super) fn lsh_recall(cfg: &RuleConfig, pairs: &[Pair]) -> Result<Vec<LshBin>> {
    let fp = units::Fingerprinter::new(cfg);
    let (bands, rows) = (cfg.bands as i32, cfg.rows() as i32);
    // Per bin: pairs, pairs sharing a band, the theory's sum, pairs with a candidate.
    let mut bins: Vec<(usize, usize, f64, usize)> = vec![(0, 0, 0.0, 0); 10];
    let function = |pair: &Pair, text: &str| -> Result<Option<units::UnitData>> {
        let parsed = units::parse_file(pair.lang, text, &fp)?;
        Ok(largest_function(&parsed).cloned())
    };
    for pair in pairs.iter().filter(|p| p.kind.starts_with("near")) {
        let (Some(a), Some(b)) = (function(pair, &pair.original)?, function(pair, &pair.copy)?)
        else {
            continue;
        };
        let Some(s) = jaccard_at_least(&a.shingles, &b.shingles, LSH_FROM) else {
            continue;
        };
        let bin = (((s - LSH_FROM) / 0.05) as usize).min(bins.len() - 1);
        let cell = &mut bins[bin];
        cell.0 += 1;
        cell.1 += usize::from(a.bands.iter().zip(b.bands.iter()).any(|(x, y)| x == y));
        cell.2 += 1.0 - (1.0 - s.powi(rows)).powi(bands);
        // Band keys hash their band's index: equal keys are of the same band.
        let mut keys = b.bands.iter().chain(b.leave_one_out.iter());
        cell.3 += usize::from(keys.any(|k| a.bands.contains(k)));
    }
    Ok(bins
        .into_iter()
        .enumerate()
        .filter(|(_, (n, ..))| *n > 0)
        .map(|(i, (n, hits, expected, candidates))| LshBin {
            from: LSH_FROM + 0.05 * i as f64,
            to: (LSH_FROM + 0.05 * (i + 1) as f64).min(1.0),
            pairs: n,
            recall: hits as f64 / n as f64,
            theory: expected / n as f64,
            with_leave_one_out: candidates as f64 / n as f64,
        })
        .collect())
}

const LSH_FROM: f64 = 0.50;
