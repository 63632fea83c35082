//! Duplicate groups across a whole project (`engine dupes`), like a copy/paste
//! detector: units linked by exact, renamed or near copies, grouped into
//! connected components. Nested or overlapping units of one file never link, and a
//! group whose units all lie inside units of a larger reported group is dropped
//! (the windows of a copied function are the same finding).

use rustc_hash::FxHashMap;

use crate::index::{CopyKind, Index, Unit, UnitId};

#[derive(Debug, Clone, PartialEq)]
pub struct DupeGroup {
    /// The weakest link of the group: exact < renamed < near.
    pub kind: CopyKind,
    /// The lowest similarity of its links.
    pub similarity: f64,
    /// In file and line order.
    pub units: Vec<UnitId>,
}

fn overlaps(a: &Unit, b: &Unit) -> bool {
    a.file == b.file && a.data.start_line <= b.data.end_line && b.data.start_line <= a.data.end_line
}

fn contains(outer: &Unit, inner: &Unit) -> bool {
    outer.file == inner.file
        && outer.data.start_line <= inner.data.start_line
        && inner.data.end_line <= outer.data.end_line
}

fn find(parent: &mut FxHashMap<UnitId, UnitId>, x: UnitId) -> UnitId {
    let mut root = x;
    while let Some(&p) = parent.get(&root) {
        if p == root {
            break;
        }
        root = p;
    }
    parent.insert(x, root);
    root
}

/// Every duplicate group among units of at least `min_tokens` normalized tokens
/// (import-only windows excluded).
pub fn groups(index: &Index, min_tokens: usize) -> Vec<DupeGroup> {
    let eligible = |u: &Unit| u.data.tokens as usize >= min_tokens && !u.data.imports_only;
    let mut links: Vec<Link> = Vec::new();
    for (id, unit) in index.units() {
        if !eligible(unit) {
            continue;
        }
        for m in index.copies(&unit.data, |other_id, other| {
            other_id <= id || !eligible(other) || overlaps(unit, other)
        }) {
            links.push((id, m.id, m.kind, m.similarity));
        }
    }
    let mut parent: FxHashMap<UnitId, UnitId> = FxHashMap::default();
    for &(a, b, _, _) in &links {
        parent.entry(a).or_insert(a);
        parent.entry(b).or_insert(b);
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent.insert(ra.max(rb), ra.min(rb));
        }
    }
    let mut components: FxHashMap<UnitId, (Vec<UnitId>, Vec<Link>)> = FxHashMap::default();
    let members: Vec<UnitId> = parent.keys().copied().collect();
    for id in members {
        let root = find(&mut parent, id);
        components.entry(root).or_default().0.push(id);
    }
    for link in links {
        let root = find(&mut parent, link.0);
        components.entry(root).or_default().1.push(link);
    }
    let key = |id: &UnitId| {
        index
            .unit(*id)
            .map(|u| (u.file.to_string(), u.data.start_line, u.data.end_line))
    };
    let mut all: Vec<(u32, DupeGroup)> = components
        .into_values()
        .filter_map(|(ids, links)| {
            let mut group = shown_group(index, ids, &links)?;
            group.units.sort_by_key(key);
            let size = group
                .units
                .iter()
                .filter_map(|&id| index.unit(id))
                .map(|u| u.data.tokens)
                .max()
                .unwrap_or(0);
            Some((size, group))
        })
        .collect();
    // Largest first, so the units that cover smaller groups are already kept.
    all.sort_by_key(|(size, g)| (std::cmp::Reverse(*size), g.units.first().and_then(key)));
    let mut covering: FxHashMap<&str, Vec<&Unit>> = FxHashMap::default();
    let mut kept: Vec<DupeGroup> = Vec::new();
    for (_, g) in all {
        let units: Vec<&Unit> = g.units.iter().filter_map(|&id| index.unit(id)).collect();
        let covered = units.iter().all(|u| {
            covering
                .get(&*u.file)
                .is_some_and(|outers| outers.iter().any(|outer| contains(outer, u)))
        });
        if !covered {
            for u in units {
                covering.entry(&u.file).or_default().push(u);
            }
            kept.push(g);
        }
    }
    kept.sort_by_key(|g| g.units.first().and_then(key));
    kept
}

type Link = (UnitId, UnitId, CopyKind, f64);

/// Lines that belong to a unit of some group, each file line counted once: the
/// engine's count of duplicated lines.
pub fn duplicated_lines(index: &Index, groups: &[DupeGroup]) -> usize {
    let mut spans: FxHashMap<&str, Vec<(u32, u32)>> = FxHashMap::default();
    for unit in groups
        .iter()
        .flat_map(|g| g.units.iter())
        .filter_map(|&id| index.unit(id))
    {
        spans
            .entry(&unit.file)
            .or_default()
            .push((unit.data.start_line, unit.data.end_line));
    }
    spans
        .into_values()
        .map(|mut v| {
            v.sort_unstable();
            let (mut total, mut covered_to) = (0usize, 0u32);
            for (start, end) in v {
                let from = start.max(covered_to + 1);
                if end >= from {
                    total += (end - from + 1) as usize;
                    covered_to = end;
                }
            }
            total
        })
        .sum()
}

/// The group as shown: without units nested in another member (a window inside
/// a copied function repeats it), its strength from the links among the units
/// shown, or from all its links when those are joined only through windows.
fn shown_group(index: &Index, ids: Vec<UnitId>, links: &[Link]) -> Option<DupeGroup> {
    let members: Vec<(UnitId, &Unit)> = ids
        .iter()
        .filter_map(|&id| Some((id, index.unit(id)?)))
        .collect();
    let mut shown: Vec<(UnitId, &Unit)> = members
        .iter()
        .filter(|(id, u)| {
            !members.iter().any(|(other, outer)| {
                // Of two units with the same span, the older one stays.
                other != id && contains(outer, u) && (!contains(u, outer) || other < id)
            })
        })
        .copied()
        .collect();
    // Overlapping windows of one block repeat each other: the first one stays.
    shown.sort_by_key(|(_, u)| (u.file.clone(), u.data.start_line));
    let mut kept: Vec<(UnitId, &Unit)> = Vec::new();
    for (id, u) in shown {
        if !kept.iter().any(|(_, k)| overlaps(k, u)) {
            kept.push((id, u));
        }
    }
    let shown: Vec<UnitId> = kept.into_iter().map(|(id, _)| id).collect();
    if shown.len() < 2 {
        return None;
    }
    let among: Vec<&Link> = links
        .iter()
        .filter(|(a, b, _, _)| shown.contains(a) && shown.contains(b))
        .collect();
    let chosen: Vec<&Link> = if among.is_empty() {
        links.iter().collect()
    } else {
        among
    };
    let kind = chosen.iter().map(|l| l.2).max()?;
    let similarity = chosen.iter().map(|l| l.3).fold(1.0, f64::min);
    Some(DupeGroup {
        kind,
        similarity,
        units: shown,
    })
}
