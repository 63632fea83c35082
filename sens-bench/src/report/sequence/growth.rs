//! Each sequence's growth plot: its file stem and its curves (size after every
//! step, one per run).

use super::analysis::SequenceAnalysis;
use crate::report::plots::{GROWTH_STEM, GrowthCurve};

/// The growth plot's file stem: `growth` for a batch of one sequence, else
/// `growth-<sequence>` with anything but letters, digits, `.`, `_` and `-` replaced.
pub(super) fn growth_stem(a: &SequenceAnalysis, several: bool) -> String {
    if !several {
        return GROWTH_STEM.to_string();
    }
    let safe: String = a
        .sequence
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{GROWTH_STEM}-{safe}")
}

pub(super) fn growth_curves(a: &SequenceAnalysis) -> Vec<GrowthCurve> {
    a.runs
        .iter()
        .map(|r| GrowthCurve {
            condition: r.condition.clone(),
            points: r
                .sizes
                .iter()
                .enumerate()
                .filter_map(|(i, size)| Some((i as u32 + 1, (*size)? as f64)))
                .collect(),
        })
        .collect()
}
