//! A canonical description of the index's content, independent of unit ids and
//! insertion order: what tests compare between an index built at once and one
//! updated file by file.

use std::collections::BTreeMap;

use super::{Index, UnitId};
use crate::buckets::KeyBuckets;

impl Index {
    /// A canonical description of the index's content, independent of unit ids
    /// and insertion order: equal for equal projects however they were built.
    pub fn digest(&self) -> IndexDigest {
        let describe = |id: UnitId| {
            self.unit(id)
                .map(|u| {
                    format!(
                        "{}:{}-{}:{:?}:{}",
                        u.file, u.data.start_line, u.data.end_line, u.data.kind, u.data.name
                    )
                })
                .unwrap_or_else(|| format!("dangling unit {id}"))
        };
        let sorted = |ids: &[UnitId]| {
            let mut v: Vec<String> = ids.iter().map(|&id| describe(id)).collect();
            v.sort();
            v
        };
        let buckets = |map: &KeyBuckets| {
            let mut out: Vec<(u64, Vec<String>)> = map
                .iter()
                .filter(|(_, ids)| !ids.is_empty())
                .map(|(k, ids)| (k, sorted(ids)))
                .collect();
            out.sort();
            out
        };
        let mut units: Vec<String> = self
            .units()
            .map(|(id, u)| {
                format!(
                    "{} {:x} {:x} {}",
                    describe(id),
                    u.data.exact,
                    u.data.renamed,
                    u.data.tokens
                )
            })
            .collect();
        units.sort();
        let mut usages: Vec<(String, u32)> = self
            .usages
            .iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        usages.sort();
        // The table's keys are hashes: its units are told apart by name.
        let mut by_name: BTreeMap<String, Vec<UnitId>> = BTreeMap::new();
        for (_, ids) in self.symbols.iter() {
            for &id in ids {
                let name = self
                    .unit(id)
                    .map_or_else(String::new, |u| u.data.name.clone());
                by_name.entry(name).or_default().push(id);
            }
        }
        let symbols: Vec<(String, Vec<String>)> = by_name
            .into_iter()
            .map(|(name, ids)| (name, sorted(&ids)))
            .collect();
        IndexDigest {
            units,
            exact: buckets(&self.exact),
            renamed: buckets(&self.renamed),
            lsh: buckets(&self.lsh),
            symbols,
            usages,
        }
    }
}

/// See [`Index::digest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDigest {
    pub units: Vec<String>,
    pub exact: Vec<(u64, Vec<String>)>,
    pub renamed: Vec<(u64, Vec<String>)>,
    pub lsh: Vec<(u64, Vec<String>)>,
    pub symbols: Vec<(String, Vec<String>)>,
    pub usages: Vec<(String, u32)>,
}
