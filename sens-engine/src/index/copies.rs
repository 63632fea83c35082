//! A unit's copies in the index: exact and renamed by their fingerprints' buckets,
//! near by its LSH band and leave-one-out keys, each candidate ruled out by size,
//! then by sketch, before its shingles confirm it (`NearRule`).

use serde::Serialize;

use super::{Index, Unit, UnitId};
use crate::buckets::prefetch;
use crate::fingerprint::{Counts, common_at_least};
use crate::units::{UnitData, UnitKind};

/// How a unit copies another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum CopyKind {
    #[serde(rename = "copy.exact")]
    Exact,
    #[serde(rename = "copy.renamed")]
    Renamed,
    #[serde(rename = "copy.near")]
    Near,
}

impl CopyKind {
    /// The rule id of docs/contract.md, "Copy rules".
    pub fn rule(self) -> &'static str {
        match self {
            Self::Exact => "copy.exact",
            Self::Renamed => "copy.renamed",
            Self::Near => "copy.near",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyMatch {
    pub id: UnitId,
    pub kind: CopyKind,
    /// 1.0 for exact and renamed copies; for near copies the exact Jaccard, or
    /// the existing unit's share contained in the new one (`NearRule`).
    pub similarity: f64,
}

impl Index {
    /// The indexed units `data` copies: exact, then renamed, then near (LSH
    /// candidates of its band keys and of its leave-one-out keys, confirmed by
    /// [`NearRule`] on their exact shingle sets). `skip` filters units out (the unit
    /// itself, its own file); each unit is reported once, under its strongest kind.
    pub fn copies(&self, data: &UnitData, skip: impl Fn(UnitId, &Unit) -> bool) -> Vec<CopyMatch> {
        self.copies_by(data, skip, Prefilter::Sketch)
    }

    /// [`Index::copies`], ruling candidates out before their shingles are read
    /// as `prefilter` says: the matches are the same either way.
    pub fn copies_by(
        &self,
        data: &UnitData,
        skip: impl Fn(UnitId, &Unit) -> bool,
        prefilter: Prefilter,
    ) -> Vec<CopyMatch> {
        // A module item has no fingerprint: it copies nothing.
        if !data.kind.has_fingerprints() {
            return Vec::new();
        }
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => self.lookup(data, &skip, prefilter, &mut scratch),
            // A lookup from inside `skip`: its own buffers.
            Err(_) => self.lookup(data, &skip, prefilter, &mut Scratch::default()),
        })
    }

    /// See [`Index::copies_by`]. In steps, each announcing the reads of the
    /// next ([`prefetch`]) so that their cache misses overlap: every bucket,
    /// then the sketches of the candidates whose sizes pass, then the units of
    /// those the sketch lets through, whose shingles confirm them.
    fn lookup(
        &self,
        data: &UnitData,
        skip: &dyn Fn(UnitId, &Unit) -> bool,
        prefilter: Prefilter,
        scratch: &mut Scratch,
    ) -> Vec<CopyMatch> {
        let bands = self.band_keys(data);
        // The leave-one-out keys only add candidates, confirmed like the others.
        let keys = || bands.iter().chain(data.leave_one_out.iter()).copied();
        self.prefetch_slots(data, &bands);
        data.leave_one_out
            .iter()
            .for_each(|&key| self.lsh.prefetch(key));
        let mut found: Vec<CopyMatch> = Vec::new();
        for (map, key, kind) in [
            (&self.exact, data.exact, CopyKind::Exact),
            (&self.renamed, data.renamed, CopyKind::Renamed),
        ] {
            for &id in map.get(key) {
                let Some(unit) = self.unit(id) else { continue };
                // An exact copy also has the same renamed fingerprint: report it once.
                if (kind == CopyKind::Renamed && unit.data.exact == data.exact) || skip(id, unit) {
                    continue;
                }
                found.push(CopyMatch {
                    id,
                    kind,
                    similarity: 1.0,
                });
            }
        }
        let n = data.shingles.len();
        let new_whole = data.kind != UnitKind::Window;
        scratch.start(self.units.len());
        for key in keys() {
            for &id in self.lsh.get(key) {
                if scratch.first_time(id)
                    && let Some(size) = self.sizes.get(id as usize)
                {
                    prefetch(size);
                }
            }
        }
        for &id in &scratch.marked {
            let Some(&meta) = self.sizes.get(id as usize) else {
                continue;
            };
            let (m, whole) = Candidate::sizes(meta);
            if let Some(needed) = self.near.needed(n, m, whole && new_whole) {
                scratch.candidates.push(Candidate { id, needed });
            }
        }
        scratch.finish();
        let counts = match prefilter {
            Prefilter::Sketch if !scratch.candidates.is_empty() => Counts::of(&data.shingles),
            _ => None,
        };
        if let Some(counts) = &counts {
            let sketch = |c: &Candidate| self.sketches.get(c.id as usize);
            scratch
                .candidates
                .iter()
                .filter_map(sketch)
                .for_each(prefetch);
            scratch.candidates.retain(|c| {
                sketch(c).is_none_or(|sketch| counts.common_at_most(sketch) >= c.needed)
            });
        }
        // In id order, as the matches are reported.
        scratch.candidates.sort_unstable_by_key(|c| c.id);
        let units = || {
            scratch
                .candidates
                .iter()
                .filter_map(|c| Some((c, self.unit(c.id)?)))
        };
        units().for_each(|(_, unit)| prefetch(unit));
        for (&Candidate { id, needed }, unit) in units() {
            // Same renamed fingerprint: already reported above.
            if unit.data.renamed == data.renamed || skip(id, unit) {
                continue;
            }
            let (m, whole) = (unit.data.shingles.len(), unit.data.kind != UnitKind::Window);
            let Some(similarity) = common_at_least(&data.shingles, &unit.data.shingles, needed)
                .and_then(|common| self.near.similarity(n, m, common, whole && new_whole))
            else {
                continue;
            };
            found.push(CopyMatch {
                id,
                kind: CopyKind::Near,
                similarity,
            });
        }
        found
    }
}

