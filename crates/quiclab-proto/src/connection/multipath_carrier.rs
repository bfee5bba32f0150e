//! Once path 0 is abandoned (`multipath_abandon0.rs`), the frames it carried for the
//! whole connection go on another path (draft-ietf-quic-multipath §3.4: the PATH_ACK
//! frames "have to be sent on a different path than the path being abandoned"; §4.1:
//! any ACK may go on any path): the *carrier*, the open path with the lowest path ID
//! above 0 that is validated and has a connection ID from the peer. It writes, before
//! its own frames, the ACK of path 0's space as PATH_ACK with path ID 0 (§2.2:
//! "endpoints SHOULD use PATH_ACK frames instead of ACK frames"), the other paths'
//! PATH_ACKs, then the application data space's control frames (CIDs, PATH_ABANDON,
//! PATH_STATUS, HANDSHAKE_DONE, NEW_TOKEN, DATAGRAM...) within its congestion window;
//! and a CONNECTION_CLOSE while closing (§2.6). A packet of ACKs only is neither
//! ack-eliciting nor in flight (RFC 9002 §2).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::SentRecord;
use super::transmit::Transmit;
use super::Connection;
use crate::time::Instant;
use crate::wire::PathId;

impl Connection {
    /// The path carrying the connection's control frames and ACKs instead of path 0,
    /// once path 0 is abandoned; `None` while path 0 carries them.
    pub(super) fn carrier_path(&self) -> Option<PathId> {
        if !self.multipath.path0_abandoned {
            return None;
        }
        self.path_spaces
            .iter()
            .find(|(id, s)| {
                !s.abandoned && s.validated && !self.path_cids.remote_ids(*id).is_empty()
            })
            .map(|(id, _)| id)
    }

    /// Whether the carrier has something of the connection's to send now: an ACK due
    /// (path 0's space or another path's), or control frames with its window open.
    pub(super) fn carrier_wants(&self, now: Instant, window_open: bool) -> bool {
        let carrier = self.carrier_path().unwrap_or(PathId::INITIAL);
        self.acks_due_on(now, carrier) || (window_open && self.data_frames_pending())
    }

    /// The carrier's share of a packet: path 0's ACK as PATH_ACK(0), the other paths'
    /// PATH_ACKs, and (`control`) the control frames. Returns where the ACK frames
    /// end (what follows is ack-eliciting).
    pub(super) fn write_carrier_frames(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        record: &mut SentRecord,
        max: usize,
        control: bool,
    ) -> usize {
        // Path 0's ACK as PATH_ACK(0) and the PATH_ACKs the carrier carries
        // (`multipath_ack_path.rs`: all of them with `ack_path = "any"`).
        let carrier = self.carrier_path().unwrap_or(PathId::INITIAL);
        self.write_path_acks(now, buf, max, carrier, record);
        let acks_end = buf.len();
        if control {
            self.write_control_frames_on_path(now, buf, record, max);
        }
        acks_end
    }

    /// While closing with path 0 abandoned: the CONNECTION_CLOSE in a packet on the
    /// carrier (`None` if no path is left, or nothing is to be sent).
    pub(super) fn poll_path_close(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        use super::lifecycle::State;
        if self.lifecycle.state() != State::Closing || !self.lifecycle.close_pending() {
            return None;
        }
        let path = self.carrier_path()?;
        let t = self.send_on_path(now, path, buf, true)?;
        self.lifecycle.on_close_sent();
        Some(t)
    }
}
