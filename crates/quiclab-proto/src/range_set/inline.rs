//! The small form of a [`super::RangeSet`]: up to [`CAP`] ranges in a sorted array held
//! in place. Received packet numbers and acknowledged stream offsets are one to a few
//! ranges almost always; a B-tree for them costs a node allocation and a tree walk per
//! operation where a scan of a few entries does.
//!
//! Every operation has the B-tree form's meaning (the property tests in the parent
//! compare both against a bitmap); one that would need more than `CAP` ranges returns
//! `None` without changing anything, and the caller moves to the B-tree.

/// Ranges held in place before the set moves to a B-tree.
pub(super) const CAP: usize = 4;

/// Disjoint, non-adjacent half-open ranges `(start, end)`, in order, in `r[..len]`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Inline {
    len: usize,
    r: [(u64, u64); CAP],
}

impl Inline {
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.r[..self.len]
    }

    /// The small form of `ranges` (sorted, disjoint, non-adjacent), if they fit.
    pub fn from_sorted(ranges: impl ExactSizeIterator<Item = (u64, u64)>) -> Option<Self> {
        if ranges.len() > CAP {
            return None;
        }
        let mut s = Inline::default();
        for r in ranges {
            s.r[s.len] = r;
            s.len += 1;
        }
        Some(s)
    }

    /// Adds `start..end` (non-empty): whether any value was new, or `None` if the
    /// result would not fit (nothing changed).
    pub fn insert(&mut self, start: u64, end: u64) -> Option<bool> {
        // Fast path (packet numbers and stream offsets mostly arrive in order): at or
        // past the start of the highest range, which every other range ends below
        // (disjoint, non-adjacent), so only that one can merge: the general path
        // below would find i = j - 1 = len - 1, or i = j = len.
        match self.ranges().last() {
            None => {
                self.r[0] = (start, end);
                self.len = 1;
                return Some(true);
            }
            Some(&(s, e)) if s <= start => {
                if e >= end {
                    return Some(false);
                }
                if e >= start {
                    self.r[self.len - 1].1 = end;
                    return Some(true);
                }
                if self.len == CAP {
                    return None;
                }
                self.r[self.len] = (start, end);
                self.len += 1;
                return Some(true);
            }
            Some(_) => {}
        }
        let rs = self.ranges();
        // Ranges i..j touch or overlap start..end (they merge with it): those ending at
        // or after `start` and starting at or before `end`.
        let i = rs.partition_point(|&(_, e)| e < start);
        let j = i + rs[i..].partition_point(|&(s, _)| s <= end);
        if i == j {
            if self.len == CAP {
                return None;
            }
            self.r.copy_within(i..self.len, i + 1);
            self.r[i] = (start, end);
            self.len += 1;
            return Some(true);
        }
        let (first_start, first_end) = rs[i];
        if j == i + 1 && first_start <= start && first_end >= end {
            return Some(false);
        }
        let merged = (first_start.min(start), rs[j - 1].1.max(end));
        self.r[i] = merged;
        self.r.copy_within(j..self.len, i + 1);
        self.len -= j - i - 1;
        Some(true)
    }

    /// Removes every value in `start..end` (non-empty), or `None` if the result would
    /// not fit (a range split in two when full; nothing changed).
    pub fn remove(&mut self, start: u64, end: u64) -> Option<()> {
        let rs = self.ranges();
        // Ranges i..j overlap start..end.
        let i = rs.partition_point(|&(_, e)| e <= start);
        let j = i + rs[i..].partition_point(|&(s, _)| s < end);
        if i == j {
            return Some(());
        }
        // What is left of the first and the last overlapping range.
        let below = (rs[i].0 < start).then_some((rs[i].0, start));
        let above = (rs[j - 1].1 > end).then_some((end, rs[j - 1].1));
        let kept = usize::from(below.is_some()) + usize::from(above.is_some());
        let len = self.len - (j - i) + kept;
        if len > CAP {
            return None;
        }
        self.r.copy_within(j..self.len, i + kept);
        for (k, part) in below.into_iter().chain(above).enumerate() {
            self.r[i + k] = part;
        }
        self.len = len;
        Some(())
    }

    /// The last range starting at or before `v`.
    pub fn last_starting_at_or_below(&self, v: u64) -> Option<(u64, u64)> {
        let rs = self.ranges();
        let b = rs.partition_point(|&(s, _)| s <= v);
        rs.get(b.checked_sub(1)?).copied()
    }

    /// The ranges starting in `lo..hi`.
    pub fn starting_in(&self, lo: u64, hi: u64) -> &[(u64, u64)] {
        let rs = self.ranges();
        let a = rs.partition_point(|&(s, _)| s < lo);
        let b = rs.partition_point(|&(s, _)| s < hi).max(a);
        &rs[a..b]
    }

    /// Removes the lowest range and returns it.
    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        let first = *self.ranges().first()?;
        self.r.copy_within(1..self.len, 0);
        self.len -= 1;
        Some(first)
    }
}
