//! A set of `u64` values stored as disjoint half-open ranges, for received packet
//! numbers (ACK ranges) and for acknowledged/received stream offsets — and, in
//! quiclab-tcp, for the receiver's out-of-order blocks and the sender's SACKed bytes
//! (the one interval map of the workspace). Lookups, insertions and removals cost
//! O(log n) plus the ranges merged or listed.

use std::collections::BTreeMap;
use std::ops::Range;

/// Disjoint, non-adjacent half-open ranges, kept in order. Inserting merges neighbours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    // start -> end (exclusive); invariant: ranges are disjoint and never touch.
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn insert_one(&mut self, v: u64) -> bool {
        self.insert(v..v.saturating_add(1))
    }

    /// Adds `r`; returns whether any value in it was new.
    pub fn insert(&mut self, r: Range<u64>) -> bool {
        if r.start >= r.end {
            return false;
        }
        // Fast path: at or past the start of the highest range (packet numbers and
        // stream offsets mostly arrive in order), so nothing above can merge: extend or
        // append in place instead of removing and re-inserting the last range.
        if let Some(mut last) = self.map.last_entry() {
            let (s, e) = (*last.key(), *last.get());
            if s <= r.start {
                if e >= r.end {
                    return false;
                }
                if e >= r.start {
                    *last.get_mut() = r.end;
                } else {
                    self.map.insert(r.start, r.end);
                }
                return true;
            }
        }
        let (mut start, mut end) = (r.start, r.end);
        // A range starting at or before `start` that reaches it swallows the start.
        if let Some((&s, &e)) = self.map.range(..=start).next_back() {
            if e >= end {
                return false;
            }
            if e >= start {
                start = s;
                self.map.remove(&s);
            }
        }
        // Ranges starting inside [start, end] merge into it.
        loop {
            let next = self.map.range(start..=end).next().map(|(&s, &e)| (s, e));
            match next {
                Some((s, e)) => {
                    self.map.remove(&s);
                    end = end.max(e);
                }
                None => break,
            }
        }
        self.map.insert(start, end);
        true
    }

    /// Removes every value in `r`.
    ///
    /// Walks the overlapping ranges from the highest down without collecting them (this
    /// runs for every acknowledged STREAM frame): a range reaching below `r` is cut short
    /// in place, a part above `r` is re-inserted at `r.end`.
    pub fn remove(&mut self, r: Range<u64>) {
        if r.start >= r.end {
            return;
        }
        while let Some((&s, e)) = self.map.range_mut(..r.end).next_back() {
            let old_end = *e;
            if old_end <= r.start {
                break;
            }
            if s < r.start {
                // The part below `r` stays; it ends at r.start, which ends the walk.
                *e = r.start;
            } else {
                self.map.remove(&s);
            }
            if old_end > r.end {
                self.map.insert(r.end, old_end);
            }
        }
    }

    pub fn contains(&self, v: u64) -> bool {
        self.containing(v).is_some()
    }

    /// The range containing `v`, if any (TCP's SACK block for a segment, RFC 2018 §4).
    pub fn containing(&self, v: u64) -> Option<Range<u64>> {
        let (&s, &e) = self.map.range(..=v).next_back()?;
        (v < e).then_some(s..e)
    }

    /// Removes every value below `at` (delivered in order).
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

    /// The smallest value, if any.
    #[cfg(test)]
    pub fn min(&self) -> Option<u64> {
        self.map.keys().next().copied()
    }

    /// The largest value, if any.
    #[cfg(test)]
    pub fn max(&self) -> Option<u64> {
        self.map.values().next_back().map(|e| e - 1)
    }

    /// The parts of `r` not in the set, in ascending order (what an insert of `r`
    /// would add).
    pub fn gaps(&self, r: Range<u64>) -> impl Iterator<Item = Range<u64>> + '_ {
        let (start, end) = (r.start, r.end.max(r.start));
        // The range that may cover `start`, then those starting inside `r`.
        let before = self.map.range(..=start).next_back();
        let inside = self.map.range(start.saturating_add(1).min(end)..end);
        let mut pos = start;
        before
            .into_iter()
            .chain(inside)
            .map(|(&s, &e)| s..e)
            .chain(std::iter::once(end..end))
            .filter_map(move |covered| {
                let gap = pos..covered.start.min(end);
                pos = pos.max(covered.end);
                (gap.start < gap.end).then_some(gap)
            })
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Range<u64>> + '_ {
        self.map.iter().map(|(&s, &e)| s..e)
    }

    /// The first (lowest) range.
    pub fn first(&self) -> Option<Range<u64>> {
        self.map.iter().next().map(|(&s, &e)| s..e)
    }

    /// Removes the lowest range and returns it.
    pub fn pop_first(&mut self) -> Option<Range<u64>> {
        self.map.pop_first().map(|(s, e)| s..e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_and_splits() {
        let mut s = RangeSet::new();
        assert!(s.insert(5..10));
        assert!(s.insert(12..15));
        assert!(s.insert(10..12));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![5..15]);
        assert!(!s.insert(6..9));
        s.remove(7..8);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![5..7, 8..15]);
        assert!(s.contains(5) && !s.contains(7) && s.contains(14) && !s.contains(15));
        assert_eq!((s.min(), s.max()), (Some(5), Some(14)));
        assert_eq!((s.containing(5), s.containing(7)), (Some(5..7), None));
        assert_eq!(s.containing(14), Some(8..15));
        s.remove_below(10);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![10..15]);
        s.remove_below(20);
        assert!(s.is_empty());
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((any::<bool>(), 0u64..64, 0u64..16), 0..40), cut in 0u64..96) {
            let mut s = RangeSet::new();
            let mut bits = [false; 96];
            for (ins, start, len) in ops {
                if ins { s.insert(start..start + len); } else { s.remove(start..start + len); }
                for b in bits.iter_mut().take((start + len) as usize).skip(start as usize) { *b = ins; }
            }
            for (i, &b) in bits.iter().enumerate() { prop_assert_eq!(s.contains(i as u64), b); }
            let v: Vec<_> = s.iter().collect();
            for w in v.windows(2) { prop_assert!(w[0].end < w[1].start); }
            // The range containing a value is the maximal run of set bits around it.
            for r in &v {
                prop_assert_eq!(s.containing(r.start), Some(r.clone()));
                prop_assert_eq!(s.containing(r.end - 1), Some(r.clone()));
            }
            s.remove_below(cut);
            for b in bits.iter_mut().take(cut as usize) { *b = false; }
            for (i, &b) in bits.iter().enumerate() { prop_assert_eq!(s.contains(i as u64), b); }
        }

        #[test]
        fn gaps_are_what_an_insert_adds(ranges in proptest::collection::vec((0u64..64, 0u64..16), 0..20), start in 0u64..80, len in 0u64..30) {
            let mut s = RangeSet::new();
            for (a, l) in ranges { s.insert(a..a + l); }
            let gaps: Vec<_> = s.gaps(start..start + len).collect();
            for v in start..start + len {
                prop_assert_eq!(gaps.iter().any(|g| g.contains(&v)), !s.contains(v));
            }
            for w in gaps.windows(2) { prop_assert!(w[0].end < w[1].start); }
            prop_assert!(gaps.iter().all(|g| g.start >= start && g.end <= start + len && g.start < g.end));
        }
    }
}
