//! The redundant scheduler's copy queues, per path (the state; what fills and drains
//! them is `multipath_copies.rs`, whose comment says why they are bounded this way).

use crate::streams::StreamFrameRecord;
use crate::wire::PathId;
use std::collections::{BTreeMap, VecDeque};

/// Records of STREAM frames a path's copy queue holds at most: about 1.4 MB of
/// full-sized frames, several windows of a path in this simulator's range.
pub const MAX_COPIES_PER_PATH: usize = 1024;

/// Per path, the STREAM frames to copy onto it.
#[derive(Debug, Default)]
pub(super) struct CopyQueues {
    queues: BTreeMap<PathId, VecDeque<StreamFrameRecord>>,
    /// Copies dropped unsent because a queue was full (informational).
    pub dropped: u64,
}

impl CopyQueues {
    /// Whether `path` has copies waiting.
    pub fn has(&self, path: PathId) -> bool {
        !self.queues.is_empty() && self.queues.get(&path).is_some_and(|q| !q.is_empty())
    }

    /// Copies waiting over all paths.
    pub fn len(&self) -> usize {
        self.queues.values().map(VecDeque::len).sum()
    }

    /// Keeps the queues of `keep`'s paths only.
    pub fn retain(&mut self, keep: impl Fn(PathId) -> bool) {
        self.queues.retain(|id, _| keep(*id));
    }

    /// Queues a copy for `path`, dropping its oldest when full.
    pub fn push(&mut self, path: PathId, record: StreamFrameRecord) {
        let q = self.queues.entry(path).or_default();
        if q.len() >= MAX_COPIES_PER_PATH {
            q.pop_front();
            self.dropped = self.dropped.saturating_add(1);
        }
        q.push_back(record);
    }

    /// `path`'s oldest copy, taken off its queue.
    pub fn pop(&mut self, path: PathId) -> Option<StreamFrameRecord> {
        self.queues.get_mut(&path)?.pop_front()
    }

    /// Puts back what is left of a copy taken by [`Self::pop`], at the front.
    pub fn put_back(&mut self, path: PathId, record: StreamFrameRecord) {
        self.queues.entry(path).or_default().push_front(record);
    }
}
