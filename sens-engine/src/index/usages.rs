//! The usage counts of identifiers over all files, each name kept once: a file's
//! entry holds its identifiers as (name id, count) pairs, eight bytes each,
//! where a copy of every name per file took 24 bytes and an allocation.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// An identifier's place in [`Usages`].
pub type NameId = u32;

/// Identifier names with their occurrences outside the definitions they name.
/// A name whose count falls to zero keeps its id (the file that used it is
/// usually edited back soon); it counts as absent.
#[derive(Debug, Default)]
pub(super) struct Usages {
    ids: FxHashMap<Arc<str>, NameId>,
    names: Vec<Arc<str>>,
    counts: Vec<u32>,
}

impl Usages {
    /// Counts a file's identifiers; returns them as name ids, in their order.
    pub fn add(&mut self, identifiers: &[(Box<str>, u32)]) -> Vec<(NameId, u32)> {
        identifiers
            .iter()
            .map(|(name, n)| {
                let id = match self.ids.get(&**name) {
                    Some(&id) => id,
                    None => {
                        let id = NameId::try_from(self.names.len()).unwrap_or(NameId::MAX);
                        let name: Arc<str> = Arc::from(&**name);
                        self.ids.insert(Arc::clone(&name), id);
                        self.names.push(name);
                        self.counts.push(0);
                        id
                    }
                };
                if let Some(count) = self.counts.get_mut(id as usize) {
                    *count += n;
                }
                (id, *n)
            })
            .collect()
    }

    /// Takes back what [`Usages::add`] counted for a file.
    pub fn remove(&mut self, identifiers: &[(NameId, u32)]) {
        for &(id, n) in identifiers {
            if let Some(count) = self.counts.get_mut(id as usize) {
                *count = count.saturating_sub(n);
            }
        }
    }

    /// The occurrences of `name` over all files.
    pub fn count(&self, name: &str) -> u32 {
        self.ids
            .get(name)
            .and_then(|&id| self.counts.get(id as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The name of `id`.
    pub fn name(&self, id: NameId) -> &str {
        self.names.get(id as usize).map_or("", |name| name)
    }

    /// Every name used somewhere, with its count.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.names
            .iter()
            .zip(&self.counts)
            .filter(|&(_, &count)| count > 0)
            .map(|(name, &count)| (&**name, count))
    }

    /// Bytes the names and counts hold (the `footprint`'s files).
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * (size_of::<(Arc<str>, NameId)>() + 1)
            + self.names.capacity() * size_of::<Arc<str>>()
            + self.counts.capacity() * size_of::<u32>()
            // An `Arc<str>`'s allocation: two counts and the text.
            + self.names.iter().map(|name| 16 + name.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_over_files_and_fall_back_when_a_file_goes() {
        let mut usages = Usages::default();
        let a = usages.add(&[("total".into(), 2), ("value".into(), 1)]);
        let b = usages.add(&[("value".into(), 3)]);
        assert_eq!(b, [(a[1].0, 3)], "one id per name");
        assert_eq!((usages.count("total"), usages.count("value")), (2, 4));
        assert_eq!(usages.name(a[0].0), "total");
        usages.remove(&a);
        assert_eq!((usages.count("total"), usages.count("value")), (0, 3));
        let used: Vec<(&str, u32)> = usages.iter().collect();
        assert_eq!(used, [("value", 3)]);
        assert_eq!(usages.count("absent"), 0);
    }
}
