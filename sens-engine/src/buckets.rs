//! Compact multimaps from keys to unit ids. Most keys hold one unit: the id is
//! stored in the table itself, so a lookup is one memory access. Keys with
//! several units point into a side table of lists.
//!
//! [`Buckets`] (any key: the symbol table) is a hash map. [`KeyBuckets`] (the
//! fingerprint and LSH tables, whose keys are already uniform 64-bit hashes) is
//! an open-addressing table of its own: a copy lookup reads 20 to 60 of its
//! buckets, random accesses into megabytes, so it announces them all first
//! ([`KeyBuckets::prefetch`], which a hash map cannot do) and the memory serves
//! them in parallel; each entry also carries 32 bits of its unit's (its size),
//! so a candidate is ruled out without another read.

use std::borrow::Borrow;
use std::hash::Hash;

use rustc_hash::FxHashMap;

/// Marks a table value as an index into the side table instead of a unit id.
const SPILLED: u32 = 1 << 31;

/// The side table of both multimaps: the lists of keys with several values,
/// emptied lists' places reused.
#[derive(Debug, Clone)]
struct Spill<T> {
    lists: Vec<Vec<T>>,
    free: Vec<u32>,
}

impl<T> Default for Spill<T> {
    fn default() -> Self {
        Self {
            lists: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Spill<T> {
    /// Bytes its lists hold (the `footprint`'s tables).
    fn heap_bytes(&self) -> usize {
        self.lists.capacity() * size_of::<Vec<T>>()
            + self
                .lists
                .iter()
                .map(|list| list.capacity() * size_of::<T>())
                .sum::<usize>()
            + self.free.capacity() * size_of::<u32>()
    }

    /// Keeps the two values of a key that had one; returns the table value
    /// that points at them.
    fn open(&mut self, first: T, second: T) -> u32 {
        let list = vec![first, second];
        let index = match self.free.pop() {
            Some(index) => {
                self.lists[index as usize] = list;
                index
            }
            None => {
                self.lists.push(list);
                u32::try_from(self.lists.len() - 1).unwrap_or(u32::MAX) & !SPILLED
            }
        };
        index | SPILLED
    }

    fn push(&mut self, value: u32, item: T) {
        if let Some(list) = self.lists.get_mut((value & !SPILLED) as usize) {
            list.push(item);
        }
    }

    /// Drops the first item `is` picks from the list `value` points at; when
    /// one item is left, frees the list and returns that item, to be held
    /// inline again.
    fn remove(&mut self, value: u32, is: impl Fn(&T) -> bool) -> Option<T> {
        let index = value & !SPILLED;
        let list = self.lists.get_mut(index as usize)?;
        if let Some(pos) = list.iter().position(is) {
            list.swap_remove(pos);
        }
        if list.len() != 1 {
            return None;
        }
        self.free.push(index);
        list.pop()
    }

    fn get(&self, value: u32) -> &[T] {
        self.lists
            .get((value & !SPILLED) as usize)
            .map_or(&[], Vec::as_slice)
    }
}

#[derive(Debug, Clone)]
pub struct Buckets<K> {
    map: FxHashMap<K, u32>,
    spill: Spill<u32>,
}

impl<K> Default for Buckets<K> {
    fn default() -> Self {
        Self {
            map: FxHashMap::default(),
            spill: Spill::default(),
        }
    }
}

impl<K> Buckets<K> {
    /// Bytes the table holds, `key_bytes` being what one key owns beyond itself
    /// (a hash map's slot also costs a control byte).
    pub fn heap_bytes(&self, key_bytes: impl Fn(&K) -> usize) -> usize {
        self.map.capacity() * (size_of::<(K, u32)>() + 1)
            + self.map.keys().map(key_bytes).sum::<usize>()
            + self.spill.heap_bytes()
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
            Some(value) if *value & SPILLED == 0 => *value = self.spill.open(*value, id),
            Some(value) => self.spill.push(*value, id),
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
        if let Some(last) = self.spill.remove(*value, |&x| x == id) {
            *value = last;
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
            self.spill.get(*value)
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

/// A unit under a key of [`KeyBuckets`], with 32 bits its caller chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub id: u32,
    pub meta: u32,
}

/// An unused slot's `id`: above every unit id and spill slot.
const EMPTY: u32 = u32::MAX;

/// One slot: a key and its single entry, or (`id` with [`SPILLED`]) the index
/// of its list in the side table. 16 bytes, four to a cache line.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u64,
    entry: Entry,
}

const FREE_SLOT: Slot = Slot {
    key: 0,
    entry: Entry { id: EMPTY, meta: 0 },
};

/// A multimap from uniform 64-bit hashes to [`Entry`]s: linear probing over a
/// power-of-two table at most three quarters full, deletion by backward shift.
#[derive(Debug, Clone, Default)]
pub struct KeyBuckets {
    slots: Vec<Slot>,
    /// Occupied slots.
    len: usize,
    spill: Spill<Entry>,
}

impl KeyBuckets {
    /// Bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>() + self.spill.heap_bytes()
    }

    /// The slot where `key`'s probe starts; the table is not empty. Keys are
    /// hashes already, but a multiply spreads any pattern their low bits have.
    fn home(&self, key: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot holding `key`.
    fn find(&self, key: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.home(key);
        loop {
            let slot = &self.slots[i];
            if slot.entry.id == EMPTY {
                return None;
            }
            if slot.key == key {
                return Some(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Adds `entry` (its id below 2^31) under `key`.
    pub fn insert(&mut self, key: u64, entry: Entry) {
        debug_assert!(
            entry.id < SPILLED,
            "unit id {} too large for a bucket",
            entry.id
        );
        self.reserve(1);
        let mut i = self.home(key);
        loop {
            let slot = self.slots[i];
            if slot.entry.id == EMPTY {
                self.slots[i] = Slot { key, entry };
                self.len += 1;
                return;
            }
            if slot.key == key {
                break;
            }
            i = (i + 1) & self.mask();
        }
        let held = self.slots[i].entry;
        if held.id & SPILLED != 0 {
            self.spill.push(held.id, entry);
            return;
        }
        self.slots[i].entry = Entry {
            id: self.spill.open(held, entry),
            meta: 0,
        };
    }

    /// Removes the entry of unit `id` from `key`'s bucket, dropping the key
    /// when it empties.
    pub fn remove(&mut self, key: u64, id: u32) {
        let Some(i) = self.find(key) else { return };
        let held = self.slots[i].entry;
        if held.id & SPILLED == 0 {
            if held.id == id {
                self.delete(i);
            }
            return;
        }
        if let Some(last) = self.spill.remove(held.id, |e| e.id == id) {
            self.slots[i].entry = last;
        }
    }

    /// Empties slot `i`, moving later slots of its run back so that every key
    /// stays reachable from its home.
    fn delete(&mut self, i: usize) {
        let mask = self.mask();
        let mut hole = i;
        let mut j = (i + 1) & mask;
        while self.slots[j].entry.id != EMPTY {
            let home = self.home(self.slots[j].key);
            // The slot may move back when the hole lies between its home and it.
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.slots[hole] = FREE_SLOT;
        self.len -= 1;
    }

    /// The entries under `key`.
    pub fn get(&self, key: u64) -> &[Entry] {
        self.find(key)
            .map_or(&[], |i| self.entries(&self.slots[i].entry))
    }

    fn entries<'a>(&'a self, entry: &'a Entry) -> &'a [Entry] {
        if entry.id & SPILLED == 0 {
            std::slice::from_ref(entry)
        } else {
            self.spill.get(entry.id)
        }
    }

    /// Asks the processor to fetch the slot `key`'s lookup starts at, so that
    /// the lookups of many keys wait for memory together.
    pub fn prefetch(&self, key: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(key)]);
        }
    }

    /// Room for `additional` more keys without growing the table.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len + additional;
        if needed * 4 <= self.slots.len() * 3 {
            return;
        }
        let size = (needed * 4 / 3 + 1).next_power_of_two().max(8);
        let old = std::mem::replace(&mut self.slots, vec![FREE_SLOT; size]);
        for slot in old.into_iter().filter(|s| s.entry.id != EMPTY) {
            let mut i = self.home(slot.key);
            while self.slots[i].entry.id != EMPTY {
                i = (i + 1) & self.mask();
            }
            self.slots[i] = slot;
        }
    }

    /// Every key with its entries.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[Entry])> {
        self.slots
            .iter()
            .filter(|s| s.entry.id != EMPTY)
            .map(|s| (s.key, self.entries(&s.entry)))
    }
}

/// A hint that `item` will be read soon: it changes no result.
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch reads nothing the program sees and cannot fault;
        // the address is a live reference's.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(item).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
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
        assert_eq!(b.spill.lists.len(), 1);
        b.remove(&7, 2);
        assert!(b.get(&7).is_empty());
        assert_eq!(b.iter().count(), 1);
        b.remove(&9, 1);
    }

    /// Random inserts and removals over keys whose homes collide (a small
    /// table, runs that wrap around its end) agree with a plain map at every step.
    #[test]
    fn key_buckets_agree_with_a_map_through_collisions_and_deletions() {
        use std::collections::BTreeMap;
        let mut table = KeyBuckets::default();
        let mut model: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        let mut state = 7u64;
        let mut rnd = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            crate::fingerprint::mix(state)
        };
        for step in 0..20_000 {
            let key = rnd() % 97;
            let id = (rnd() % 5) as u32;
            let ids = model.entry(key).or_default();
            if rnd() % 3 == 0 || ids.contains(&id) {
                table.remove(key, id);
                ids.retain(|&x| x != id);
            } else {
                table.insert(key, Entry { id, meta: id + 1 });
                ids.push(id);
            }
            model.retain(|_, ids| !ids.is_empty());
            for probe in [key, rnd() % 97] {
                let mut got: Vec<u32> = table.get(probe).iter().map(|e| e.id).collect();
                got.sort_unstable();
                let mut want = model.get(&probe).cloned().unwrap_or_default();
                want.sort_unstable();
                assert_eq!(got, want, "step {step}, key {probe}");
                assert!(table.get(probe).iter().all(|e| e.meta == e.id + 1));
            }
            assert_eq!(table.iter().count(), model.len(), "step {step}");
        }
        assert!(table.slots.len() >= 128, "the table never grew");
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
