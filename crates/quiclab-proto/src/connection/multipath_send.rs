//! Sending for paths above 0 (draft-ietf-quic-multipath §2.3, §2.4, §4.1): PATH_ACK
//! frames for the paths' packet number spaces, ridden on path 0's 1-RTT packets (§4.1
//! lets an ACK of any path go on any path), and packets on a path above 0: its own
//! packet numbers, one of the peer's connection IDs for that path, sealed with the
//! path's nonce and recorded in that path's recovery.
//!
//! So far a path above 0 carries only what [`Connection::multipath_ping`] asks for (a
//! PING, ack-eliciting, in flight on that path), sent to the active path's address.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::path_spaces::PathSendError;
use super::spaces::{SentRecord, SpaceId};
use super::transmit::Transmit;
use super::Connection;
use crate::crypto::protect::seal_on_path;
use crate::crypto::TAG_LEN;
use crate::path_recovery::Outgoing;
use crate::time::Instant;
use crate::wire::header::{packet_number_len, write_short_header};
use crate::wire::{Frame, MultipathFrame, PathId};

impl Connection {
    /// Sends a PING on path `path_id` (above 0) with the next step's transmit: a packet
    /// of that path's space, sealed with its nonce, counted in its recovery.
    pub fn multipath_ping(&mut self, path_id: u32) -> Result<(), PathSendError> {
        if !self.multipath.is_negotiated() || !self.handshake.confirmed {
            return Err(PathSendError::NotNegotiated);
        }
        let path = PathId(path_id);
        if path == PathId::INITIAL || path > self.multipath.peer_max_path_id() {
            return Err(PathSendError::InvalidPathId);
        }
        if self.path_cids.remote_ids(path).is_empty() {
            return Err(PathSendError::NoConnectionId);
        }
        let sp = self.path_space(path);
        sp.pings = sp.pings.saturating_add(1);
        Ok(())
    }

    /// Packets received and sent on path `path_id` (above 0), if its space is open.
    pub fn multipath_packets(&self, path_id: u32) -> Option<(u64, u64)> {
        let sp = self.path_spaces.get(PathId(path_id))?;
        Some((sp.received, sp.sent))
    }

    /// Path `path_id`'s smoothed RTT and bytes in flight (its own recovery, §5), if
    /// its space is open and it has an RTT sample.
    pub fn multipath_path_rtt(&self, path_id: u32) -> Option<(std::time::Duration, u64)> {
        let r = &self.path_spaces.get(PathId(path_id))?.recovery;
        r.rtt()
            .has_sample()
            .then(|| (r.rtt().smoothed(), r.bytes_in_flight()))
    }

    /// PATH_ACK frames (§4.1) for every path above 0 with packets not yet acknowledged,
    /// while they fit below `max`.
    pub(super) fn write_path_acks(&mut self, now: Instant, buf: &mut Vec<u8>, max: usize) {
        let exp = self.config.ack.ack_delay_exponent;
        let ranges = self.config.ack.max_ack_ranges;
        for (path_id, sp) in self.path_spaces.iter_mut() {
            if !sp.acks.has_new() {
                continue;
            }
            let Some(ack) = sp.acks.build_ack(now, exp, ranges, None) else {
                continue;
            };
            let frame = Frame::Multipath(MultipathFrame::PathAck { path_id, ack });
            if buf.len().saturating_add(frame.encoded_len()) > max {
                return;
            }
            frame.encode(buf);
        }
    }

    /// The next packet on a path above 0, if one owes a PING.
    pub(super) fn poll_path_packet(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (path, _) = self.path_spaces.iter().find(|(_, s)| s.pings > 0)?;
        let dcid = *self.path_cids.remote_ids(path).first()?;
        let phase = self.key_update.phase();
        let sp = self.path_spaces.get(path)?;
        let pn = sp.next_pn;
        let pn_len = packet_number_len(pn, sp.recovery.sent(SpaceId::Data).largest_acked());
        let start = buf.len();
        let pn_offset = write_short_header(buf, &dcid, false, phase, pn, pn_len);
        Frame::Ping.encode(buf);
        // RFC 9001 §5.4.2: 4 bytes after the packet number start for the sample.
        let min_end = pn_offset.saturating_add(4);
        if buf.len() < min_end {
            buf.resize(min_end, 0);
        }
        buf.resize(buf.len().saturating_add(TAG_LEN), 0);
        let keys = &self.spaces[SpaceId::Data as usize].keys.as_ref()?.local;
        let at = pn_offset.saturating_sub(start);
        seal_on_path(
            &*keys.packet,
            &*keys.header,
            &mut buf[start..],
            at,
            pn,
            Some(path),
        )
        .expect("sealing our own packet cannot fail");
        let size = buf.len().saturating_sub(start);
        let sp = self.path_spaces.get_mut(path)?;
        sp.pings = sp.pings.saturating_sub(1);
        sp.next_pn = sp.next_pn.saturating_add(1);
        sp.sent = sp.sent.saturating_add(1);
        // RFC 9002 A.5 OnPacketSent, in the path's own recovery (§5).
        sp.recovery.on_packet_sent(
            now,
            Outgoing {
                space: SpaceId::Data,
                pn,
                size: size as u64,
                ack_eliciting: true,
                in_flight: true,
                data: SentRecord::default(),
            },
        );
        self.stats.datagrams_sent.packets = self.stats.datagrams_sent.packets.saturating_add(1);
        self.stats.datagrams_sent.bytes =
            (self.stats.datagrams_sent.bytes).saturating_add(size as u64);
        self.timers.on_ack_eliciting_sent(now);
        Some(Transmit {
            destination: self.path.remote,
            source: self.migration.local,
            size,
            ecn: self.ecn.codepoint(),
        })
    }
}
