//! An ordered map that is a sorted `Vec` while small and a `BTreeMap` once large, for
//! the endpoint's scheduling indexes (`schedule.rs`).
//!
//! Why: an endpoint usually holds one or a few connections (every endpoint of the
//! simulator does), and its indexes are touched several times per datagram. A B-tree
//! with one entry still pays for node navigation, and for a node allocation each time it
//! goes from empty to one entry: ~10% of the simulator's instructions per datagram went
//! to the scheduler's B-trees. A sorted `Vec` of a few entries is a binary search and a
//! short memmove. A server holding 10,000 connections crosses [`SMALL_MAX`] and gets the
//! B-tree's O(log n) back, so no operation becomes O(n) in the number of entries.
//!
//! Both representations hold the same ordered map; every method answers exactly as a
//! `BTreeMap` would (checked against one in the tests below), so the choice cannot
//! change what the endpoint does.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Above this many entries the map becomes a B-tree.
const SMALL_MAX: usize = 32;
/// At or below this many entries a B-tree becomes a `Vec` again (well under
/// [`SMALL_MAX`], so a map hovering at the limit does not convert back and forth).
const SMALL_AGAIN: usize = 8;

pub(super) enum SmallMap<K, V> {
    /// Sorted by key, keys distinct, at most `SMALL_MAX` entries.
    Small(Vec<(K, V)>),
    Large(BTreeMap<K, V>),
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap::Small(Vec::new())
    }
}

impl<K: Ord + Copy, V> SmallMap<K, V> {
    pub fn len(&self) -> usize {
        match self {
            SmallMap::Small(v) => v.len(),
            SmallMap::Large(m) => m.len(),
        }
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        match self {
            SmallMap::Small(v) => v.binary_search_by(|(x, _)| x.cmp(k)).ok().map(|i| &v[i].1),
            SmallMap::Large(m) => m.get(k),
        }
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.get(k).is_some()
    }

    /// Inserts or replaces; returns the old value, as `BTreeMap::insert`.
    pub fn insert(&mut self, k: K, val: V) -> Option<V> {
        match self {
            SmallMap::Small(v) => match v.binary_search_by(|(x, _)| x.cmp(&k)) {
                Ok(i) => Some(std::mem::replace(&mut v[i].1, val)),
                Err(i) if v.len() < SMALL_MAX => {
                    v.insert(i, (k, val));
                    None
                }
                Err(_) => {
                    let mut m: BTreeMap<K, V> = v.drain(..).collect();
                    m.insert(k, val);
                    *self = SmallMap::Large(m);
                    None
                }
            },
            SmallMap::Large(m) => m.insert(k, val),
        }
    }

    pub fn remove(&mut self, k: &K) -> Option<V> {
        match self {
            SmallMap::Small(v) => {
                let i = v.binary_search_by(|(x, _)| x.cmp(k)).ok()?;
                Some(v.remove(i).1)
            }
            SmallMap::Large(m) => {
                let old = m.remove(k);
                if m.len() <= SMALL_AGAIN {
                    *self = SmallMap::Small(std::mem::take(m).into_iter().collect());
                }
                old
            }
        }
    }

    /// Removes and returns the entry with the least key. A `Vec` keeps its buffer, so
    /// emptying the map this way and refilling it allocates nothing.
    pub fn pop_first(&mut self) -> Option<(K, V)> {
        match self {
            SmallMap::Small(v) if v.is_empty() => None,
            SmallMap::Small(v) => Some(v.remove(0)),
            SmallMap::Large(m) => {
                let first = m.pop_first();
                if m.len() <= SMALL_AGAIN {
                    *self = SmallMap::Small(std::mem::take(m).into_iter().collect());
                }
                first
            }
        }
    }

