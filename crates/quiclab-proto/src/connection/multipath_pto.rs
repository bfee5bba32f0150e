//! The largest PTO among a multipath connection's paths. draft-ietf-quic-multipath
//! replaces the single path's PTO with it in two intervals: the wait before the next
//! key update ("Key Phase Update Process", `key_update_paths.rs`) and the closing and
//! draining periods ("Connection Closure", `close.rs`), both three times it.

use super::Connection;
use crate::time::Instant;
use std::time::Duration;

impl Connection {
    /// The largest `pto_base + max_ack_delay` (RFC 9002 §6.2.1, without backoff) over
    /// the open paths: path 0 unless abandoned, the paths above 0 not abandoned. Path
    /// 0's alone without multipath, or should no path be open.
    pub(super) fn largest_path_pto(&self, max_ack_delay: Duration) -> Duration {
        let pto = |base: Duration| base.saturating_add(max_ack_delay);
        let path0 = pto(self.path.recovery.rtt().pto_base());
        if !self.multipath.is_negotiated() {
            return path0;
        }
        let above = (self.path_spaces.iter())
            .filter(|(_, sp)| !sp.abandoned)
            .map(|(_, sp)| pto(sp.recovery.rtt().pto_base()));
        let zero = (!self.multipath.path0_abandoned).then_some(path0);
        above.chain(zero).max().unwrap_or(path0)
    }

    /// After an ACK (path 0's) or a PATH_ACK on a multipath connection: the
    /// acknowledgment that confirms the current key phase dates the next update
    /// (`KeyUpdate::on_multipath_ack`), with the peer's max_ack_delay as the PTO's.
    pub(super) fn key_phase_note_multipath_ack(&mut self, now: Instant) {
        if !self.multipath.is_negotiated() {
            return;
        }
        let largest_pto = self.largest_path_pto(self.peer_max_ack_delay());
        let largest_acked = self
            .path
            .recovery
            .sent(super::spaces::SpaceId::Data)
            .largest_acked();
        (self.key_update).on_multipath_ack(now, largest_acked, largest_pto);
    }
}
