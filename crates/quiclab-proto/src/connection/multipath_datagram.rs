//! Which path carries the queued DATAGRAM frames (RFC 9221) on a multipath connection.
//! DATAGRAM frames belong to no path (draft-ietf-quic-multipath §5.5: "Most frames ...
//! can be sent and received on any open path"; RFC 9221 §5: they are congestion
//! controlled like other in-flight data): they ride with the stream data on the path
//! the scheduler picked for this datagram (`multipath_schedule.rs`), or, with no stream
//! data to send, on the open path with the lowest smoothed RTT (available before
//! backup, §3.3; the lower path ID on a tie) whose congestion window is open. Path 0
//! takes part while not abandoned; once it is, the datagrams go on the others like
//! any frame (`multipath_carrier.rs`). Without multipath, path 0 carries them as
//! before and nothing here runs beyond one check.

use super::send::MIN_PACKET_ROOM;
use super::Connection;
use crate::wire::PathId;
use std::time::Duration;

impl Connection {
    /// The path whose packet carries the queued DATAGRAM frames now: path 0 without
    /// multipath; `None` when no path may send them now (every window full).
    pub(super) fn datagram_path(&self) -> Option<PathId> {
        if !self.multipath.is_negotiated() {
            return Some(PathId::INITIAL);
        }
        if let Some(picked) = self.sched.choice {
            return Some(picked);
        }
        // (backup, srtt, path ID): the smallest wins.
        let mut best: Option<(bool, Duration, PathId)> = None;
        let mut consider = |key: (bool, Duration, PathId)| {
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        };
        let r = &self.path.recovery;
        if !self.multipath.path0_abandoned && r.bytes_in_flight() < r.cc().window() {
            let backup = self.path_is_backup(PathId::INITIAL);
            consider((backup, r.rtt().smoothed(), PathId::INITIAL));
        }
        let (side, factor) = (self.side, self.config.amplification_factor);
        let known = self.validated_remote();
        for (id, s) in self.path_spaces.iter() {
            let r = &s.recovery;
            let usable = s.validated
                && !s.abandoned
                && !self.path_cids.remote_ids(id).is_empty()
                && s.amplification_budget(side, factor, known) >= MIN_PACKET_ROOM as u64
                && r.bytes_in_flight() < r.cc().window();
            if usable {
                consider((self.path_is_backup(id), r.rtt().smoothed(), id));
            }
        }
        best.map(|(_, _, id)| id)
    }

    /// Whether DATAGRAM frames wait and `path` is the one to carry them now.
    pub(super) fn datagrams_pending_on(&self, path: PathId) -> bool {
        self.datagrams_pending() && self.datagram_path() == Some(path)
    }
}