    /// The entries with keys in `(lo, hi)`, in key order.
    pub fn range(&self, lo: Bound<K>, hi: Bound<K>) -> impl Iterator<Item = (&K, &V)> + '_ {
        match self {
            SmallMap::Small(v) => {
                let start = match lo {
                    Bound::Included(k) => v.partition_point(|(x, _)| *x < k),
                    Bound::Excluded(k) => v.partition_point(|(x, _)| *x <= k),
                    Bound::Unbounded => 0,
                };
                let end = match hi {
                    Bound::Included(k) => v.partition_point(|(x, _)| *x <= k),
                    Bound::Excluded(k) => v.partition_point(|(x, _)| *x < k),
                    Bound::Unbounded => v.len(),
                };
                let slice = &v[start..end.max(start)];
                Either::Left(slice.iter().map(|(k, v)| (k, v)))
            }
            SmallMap::Large(m) => Either::Right(m.range((lo, hi))),
        }
    }

    /// The least key.
    pub fn first(&self) -> Option<&K> {
        match self {
            SmallMap::Small(v) => v.first().map(|(k, _)| k),
            SmallMap::Large(m) => m.first_key_value().map(|(k, _)| k),
        }
    }

    /// The least key at or after `from`: `range(Included(from), Unbounded)`'s first,
    /// with one binary search (the round robin asks this for every datagram).
    pub fn first_at_or_after(&self, from: &K) -> Option<&K> {
        match self {
            SmallMap::Small(v) => v.get(v.partition_point(|(x, _)| x < from)).map(|(k, _)| k),
            SmallMap::Large(m) => m.range(from..).next().map(|(k, _)| k),
        }
    }

    /// Moves the entry of `old` to the key `new` (which must not be present), as
    /// `remove(old)` then `insert(new, value)`; in place when `new` sorts between
    /// `old`'s neighbours, so a deadline that moves without passing another connection's
    /// costs one search. Returns false (and changes nothing) if `old` is absent.
    pub fn rekey(&mut self, old: &K, new: K) -> bool {
        if let SmallMap::Small(v) = self {
            let Ok(i) = v.binary_search_by(|(x, _)| x.cmp(old)) else {
                return false;
            };
            let after_prev = i == 0 || v[i - 1].0 < new;
            let before_next = v.get(i + 1).is_none_or(|(x, _)| new < *x);
            if after_prev && before_next {
                v[i].0 = new;
                return true;
            }
        }
        match self.remove(old) {
            Some(val) => {
                self.insert(new, val);
                true
            }
            None => false,
        }
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.range(Bound::Unbounded, Bound::Unbounded)
    }
}

/// A set on [`SmallMap`].
pub(super) type SmallSet<K> = SmallMap<K, ()>;

/// One of two iterators (the two representations' ranges).
enum Either<A, B> {
    Left(A),
    Right(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            Either::Left(a) => a.next(),
            Either::Right(b) => b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::DetRng;

    fn bound(kind: u64, k: u32) -> Bound<u32> {
        match kind % 3 {
            0 => Bound::Included(k),
            1 => Bound::Excluded(k),
            _ => Bound::Unbounded,
        }
    }

    /// Random operations on a `SmallMap` and a `BTreeMap` side by side, growing past
    /// `SMALL_MAX` and shrinking below `SMALL_AGAIN` many times: every answer and the
    /// contents must match.
    #[test]
    fn answers_as_a_btreemap_through_both_representations() {
        let mut rng = DetRng::new(29);
        let mut small: SmallMap<u32, u64> = SmallMap::default();
        let mut reference: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut was_small, mut was_large) = (0, 0);
        for step in 0..40_000u64 {
            // Phases that mostly insert, then mostly remove, over a key space wider
            // than SMALL_MAX.
            let growing = (step / 500) % 2 == 0;
            let k = (rng.next_u64() % 80) as u32;
            let op = rng.next_u64() % 10;
            match op {
                0..=4 if growing => assert_eq!(small.insert(k, step), reference.insert(k, step)),
                0..=4 => assert_eq!(small.remove(&k), reference.remove(&k)),
                5 => assert_eq!(small.pop_first(), reference.pop_first()),
                6 if k.is_multiple_of(2) => assert_eq!(small.first(), reference.keys().next()),
                6 if k.is_multiple_of(3) => {
                    let want = reference.range(k..).next().map(|(k, _)| k);
                    assert_eq!(small.first_at_or_after(&k), want);
                }
                6 if k.is_multiple_of(5) && reference.contains_key(&k) => {
                    let new = (rng.next_u64() % 80) as u32;
                    if !reference.contains_key(&new) {
                        assert!(small.rekey(&k, new));
                        let val = reference.remove(&k).unwrap();
                        reference.insert(new, val);
                    }
                }
                6 if k.is_multiple_of(5) => assert!(!small.rekey(&k, k + 1)),
                6 => assert_eq!(small.get(&k), reference.get(&k)),
                7 => assert_eq!(small.contains_key(&k), reference.contains_key(&k)),
                _ => {
                    let (a, b) = (rng.next_u64(), (rng.next_u64() % 80) as u32);
                    let (lo, hi) = (bound(a, k), bound(a / 3, b));
                    // BTreeMap::range panics on an empty or inverted range; compare
                    // only the ranges it accepts.
                    let inverted = match (lo, hi) {
                        (Bound::Included(l) | Bound::Excluded(l), Bound::Included(h)) => l > h,
                        (Bound::Included(l), Bound::Excluded(h)) => l > h,
                        (Bound::Excluded(l), Bound::Excluded(h)) => l >= h,
                        _ => false,
                    };
                    if !inverted {
                        let got: Vec<_> = small.range(lo, hi).collect();
                        let want: Vec<_> = reference.range((lo, hi)).collect();
                        assert_eq!(got, want, "range {lo:?}..{hi:?}");
                    }
                }
            }
            assert_eq!(small.len(), reference.len());
            assert!(small.iter().eq(reference.iter()));
            match &small {
                SmallMap::Small(v) => {
                    assert!(v.len() <= SMALL_MAX);
                    was_small += 1;
                }
                SmallMap::Large(_) => was_large += 1,
            }
        }
        assert!(
            was_small > 1000 && was_large > 1000,
            "{was_small} {was_large}"
        );
    }
}
