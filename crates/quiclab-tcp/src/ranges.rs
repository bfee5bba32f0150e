//! The receiver's out-of-order blocks as an interval map: contiguous byte ranges kept
//! merged (start -> end, disjoint and never touching) in a `BTreeMap`, so the block
//! containing an offset, an insertion and the lowest `k` blocks cost O(log n) (plus
//! the blocks merged or listed), as SACK generation (RFC 2018 §4) needs on every ACK.
//!
//! quiclab-proto's `RangeSet` has the same representation but no "block containing
//! this offset" query; this type adds it without touching the QUIC core.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ranges {
    map: BTreeMap<u64, u64>,
}

impl Ranges {
    /// Adds `[lo, hi)`, merging with every range it overlaps or touches.
    pub fn insert(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        let (mut start, mut end) = (lo, hi);
        if let Some((&s, &e)) = self.map.range(..=lo).next_back() {
            if e >= hi {
                return;
            }
            if e >= lo {
                start = s;
            }
        }
        // Every range starting inside [start, end] is swallowed.
        while let Some((&s, &e)) = self.map.range(start..=end).next() {
            self.map.remove(&s);
            end = end.max(e);
        }
        self.map.insert(start, end);
    }

    /// Removes every byte of `[lo, hi)`.
    pub fn remove(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        while let Some((&s, &e)) = self.map.range(..hi).next_back() {
            if e <= lo {
                break;
            }
            self.map.remove(&s);
            if e > hi {
                self.map.insert(hi, e);
            }
            if s < lo {
                self.map.insert(s, lo);
                break;
            }
        }
    }

    /// The parts of `[lo, hi)` no range covers, in ascending order. O(log n + k) for
    /// k ranges inside `[lo, hi)`.
    pub fn gaps(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if lo >= hi {
            return out;
        }
        let mut at = lo;
        if let Some((_, &e)) = self.map.range(..=lo).next_back() {
            at = at.max(e);
        }
        for (&s, &e) in self.map.range(lo..hi) {
            if s > at {
                out.push((at, s));
            }
            at = at.max(e);
        }
        if at < hi {
            out.push((at, hi));
        }
        out
    }

    /// The highest ranges first.
    pub fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().rev().map(|(&s, &e)| (s, e))
    }

    /// The range containing `at`, if any.
    pub fn containing(&self, at: u64) -> Option<(u64, u64)> {
        let (&s, &e) = self.map.range(..=at).next_back()?;
        (at < e).then_some((s, e))
    }

    /// Drops every byte below `at` (delivered in order).
    pub fn remove_below(&mut self, at: u64) {
        while let Some(entry) = self.map.first_entry() {
            let (s, e) = (*entry.key(), *entry.get());
            if s >= at {
                break;
            }
            entry.remove();
            if e > at {
                self.map.insert(at, e);
                break;
            }
        }
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&s, &e)| (s, e))
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_touching_and_overlapping_ranges() {
        let mut r = Ranges::default();
        r.insert(10, 20);
        r.insert(30, 40);
        r.insert(20, 30);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(10, 40)]);
        r.insert(5, 12);
        r.insert(50, 60);
        assert_eq!(r.containing(5), Some((5, 40)));
        assert_eq!(r.containing(40), None);
        assert_eq!(r.containing(59), Some((50, 60)));
        r.remove_below(35);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(35, 40), (50, 60)]);
        r.remove_below(55);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(55, 60)]);
    }

    proptest! {
        /// Against a bitmap: the same bytes, merged into maximal runs.
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u64..200, 1u64..30), 1..40),
                            cut in 0u64..230) {
            let mut r = Ranges::default();
            let mut bits = [false; 260];
            for (lo, len) in ops {
                r.insert(lo, lo + len);
                for b in &mut bits[lo as usize..(lo + len) as usize] {
                    *b = true;
                }
            }
            r.remove_below(cut);
            for b in &mut bits[..cut as usize] {
                *b = false;
            }
            r.remove(cut + 7, cut + 19);
            for b in &mut bits[(cut + 7) as usize..(cut + 19) as usize] {
                *b = false;
            }
            let gaps = r.gaps(cut, 235);
            let covered: u64 = gaps.iter().map(|(a, b)| b - a).sum();
            let free = bits[cut as usize..235].iter().filter(|b| !**b).count() as u64;
            prop_assert_eq!(covered, free);
            for (a, b) in gaps {
                prop_assert!(!bits[a as usize..b as usize].iter().any(|x| *x));
            }
            let mut runs = Vec::new();
            let mut i = 0;
            while i < bits.len() {
                if bits[i] {
                    let s = i;
                    while i < bits.len() && bits[i] {
                        i += 1;
                    }
                    runs.push((s as u64, i as u64));
                } else {
                    i += 1;
                }
            }
            prop_assert_eq!(r.iter().collect::<Vec<_>>(), runs.clone());
            for (s, e) in runs {
                prop_assert_eq!(r.containing(s), Some((s, e)));
                prop_assert_eq!(r.containing(e - 1), Some((s, e)));
            }
        }
    }
}
