//! Compact multimaps from keys to unit ids. Most keys hold one unit: the id is
//! stored in the table itself, so a lookup is one memory access. Keys with
//! several units point into a side table of pairs and lists.
//!
//! [`KeyBuckets`] (the fingerprint, LSH and symbol tables, whose keys are
//! uniform 64-bit hashes: a symbol's is its name's) is an open-addressing
//! table of its own: a copy lookup reads 20 to 60 of its
//! buckets, random accesses into megabytes, so it announces them all first
//! ([`KeyBuckets::prefetch`], which a hash map cannot do) and the memory serves
//! them in parallel. Its slots hold a key and a unit id, 12 bytes, at most
//! four fifths full: what a unit's size says of a candidate is read from the
//! index's own array by unit id.

/// Marks a table value as an index into the side table instead of a unit id.
const SPILLED: u32 = 1 << 31;
/// Marks a side table index as one of its pairs instead of one of its lists.
const PAIR: u32 = 1 << 30;

/// The side table: the values of keys with several, two in
/// a pair held in place (most keys with several have two: a list would cost
/// its header and an allocation of its own), more in a list; emptied places
/// reused.
#[derive(Debug, Clone)]
struct Spill<T> {
    pairs: Vec<[T; 2]>,
    free_pairs: Vec<u32>,
    lists: Vec<Vec<T>>,
    free: Vec<u32>,
}

impl<T> Default for Spill<T> {
    fn default() -> Self {
        Self {
            pairs: Vec::new(),
            free_pairs: Vec::new(),
            lists: Vec::new(),
            free: Vec::new(),
        }
    }
}

/// The place a value goes: a freed one, or a new one at the end of `items`.
fn reuse<I>(items: &mut Vec<I>, free: &mut Vec<u32>, item: I) -> u32 {
    match free.pop() {
        Some(index) => {
            items[index as usize] = item;
            index
        }
        None => {
            items.push(item);
            let index = u32::try_from(items.len() - 1).unwrap_or(u32::MAX);
            assert!(index < PAIR - 1, "more than 2^30 keys with several units");
            index
        }
    }
}

impl<T: Copy> Spill<T> {
    /// Bytes its pairs and lists hold (the `footprint`'s tables).
    fn heap_bytes(&self) -> usize {
        self.pairs.capacity() * size_of::<[T; 2]>()
            + self.lists.capacity() * size_of::<Vec<T>>()
            + self
                .lists
                .iter()
                .map(|list| list.capacity() * size_of::<T>())
                .sum::<usize>()
            + (self.free.capacity() + self.free_pairs.capacity()) * size_of::<u32>()
    }

    /// Keeps the two values of a key that had one; returns the table value
    /// that points at them.
    fn open(&mut self, first: T, second: T) -> u32 {
        reuse(&mut self.pairs, &mut self.free_pairs, [first, second]) | PAIR | SPILLED
    }

    /// Adds `item` to the values `value` points at; returns the table value
    /// that points at them now (a pair grows into a list).
    fn push(&mut self, value: u32, item: T) -> u32 {
        let index = value & !(SPILLED | PAIR);
        if value & PAIR == 0 {
            if let Some(list) = self.lists.get_mut(index as usize) {
                list.push(item);
            }
            return value;
        }
        let [a, b] = self.pairs[index as usize];
        self.free_pairs.push(index);
        reuse(&mut self.lists, &mut self.free, vec![a, b, item]) | SPILLED
    }

    /// Drops the first item `is` picks from the values `value` points at;
    /// when one item is left, frees their place and returns that item, to be
    /// held inline again.
    fn remove(&mut self, value: u32, is: impl Fn(&T) -> bool) -> Option<T> {
        let index = value & !(SPILLED | PAIR);
        if value & PAIR != 0 {
            let [a, b] = *self.pairs.get(index as usize)?;
            let last = match (is(&a), is(&b)) {
                (true, _) => b,
                (_, true) => a,
                _ => return None,
            };
            self.free_pairs.push(index);
            return Some(last);
        }
        let list = self.lists.get_mut(index as usize)?;
        if let Some(pos) = list.iter().position(is) {
            list.swap_remove(pos);
        }
        if list.len() != 1 {
            return None;
        }
        self.free.push(index);
        let last = list.pop();
        // Its room is given back, not kept until a list takes its place.
        *list = Vec::new();
        last
    }