/// What a copy lookup does before reading a candidate's shingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefilter {
    /// The sizes' bound, then the shingle counts' (the candidate's [`Sketch`]).
    Sketch,
    /// The sizes' bound only.
    Sizes,
}

/// An LSH candidate of a lookup whose size admits a near copy, with the fewest
/// shingles it must share ([`NearRule::needed`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    id: UnitId,
    needed: usize,
}

/// The bit of an entry's `meta` that says its unit is whole (see `NearRule`).
const WHOLE: u32 = 1 << 31;

impl Candidate {
    /// What the index keeps of a unit's size by its id: its shingle count
    /// (below 2^31: a unit of 8 GB of shingles is not indexed) and whether it
    /// is whole.
    pub(super) fn meta(data: &UnitData) -> u32 {
        let m = u32::try_from(data.shingles.len()).unwrap_or(u32::MAX) & !WHOLE;
        m | if data.kind == UnitKind::Window {
            0
        } else {
            WHOLE
        }
    }

    /// The shingle count and the whole flag of a [`Candidate::meta`].
    fn sizes(meta: u32) -> (usize, bool) {
        ((meta & !WHOLE) as usize, meta & WHOLE != 0)
    }
}

/// A lookup's buffers, kept per thread so that a lookup allocates only its
/// result: the candidates, and a bit per unit id seen (cleared after) with the
/// ids seen in the order they were.
#[derive(Debug, Default)]
struct Scratch {
    candidates: Vec<Candidate>,
    seen: Vec<u64>,
    /// The ids marked in `seen`, first seen first.
    marked: Vec<UnitId>,
}

impl Scratch {
    fn start(&mut self, units: usize) {
        self.candidates.clear();
        self.seen.resize(self.seen.len().max(units.div_ceil(64)), 0);
    }

    /// Marks `id` seen; false when it already was.
    fn first_time(&mut self, id: UnitId) -> bool {
        let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
        let Some(w) = self.seen.get_mut(word) else {
            return false;
        };
        let first = *w & bit == 0;
        *w |= bit;
        if first {
            self.marked.push(id);
        }
        first
    }

