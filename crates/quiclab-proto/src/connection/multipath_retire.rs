//! Freeing an abandoned path's state (draft-ietf-quic-multipath §3.4): "knowledge of
//! the connection IDs issued to the peer and of the state of the number space
//! associated to the path SHOULD be retained for 3 PTO after the PATH_ABANDON frame
//! has been received", so that the peer's packets still in transit are recognised and
//! acknowledged (§3.4.2) rather than met with a stateless reset. The peer's IDs for the
//! path are retired at once ("MUST treat all connection IDs received from the peer
//! for the path ID ... as immediately retired"; no frame). 3 PTO of the path (its
//! smoothed RTT, variance and the peer's max_ack_delay) after the abandonment is first
//! seen by the send path (where our PATH_ABANDON leaves), the path's space and our
//! connection IDs for it are dropped and the endpoint stops routing those IDs. Frames
//! about a path ID once abandoned are ignored from then on (§4: "PATH_ACK frames
//! received with an abandoned path ID are silently ignored"), so nothing of it comes
//! back. Together with MAX_PATH_ID only replacing abandoned path IDs
//! (`multipath_limits.rs`), the multipath state stays bounded however many paths
//! are opened and abandoned.
//!
//! Path 0's space is the connection's own and stays; what path 0's packets made it
//! hold is freed the same 3 PTO after its abandonment (`multipath_free0.rs`). The
//! draft specifies no per-path idle timeout (§7.x "Idle Timeout and Keep-Alives":
//! "This document does not specify per-path idle timeouts"), so none is kept: the
//! connection's idle timeout covers every path.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::outbox::EndpointEvent;
use super::Connection;
use crate::time::Instant;
use crate::wire::PathId;

/// How many PTOs an abandoned path's state is kept (§3.4).
const KEEP_PTOS: u32 = 3;

impl Connection {
    /// §3.4: the peer's connection IDs for `path` (above 0) are retired at once.
    pub(super) fn retire_abandoned_remote_ids(&mut self, path: PathId) {
        self.path_cids.forget_remote(path);
    }

    /// Arms the freeing of every abandoned path that has no deadline yet: 3 PTO from
    /// `now` (the send path calls this as PATH_ABANDON leaves).
    pub(super) fn arm_path_freeing(&mut self, now: Instant) {
        let max_ack_delay = self.pto_context().max_ack_delay;
        let mut armed = self.arm_path0_freeing(now);
        for (_, sp) in self.path_spaces.iter_mut() {
            if sp.abandoned && sp.free_at.is_none() {
                let pto = sp.recovery.rtt().pto_base().saturating_add(max_ack_delay);
                sp.free_at = Some(now.saturating_add(pto.saturating_mul(KEEP_PTOS)));
                armed = true;
            }
        }
        if armed {
            self.refresh_path_timers();
        }
    }

    /// Frees the abandoned paths whose 3 PTO are over.
    pub(super) fn free_abandoned_paths(&mut self, now: Instant) {
        // Path 0: `multipath_free0.rs`.
        self.free_path0_if_due(now);
        let due = self.path_spaces.due_to_free(now);
        if due.is_empty() {
            return;
        }
        for path in due {
            self.path_spaces.remove(path);
            for cid in self.path_cids.remove(path) {
                self.outbox
                    .push_endpoint_event(EndpointEvent::RetireConnectionId(cid));
            }
        }
        // §4.6: room for the peer to open paths in their place.
        self.update_path_limit();
    }

    /// Whether frames about `path` are ignored: a path ID above 0 once abandoned
    /// (§4, §3.4).
    pub(super) fn path_frames_ignored(&self, path: PathId) -> bool {
        path != PathId::INITIAL && self.multipath.is_abandoned(path)
    }
}