    fn get(&self, value: u32) -> &[T] {
        let index = (value & !(SPILLED | PAIR)) as usize;
        if value & PAIR != 0 {
            self.pairs.get(index).map_or(&[], |pair| pair.as_slice())
        } else {
            self.lists.get(index).map_or(&[], Vec::as_slice)
        }
    }
}

/// An unused slot's `id`: above every unit id and spill slot.
const EMPTY: u32 = u32::MAX;

/// Keys are hashes already, but a multiply spreads any pattern their bits have
/// before the high bits pick the slot.
fn spread(key: u64) -> u64 {
    key.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Where `key`'s probe starts in a table of `size` slots: its spread scaled to
/// the size, so slots in home order are in spread order at every size.
fn home_in(key: u64, size: usize) -> usize {
    ((u128::from(spread(key)) * size as u128) >> 64) as usize
}

/// One slot: a key and its single unit id, or (an id with [`SPILLED`]) the
/// index of its list in the side table. The key is two halves so that a slot
/// is 12 bytes (four-byte aligned): the LSH table holds a slot per band per
/// unit, the largest thing the index keeps (docs/performance.md, "What the
/// index keeps per unit").
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: [u32; 2],
    id: u32,
}

impl Slot {
    fn new(key: u64, id: u32) -> Self {
        // Truncations on purpose: the two halves of the key.
        Self {
            key: [key as u32, (key >> 32) as u32],
            id,
        }
    }

    fn key(&self) -> u64 {
        u64::from(self.key[0]) | u64::from(self.key[1]) << 32
    }
}

const FREE_SLOT: Slot = Slot {
    key: [0; 2],
    id: EMPTY,
};

/// The most a table is filled before it grows (4/5), and how full growing
/// leaves it (3/4 for a known count; a growing one takes half again its size).
const MAX_LOAD: (usize, usize) = (4, 5);
const GROWN_LOAD: (usize, usize) = (3, 4);

/// A multimap from uniform 64-bit hashes to unit ids: linear probing over a
/// table of any size at most four fifths full (a key's home is its hash scaled
/// to the table, so the size need not be a power of two and a table sized for
/// a known count stays near that load), deletion by backward shift.
#[derive(Debug, Clone, Default)]
pub struct KeyBuckets {
    slots: Vec<Slot>,
    /// Occupied slots.
    len: usize,
    spill: Spill<u32>,
}

