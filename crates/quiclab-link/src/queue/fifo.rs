//! A plain FIFO of queued items with its byte count: the sub-queue every AQM here is
//! built from (DualPI2's L and C queues, FQ-CoDel's per-flow queues, PIE's and RED's
//! single queue).

use super::Queued;
use quiclab_proto::Instant;
use std::collections::VecDeque;

/// Items in arrival order and the sum of their sizes.
#[derive(Debug)]
pub(super) struct Fifo<T> {
    items: VecDeque<Queued<T>>,
    bytes: u64,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            items: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<T> Fifo<T> {
    pub(super) fn push(&mut self, now: Instant, size: u64, item: T) {
        self.bytes = self.bytes.saturating_add(size);
        self.items.push_back(Queued {
            size,
            enqueued_at: now,
            item,
        });
    }

    pub(super) fn pop(&mut self) -> Option<Queued<T>> {
        let q = self.items.pop_front()?;
        self.bytes = self.bytes.saturating_sub(q.size);
        Some(q)
    }

    /// When the head item arrived (`None`: empty).
    pub(super) fn head_time(&self) -> Option<Instant> {
        self.items.front().map(|q| q.enqueued_at)
    }

    /// How long the head item has waited at `now` (0 when empty).
    pub(super) fn head_age_ns(&self, now: Instant) -> u64 {
        self.head_time()
            .map_or(0, |t| now.as_nanos().saturating_sub(t.as_nanos()))
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
    pub(super) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
