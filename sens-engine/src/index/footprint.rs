//! What the index holds in memory, by what each byte is for: the unit records,
//! their text, the near-copy rule's shingles and band keys, the suggestions'
//! words, the sketches, the lookup tables and the per-file entries. Counted
//! from the structures' lengths and capacities, so it leaves out the
//! allocator's own overhead; `engine index --json` reports it (`memory`) and
//! `engine scale` puts it beside the process's peak.

use std::mem::size_of;

use serde::Serialize;

use super::{Index, Unit};
use crate::fingerprint::Sketch;

/// Bytes the index holds, by what they are for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// The unit table's slots (each unit's fixed-size record).
    pub records: usize,
    /// Names, signatures, doc comments and decorators.
    pub text: usize,
    /// The sorted shingle sets the near-copy rule compares.
    pub shingles: usize,
    /// The leave-one-out keys, and the band keys of a unit not in the index
    /// (a unit the index holds keeps none: `Index::band_keys`).
    pub bands: usize,
    /// The suggestions' words (hash and counts per field).
    pub terms: usize,
    /// One sketch and one size per unit slot.
    pub sketches: usize,
    /// The exact, renamed, LSH and symbol tables.
    pub tables: usize,
    /// Per-file entries, their identifier counts, and the usage counts.
    pub files: usize,
}

impl Footprint {
    pub fn total(&self) -> usize {
        self.records
            + self.text
            + self.shingles
            + self.bands
            + self.terms
            + self.sketches
            + self.tables
            + self.files
    }
}

impl Index {
    /// What this index holds in memory (see the module doc).
    pub fn footprint(&self) -> Footprint {
        let mut bytes = Footprint {
            records: self.units.capacity() * size_of::<Option<Unit>>(),
            sketches: self.sketches.capacity() * size_of::<Sketch>()
                + self.sizes.capacity() * size_of::<u32>(),
            tables: self.exact.heap_bytes()
                + self.renamed.heap_bytes()
                + self.lsh.heap_bytes()
                + self.symbols.heap_bytes(),
            ..Footprint::default()
        };
        for unit in self.units.iter().flatten() {
            let data = &unit.data;
            bytes.text += data.name.capacity()
                + data.signature.capacity()
                + data.facts.doc.capacity()
                + data.facts.decorators.capacity();
            bytes.shingles += size_of_val(&*data.shingles);
            bytes.bands += size_of_val(&*data.bands) + size_of_val(&*data.leave_one_out);
            bytes.terms += data.facts.terms.heap_bytes()
                + size_of_val(&*data.facts.strings)
                + size_of_val(&*data.facts.names);
        }
        for (path, entry) in &self.files {
            bytes.files += path.len()
                + size_of_val(entry)
                + entry.units.capacity() * size_of::<super::UnitId>()
                + entry.identifiers.capacity() * size_of::<(super::NameId, u32)>();
        }
        bytes.files += self.usages.heap_bytes();
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RuleConfig;

    #[test]
    fn each_part_grows_with_what_is_indexed() {
        let mut index = Index::new(RuleConfig::default()).unwrap();
        let empty = index.footprint();
        let body = "def total(values):\n    \"\"\"Adds the values.\"\"\"\n    result = 0\n    for value in values:\n        if value > 10:\n            result += value * 2\n    return result\n";
        index.update_file("a.py", body).unwrap();
        let one = index.footprint();
        index
            .update_file("b.py", &body.replace("total", "summed"))
            .unwrap();
        let two = index.footprint();
        let parts = |f: &Footprint| [f.text, f.shingles, f.terms, f.files];
        for (name, ((before, after), then)) in ["text", "shingles", "terms", "files"]
            .iter()
            .zip(parts(&empty).into_iter().zip(parts(&one)).zip(parts(&two)))
        {
            assert!(
                before < after && after < then,
                "{name}: {empty:?} {one:?} {two:?}"
            );
        }
        assert!(two.total() > one.total());
        // Too short for leave-one-out keys, and its own band keys are not kept.
        assert_eq!((one.bands, two.bands), (empty.bands, empty.bands));
    }
}