    fn finish(&mut self) {
        for id in self.marked.drain(..) {
            self.seen[id as usize / 64] = 0;
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use anyhow::Result;

    use super::{Candidate, CopyKind, CopyMatch, Prefilter};
    use crate::config::RuleConfig;
    use crate::fingerprint::{Counts, common_at_least};
    use crate::index::{Index, Unit, UnitId};
    use crate::units::{UnitData, UnitKind};
    use crate::walk::WalkOptions;

    /// The lookup as it reads on paper, without buckets' sizes, sketches,
    /// prefetches or buffers: every candidate of every key, confirmed on its
    /// shingles. The oracle `Index::copies` must agree with.
    fn plain_copies(
        index: &Index,
        data: &UnitData,
        skip: impl Fn(UnitId, &Unit) -> bool,
    ) -> Vec<CopyMatch> {
        let mut found = Vec::new();
        let mut ids: Vec<(UnitId, CopyKind)> = Vec::new();
        if !data.kind.has_fingerprints() {
            return found;
        }
        let fingerprinted = index
            .units()
            .filter(|(_, u)| u.data.kind.has_fingerprints());
        for (id, unit) in fingerprinted {
            if unit.data.exact == data.exact {
                ids.push((id, CopyKind::Exact));
            } else if unit.data.renamed == data.renamed {
                ids.push((id, CopyKind::Renamed));
            }
        }
        for kind in [CopyKind::Exact, CopyKind::Renamed] {
            for &(id, _) in ids.iter().filter(|(_, k)| *k == kind) {
                let unit = index.unit(id).unwrap();
                if !skip(id, unit) {
                    found.push(CopyMatch {
                        id,
                        kind,
                        similarity: 1.0,
                    });
                }
            }
        }
        let mut near: Vec<UnitId> = index
            .band_keys(data)
            .iter()
            .chain(data.leave_one_out.iter())
            .flat_map(|&key| index.lsh.get(key).iter().copied())
            .collect();
        near.sort_unstable();
        near.dedup();
        for id in near {
            let unit = index.unit(id).unwrap();
            let whole = unit.data.kind != UnitKind::Window && data.kind != UnitKind::Window;
            let (n, m) = (data.shingles.len(), unit.data.shingles.len());
            let Some(needed) = index.near.needed(n, m, whole) else {
                continue;
            };
            let similarity = common_at_least(&data.shingles, &unit.data.shingles, needed)
                .and_then(|common| index.near.similarity(n, m, common, whole));
            if let Some(similarity) = similarity
                && unit.data.renamed != data.renamed
                && !skip(id, unit)
            {
                found.push(CopyMatch {
                    id,
                    kind: CopyKind::Near,
                    similarity,
                });
            }
        }
        found
    }

    /// Over a real corpus (this crate's sources, and the near-copy fixtures of
    /// its tests, some of them removed and indexed again so that ids are reused
    /// and buckets shrink), every lookup finds the same matches with the
    /// sketch, without it, and as [`plain_copies`] does, while the sketch rules
    /// out candidates the sizes let through.
    #[test]
    fn the_sketch_changes_no_match_and_rules_out_candidates() -> Result<()> {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut index, _) = Index::build(
            &crate_dir.join("src"),
            RuleConfig::default(),
            WalkOptions::default(),
        )?;
        for name in ["original", "near", "renamed"] {
            for ext in ["rs", "py", "ts", "js"] {
                let fixture = crate_dir.join(format!("tests/fixtures/{name}.{ext}.txt"));
                let text = std::fs::read_to_string(&fixture)?;
                index.update_file(&format!("fixtures/{name}.{ext}"), &text)?;
                index.update_file(&format!("fixtures/again/{name}.{ext}"), &text)?;
            }
        }
        for path in [
            "index.rs",
            "fixtures/again/near.rs",
            "fixtures/again/original.py",
        ] {
            assert!(index.remove_file(path), "{path}");
        }
        let text = std::fs::read_to_string(crate_dir.join("src/index.rs"))?;
        index.update_file("index.rs", &text)?;
        let (mut near, mut ruled_out) = (0, 0);
        for (_, unit) in index.units() {
            let other_file = |_: UnitId, other: &Unit| other.file == unit.file;
            let with = index.copies_by(&unit.data, other_file, Prefilter::Sketch);
            let without = index.copies_by(&unit.data, other_file, Prefilter::Sizes);
            let at = format!("{}:{}", unit.file, unit.data.start_line);
            assert_eq!(with, without, "{at}");
            let by_kind_and_id = |mut v: Vec<CopyMatch>| {
                v.sort_by_key(|m| (m.kind, m.id));
                v
            };
            assert_eq!(
                by_kind_and_id(with.clone()),
                by_kind_and_id(plain_copies(&index, &unit.data, other_file)),
                "{at}"
            );
            near += with.iter().filter(|m| m.kind == CopyKind::Near).count();
            let Some(counts) = Counts::of(&unit.data.shingles) else {
                continue;
            };
            for &key in index.band_keys(&unit.data).iter() {
                for &id in index.lsh.get(key) {
                    let (m, whole) = Candidate::sizes(index.sizes[id as usize]);
                    let whole = whole && unit.data.kind != UnitKind::Window;
                    if let Some(needed) = index.near.needed(unit.data.shingles.len(), m, whole) {
                        let sketch = &index.sketches[id as usize];
                        ruled_out += usize::from(counts.common_at_most(sketch) < needed);
                    }
                }
            }
        }
        assert!(near > 0, "the corpus holds no near copy");
        assert!(ruled_out > 0, "the sketch ruled nothing out");
        Ok(())
    }
}
