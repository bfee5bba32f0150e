//! Receiving on a path above 0 (draft-ietf-quic-multipath §2.3, §2.4): a 1-RTT packet
//! whose Destination Connection ID is one we issued for path ID N > 0 belongs to path
//! N: its packet number is decoded against path N's space, its payload opened with the
//! path's nonce (the path ID joins the packet number, §2.4), and it is acknowledged in
//! PATH_ACK frames for path N (§4.1). Path 0's packets go the usual way (`recv.rs`).
//! A PATH_CHALLENGE on a path the peer opened starts our own validation of it (§3.1).
//!
//! Key updates (RFC 9001 §6) are the connection's: a packet on any path may carry the
//! peer's update (`key_update_paths.rs`).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::key_update_state::PhaseMark;
use super::parsed::Parsed;
use super::path_spaces::PathSpace;
use super::spaces::SpaceId;
use super::stats::tally;
use super::Connection;
use crate::crypto::protect::unprotect_header;
use crate::events::DropReason;
use crate::time::Instant;
use crate::wire::header::decode_packet_number;
use crate::wire::{decode_frames, PacketType, PathId};

impl Connection {
    /// The path ID of a 1-RTT packet's Destination Connection ID when it is one of
    /// ours for a path above 0 and multipath was negotiated.
    pub(super) fn path_above_0(&self, h: &Parsed) -> Option<PathId> {
        if h.ty != PacketType::OneRtt || !self.multipath.is_negotiated() {
            return None;
        }
        self.path_cids
            .path_of_local(&h.dcid)
            .filter(|p| *p != PathId::INITIAL)
    }

    /// The space of `path` (above 0), opened with a fresh recovery if need be (§5:
    /// each path its own congestion controller, from the configured one).
    pub(super) fn path_space(&mut self, path: PathId) -> &mut PathSpace {
        let rtt = (self.config.initial_rtt(), self.config.ecn);
        let mss = u64::from(self.config.max_udp_payload_size);
        let seed = u64::from(path.0);
        let config = &self.config;
        self.path_spaces.open(
            path,
            rtt,
            || {
                let cc = config.path_congestion_control().build_seeded(mss, seed);
                crate::cc::with_careful_resume(cc, &config.careful_resume, mss)
            },
            || super::path::new_pacer(config),
        )
    }

    /// A 1-RTT packet on path `path` (above 0); returns whether it was authenticated.
    pub(super) fn handle_path_packet(
        &mut self,
        now: Instant,
        path: PathId,
        h: &Parsed,
        packet: &mut [u8],
    ) -> bool {
        if !self.handshake.complete {
            // Our path IDs are issued once the handshake is done; none can be in use.
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::KeyUnavailable);
            return false;
        }
        let Some((pn, payload, mark)) = self.unprotect_on_path(path, h, packet) else {
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::DecryptionFailure);
            return false;
        };
        // Authenticated: the path's view of the key phase is kept (its space opened).
        self.path_space(path).key_phase = mark;
        if self.path_space(path).acks.is_duplicate(pn) {
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::Duplicate);
            return true;
        }
        if let Err(e) = self.check_reserved_bits(packet[0], h.ty) {
            self.fail(now, e);
            return true;
        }
        tally(&mut self.stats.packets_received[SpaceId::Data as usize], 1);
        let incoming = self.migration.incoming;
        let sp = self.path_space(path);
        // The peer's address on this path: the first authenticated packet's source.
        sp.remote = sp.remote.or(incoming);
        sp.received_bytes = sp.received_bytes.saturating_add(packet.len() as u64);
        let size = packet.len();
        let payload = &packet[payload];
        self.log_path_received(now, (path, pn, h), payload, size);
        let frames = decode_frames(payload);
        self.path_spaces.receiving = Some(path);
        let empty = payload.is_empty();
        let outcome = self.process_frames(now, SpaceId::Data, h.ty, &h.dcid, empty, frames);
        self.path_spaces.receiving = None;
        match outcome {
            Ok((ack_eliciting, immediate, _)) => {
                let policy = self.receive_ack_policy();
                let sp = self.path_space(path);
                sp.acks
                    .on_packet_received(now, pn, ack_eliciting, immediate, &policy);
                sp.received = sp.received.saturating_add(1);
                // RFC 9000 §13.4.1 in the path's own space (draft §4.1).
                sp.ecn.on_received(SpaceId::Data, h.ecn);
                self.timers.on_packet_received(now);
            }
            Err(e) => self.fail(now, e),
        }
        true
    }

    /// PATH_CHALLENGE received on path `path` (above 0): answered on that path (RFC
    /// 9000 §8.2.2). A path the peer opened and we have neither validated nor are
    /// validating is validated in turn: our own PATH_CHALLENGE goes with the response
    /// (draft-ietf-quic-multipath §3.1: the server "MUST validate the peer's address
    /// before sending any data"; its example bundles the two). Until the echo comes
    /// back, the path's anti-amplification limit holds (`PathSpace::amplification_budget`)
    /// and no stream data goes on it.
    pub(super) fn on_path_challenge_above_0(&mut self, path: PathId, data: [u8; 8]) {
        let sp = self.path_space(path);
        sp.on_challenge(data);
        if sp.validated || sp.challenge.is_some() || sp.abandoned {
            return;
        }
        let token = self.rng.next_u64().to_be_bytes();
        let sp = self.path_space(path);
        sp.challenge = Some(token);
        sp.challenge_pending = true;
    }

    /// Header protection off, then the AEAD with the path's nonce (§2.4) and the key
    /// phase the packet names (RFC 9001 §6, `key_update_paths.rs`); `None` to drop the
    /// packet. Also returns the path's key phase mark as the packet left it.
    fn unprotect_on_path(
        &mut self,
        path: PathId,
        h: &Parsed,
        packet: &mut [u8],
    ) -> Option<(u64, std::ops::Range<usize>, PhaseMark)> {
        let space = self.path_spaces.get(path);
        let largest = space.and_then(|s| s.acks.largest());
        let mut mark = space.map(|s| s.key_phase).unwrap_or_default();
        let keys = self.spaces[SpaceId::Data as usize].keys.as_ref()?;
        let uh = unprotect_header(&*keys.remote.header, packet, h.pn_offset).ok()?;
        let phase = uh.first_byte & 0x04 != 0;
        let pn = decode_packet_number(largest, uh.truncated_pn, uh.pn_len);
        let header_len = h.pn_offset.checked_add(uh.pn_len)?;
        let range = self.decrypt_on_path((path, &mut mark), phase, packet, header_len, pn)?;
        Some((pn, range, mark))
    }
}
