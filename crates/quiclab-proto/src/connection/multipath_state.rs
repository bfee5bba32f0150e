//! What the multipath extension (draft-ietf-quic-multipath, version named in
//! `wire/frame_mp.rs`) keeps per connection so far: whether it was negotiated, the
//! path ID limits both ways, the peer's path status per path ID, the status we
//! announce (`path_status_state.rs`), and whether path 0 was abandoned (§3.4; the
//! paths above 0 keep theirs in `path_spaces.rs`).
//!
//! Bounded whatever the peer sends: path IDs above our limit are refused before any
//! state is kept (§4), and our limit is `MultipathConfig::max_path_id`, which the
//! config caps at `MultipathConfig::MAX_PATH_ID_LIMIT`.

use super::path_status_state::LocalPathStatus;
use crate::error::TransportError;
use crate::range_set::RangeSet;
use crate::time::Instant;
use crate::wire::PathId;
use std::collections::BTreeMap;

/// A peer's PATH_STATUS_* state for one path ID (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerPathStatus {
    /// The highest Path Status Sequence Number received.
    pub sequence: u64,
    /// PATH_STATUS_BACKUP (true) or PATH_STATUS_AVAILABLE (false).
    pub backup: bool,
}

/// Multipath negotiation and limits.
#[derive(Debug, Default)]
pub(super) struct MultipathState {
    /// Both sides sent initial_max_path_id (§2).
    negotiated: bool,
    /// The largest path ID we allow the peer to use (initial_max_path_id, later
    /// raised by our MAX_PATH_ID).
    local_max: PathId,
    /// The peer's initial_max_path_id: a MAX_PATH_ID below it is invalid (§4.6).
    peer_initial_max: PathId,
    /// The largest path ID the peer allows us (§4.6: only increases).
    peer_max: PathId,
    /// The peer's latest status per path ID, at most `local_max + 1` entries.
    peer_status: BTreeMap<PathId, PeerPathStatus>,
    /// The status we announce per path ID (§3.3), set by the application.
    pub local_status: LocalPathStatus,
    /// Path 0 was abandoned, by us or the peer (§3.4): nothing is sent on it any more.
    pub path0_abandoned: bool,
    /// Our PATH_ABANDON for path 0 waits to be sent (on another path), with its
    /// error code.
    pub path0_abandon_pending: Option<u64>,
    /// When path 0's state is freed (3 PTO after its abandonment, §3.4;
    /// `multipath_free0.rs`), and whether it was.
    pub path0_free_at: Option<Instant>,
    pub path0_freed: bool,
    /// Every path ID abandoned so far, by either side (§3.4: never used again). At most
    /// `initial local max + 2` ranges: only the path IDs not abandoned split it.
    abandoned: RangeSet,
    /// Our initial_max_path_id: how many path IDs beyond 0 the peer may hold open at
    /// once; MAX_PATH_ID raises our limit as paths are abandoned to keep that many.
    window: u32,
    /// A MAX_PATH_ID with `local_max` waits to be sent (§4.6).
    max_path_id_pending: bool,
    /// The peer's limit we last sent PATHS_BLOCKED for (§4.7: once per limit), and
    /// whether it waits to be sent.
    blocked_at: Option<PathId>,
    blocked_pending: bool,
    /// PATHS_BLOCKED frames received and the last limit they named (informational).
    pub peer_blocked: (u64, Option<PathId>),
}

impl MultipathState {
    /// Multipath is on when both sides sent initial_max_path_id (§2: "If either of the
    /// endpoints does not advertise [it], then both endpoints MUST NOT use any frame or
    /// mechanism defined in this document"). Both values are at most 2^32-1: ours by
    /// the config, the peer's by transport parameter decoding (§2.1).
    pub fn negotiate(&mut self, local: Option<u64>, peer: Option<u64>) {
        let (Some(local), Some(peer)) = (local, peer) else {
            *self = Self::default();
            return;
        };
        let id = |v: u64| PathId(u32::try_from(v).unwrap_or(u32::MAX));
        self.negotiated = true;
        self.local_max = id(local);
        self.window = self.local_max.0;
        self.peer_initial_max = id(peer);
        self.peer_max = id(peer);
    }

