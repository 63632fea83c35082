//! A compact multimap from keys to unit ids for the index's fingerprint and LSH
//! tables. Most keys hold one unit: the id is stored in the table itself, so an
//! entry is 16 bytes and a lookup is one memory access. Keys with several units
//! point into a side table of lists.

use std::borrow::Borrow;
use std::hash::Hash;

use rustc_hash::FxHashMap;

/// Marks a table value as an index into the side table instead of a unit id.
const SPILLED: u32 = 1 << 31;

#[derive(Debug, Clone)]
pub struct Buckets<K> {
    map: FxHashMap<K, u32>,
    spill: Vec<Vec<u32>>,
    free: Vec<u32>,
}

impl<K> Default for Buckets<K> {
    fn default() -> Self {
        Self {
            map: FxHashMap::default(),
            spill: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<K: Hash + Eq> Buckets<K> {
    /// Adds `id` (below 2^31) under `key`.
    pub fn insert(&mut self, key: K, id: u32) {
        debug_assert!(id < SPILLED, "unit id {id} too large for a bucket");
        match self.map.get_mut(&key) {
            None => {
                self.map.insert(key, id);
            }
            Some(value) if *value & SPILLED == 0 => {
                let list = vec![*value, id];
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.spill[slot as usize] = list;
                        slot
                    }
                    None => {
                        self.spill.push(list);
                        u32::try_from(self.spill.len() - 1).unwrap_or(u32::MAX) & !SPILLED
                    }
                };
                *value = slot | SPILLED;
            }
            Some(value) => {
                if let Some(list) = self.spill.get_mut((*value & !SPILLED) as usize) {
                    list.push(id);
                }
            }
        }
    }

    /// Removes `id` from `key`'s bucket, dropping the key when it empties.
    pub fn remove<Q>(&mut self, key: &Q, id: u32)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let Some(value) = self.map.get_mut(key) else {
            return;
        };
        if *value & SPILLED == 0 {
            if *value == id {
                self.map.remove(key);
            }
            return;
        }
        let slot = *value & !SPILLED;
        let Some(list) = self.spill.get_mut(slot as usize) else {
            return;
        };
        if let Some(pos) = list.iter().position(|&x| x == id) {
            list.swap_remove(pos);
        }
        if let [last] = list[..] {
            *value = last;
            list.clear();
            self.free.push(slot);
        }
    }

    /// The ids under `key`.
    pub fn get<Q>(&self, key: &Q) -> &[u32]
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).map_or(&[], |value| self.ids(value))
    }

    fn ids<'a>(&'a self, value: &'a u32) -> &'a [u32] {
        if *value & SPILLED == 0 {
            std::slice::from_ref(value)
        } else {
            self.spill
                .get((*value & !SPILLED) as usize)
                .map_or(&[], Vec::as_slice)
        }
    }

    /// Room for `additional` more keys without growing the table (a full
    /// build knows its unit count: growing it step by step costs rehashes).
    pub fn reserve(&mut self, additional: usize) {
        self.map.reserve(additional);
    }

    /// Every key with its ids.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &[u32])> {
        self.map.iter().map(|(k, v)| (k, self.ids(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove_through_one_and_many() {
        let mut b: Buckets<u64> = Buckets::default();
        b.insert(7, 1);
        assert_eq!(b.get(&7), [1]);
        b.insert(7, 2);
        b.insert(7, 3);
        assert_eq!(b.get(&7), [1, 2, 3]);
        b.remove(&7, 1);
        let mut ids = b.get(&7).to_vec();
        ids.sort_unstable();
        assert_eq!(ids, [2, 3]);
        b.remove(&7, 3);
        assert_eq!(b.get(&7), [2]);
        // The freed side slot is reused.
        b.insert(8, 4);
        b.insert(8, 5);
        assert_eq!(b.spill.len(), 1);
        b.remove(&7, 2);
        assert!(b.get(&7).is_empty());
        assert_eq!(b.iter().count(), 1);
        b.remove(&9, 1);
    }

    #[test]
    fn string_keys_are_found_by_str() {
        let mut b: Buckets<Box<str>> = Buckets::default();
        b.insert("helper".into(), 3);
        assert_eq!(b.get("helper"), [3]);
        b.remove("helper", 3);
        assert!(b.get("helper").is_empty());
    }
}
