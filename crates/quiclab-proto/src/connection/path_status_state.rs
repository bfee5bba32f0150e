//! Our own PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE per path ID
//! (draft-ietf-quic-multipath §3.3, §4.3): the latest status the application set, its
//! per-path sequence number, and whether the frame still has to go (first send, or its
//! packet was lost while it was still the latest: "the peer SHOULD resend the frame
//! only if it contains the last status sent for that path").
//!
//! Bounded: an entry exists only for a path ID the application set a status for, at
//! most the peer's limit (checked by the caller); entries of freed paths are removed.

use crate::wire::PathId;
use std::collections::BTreeMap;

/// One path ID's status as we announce it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LocalStatus {
    /// The sequence number of the latest frame (monotonically increasing, §4.3).
    sequence: u64,
    /// PATH_STATUS_BACKUP (true) or PATH_STATUS_AVAILABLE (false).
    backup: bool,
    /// The latest frame waits to be sent (or sent again).
    pending: bool,
}

/// The statuses we announce, by path ID.
#[derive(Debug, Default)]
pub(super) struct LocalPathStatus {
    paths: BTreeMap<PathId, LocalStatus>,
}

impl LocalPathStatus {
    /// A new status for `path`: the next sequence number, queued for sending. Setting
    /// the status it already has queues nothing.
    pub fn set(&mut self, path: PathId, backup: bool) {
        match self.paths.get_mut(&path) {
            Some(s) if s.backup == backup => {}
            Some(s) => {
                s.sequence = s.sequence.saturating_add(1);
                s.backup = backup;
                s.pending = true;
            }
            None => {
                self.paths.insert(
                    path,
                    LocalStatus {
                        sequence: 0,
                        backup,
                        pending: true,
                    },
                );
            }
        }
    }

    /// Whether we marked `path` backup.
    pub fn is_backup(&self, path: PathId) -> bool {
        self.paths.get(&path).is_some_and(|s| s.backup)
    }

    /// The next frame to send: (path, sequence, backup).
    pub fn to_send(&self) -> Option<(PathId, u64, bool)> {
        self.paths
            .iter()
            .find(|(_, s)| s.pending)
            .map(|(p, s)| (*p, s.sequence, s.backup))
    }

    pub fn has_pending(&self) -> bool {
        self.paths.values().any(|s| s.pending)
    }

    /// The frame for `path` left.
    pub fn on_sent(&mut self, path: PathId) {
        if let Some(s) = self.paths.get_mut(&path) {
            s.pending = false;
        }
    }

    /// The frame with `sequence` for `path` was lost: sent again if still the latest.
    pub fn on_lost(&mut self, path: PathId, sequence: u64) {
        if let Some(s) = self.paths.get_mut(&path) {
            if s.sequence == sequence {
                s.pending = true;
            }
        }
    }

    /// `path` is abandoned: nothing more to announce for it.
    pub fn forget(&mut self, path: PathId) {
        self.paths.remove(&path);
    }

    /// How many path IDs hold a status (for the memory bound).
    pub fn len(&self) -> usize {
        self.paths.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_increases_per_path_and_only_the_latest_is_resent() {
        let mut s = LocalPathStatus::default();
        s.set(PathId(1), true);
        assert_eq!(s.to_send(), Some((PathId(1), 0, true)));
        s.on_sent(PathId(1));
        assert_eq!(s.to_send(), None);
        s.set(PathId(1), true); // unchanged: nothing new
        assert!(!s.has_pending());
        s.set(PathId(1), false);
        s.set(PathId(0), true);
        assert_eq!(s.to_send(), Some((PathId(0), 0, true)));
        s.on_sent(PathId(0));
        assert_eq!(s.to_send(), Some((PathId(1), 1, false)));
        s.on_sent(PathId(1));
        s.on_lost(PathId(1), 0); // superseded: not resent
        assert!(!s.has_pending());
        s.on_lost(PathId(1), 1);
        assert_eq!(s.to_send(), Some((PathId(1), 1, false)));
        assert!(s.is_backup(PathId(0)) && !s.is_backup(PathId(1)));
        s.forget(PathId(1));
        assert_eq!(s.len(), 1);
    }
}
