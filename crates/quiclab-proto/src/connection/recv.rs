//! The receive path: datagram -> packets -> header protection removal -> decryption ->
//! frames (RFC 9000 §12, RFC 9001 §5).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::lifecycle::{CloseReason, State};
use super::outbox::EndpointEvent;
use super::parsed::Parsed;
use super::spaces::SpaceId;
use super::stats::tally;
use super::Connection;
use crate::crypto::protect::{decrypt_payload, unprotect_header};
use crate::ecn::Ecn;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{
    frame_type_name, DropReason, Event, FrameDetail, FrameSummary, Owner, PacketHeaderInfo,
};
use crate::time::Instant;
use crate::wire::header::{decode_packet_number, parse_header};
use crate::wire::{decode_frames_reusing, ConnectionId, Frame, PacketType, Side};
use std::net::SocketAddr;

impl Connection {
    /// Processes one UDP datagram from `remote` that arrived with the ECN codepoint
    /// `ecn`; decrypts in place, so `data` is clobbered.
    pub fn handle_datagram(&mut self, now: Instant, remote: SocketAddr, ecn: Ecn, data: &mut [u8]) {
        self.handle_routed_datagram(now, (None, remote), ecn, data, None);
    }

    /// [`Connection::handle_datagram`] for a datagram that arrived on the local
    /// address `local` (`None`: the driver's default socket, as
    /// [`Transmit::source`](crate::Transmit::source) says). A server with a preferred
    /// address (RFC 9000 §9.6) answers from the address a packet came to.
    pub fn handle_datagram_on(
        &mut self,
        now: Instant,
        local: Option<SocketAddr>,
        remote: SocketAddr,
        ecn: Ecn,
        data: &mut [u8],
    ) {
        self.handle_routed_datagram(now, (local, remote), ecn, data, None);
    }

    /// [`Connection::handle_datagram`] with the header of the datagram's first packet
    /// already parsed (by the endpoint, to route it) with this connection's short-header
    /// DCID length; later coalesced packets are parsed here.
    pub(crate) fn handle_routed_datagram(
        &mut self,
        now: Instant,
        (local, remote): (Option<SocketAddr>, SocketAddr),
        ecn: Ecn,
        data: &mut [u8],
        first: Option<Parsed>,
    ) {
        self.migration.incoming_local = local;
        self.receive_datagram(now, remote, ecn, data, first);
        self.arm_ack_timers();
    }

    fn receive_datagram(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        ecn: Ecn,
        data: &mut [u8],
        first: Option<Parsed>,
    ) {
        let mut first = first;
        if matches!(self.lifecycle.state(), State::Drained | State::Draining) {
            return;
        }
        self.stats.datagrams_received.add(data.len());
        self.log_datagram_ecn(now, data.len(), ecn);
        // RFC 9000 §8.1, §9.3: the bytes count for the address they came from.
        self.note_datagram_source(remote, data.len());
        let total = data.len();
        let mut offset = 0;
        let mut any_processed = false;
        while offset < total {
            let rest = &mut data[offset..];
            let parsed = match first.take() {
                Some(parsed) => parsed,
                None => match parse_header(rest, self.config.connection_id_length as usize) {
                    Ok(h) => Parsed::from(&h),
                    Err(_) => {
                        self.drop_packet(now, None, rest.len(), DropReason::HeaderParseError);
                        break;
                    }
                },
            };
            // RFC 9000 §13.4.1: coalesced packets share the datagram's codepoint.
            let parsed = Parsed { ecn, ..parsed };
            let len = parsed.packet_len.min(rest.len());
            any_processed |= self.handle_packet(now, parsed, &mut rest[..len]);
            offset = offset.saturating_add(len); // at most `total`: `len` fits in `rest`
            if self.is_closed() && !matches!(self.lifecycle.state(), State::Closing) {
                return;
            }
        }
        self.process_pending_zero_rtt(now);
        if self.handshake.complete && self.handshake.has_early_one_rtt() {
            for (h, mut packet) in self.handshake.take_early_one_rtt() {
                self.handle_packet(now, h, &mut packet);
            }
        }
        if !any_processed
            && total >= 21
            && self
                .cids
                .is_stateless_reset(&data[total.saturating_sub(16)..])
        {
            // RFC 9000 §10.3.1: a stateless reset ends the connection at once.
            let error = TransportError::new(TransportErrorCode::NO_ERROR, "stateless reset");
            self.start_draining(
                now,
                CloseReason::Transport {
                    owner: Owner::Remote,
                    error,
                },
            );
        }
        if any_processed {
            // RFC 9000 §10.2.1: answer packets in the closing state with CONNECTION_CLOSE.
            self.lifecycle.on_packet_while_closing();
        }
    }

