//! The re-armable timers of [`super::EventQueue`]: an indexed binary min-heap of
//! (deadline, seq, key), with each key's position beside it, so re-arming a key moves
//! its one entry up or down in place (a few levels: there is one entry per armed key,
//! about one per node) instead of pushing a new entry and leaving the old one behind.
//! The simulator re-arms a node's timer after nearly every datagram.

use quiclab_proto::Instant;

/// No entry: the key's timer is disarmed.
const NONE: usize = usize::MAX;

#[derive(Default)]
pub(super) struct Timers {
    /// (deadline, seq, key), a min-heap by (deadline, seq); seqs are unique, so the order
    /// is total.
    heap: Vec<(Instant, u64, usize)>,
    /// `pos[key]`: the index of key's entry in `heap`, or `NONE`.
    pos: Vec<usize>,
}

impl Timers {
    /// Key's (deadline, seq), if armed.
    pub(super) fn get(&self, key: usize) -> Option<(Instant, u64)> {
        let &i = self.pos.get(key)?;
        self.heap.get(i).map(|&(at, seq, _)| (at, seq))
    }

    /// Arms `key` at (deadline, seq) (replacing its entry), or disarms it.
    pub(super) fn set(&mut self, key: usize, entry: Option<(Instant, u64)>) {
        if self.pos.len() <= key {
            self.pos.resize(key + 1, NONE);
        }
        let i = self.pos[key];
        match (entry, i != NONE) {
            (Some((at, seq)), true) => {
                self.heap[i] = (at, seq, key);
                self.restore(i);
            }
            (Some((at, seq)), false) => {
                self.heap.push((at, seq, key));
                self.pos[key] = self.heap.len() - 1;
                self.sift_up(self.heap.len() - 1);
            }
            (None, true) => self.remove_at(i),
            (None, false) => {}
        }
    }

    /// The earliest entry.
    pub(super) fn peek(&self) -> Option<&(Instant, u64, usize)> {
        self.heap.first()
    }

    /// Removes and returns the earliest entry (its key is disarmed).
    pub(super) fn pop(&mut self) -> Option<(Instant, u64, usize)> {
        let top = *self.heap.first()?;
        self.remove_at(0);
        Some(top)
    }

    /// Armed keys.
    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    fn remove_at(&mut self, i: usize) {
        let (_, _, key) = self.heap.swap_remove(i);
        self.pos[key] = NONE;
        if i < self.heap.len() {
            self.pos[self.heap[i].2] = i;
            self.restore(i);
        }
    }

    /// Moves the entry at `i` up or down to its place after its value changed.
    fn restore(&mut self, i: usize) {
        let i = self.sift_up(i);
        self.sift_down(i);
    }

    fn earlier(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.heap[a], &self.heap[b]);
        (x.0, x.1) < (y.0, y.1)
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].2] = a;
        self.pos[self.heap[b].2] = b;
    }

    /// Returns the entry's final index.
    fn sift_up(&mut self, mut i: usize) -> usize {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.earlier(i, parent) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
        i
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let left = 2 * i + 1;
            if left >= self.heap.len() {
                return;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && self.earlier(right, left) {
                right
            } else {
                left
            };
            if !self.earlier(child, i) {
                return;
            }
            self.swap(i, child);
            i = child;
        }
    }
}