    pub fn is_negotiated(&self) -> bool {
        self.negotiated
    }

    /// The largest path ID we may use.
    pub fn peer_max_path_id(&self) -> PathId {
        self.peer_max
    }

    /// The largest path ID the peer may use.
    pub fn local_max_path_id(&self) -> PathId {
        self.local_max
    }

    /// The peer's latest status for `path`, if it sent one.
    pub fn peer_status(&self, path: PathId) -> Option<PeerPathStatus> {
        self.peer_status.get(&path).copied()
    }

    /// §4: a frame about a path ID above our limit is PROTOCOL_VIOLATION.
    pub fn check_path_id(&self, path: PathId) -> Result<(), TransportError> {
        if path > self.local_max {
            return Err(TransportError::protocol_violation(
                "multipath frame for a path ID above our maximum",
            ));
        }
        Ok(())
    }

    /// MAX_PATH_ID (§4.6): below the peer's initial_max_path_id is PROTOCOL_VIOLATION;
    /// one that does not raise the limit is ignored.
    pub fn on_max_path_id(&mut self, max: PathId) -> Result<(), TransportError> {
        if max < self.peer_initial_max {
            return Err(TransportError::protocol_violation(
                "MAX_PATH_ID below the peer's initial_max_path_id",
            ));
        }
        self.peer_max = self.peer_max.max(max);
        Ok(())
    }

    /// PATHS_BLOCKED (§4.7): informational; a limit above ours is PROTOCOL_VIOLATION.
    pub fn on_paths_blocked(&mut self, limit: PathId) -> Result<(), TransportError> {
        if limit > self.local_max {
            return Err(TransportError::protocol_violation(
                "PATHS_BLOCKED above our maximum path ID",
            ));
        }
        self.peer_blocked = (self.peer_blocked.0.saturating_add(1), Some(limit));
        Ok(())
    }

    /// PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE (§4.3): kept unless an equal or
    /// higher sequence number was already received for that path ID. The path ID was
    /// checked against our limit, which bounds the map.
    pub fn on_path_status(&mut self, path: PathId, sequence: u64, backup: bool) {
        if self.is_abandoned(path) {
            return; // §3.4: nothing more about an abandoned path is kept
        }
        let newer = self
            .peer_status
            .get(&path)
            .is_none_or(|s| sequence > s.sequence);
        if newer && path <= self.local_max {
            self.peer_status
                .insert(path, PeerPathStatus { sequence, backup });
        }
    }

    /// How many path IDs hold state (for the memory bound).
    pub fn paths_held(&self) -> usize {
        self.peer_status
            .len()
            .saturating_add(self.local_status.len())
            .saturating_add(self.abandoned.len())
    }

    /// Whether `path` was abandoned by either side.
    pub fn is_abandoned(&self, path: PathId) -> bool {
        self.abandoned.contains(u64::from(path.0))
    }

    /// `path` was abandoned (§3.4): its statuses are forgotten, its ID never used
    /// again. Returns whether it was new.
    pub fn on_abandoned(&mut self, path: PathId) -> bool {
        if !self.abandoned.insert_one(u64::from(path.0)) {
            return false;
        }
        self.peer_status.remove(&path);
        self.local_status.forget(path);
        true
    }

    /// Raises our limit so that the peer may again hold `window` path IDs above 0
    /// that are not abandoned (§4.6 MAX_PATH_ID; §3.5 "When an endpoint cannot open a
    /// path because there are no unused path IDs, it SHOULD ... send a MAX_PATH_ID
    /// frame"), but never past `2 x (window + 1)` path IDs holding state: the open ones
    /// and the `held` abandoned ones not yet freed (3 PTO, `multipath_retire.rs`);
    /// their freeing calls this again. Returns whether the limit rose.
    pub fn raise_limit(&mut self, held: usize) -> bool {
        let top = u64::from(self.local_max.0);
        let gone: u64 = self
            .abandoned
            .iter()
            .map(|r| r.end.min(top.saturating_add(1)).saturating_sub(r.start))
            .sum();
        let open = top.saturating_add(1).saturating_sub(gone);
        let want = u64::from(self.window).saturating_add(1);
        let room = want
            .saturating_mul(2)
            .saturating_sub(open)
            .saturating_sub(held as u64);
        let raise = want.saturating_sub(open).min(room);
        let raised = top.saturating_add(raise).min(u64::from(u32::MAX));
        if raised == top {
            return false;
        }
        self.local_max = PathId(u32::try_from(raised).unwrap_or(u32::MAX));
        self.max_path_id_pending = true;
        true
    }

