//! A set of `u64` values stored as disjoint half-open ranges, for received packet
//! numbers (ACK ranges) and for acknowledged/received stream offsets — and, in
//! quiclab-tcp, for the receiver's out-of-order blocks and the sender's SACKed bytes
//! (the one interval map of the workspace). Lookups, insertions and removals cost
//! O(log n) plus the ranges merged or listed; a set of a few ranges is a scan of an
//! array held in place.

mod inline;

use inline::{Inline, CAP};
use std::collections::{btree_map, BTreeMap};
use std::fmt;
use std::ops::Range;

/// Disjoint, non-adjacent half-open ranges, kept in order. Inserting merges neighbours.
///
/// Up to [`CAP`] ranges are held in place ([`inline`]: the common case, one to a few
/// ranges, with no allocation and no tree walk); more move to a B-tree, which moves
/// back once removals leave half of `CAP` or fewer (the gap between the two sizes keeps
/// a set near the limit from moving at every change). Both forms mean the same set.
#[derive(Clone, Default)]
pub struct RangeSet {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Inline(Inline),
    // start -> end (exclusive); invariant: ranges are disjoint and never touch.
    Tree(BTreeMap<u64, u64>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Inline(Inline::default())
    }
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Inline(s) => s.ranges().len(),
            Repr::Tree(map) => map.len(),
        }
    }

    pub fn insert_one(&mut self, v: u64) -> bool {
        self.insert(v..v.saturating_add(1))
    }

    /// Adds `r`; returns whether any value in it was new.
    pub fn insert(&mut self, r: Range<u64>) -> bool {
        if r.start >= r.end {
            return false;
        }
        if let Repr::Inline(s) = &mut self.repr {
            if let Some(added) = s.insert(r.start, r.end) {
                return added;
            }
            self.repr = Repr::Tree(s.ranges().iter().copied().collect());
        }
        let Repr::Tree(map) = &mut self.repr else {
            unreachable!("moved to the tree above")
        };
        tree_insert(map, r)
    }

    /// Removes every value in `r`.
    pub fn remove(&mut self, r: Range<u64>) {
        if r.start >= r.end {
            return;
        }
        if let Repr::Inline(s) = &mut self.repr {
            if s.remove(r.start, r.end).is_some() {
                return;
            }
            self.repr = Repr::Tree(s.ranges().iter().copied().collect());
        }
        if let Repr::Tree(map) = &mut self.repr {
            tree_remove(map, r);
        }
        self.shrink();
    }

    /// Back to the inline form once a removal left few enough ranges.
    fn shrink(&mut self) {
        if let Repr::Tree(map) = &self.repr {
            if map.len() <= CAP / 2 {
                if let Some(s) = Inline::from_sorted(map.iter().map(|(&s, &e)| (s, e))) {
                    self.repr = Repr::Inline(s);
                }
            }
        }
    }

    pub fn contains(&self, v: u64) -> bool {
        self.containing(v).is_some()
    }

    /// The range containing `v`, if any (TCP's SACK block for a segment, RFC 2018 §4).
    pub fn containing(&self, v: u64) -> Option<Range<u64>> {
        let (s, e) = self.last_starting_at_or_below(v)?;
        (v < e).then_some(s..e)
    }

    fn last_starting_at_or_below(&self, v: u64) -> Option<(u64, u64)> {
        match &self.repr {
            Repr::Inline(s) => s.last_starting_at_or_below(v),
            Repr::Tree(map) => map.range(..=v).next_back().map(|(&s, &e)| (s, e)),
        }
    }

    /// Removes every value below `at` (delivered in order).
    pub fn remove_below(&mut self, at: u64) {
        self.remove(0..at);
    }

    /// The smallest value, if any.
    #[cfg(test)]
    pub fn min(&self) -> Option<u64> {
        self.first().map(|r| r.start)
    }

    /// The largest value, if any.
    #[cfg(test)]
    pub fn max(&self) -> Option<u64> {
        self.iter().next_back().map(|r| r.end - 1)
    }

    /// The parts of `r` not in the set, in ascending order (what an insert of `r`
    /// would add).
    pub fn gaps(&self, r: Range<u64>) -> impl Iterator<Item = Range<u64>> + '_ {
        let (start, end) = (r.start, r.end.max(r.start));
        // The range that may cover `start`, then those starting inside `r`.
        let before = self.last_starting_at_or_below(start).map(|(s, e)| s..e);
        let inside = self.starting_in(start.saturating_add(1).min(end), end);
        let mut pos = start;
        before
            .into_iter()
            .chain(inside)
            .chain(std::iter::once(end..end))
            .filter_map(move |covered| {
                let gap = pos..covered.start.min(end);
                pos = pos.max(covered.end);
                (gap.start < gap.end).then_some(gap)
            })
    }

    /// The ranges starting in `lo..hi` (`lo <= hi`).
    fn starting_in(&self, lo: u64, hi: u64) -> Iter<'_> {
        match &self.repr {
            Repr::Inline(s) => Iter::Inline(s.starting_in(lo, hi).iter()),
            Repr::Tree(map) => Iter::Tree(map.range(lo..hi)),
        }
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Range<u64>> + '_ {
        match &self.repr {
            Repr::Inline(s) => Iter::Inline(s.ranges().iter()),
            Repr::Tree(map) => Iter::Tree(map.range(..)),
        }
    }

    /// The first (lowest) range.
    pub fn first(&self) -> Option<Range<u64>> {
        let (s, e) = match &self.repr {
            Repr::Inline(s) => s.ranges().first().copied(),
            Repr::Tree(map) => map.first_key_value().map(|(&s, &e)| (s, e)),
        }?;
        Some(s..e)
    }

    /// Removes the lowest range and returns it.
    pub fn pop_first(&mut self) -> Option<Range<u64>> {
        let first = match &mut self.repr {
            Repr::Inline(s) => s.pop_first(),
            Repr::Tree(map) => map.pop_first(),
        };
        self.shrink();
        first.map(|(s, e)| s..e)
    }
}

