//! What is remembered of abandoned paths whose state was freed (draft-ietf-quic-multipath
//! §3.4, `multipath_retire.rs`): their counts, for tests and results that read a path's
//! statistics after it ended. Only the last [`FREED_KEPT`] are kept, so the memory
//! stays bounded however many paths a connection goes through.

use crate::wire::PathId;
use std::collections::VecDeque;

/// How many freed paths' counts are remembered.
pub const FREED_KEPT: usize = 8;

/// The last freed paths, oldest first.
/// (`T`: the counts, `path_spaces::FreedPath`.)
#[derive(Debug)]
pub(super) struct FreedPaths<T> {
    kept: VecDeque<(PathId, T)>,
}

impl<T> Default for FreedPaths<T> {
    fn default() -> Self {
        FreedPaths {
            kept: VecDeque::new(),
        }
    }
}

impl<T> FreedPaths<T> {
    /// `path` was freed with these counts; the oldest remembered goes past the bound.
    pub fn push(&mut self, path: PathId, counts: T) {
        if self.kept.len() >= FREED_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((path, counts));
    }

    pub fn get(&self, path: PathId) -> Option<&T> {
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
            f.push(PathId(p), u64::from(p) * 10);
        }
        assert_eq!(f.len(), FREED_KEPT);
        assert_eq!(f.get(PathId(12)), None);
        assert_eq!(f.get(PathId(20)), Some(&200));
    }
}
