//! The QPACK dynamic table (RFC 9204 §3.2): a FIFO of (name, value) entries addressed
//! by absolute index, its size the sum of `name + value + 32` per entry, bounded by a
//! capacity. Shared by encoder and decoder; each keeps its own copy.

use std::collections::VecDeque;

/// Per-entry overhead (RFC 9204 §3.2.1).
pub const ENTRY_OVERHEAD: usize = 32;

/// One entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

impl Entry {
    pub fn size(&self) -> usize {
        entry_size(&self.name, &self.value)
    }
}

pub fn entry_size(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + ENTRY_OVERHEAD
}

/// The table. `dropped` entries were evicted; the oldest live entry has absolute index
/// `dropped`, the newest `inserted - 1`.
#[derive(Debug, Default)]
pub struct DynamicTable {
    entries: VecDeque<Entry>,
    dropped: u64,
    size: usize,
    capacity: usize,
}

impl DynamicTable {
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn size(&self) -> usize {
        self.size
    }
    /// Total number of insertions ever (the Insert Count).
    pub fn inserted(&self) -> u64 {
        self.dropped + self.entries.len() as u64
    }
    /// Absolute index of the oldest live entry.
    pub fn first(&self) -> u64 {
        self.dropped
    }

    /// The entry with absolute index `abs`, if live.
    pub fn get(&self, abs: u64) -> Option<&Entry> {
        let i = abs.checked_sub(self.dropped)?;
        self.entries.get(usize::try_from(i).ok()?)
    }

    /// Changes the capacity, evicting as needed; `false` (and no change) if entries
    /// older than `keep_from` would have to go.
    pub fn set_capacity(&mut self, capacity: usize, keep_from: u64) -> bool {
        if !self.can_evict_to(capacity, keep_from) {
            return false;
        }
        self.capacity = capacity;
        self.evict_to(capacity);
        true
    }

    /// Whether `size` bytes fit after evicting only entries older than `keep_from`.
    pub fn can_insert(&self, size: usize, keep_from: u64) -> bool {
        size <= self.capacity && self.can_evict_to(self.capacity - size, keep_from)
    }

    /// Inserts an entry, evicting the oldest; the caller checked [`Self::can_insert`].
    /// Returns `false` (no change) if it does not fit the capacity.
    pub fn insert(&mut self, entry: Entry) -> bool {
        let size = entry.size();
        if size > self.capacity {
            return false;
        }
        self.evict_to(self.capacity - size);
        self.size += size;
        self.entries.push_back(entry);
        true
    }

    fn can_evict_to(&self, target: usize, keep_from: u64) -> bool {
        let mut size = self.size;
        for (abs, e) in (self.dropped..).zip(self.entries.iter()) {
            if size <= target {
                return true;
            }
            if abs >= keep_from {
                return false;
            }
            size -= e.size();
        }
        size <= target
    }

    fn evict_to(&mut self, target: usize) {
        while self.size > target {
            let Some(e) = self.entries.pop_front() else {
                break;
            };
            self.size -= e.size();
            self.dropped += 1;
        }
    }

    /// Absolute index of the newest entry equal to (name, value), and failing that of
    /// the newest with that name: (index, full match).
    pub fn find(&self, name: &[u8], value: &[u8]) -> Option<(u64, bool)> {
        let mut name_match = None;
        for (i, e) in self.entries.iter().enumerate().rev() {
            if e.name == name {
                let abs = self.dropped + i as u64;
                if e.value == value {
                    return Some((abs, true));
                }
                name_match.get_or_insert((abs, false));
            }
        }
        name_match
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(n: &str, v: &str) -> Entry {
        Entry {
            name: n.into(),
            value: v.into(),
        }
    }

    #[test]
    fn eviction_and_pinning() {
        let mut t = DynamicTable::default();
        assert!(t.set_capacity(100, 0));
        assert!(t.insert(e("a", "1"))); // 34
        assert!(t.insert(e("b", "2"))); // 68
        assert!(t.can_insert(34, 1)); // evicts entry 0 only
        assert!(!t.can_insert(34, 0)); // entry 0 pinned
        assert!(t.insert(e("c", "3")));
        assert_eq!((t.first(), t.inserted(), t.size()), (1, 3, 68));
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(2), Some(&e("c", "3")));
        assert_eq!(t.find(b"b", b"x"), Some((1, false)));
        assert_eq!(t.find(b"c", b"3"), Some((2, true)));
        assert!(!t.insert(e("x", &"y".repeat(100))));
        assert!(!t.set_capacity(10, 1));
        assert!(t.set_capacity(0, 3));
        assert_eq!(t.size(), 0);
    }
}
