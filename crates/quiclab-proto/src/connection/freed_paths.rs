//! What is remembered of abandoned paths whose state was freed (draft-ietf-quic-multipath
//! §3.4, `multipath_retire.rs`): their counts, for tests and results that read a path's
//! statistics after it ended. Only the last [`FREED_KEPT`] are kept, so the memory
//! stays bounded however many paths a connection goes through.

use super::path_spaces::PathLossStats;
use crate::wire::PathId;
use std::collections::VecDeque;

/// How many freed paths' counts are remembered.
pub const FREED_KEPT: usize = 8;

/// A freed path's final counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreedPath {
    /// Its loss recovery counts (the PTO count as it was when freed).
    pub loss: PathLossStats,
    /// Packets received and sent on it, and the bytes of those received.
    pub received: u64,
    pub sent: u64,
    pub received_bytes: u64,
    /// Whether the peer had validated it.
    pub validated: bool,
}

/// The last freed paths, oldest first.
#[derive(Debug, Default)]
pub(super) struct FreedPaths {
    kept: VecDeque<(PathId, FreedPath)>,
}

impl FreedPaths {
    /// `path` was freed with these counts; the oldest remembered goes past the bound.
    pub fn push(&mut self, path: PathId, counts: FreedPath) {
        if self.kept.len() >= FREED_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((path, counts));
    }

    pub fn get(&self, path: PathId) -> Option<&FreedPath> {
        self.kept.iter().find(|(p, _)| *p == path).map(|(_, c)| c)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.kept.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_freed_paths_are_remembered() {
        let mut f = FreedPaths::default();
        for p in 1..=20u32 {
            let counts = FreedPath {
                sent: u64::from(p),
                ..FreedPath::default()
            };
            f.push(PathId(p), counts);
        }
        assert_eq!(f.len(), FREED_KEPT);
        assert_eq!(f.get(PathId(12)), None);
        assert_eq!(f.get(PathId(20)).map(|c| c.sent), Some(20));
    }
}
