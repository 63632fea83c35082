//! `--misses`: the pairs the defaults get wrong, and the reformatted copies
//! whose fingerprint changed, written out as their two texts.

use std::path::Path;

use anyhow::{Context, Result};

use super::extension;
use super::mutation::Pair;

/// Writes each wrongly judged pair, and each reformatted one whose
/// fingerprint changed, as `NNNN-KIND[-SETTING].{original,copy}.EXT` into `dir`.
pub(super) fn write_misses(
    dir: &Path,
    pairs: &[Pair],
    verdicts: &[bool],
    same_fingerprints: &[bool],
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let wrong = pairs
        .iter()
        .zip(verdicts.iter().zip(same_fingerprints))
        .filter(|(p, (denied, same))| {
            **denied == (p.kind == "unrelated") || (p.setting.is_some() && !**same)
        });
    for (n, (pair, _)) in wrong.enumerate() {
        let setting: String = pair
            .setting
            .iter()
            .flat_map(|s| std::iter::once('-').chain(s.chars()))
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("{n:04}-{}{setting}", pair.kind);
        for (side, text) in [("original", &pair.original), ("copy", &pair.copy)] {
            let path = dir.join(format!("{stem}.{side}.{}", extension(pair.lang)));
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}