/// Adds `r` (non-empty) to the B-tree form; whether any value was new.
fn tree_insert(map: &mut BTreeMap<u64, u64>, r: Range<u64>) -> bool {
    // Fast path: at or past the start of the highest range (packet numbers and
    // stream offsets mostly arrive in order), so nothing above can merge: extend or
    // append in place instead of removing and re-inserting the last range.
    if let Some(mut last) = map.last_entry() {
        let (s, e) = (*last.key(), *last.get());
        if s <= r.start {
            if e >= r.end {
                return false;
            }
            if e >= r.start {
                *last.get_mut() = r.end;
            } else {
                map.insert(r.start, r.end);
            }
            return true;
        }
    }
    let (mut start, mut end) = (r.start, r.end);
    // A range starting at or before `start` that reaches it swallows the start.
    if let Some((&s, &e)) = map.range(..=start).next_back() {
        if e >= end {
            return false;
        }
        if e >= start {
            start = s;
            map.remove(&s);
        }
    }
    // Ranges starting inside [start, end] merge into it.
    loop {
        let next = map.range(start..=end).next().map(|(&s, &e)| (s, e));
        match next {
            Some((s, e)) => {
                map.remove(&s);
                end = end.max(e);
            }
            None => break,
        }
    }
    map.insert(start, end);
    true
}

/// Removes `r` (non-empty) from the B-tree form.
///
/// Walks the overlapping ranges from the highest down without collecting them (this
/// runs for every acknowledged STREAM frame): a range reaching below `r` is cut short
/// in place, a part above `r` is re-inserted at `r.end`.
fn tree_remove(map: &mut BTreeMap<u64, u64>, r: Range<u64>) {
    while let Some((&s, e)) = map.range_mut(..r.end).next_back() {
        let old_end = *e;
        if old_end <= r.start {
            break;
        }
        if s < r.start {
            // The part below `r` stays; it ends at r.start, which ends the walk.
            *e = r.start;
        } else {
            map.remove(&s);
        }
        if old_end > r.end {
            map.insert(r.end, old_end);
        }
    }
}