    /// The path IDs in `1..=top` not abandoned, as ranges (CIDs are issued for those).
    pub fn open_ids(&self, top: PathId) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        self.abandoned.gaps(1..u64::from(top.0).saturating_add(1))
    }

    /// The MAX_PATH_ID to send, if one waits.
    pub fn max_path_id_to_send(&self) -> Option<PathId> {
        self.max_path_id_pending.then_some(self.local_max)
    }

    pub fn on_max_path_id_sent(&mut self) {
        self.max_path_id_pending = false;
    }

    /// A MAX_PATH_ID with `value` was lost: sent again unless a higher one went since
    /// (§4.6 "SHOULD be retransmitted when lost and no more recent MAX_PATH_ID frame
    /// has been sent").
    pub fn on_max_path_id_lost(&mut self, value: PathId) {
        if value == self.local_max {
            self.max_path_id_pending = true;
        }
    }

    /// We want a path ID above the peer's limit (§4.7): PATHS_BLOCKED with the limit,
    /// once per limit.
    pub fn on_blocked(&mut self) {
        if self.blocked_at != Some(self.peer_max) {
            self.blocked_at = Some(self.peer_max);
            self.blocked_pending = true;
        }
    }

    /// The PATHS_BLOCKED to send, if one waits.
    pub fn paths_blocked_to_send(&self) -> Option<PathId> {
        self.blocked_pending.then_some(self.peer_max)
    }

    pub fn on_paths_blocked_sent(&mut self) {
        self.blocked_pending = false;
    }

    /// A PATHS_BLOCKED with `limit` was lost: sent again while still blocked there
    /// (§4.7 "MAY be retransmitted if the path is still blocked").
    pub fn on_paths_blocked_lost(&mut self, limit: PathId) {
        if limit == self.peer_max && self.blocked_at == Some(limit) {
            self.blocked_pending = true;
        }
    }

    /// Whether a MAX_PATH_ID or PATHS_BLOCKED waits to be sent.
    pub fn limits_pending(&self) -> bool {
        self.max_path_id_pending || self.blocked_pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TransportErrorCode as Code;

    fn on(local: u64, peer: u64) -> MultipathState {
        let mut m = MultipathState::default();
        m.negotiate(Some(local), Some(peer));
        m
    }

    #[test]
    fn negotiated_only_when_both_sides_offer() {
        for (l, p) in [(None, None), (Some(2), None), (None, Some(2))] {
            let mut m = MultipathState::default();
            m.negotiate(l, p);
            assert!(!m.is_negotiated(), "{l:?} {p:?}");
        }
        let m = on(2, 5);
        assert!(m.is_negotiated());
        assert_eq!(
            (m.local_max_path_id(), m.peer_max_path_id()),
            (PathId(2), PathId(5))
        );
    }

    #[test]
    fn path_ids_above_our_limit_are_protocol_violations() {
        let mut m = on(3, 0);
        assert!(m.check_path_id(PathId(3)).is_ok());
        let e = m.check_path_id(PathId(4)).unwrap_err();
        assert_eq!(e.code, Code::PROTOCOL_VIOLATION);
        assert!(m.on_paths_blocked(PathId(3)).is_ok());
        assert_eq!(
            m.on_paths_blocked(PathId(4)).unwrap_err().code,
            Code::PROTOCOL_VIOLATION
        );
    }

    #[test]
    fn max_path_id_only_raises_and_never_below_the_initial() {
        let mut m = on(1, 4);
        assert_eq!(
            m.on_max_path_id(PathId(3)).unwrap_err().code,
            Code::PROTOCOL_VIOLATION
        );
        m.on_max_path_id(PathId(9)).unwrap();
        m.on_max_path_id(PathId(6)).unwrap(); // reordered: ignored
        assert_eq!(m.peer_max_path_id(), PathId(9));
    }

    #[test]
    fn path_status_keeps_the_highest_sequence_per_path() {
        let mut m = on(3, 3);
        m.on_path_status(PathId(1), 5, true);
        m.on_path_status(PathId(1), 4, false); // older: ignored
        m.on_path_status(PathId(1), 5, false); // equal: ignored
        m.on_path_status(PathId(2), 0, false); // own sequence space per path
        let s = |p| m.peer_status(PathId(p)).unwrap();
        assert_eq!(
            s(1),
            PeerPathStatus {
                sequence: 5,
                backup: true
            }
        );
        assert_eq!(
            s(2),
            PeerPathStatus {
                sequence: 0,
                backup: false
            }
        );
        m.on_path_status(PathId(1), 6, false);
        assert!(!m.peer_status(PathId(1)).unwrap().backup);
    }

    #[test]
    fn abandoned_paths_raise_our_limit_to_keep_the_window() {
        let mut m = on(2, 2);
        assert!(m.on_abandoned(PathId(1)));
        assert!(m.raise_limit(1));
        assert_eq!(m.local_max_path_id(), PathId(3));
        assert_eq!(m.max_path_id_to_send(), Some(PathId(3)));
        m.on_max_path_id_sent();
        assert!(!m.on_abandoned(PathId(1)), "once");
        assert!(!m.raise_limit(1));
        assert_eq!(m.max_path_id_to_send(), None);
        m.on_abandoned(PathId(0));
        m.on_abandoned(PathId(3));
        assert!(m.raise_limit(2));
        assert_eq!(m.local_max_path_id(), PathId(5));
        assert!(!m.raise_limit(1));
        m.on_max_path_id_lost(PathId(4)); // superseded
        m.on_max_path_id_sent();
        assert_eq!(m.max_path_id_to_send(), None);
        m.on_max_path_id_lost(PathId(5));
        assert_eq!(m.max_path_id_to_send(), Some(PathId(5)));
        let open: Vec<_> = m.open_ids(PathId(5)).collect();
        assert_eq!(open, vec![2..3, 4..6]);
        m.on_path_status(PathId(1), 9, true);
        assert_eq!(m.peer_status(PathId(1)), None, "abandoned: not kept");
    }

    #[test]
    fn abandoned_paths_not_yet_freed_hold_the_limit_back() {
        let mut m = on(1, 1);
        m.on_abandoned(PathId(1));
        assert!(m.raise_limit(1));
        m.on_abandoned(PathId(2));
        assert!(m.raise_limit(2));
        m.on_abandoned(PathId(3));
        // Path 0 open and 1, 2, 3 held: 2 x (1 + 1) path IDs hold state already.
        assert!(!m.raise_limit(3));
        assert_eq!(m.local_max_path_id(), PathId(3));
        assert!(m.raise_limit(1), "two freed");
        assert_eq!(m.local_max_path_id(), PathId(4));
    }

    #[test]
    fn paths_blocked_once_per_limit() {
        let mut m = on(2, 2);
        m.on_blocked();
        assert_eq!(m.paths_blocked_to_send(), Some(PathId(2)));
        m.on_paths_blocked_sent();
        m.on_blocked();
        assert_eq!(m.paths_blocked_to_send(), None, "once per limit");
        m.on_paths_blocked_lost(PathId(2));
        assert_eq!(m.paths_blocked_to_send(), Some(PathId(2)));
        m.on_paths_blocked_sent();
        m.on_max_path_id(PathId(4)).unwrap();
        m.on_paths_blocked_lost(PathId(2)); // no longer blocked there
        assert_eq!(m.paths_blocked_to_send(), None);
        m.on_blocked();
        assert_eq!(m.paths_blocked_to_send(), Some(PathId(4)));
    }

    #[test]
    fn state_is_bounded_by_our_limit_whatever_the_peer_sends() {
        let mut m = on(3, 3);
        for p in 0..10_000u32 {
            if m.check_path_id(PathId(p)).is_ok() {
                m.on_path_status(PathId(p), u64::from(p), p % 2 == 0);
            }
            // Even without the check, nothing above the limit is kept.
            m.on_path_status(PathId(p), u64::from(p) + 1, false);
        }
        assert_eq!(m.paths_held(), 4);
    }
}