    pub(super) fn drop_packet(
        &mut self,
        now: Instant,
        ty: Option<PacketType>,
        size: usize,
        reason: DropReason,
    ) {
        tally(&mut self.stats.packets_dropped, 1);
        if self.logging() {
            self.emit(now, Event::PacketDropped { ty, size, reason });
        }
    }

    /// Handles one packet; returns whether it was authenticated and processed.
    fn handle_packet(&mut self, now: Instant, h: Parsed, packet: &mut [u8]) -> bool {
        let long = matches!(
            h.ty,
            PacketType::Initial | PacketType::Handshake | PacketType::ZeroRtt
        );
        if long && self.cids.is_foreign_scid(&h.scid) {
            // RFC 9000 §7.2: once the peer's first Initial fixed its connection ID, a
            // packet with another Source Connection ID is discarded.
            self.drop_packet(
                now,
                Some(h.ty),
                packet.len(),
                DropReason::UnexpectedSourceCid,
            );
            return false;
        }
        if h.ty == PacketType::ZeroRtt && h.version == self.versions.current {
            return self.handle_zero_rtt_packet(now, h, packet);
        }
        let space = match h.ty {
            PacketType::VersionNegotiation => {
                self.on_version_negotiation(now, &h.scid, packet);
                return false;
            }
            // RFC 9000 §5.2: a long header of another version than the connection's
            // (a v1 Initial retransmitted after we moved to v2, say) is not ours,
            // unless it is the server's first word of a compatible upgrade (RFC 9368
            // §2.3; RFC 9369 §4.1: anything else in another version is dropped).
            ty if ty != PacketType::OneRtt
                && h.version != self.versions.current
                && (ty != PacketType::Initial || self.original_version() != Some(h.version)) =>
            {
                if self.may_follow_upgrade(&h) {
                    return self.follow_upgrade(now, h, packet);
                }
                self.drop_packet(now, Some(ty), packet.len(), DropReason::UnsupportedVersion);
                return false;
            }
            PacketType::Retry => return self.on_retry(now, h.scid, packet),
            // No 0-RTT support yet: such packets are dropped.
            PacketType::ZeroRtt => {
                self.drop_packet(now, Some(h.ty), packet.len(), DropReason::Other);
                return false;
            }
            ty => SpaceId::of(ty).expect("protected packet types have a space"),
        };
        if let Some(path) = self.path_above_0(&h) {
            // draft-ietf-quic-multipath §2.3: its own packet number space.
            return self.handle_path_packet(now, path, &h, packet);
        }
        if space == SpaceId::Data && self.path0_freed() {
            // draft-ietf-quic-multipath §3.4: path 0's state was freed 3 PTO after its
            // abandonment (`multipath_free0.rs`); a late packet of it is not read.
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::Other);
            return false;
        }
        if !self.spaces[space as usize].can_send() {
            if self.side == Side::Client && space != SpaceId::Initial {
                // RFC 9002 §6.2.3: Handshake or 1-RTT packets before the Handshake keys:
                // some of the server's Initial packets were probably lost.
                self.speed_up_handshake(now, SpaceId::Initial);
            }
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::KeyUnavailable);
            return false;
        }
        if space == SpaceId::Data && self.side == Side::Server && !self.handshake.complete {
            // RFC 9001 §5.7: no 1-RTT processing before the handshake completes; keep a
            // few such packets for then instead of making the client retransmit them.
            let ty = h.ty;
            if !self.may_keep_packet(packet.len()) || !self.handshake.keep_early_one_rtt(h, packet)
            {
                self.drop_packet(now, Some(ty), packet.len(), DropReason::KeyUnavailable);
            }
            return false;
        }
        let Some(pn) = self.unprotect(space, &h, packet) else {
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::DecryptionFailure);
            // RFC 9001 §6.4, §6.6: key update violations and the integrity limit.
            if let Some(e) = self.key_update.take_error() {
                self.fail(now, e);
            }
            return false;
        };
        self.log_key_update(now);
        let (pn, payload) = pn;
        self.process_packet(now, space, &h, pn, payload, packet)
    }

    /// Processes a packet decrypted in place (`payload` is its plaintext range):
    /// duplicates, reserved bits, frames, ACK and idle bookkeeping. Returns true (it
    /// was authenticated).
    pub(super) fn process_packet(
        &mut self,
        now: Instant,
        space: SpaceId,
        h: &Parsed,
        pn: u64,
        payload: std::ops::Range<usize>,
        packet: &mut [u8],
    ) -> bool {
        if self.spaces[space as usize].acks.is_duplicate(pn) {
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::Duplicate);
            return true;
        }
        if let Err(e) = self.check_reserved_bits(packet[0], h.ty) {
            self.fail(now, e);
            return true;
        }
        self.on_authenticated_packet(now, space, h);
        if matches!(self.lifecycle.state(), State::Closing) {
            return true;
        }
        tally(&mut self.stats.packets_received[space as usize], 1);
        let payload = &packet[payload];
        // Frames are decoded once: with a sink, the decoded frames (up to and including
        // a decoding error, where the iterator stops) give the event and are then
        // processed; without one, they are processed as they are decoded.
        let outcome = if self.logging() {
            // The list's buffer is kept in the connection between packets.
            let mut frames: Vec<Result<Frame<'_>, TransportError>> =
                std::mem::take(&mut self.scratch.decoded);
            let ranges = std::mem::take(&mut self.scratch.ack_ranges);
            let mut decoder = decode_frames_reusing(payload, ranges);
            frames.extend(&mut decoder);
            self.scratch.keep_ack_ranges(decoder.take_ack_ranges());
            self.log_received(now, h, pn, packet.len(), &frames);
            let empty = payload.is_empty();
            let outcome = self.process_frames(now, space, h.ty, &h.dcid, empty, frames.drain(..));
            self.scratch.decoded = recycle(frames);
            outcome
        } else {
            let ranges = std::mem::take(&mut self.scratch.ack_ranges);
            let mut frames = decode_frames_reusing(payload, ranges);
            let empty = payload.is_empty();
            let outcome = self.process_frames(now, space, h.ty, &h.dcid, empty, &mut frames);
            self.scratch.keep_ack_ranges(frames.take_ack_ranges());
            outcome
        };
        match outcome {
            Ok((ack_eliciting, immediate, non_probing)) => {
                let largest_before = self.spaces[space as usize].acks.largest();
                let policy = self.receive_ack_policy();
                if space == SpaceId::Data && ack_eliciting {
                    tally(&mut self.ack_frequency.data_eliciting_received, 1);
                }
                let immediate = immediate || space != SpaceId::Data;
                self.spaces[space as usize].acks.on_packet_received(
                    now,
                    pn,
                    ack_eliciting,
                    immediate,
                    &policy,
                );
                self.timers.on_packet_received(now);
                // RFC 9000 §13.4.1: counted for processed packets only (not duplicates,
                // not undecryptable ones).
                self.ecn.on_received(space, h.ecn);
                if non_probing {
                    // RFC 9000 §9.3: the peer may have moved.
                    self.on_non_probing_packet(now, space, pn, largest_before, &h.dcid);
                }
            }
            Err(e) => self.fail(now, e),
        }
        true
    }

    /// Emits `PacketReceived` with a summary of each frame that decoded.
    fn log_received(
        &mut self,
        now: Instant,
        h: &Parsed,
        pn: u64,
        size: usize,
        frames: &[Result<Frame<'_>, TransportError>],
    ) {
        let detail = self.frame_detail().unwrap_or(FrameDetail::Full);
        let mut list = self.take_frame_list();
        let decoded = frames.iter().filter_map(|f| f.as_ref().ok());
        list.extend(decoded.map(|f| FrameSummary::with_detail(f, detail)));
        let frames = list;
        let header = PacketHeaderInfo {
            ty: h.ty,
            pn: Some(pn),
            dcid: h.dcid,
            scid: (h.ty != PacketType::OneRtt).then_some(h.scid),
            path_id: self.logged_path_id(h.ty, 0),
        };
        self.emit_packet(
            now,
            Event::PacketReceived {
                header,
                size,
                frames,
            },
        );
    }

    /// Removes header protection and decrypts; returns the packet number and the
    /// plaintext payload range, or `None` to drop the packet.
    fn unprotect(
        &mut self,
        space: SpaceId,
        h: &Parsed,
        packet: &mut [u8],
    ) -> Option<(u64, std::ops::Range<usize>)> {
        let sp = &self.spaces[space as usize];
        sp.keys.as_ref()?;
        let keys = if space == SpaceId::Initial && h.version != self.versions.current {
            // RFC 9368 §2.3: a client Initial still in its original version.
            self.original_initial_keys(h.version)?
        } else {
            sp.keys.as_ref()?
        };
        let uh = unprotect_header(&*keys.remote.header, packet, h.pn_offset).ok()?;
        let pn = decode_packet_number(sp.acks.largest(), uh.truncated_pn, uh.pn_len);
        let header_len = h.pn_offset.saturating_add(uh.pn_len); // within the packet
        if space == SpaceId::Data {
            let phase = uh.first_byte & 0x04 != 0;
            return self
                .decrypt_one_rtt(phase, packet, header_len, pn)
                .map(|r| (pn, r));
        }
        decrypt_payload(&*keys.remote.packet, packet, header_len, pn)
            .ok()
            .map(|r| (pn, r))
    }

    /// RFC 9000 §17.2 / §17.3.1: reserved bits must be zero after unprotection.
    pub(super) fn check_reserved_bits(
        &self,
        first: u8,
        ty: PacketType,
    ) -> Result<(), TransportError> {
        let mask = if ty == PacketType::OneRtt { 0x18 } else { 0x0c };
        if first & mask != 0 {
            return Err(TransportError::protocol_violation(
                "reserved header bits are not zero",
            ));
        }
        Ok(())
    }

    /// State changes due to the first authenticated packets of each kind.
    fn on_authenticated_packet(&mut self, now: Instant, space: SpaceId, h: &Parsed) {
        if self.side == Side::Client
            && !self.handshake.received_server_packet
            && space == SpaceId::Initial
        {
            // RFC 9000 §7.2: the client switches to the server's chosen connection ID.
            self.handshake.received_server_packet = true;
            self.cids.set_initial_remote(h.scid);
            self.cids.fix_peer_scid(h.scid);
        }
        if self.side == Side::Server && space == SpaceId::Handshake {
            // RFC 9000 §8.1: a Handshake packet validates the client's address;
            // RFC 9001 §4.9.1: the server discards Initial keys on its first one.
            if !self.path.validated {
                self.path.validated = true;
                self.set_loss_detection_timer(now);
            }
            self.discard_space(now, SpaceId::Initial);
        }
    }

    /// Dispatches a packet's decoded frames (`empty`: the payload had no bytes); returns
    /// (ack-eliciting, IMMEDIATE_ACK seen, non-probing: RFC 9000 §9.1).
    pub(super) fn process_frames<'a>(
        &mut self,
        now: Instant,
        space: SpaceId,
        ty: PacketType,
        dcid: &ConnectionId,
        empty: bool,
        frames: impl IntoIterator<Item = Result<Frame<'a>, TransportError>>,
    ) -> Result<(bool, bool, bool), TransportError> {
        if empty {
            return Err(TransportError::protocol_violation("packet without frames"));
        }
        let mut ack_eliciting = false;
        let mut immediate = false;
        let mut non_probing = false;
        for frame in frames {
            let frame = frame?;
            if !frame.permitted_in(ty) {
                return Err(TransportError::protocol_violation(format!(
                    "{} frame not allowed in {ty:?} packets",
                    frame_type_name(&frame)
                ))
                .with_frame(frame.type_code()));
            }
            ack_eliciting |= frame.is_ack_eliciting();
            non_probing |= !frame.is_probing();
            let ft = frame.type_code();
            self.on_frame(now, space, dcid, frame, &mut immediate)
                .map_err(|e| {
                    if e.frame_type.is_none() {
                        e.with_frame(ft)
                    } else {
                        e
                    }
                })?;
            if self.is_closed() {
                break;
            }
        }
        Ok((ack_eliciting, immediate, non_probing))
    }

    pub(super) fn on_frame(
        &mut self,
        now: Instant,
        space: SpaceId,
        dcid: &ConnectionId,
        frame: Frame<'_>,
        immediate: &mut bool,
    ) -> Result<(), TransportError> {
        match frame {
            Frame::Padding { .. } | Frame::Ping => {}
            Frame::PathResponse(d) => match self.path_spaces.receiving {
                // draft-ietf-quic-multipath §3.1: about the path it came on.
                Some(path) => self.path_space(path).on_response(d),
                None => self.on_path_response_frame(now, d),
            },
            Frame::Ack(ack) => {
                self.on_ack_frame(now, space, &ack)?;
                self.scratch.keep_ack_ranges(ack.ranges);
            }
            Frame::Crypto { offset, data } => self.on_crypto_frame(now, space, offset, data)?,
            Frame::Stream(_)
            | Frame::ResetStream { .. }
            | Frame::StopSending { .. }
            | Frame::MaxData(_)
            | Frame::MaxStreamData { .. }
            | Frame::MaxStreams { .. }
            | Frame::DataBlocked { .. }
            | Frame::StreamDataBlocked { .. }
            | Frame::StreamsBlocked { .. } => self.streams.on_frame(&frame)?,
            Frame::NewToken { token } => self.on_new_token_frame(token)?,
            Frame::NewConnectionId(f) => {
                let limit = self.params.local.active_connection_id_limit;
                self.cids.on_new_cid(&f, limit)?;
            }
            Frame::RetireConnectionId { sequence } => {
                if let Some(cid) = self.cids.on_retire(sequence, dcid)? {
                    self.outbox
                        .push_endpoint_event(EndpointEvent::RetireConnectionId(cid));
                    self.issue_connection_ids();
                }
            }
            // Answered on the path it came on, bounded (RFC 9000 §8.2.2).
            Frame::PathChallenge(d) => match self.path_spaces.receiving {
                // RFC 9000 §8.2.2: answered on the path it arrived on.
                Some(path) => self.on_path_challenge_above_0(path, d),
                None => self.on_path_challenge_frame(now, d),
            },
            Frame::ConnectionClose(c) => {
                let reason = String::from_utf8_lossy(c.reason).into_owned();
                let reason = match c.frame_type {
                    Some(ft) => CloseReason::Transport {
                        owner: Owner::Remote,
                        error: TransportError {
                            code: TransportErrorCode(c.error_code),
                            frame_type: Some(ft),
                            reason,
                        },
                    },
                    None => CloseReason::Application {
                        owner: Owner::Remote,
                        code: c.error_code,
                        reason,
                    },
                };
                self.start_draining(now, reason);
            }
            Frame::HandshakeDone => {
                if self.side == Side::Server {
                    return Err(TransportError::protocol_violation(
                        "HANDSHAKE_DONE sent by a client",
                    ));
                }
                self.confirm_handshake(now);
            }
            Frame::Datagram { data } => {
                if self
                    .config
                    .max_datagram_frame_size
                    .is_none_or(|m| data.len() as u64 > m)
                {
                    return Err(TransportError::protocol_violation(
                        "DATAGRAM frame not negotiated or too large",
                    ));
                }
                // RFC 9221 §5: past the bound the oldest unread payload is dropped.
                if self.outbox.push_datagram(data) {
                    tally(&mut self.stats.datagrams_dropped, 1);
                }
            }
            Frame::AckFrequency(f) => self.on_ack_frequency(&f)?,
            Frame::ImmediateAck => {
                if self.config.min_ack_delay_us.is_none() {
                    return Err(TransportError::protocol_violation(
                        "IMMEDIATE_ACK without ack-frequency negotiation",
                    ));
                }
                *immediate = true;
            }
            Frame::Multipath(m) => self.on_multipath_frame(now, dcid, m)?,
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "recv_bounds_tests.rs"]
mod bounds_tests;

/// Empties `v` and gives its buffer back with a `'static` element type, so it can be
/// kept in the connection between packets: collecting an emptied `vec::IntoIter`
/// through `map` reuses the allocation (same element size and alignment).
fn recycle(
    mut v: Vec<Result<Frame<'_>, TransportError>>,
) -> Vec<Result<Frame<'static>, TransportError>> {
    v.clear();
    v.into_iter().map(|_| unreachable!("emptied")).collect()
}

#[cfg(test)]
mod recycle_tests {
    use super::*;

    #[test]
    fn recycle_keeps_the_buffer() {
        let data = [1u8, 2, 3];
        let mut v: Vec<Result<Frame<'_>, TransportError>> = Vec::with_capacity(8);
        v.push(Ok(Frame::Datagram { data: &data }));
        let ptr = v.as_ptr() as usize;
        let r = recycle(v);
        assert!(r.is_empty());
        assert_eq!(r.capacity(), 8);
        assert_eq!(r.as_ptr() as usize, ptr);
    }
}
