//! PATH_ACK for a path above 0 (draft-ietf-quic-multipath §4.1, §5): the path's own
//! recovery processes it in one call (RTT sample, loss detection, its congestion
//! controller), as `loss.rs` does for path 0; the connection applies what was
//! delivered or lost. Path 0's PATH_ACK is the ACK frame (`multipath.rs`).
//! The path's loss detection timer is then armed as its recovery says
//! (`multipath_loss.rs`).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::SpaceId;
use super::Connection;
use crate::error::TransportError;
use crate::path_recovery::AckInput;
use crate::time::Instant;
use crate::wire::{AckFrame, PathId};
use std::time::Duration;

impl Connection {
    /// PATH_ACK for `path` (above 0).
    pub(super) fn on_path_ack(
        &mut self,
        now: Instant,
        path: PathId,
        ack: &AckFrame,
    ) -> Result<(), TransportError> {
        let next_pn = self.path_spaces.get(path).map_or(0, |s| s.next_pn);
        if ack.largest() >= next_pn {
            // RFC 9000 §13.1 per path (§4.1): acknowledging a packet never sent on it.
            return Err(TransportError::protocol_violation(
                "PATH_ACK of a packet number not sent on that path",
            ));
        }
        // RFC 9000 §19.3: ACK Delay scaled by the peer's ack_delay_exponent.
        let exp = self.peer_ack_delay_exponent().min(20);
        let ack_delay = Duration::from_micros(ack.ack_delay.saturating_mul(1 << exp));
        let input = AckInput {
            space: SpaceId::Data,
            ranges: &ack.ranges,
            largest: ack.largest(),
            ack_delay,
            pto: self.path_pto_context(path),
            mtu_probe: None,
            // RFC 9002 §7.1 on this path only: its PATH_ACK_ECN's CE growth is a
            // congestion event for its own controller (`multipath_ecn.rs`).
            ce_growth: self.path_ce_growth(path, ack),
        };
        // RFC 6356 §3: LIA's increase reads every path's state (`multipath_coupling.rs`).
        self.couple_before_ack(path);
        let advertised = self.peer_advertised_max_ack_delay();
        let sender = &self.ack_frequency.sender;
        let Some(sp) = self.path_spaces.get_mut(path) else {
            return Ok(()); // unreachable: next_pn was above the largest
        };
        let outcome =
            sp.recovery
                .on_ack(now, &input, Vec::new(), &self.config.loss, |acked, lost| {
                    sender.peer_max_ack_delay_after(advertised, acked, lost)
                });
        // RFC 9001 §6.1: an acknowledgment on any path allows the next key update.
        self.key_phase_on_path_acked(path, ack.largest());
        self.key_phase_note_multipath_ack(now);
        // RFC 9000 §13.4.2.1: the path's counts against its newly acknowledged packets.
        self.validate_path_ecn(path, ack, outcome.largest_grew, &outcome.newly_acked);
        for p in &outcome.newly_acked {
            self.on_frames_acked(SpaceId::Data, &p.data);
        }
        self.apply_path_losses(now, path, outcome.loss, false);
        // RFC 9002 A.7: the path's loss detection timer, as its recovery set it.
        if let Some(timer) = outcome.loss_timer {
            self.set_path_loss_timer(path, timer);
        }
        Ok(())
    }
}