impl KeyBuckets {
    /// Bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot>() + self.spill.heap_bytes()
    }

    /// The slot where `key`'s probe starts; the table is not empty.
    fn home(&self, key: u64) -> usize {
        home_in(key, self.slots.len())
    }

    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() { 0 } else { i + 1 }
    }

    /// How many steps the probe takes from `from` to reach `to`.
    fn distance(&self, from: usize, to: usize) -> usize {
        if to >= from {
            to - from
        } else {
            to + self.slots.len() - from
        }
    }

    /// The slot holding `key`.
    fn find(&self, key: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.home(key);
        loop {
            let slot = &self.slots[i];
            if slot.id == EMPTY {
                return None;
            }
            if slot.key() == key {
                return Some(i);
            }
            i = self.next(i);
        }
    }

    /// Adds unit `id` (below 2^31) under `key`.
    pub fn insert(&mut self, key: u64, id: u32) {
        debug_assert!(id < SPILLED, "unit id {id} too large for a bucket");
        self.reserve(1);
        let mut i = self.home(key);
        loop {
            let slot = self.slots[i];
            if slot.id == EMPTY {
                self.slots[i] = Slot::new(key, id);
                self.len += 1;
                return;
            }
            if slot.key() == key {
                break;
            }
            i = self.next(i);
        }
        let held = self.slots[i].id;
        if held & SPILLED != 0 {
            self.slots[i].id = self.spill.push(held, id);
            return;
        }
        self.slots[i].id = self.spill.open(held, id);
    }

    /// Removes unit `id` from `key`'s bucket, dropping the key when it empties.
    pub fn remove(&mut self, key: u64, id: u32) {
        let Some(i) = self.find(key) else { return };
        let held = self.slots[i].id;
        if held & SPILLED == 0 {
            if held == id {
                self.delete(i);
            }
            return;
        }
        if let Some(last) = self.spill.remove(held, |&x| x == id) {
            self.slots[i].id = last;
        }
    }

    /// Empties slot `i`, moving later slots of its run back so that every key
    /// stays reachable from its home.
    fn delete(&mut self, i: usize) {
        let mut hole = i;
        let mut j = self.next(i);
        while self.slots[j].id != EMPTY {
            let home = self.home(self.slots[j].key());
            // The slot may move back when the hole lies between its home and it.
            if self.distance(home, j) >= self.distance(hole, j) {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
            j = self.next(j);
        }
        self.slots[hole] = FREE_SLOT;
        self.len -= 1;
    }

    /// The unit ids under `key`.
    pub fn get(&self, key: u64) -> &[u32] {
        self.find(key).map_or(&[], |i| self.ids(&self.slots[i].id))
    }

    fn ids<'a>(&'a self, id: &'a u32) -> &'a [u32] {
        if id & SPILLED == 0 {
            std::slice::from_ref(id)
        } else {
            self.spill.get(*id)
        }
    }

    /// Asks the processor to fetch the slot `key`'s lookup starts at, so that
    /// the lookups of many keys wait for memory together.
    pub fn prefetch(&self, key: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(key)]);
        }
    }

    /// Room for `additional` more keys without growing the table: sized for
    /// exactly that many when it was empty (a full build knows its count),
    /// else half again its size at least, so that growing one key at a time
    /// rehashes a bounded number of times.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len + additional;
        if needed * MAX_LOAD.1 <= self.slots.len() * MAX_LOAD.0 {
            return;
        }
        self.rehash_in_place(Self::size_for(needed).max(self.slots.len() * 3 / 2));
    }

    /// Gives back room reserved and not used: a table emptier than
    /// [`GROWN_LOAD`] is rehashed into the size that holds its keys at that
    /// load (in place, so it costs a sort, not memory).
    pub fn shrink_to_fit(&mut self) {
        let size = Self::size_for(self.len);
        if size < self.slots.len() {
            self.rehash_in_place(size);
        }
    }

    /// Rehashes the keys into `size` slots of the table itself, grown in place
    /// or its end given back: a new table beside the old one would add the
    /// old one to the build's peak (docs/experiments/scale.md, "2026-12-07:
    /// band keys not kept, tables shrunk in place"). Sorted by home, each slot
    /// takes its home or the place after the one before it, as linear probing
    /// puts them; those pushed past the end are placed again, wrapping round.
    fn rehash_in_place(&mut self, size: usize) {
        debug_assert!(self.len < size);
        if size > self.slots.len() {
            // Exactly: a large table's growth is a remap, not a copy.
            self.slots.reserve_exact(size - self.slots.len());
            self.slots.resize(size, FREE_SLOT);
        }
        let mut n = 0;
        for i in 0..self.slots.len() {
            if self.slots[i].id != EMPTY {
                self.slots.swap(n, i);
                n += 1;
            }
        }
        // Homes in a table of any size follow the spread hash's order.
        self.slots[..n].sort_unstable_by_key(|slot| spread(slot.key()));
        let mut places: Vec<u32> = Vec::with_capacity(n);
        let mut after = 0;
        for slot in &self.slots[..n] {
            let place = home_in(slot.key(), size).max(after);
            places.push(u32::try_from(place).expect("a table of fewer than 2^32 slots"));
            after = place + 1;
        }
        let fits = places.partition_point(|&place| (place as usize) < size);
        let wrapped = self.slots[fits..n].to_vec();
        self.slots[fits..n].fill(FREE_SLOT);
        // Places are increasing and never before their slots: moving the last
        // first overwrites only slots already moved.
        for (i, &place) in places[..fits].iter().enumerate().rev() {
            let place = place as usize;
            if place != i {
                self.slots[place] = self.slots[i];
                self.slots[i] = FREE_SLOT;
            }
        }
        drop(places);
        self.slots.truncate(size);
        self.slots.shrink_to_fit();
        self.len = fits;
        wrapped.into_iter().for_each(|slot| self.place(slot));
    }

    /// The size that holds `keys` at [`GROWN_LOAD`].
    fn size_for(keys: usize) -> usize {
        (keys * GROWN_LOAD.1 / GROWN_LOAD.0 + 1).max(8)
    }

    /// Puts an occupied slot at the first free place from its home; the table
    /// has room.
    fn place(&mut self, slot: Slot) {
        let mut i = self.home(slot.key());
        while self.slots[i].id != EMPTY {
            i = self.next(i);
        }
        self.slots[i] = slot;
        self.len += 1;
    }

    /// Every key with its unit ids.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[u32])> {
        self.slots
            .iter()
            .filter(|s| s.id != EMPTY)
            .map(|s| (s.key(), self.ids(&s.id)))
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
        let mut b = KeyBuckets::default();
        b.insert(7, 1);
        assert_eq!(b.get(7), [1]);
        b.insert(7, 2);
        b.insert(7, 3);
        assert_eq!(b.get(7), [1, 2, 3]);
        b.remove(7, 1);
        let mut ids = b.get(7).to_vec();
        ids.sort_unstable();
        assert_eq!(ids, [2, 3]);
        b.remove(7, 3);
        assert_eq!(b.get(7), [2]);
        // Two values are a pair, a third makes a list; freed places are reused.
        b.insert(8, 4);
        b.insert(8, 5);
        assert_eq!(b.get(8), [4, 5]);
        assert_eq!((b.spill.pairs.len(), b.spill.lists.len()), (1, 1));
        b.insert(8, 6);
        assert_eq!(b.get(8), [4, 5, 6]);
        b.insert(9, 7);
        b.insert(9, 8);
        assert_eq!((b.spill.pairs.len(), b.spill.lists.len()), (1, 1));
        b.remove(9, 8);
        assert_eq!(b.get(9), [7]);
        b.remove(7, 2);
        assert!(b.get(7).is_empty());
        assert_eq!(b.iter().count(), 2);
        b.remove(10, 1);
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
                table.insert(key, id);
                ids.push(id);
            }
            model.retain(|_, ids| !ids.is_empty());
            for probe in [key, rnd() % 97] {
                let mut got: Vec<u32> = table.get(probe).to_vec();
                got.sort_unstable();
                let mut want = model.get(&probe).cloned().unwrap_or_default();
                want.sort_unstable();
                assert_eq!(got, want, "step {step}, key {probe}");
            }
            assert_eq!(table.iter().count(), model.len(), "step {step}");
        }
        assert!(table.slots.len() > 64, "the table never grew");
    }

    /// A table reserved far beyond its keys and shrunk in place holds the same
    /// ids under every key, in far fewer slots, and goes on agreeing with a
    /// map through more inserts and removals; half its keys have homes at
    /// the table's end, so that placing them wraps round to its front.
    #[test]
    fn a_table_shrunk_in_place_keeps_every_key() {
        use std::collections::BTreeMap;
        // The multiplicative inverse of `spread`'s odd factor (Newton's method).
        let factor: u64 = 0x9e37_79b9_7f4a_7c15;
        let inverse = (0..6).fold(factor, |x, _| {
            x.wrapping_mul(2u64.wrapping_sub(factor.wrapping_mul(x)))
        });
        let mut state = 11u64;
        let mut rnd = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            crate::fingerprint::mix(state)
        };
        let mut table = KeyBuckets::default();
        table.reserve(20_000);
        let mut model: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
        for i in 0..3000u32 {
            let key = match i % 2 {
                0 => (u64::MAX - rnd() % 4096).wrapping_mul(inverse),
                _ => rnd(),
            };
            for id in 0..=(rnd() % 3) as u32 {
                table.insert(key, i * 4 + id);
                model.entry(key).or_default().push(i * 4 + id);
            }
        }
        let reserved = table.slots.len();
        table.shrink_to_fit();
        assert!(
            table.slots.len() * 3 < reserved,
            "{} of {reserved}",
            table.slots.len()
        );
        let agrees = |table: &KeyBuckets, model: &BTreeMap<u64, Vec<u32>>| {
            assert_eq!(table.iter().count(), model.len());
            for (&key, ids) in model {
                let mut got = table.get(key).to_vec();
                got.sort_unstable();
                let mut want = ids.clone();
                want.sort_unstable();
                assert_eq!(got, want, "key {key:x}");
            }
        };
        agrees(&table, &model);
        let wrapped = |table: &KeyBuckets| {
            let homes = table.slots.iter().enumerate();
            homes
                .filter(|(i, s)| s.id != EMPTY && *i < table.home(s.key()))
                .count()
        };
        assert!(wrapped(&table) > 0, "no key wrapped round");
        let keys: Vec<u64> = model.keys().copied().collect();
        for &key in keys.iter().step_by(3) {
            for id in model.remove(&key).unwrap() {
                table.remove(key, id);
            }
        }
        agrees(&table, &model);
    }
}
