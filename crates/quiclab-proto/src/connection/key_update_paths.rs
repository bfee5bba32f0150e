//! 1-RTT key updates on the multipath paths above 0 (RFC 9001 §6;
//! draft-ietf-quic-multipath §2.5: "The general principles of key update are not
//! changed"; the key phase is the connection's, whatever path a packet takes). A
//! packet on a path above 0 is opened by the phase state (`key_update_state.rs`) with
//! the path's nonce and that path's [`PhaseMark`], so the peer's update may first show
//! on any path and moves both directions; its failures count toward the integrity
//! limit (§6.6). Sending on such a path counts toward the phase's packets (the
//! confidentiality limit and `key_update.every_packets`), and a PATH_ACK covering a
//! packet sent on it in the current phase allows our next update (§6.1), so updates
//! go on once path 0 is abandoned.
//!
//! The draft's "SHOULD wait for at least three times the largest PTO among all the
//! paths" before a new update, after the acknowledgment confirming the previous one:
//! every ACK and PATH_ACK of a multipath connection dates it (`multipath_pto.rs`,
//! `KeyUpdate::on_multipath_ack`) and `prepare_transmit` waits for it. The previous
//! phase's receive key stays until the next update, so at least that long.

use super::key_update_state::PhaseMark;
use super::Connection;
use crate::wire::PathId;
use std::ops::Range;

impl Connection {
    /// Decrypts a 1-RTT packet numbered `pn` on path `path` (above 0) whose key phase
    /// bit is `phase`, with the path's `mark` (updated); `None` to drop it.
    pub(super) fn decrypt_on_path(
        &mut self,
        (path, mark): (PathId, &mut PhaseMark),
        phase: bool,
        packet: &mut [u8],
        header_len: usize,
        pn: u64,
    ) -> Option<Range<usize>> {
        let opened = self.open_one_rtt(|ku, keys, counts| {
            ku.open_on_path(keys, (path, mark), phase, packet, header_len, pn, counts)
        });
        if opened.is_none() && !self.key_update.has_error() {
            // Without 1-RTT keys this counts nothing (`on_authentication_failure`).
            self.on_authentication_failure();
        }
        opened
    }

    /// A packet `pn` left on path `path` (above 0) with the current keys.
    pub(super) fn key_phase_on_path_sent(&mut self, path: PathId, pn: u64) {
        if let Some(sp) = self.path_spaces.get_mut(path) {
            self.key_update.on_path_packet_sent(&mut sp.key_phase, pn);
        }
    }

    /// A PATH_ACK for `path` (above 0) acknowledged up to `largest`.
    pub(super) fn key_phase_on_path_acked(&mut self, path: PathId, largest: u64) {
        if let Some(sp) = self.path_spaces.get(path) {
            self.key_update.on_path_acked(&sp.key_phase, largest);
        }
    }
}
