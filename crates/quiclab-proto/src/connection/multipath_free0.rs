//! Freeing path 0's state once abandoned (draft-ietf-quic-multipath §3.4: the state of
//! an abandoned path's number space "SHOULD be retained for 3 PTO after the
//! PATH_ABANDON frame has been received", then it can go; paths above 0 are
//! `multipath_retire.rs`). Path 0's space is the connection's application-data space,
//! so what goes is what path 0's own packets made it hold, and the space stays: its
//! next packet number (a late ACK, or PATH_ACK for path 0, is checked against it and
//! acknowledges nothing, no error), its keys (the other paths' packets use them).
//!
//! 3 PTO of path 0 (its RTT estimate, the peer's max_ack_delay) after the
//! abandonment is first seen by the send path, as for the other paths (deadline in
//! `path0_free_at`, within `Timer::PathLoss`): the sent-packet records of its recovery
//! (already emptied at the abandonment, when its flight was requeued), its
//! spurious-loss episode and ACK scratch buffer, and the received packet numbers kept
//! for its ACKs go; path 0's packets arriving later are dropped unread (their packet
//! numbers cannot be told from duplicates any more). Kept: the connection IDs of path
//! 0 (the connection's own; retiring them would make the endpoint answer late path 0
//! packets with stateless resets), the RTT estimate and controller (fixed size).

use super::spaces::SpaceId;
use super::Connection;
use crate::ack::AckTracker;
use crate::time::Instant;

/// How many PTOs path 0's state is kept after its abandonment (§3.4).
const KEEP_PTOS: u32 = 3;

impl Connection {
    /// Arms the freeing of path 0 once abandoned and not yet armed: 3 PTO of path 0
    /// from `now`.
    pub(super) fn arm_path0_freeing(&mut self, now: Instant) -> bool {
        let mp = &self.multipath;
        if !mp.path0_abandoned || mp.path0_freed || mp.path0_free_at.is_some() {
            return false;
        }
        let max_ack_delay = self.pto_context().max_ack_delay;
        let pto = (self.path.recovery.rtt().pto_base()).saturating_add(max_ack_delay);
        self.multipath.path0_free_at = Some(now.saturating_add(pto.saturating_mul(KEEP_PTOS)));
        true
    }

    /// Frees path 0's state if its 3 PTO are over at `now` (see the module's docs).
    pub(super) fn free_path0_if_due(&mut self, now: Instant) {
        if self.multipath.path0_free_at.is_none_or(|t| t > now) {
            return;
        }
        self.multipath.path0_free_at = None;
        self.multipath.path0_freed = true;
        self.path.recovery.release();
        self.spaces[SpaceId::Data as usize].acks = AckTracker::new();
    }

    /// Whether path 0's packets are dropped unread: its state was freed.
    pub(super) fn path0_freed(&self) -> bool {
        self.multipath.path0_freed
    }
}
