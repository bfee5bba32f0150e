//! The simulator's event queue and node bookkeeping. The queue itself (events, re-armable
//! timers, the slab of in-flight values) is quiclab-link's [`quiclab_link::events`], the
//! one the link models' [`quiclab_link::duplex::Duplex`] runs on, so the simulator and the
//! emulator order equal-time events the same way.

pub use quiclab_link::events::{EventQueue, Next, Slab};
pub use quiclab_link::time::saturating_secs;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The nodes that must settle before time advances, handed out lowest index first (the
/// order reaches results, so it must not depend on insertion order). A flag per key
/// plus a min-heap: inserting a present key costs one load, and neither operation
/// allocates once the heap has grown to the node count.
#[derive(Default)]
pub struct DirtySet {
    present: Vec<bool>,
    order: BinaryHeap<Reverse<usize>>,
}

impl DirtySet {
    /// Adds `key` (no effect if present).
    pub fn insert(&mut self, key: usize) {
        if self.present.len() <= key {
            self.present.resize(key + 1, false);
        }
        if !self.present[key] {
            self.present[key] = true;
            self.order.push(Reverse(key));
        }
    }

    /// Removes and returns the lowest key.
    pub fn pop_first(&mut self) -> Option<usize> {
        let Reverse(key) = self.order.pop()?;
        self.present[key] = false;
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_set_yields_lowest_first_once() {
        let mut d = DirtySet::default();
        for k in [5, 1, 5, 3, 1] {
            d.insert(k);
        }
        assert_eq!(d.pop_first(), Some(1));
        d.insert(0);
        d.insert(3);
        let rest: Vec<_> = std::iter::from_fn(|| d.pop_first()).collect();
        assert_eq!(rest, [0, 3, 5]);
    }
}