/// Ranges of either form, in order.
enum Iter<'a> {
    Inline(std::slice::Iter<'a, (u64, u64)>),
    Tree(btree_map::Range<'a, u64, u64>),
}

impl Iterator for Iter<'_> {
    type Item = Range<u64>;

    fn next(&mut self) -> Option<Range<u64>> {
        match self {
            Iter::Inline(it) => it.next().map(|&(s, e)| s..e),
            Iter::Tree(it) => it.next().map(|(&s, &e)| s..e),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Range<u64>> {
        match self {
            Iter::Inline(it) => it.next_back().map(|&(s, e)| s..e),
            Iter::Tree(it) => it.next_back().map(|(&s, &e)| s..e),
        }
    }
}

/// The same set whichever form holds it.
impl PartialEq for RangeSet {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for RangeSet {}

/// As the B-tree-only set printed it (`RangeSet { map: {start: end, ..} }`), whichever
/// form holds it.
impl fmt::Debug for RangeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Map<'a>(&'a RangeSet);
        impl fmt::Debug for Map<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|r| (r.start, r.end)))
                    .finish()
            }
        }
        f.debug_struct("RangeSet").field("map", &Map(self)).finish()
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

    #[test]
    fn moves_between_forms_and_stays_the_same_set() {
        let mut s = RangeSet::new();
        for i in 0..10 {
            assert!(s.insert(i * 10..i * 10 + 5));
        }
        assert_eq!(s.len(), 10);
        assert!(matches!(s.repr, Repr::Tree(_)));
        let mut rebuilt = RangeSet::new();
        for i in (0..10).rev() {
            rebuilt.insert(i * 10..i * 10 + 5);
        }
        assert_eq!(s, rebuilt);
        s.remove(0..74);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![74..75, 80..85, 90..95]);
        assert!(
            matches!(s.repr, Repr::Tree(_)),
            "3 ranges: not yet back in place"
        );
        assert_eq!(s.pop_first(), Some(74..75));
        assert!(matches!(s.repr, Repr::Inline(_)));
        assert_eq!(format!("{s:?}"), "RangeSet { map: {80: 85, 90: 95} }");
        // A split of a full inline set moves it to the tree.
        let mut full = RangeSet::new();
        for i in 0..CAP as u64 {
            full.insert(i * 10..i * 10 + 5);
        }
        assert!(matches!(full.repr, Repr::Inline(_)));
        full.remove(1..2);
        assert!(matches!(full.repr, Repr::Tree(_)));
        assert_eq!(full.first(), Some(0..1));
        assert_eq!(full.len(), CAP + 1);
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
            // The same set built by inserts in order, in whichever form that gives,
            // compares and prints the same.
            let mut rebuilt = RangeSet::new();
            for r in &v { rebuilt.insert(r.clone()); }
            prop_assert_eq!(&rebuilt, &s);
            prop_assert_eq!(format!("{rebuilt:?}"), format!("{s:?}"));
            let runs = bits.iter().zip(std::iter::once(&false).chain(bits.iter())).filter(|(&b, &prev)| b && !prev).count();
            prop_assert_eq!(s.len(), runs);
            s.remove_below(cut);
            for b in bits.iter_mut().take(cut as usize) { *b = false; }
            for (i, &b) in bits.iter().enumerate() { prop_assert_eq!(s.contains(i as u64), b); }
            // Popping returns the ranges lowest first, whatever the form.
            let left: Vec<_> = s.iter().collect();
            let popped: Vec<_> = std::iter::from_fn(|| s.pop_first()).collect();
            prop_assert_eq!(popped, left);
            prop_assert!(s.is_empty());
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
