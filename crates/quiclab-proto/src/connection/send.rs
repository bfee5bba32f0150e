//! The send path: choosing what each packet number space has to send, building and
//! coalescing packets into one datagram, padding, protecting, and recording them for
//! loss recovery (RFC 9000 §12.2, §13, §14.1; RFC 9001 §5; RFC 9002 §7).

use super::lifecycle::State;
use super::spaces::{SentFrame, SentRecord, SpaceId};
use super::timers::Timer;
use super::transmit::{Transmit, MIN_INITIAL_DATAGRAM};
use super::Connection;
use crate::crypto::protect::seal;
use crate::crypto::TAG_LEN;
use crate::events::{Event, FrameSummary, PacketHeaderInfo};
use crate::path_recovery::Outgoing;
use crate::streams::StreamFrameRecord;
use crate::time::Instant;
use crate::wire::header::{packet_number_len, write_long_header, write_short_header};
use crate::wire::{decode_frames, varint, ConnectionId, Frame, PacketType, PathId, Side};

/// Smallest useful packet: header room plus a few frame bytes and the tag.
pub(super) const MIN_PACKET_ROOM: usize = 64;
/// RFC 9000 §17.2: the largest long-header packet we build. Its Length field (packet
/// number, payload and tag) is written in 2 bytes, so at most 16383; capping the whole
/// packet at that bounds Length below it by construction, whatever the path's
/// max_udp_payload_size allows. Larger paths carry more packets per datagram instead.
const MAX_LONG_HEADER_PACKET: usize = 16_383;

/// A packet being written into the datagram buffer, not yet protected.
pub(super) struct OpenPacket {
    space: SpaceId,
    start: usize,
    /// Long headers: where the 2-byte Length field is.
    length_offset: Option<usize>,
    pn_offset: usize,
    pub pn: u64,
    pub payload_start: usize,
    pub ack_eliciting: bool,
    padded: bool,
    /// A 0-RTT packet (application data before the 1-RTT keys, RFC 9001 §4.6.1).
    pub zero_rtt: bool,
    /// Sent on a path other than the active one (`path_probe.rs`): recorded neither in
    /// flight nor as ack-eliciting, so its fate reaches neither the active path's
    /// controller nor its RTT estimate (RFC 9000 §9.4).
    pub off_path: bool,
    /// The Destination Connection ID in its header.
    dcid: ConnectionId,
    pub record: SentRecord,
    /// While a sink is attached: the event summaries of the frames from the start of
    /// the payload that the send path recorded as it wrote them (the ACK frame that
    /// opens it, the stream writer's STREAM frames), and where the last of them ends.
    /// The packet event decodes only the frames after that (`finish_packet`): decoding
    /// our own frames again was an allocation per ACK and a decode per STREAM frame.
    logged: Option<(Vec<FrameSummary>, usize)>,
}

impl Connection {
    /// The largest UDP payload we may send on this path: the configured one, or what
    /// PMTU discovery confirmed (RFC 9000 §14.3), within the peer's limit. Datagrams
    /// are at most this size except PMTU probes.
    pub fn max_datagram_size(&self) -> usize {
        let ours = u64::from(
            self.path
                .pmtud
                .as_ref()
                .map_or(self.config.max_udp_payload_size, |m| m.current()),
        );
        let peer = self.params.peer().map_or(ours, |p| p.max_udp_payload_size);
        ours.min(peer).max(MIN_INITIAL_DATAGRAM as u64) as usize
    }

    /// Appends the next datagram to `buf` and says where to send it; `None` when there
    /// is nothing to send now (see [`Connection::poll_timeout`]).
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let transmit = self.build_transmit(now, buf);
        self.arm_ack_timers();
        transmit
    }

    /// Builds the next datagram into `buf`, or finds nothing to send.
    ///
    /// # The empty call (issue 29, docs/PERFORMANCE.md "packet build")
    ///
    /// A driver polls until `None`, so about half the calls find nothing: on the
    /// d_shared_link run, 30,973 of 61,364 calls. Such a call is not free of effects; a
    /// cheaper "nothing to send" answer would have to reproduce each of these writes,
    /// in this order, as their guards read state the earlier ones change:
    ///
    /// 1. `release_handshake_hold`: a WFC server's hold (`Timer::ServerHold`) that came
    ///    due is stopped and TLS is fed and driven (CRYPTO queued, keys, handshake
    ///    state); an error `fail`s the connection. What it queued may still not go out
    ///    (the anti-amplification return below).
    /// 2. `Timer::Pacing` is stopped, always (re-armed by step 7).
    /// 3. `schedule_stream_data` (multipath negotiated): `sched.choice` and
    ///    `sched.candidates` are recomputed.
    /// 4. `poll_path_probe`: responses owed from another local address or to another
    ///    remote address that cannot be written are taken and dropped
    ///    (`migration.stats.responses_dropped`); the active path's are put back.
    /// 5. `poll_path_packet`: `Timer::PathLoss` and `Timer::PathPacing` are stopped
    ///    (one path) or recomputed with `arm_path_freeing` (more paths); an abandoned
    ///    path 0 hands the call to `poll_path_close`.
    /// 6. `update_ack_frequency` (not closing): may set `sender.done` and queue an
    ///    ACK_FREQUENCY (`sender.request`: its sequence, ratio and `last_request`);
    ///    with the window closed it is queued in an empty call and leaves later.
    /// 7. `pacer_allows` (window open, pacing on): arms `Timer::Pacing` at the pacer's
    ///    next send time when it blocks and the data space has something pending. This
    ///    query is the answer itself for a paced bulk sender (the usual reason the call
    ///    is empty), so no shortcut can skip it.
    /// 8. `poll_pmtu_probe`: `limit_to_peer` clamps the search (idempotent).
    /// 9. The space loop writes only once a packet is opened (the client's discard of
    ///    Initial keys), and an opened packet always ends in `Some`.
    ///
    /// `poll_transmit` then runs `arm_ack_timers`, which reads the ACK deadlines; the
    /// connection cannot tell a "second" call from a first after a received datagram
    /// or a fired timer, so that too must run.
    ///
    /// Measured (callgrind, d_shared_link 40 s, profiling build, 866d963): running
    /// the empty call once more after each empty call (a throwaway patch; every
    /// output stayed byte-identical) added 18.41 M instructions for 30,973 calls, 594
    /// per call, 0.60 k per datagram: `next_send_time` 84, `data_frames_pending` 64
    /// (the receivers' calls, 99 each), `Streams::has_pending` 30, `arm_ack_timers`
    /// 78, `release_handshake_hold` 14, this function's own checks and what is inlined
    /// into it about 300. A shortcut keeps steps 2, 5 and 7, the space test and
    /// `arm_ack_timers` (about 280) and needs a guard of its own, so it could save at
    /// most about 0.3 k per datagram (1.4% of the run). Not attempted (session
    /// 2026-11-29 (5)): a guard proving that steps 1, 3, 4, 6, 8 and 9 write nothing
    /// re-reads most of what those steps read (the hold timer, the multipath state,
    /// four probe queues, the ACK frequency policy, the PMTU search, each space's
    /// ACKs, probes and CRYPTO), and a guard that missed a case would change a run
    /// without failing a test.
    fn build_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        match self.lifecycle.state() {
            State::Draining | State::Drained => return None,
            State::Closing if !self.lifecycle.close_pending() => return None,
            _ => {}
        }
        if let Err(e) = self.release_handshake_hold(now) {
            self.fail(now, e);
        }
        // Recomputed below when the window is open; a stale deadline must not linger.
        self.timers.stop(Timer::Pacing);
        let start = buf.len();
        // draft-ietf-quic-multipath §5.5: which path carries new stream data.
        self.schedule_stream_data(now);
        if self.lifecycle.state() != State::Closing {
            // RFC 9000 §8.2: path validation's datagrams, on their own.
            if let Some(t) = self.poll_path_probe(now, buf) {
                return Some(t);
            }
            // draft-ietf-quic-multipath: a packet on a path above 0.
            if let Some(t) = self.poll_path_packet(now, buf) {
                return Some(t);
            }
        }
        if self.multipath.path0_abandoned {
            // draft-ietf-quic-multipath §3.4: nothing more on path 0; a CONNECTION_CLOSE
            // goes on another path (§2.6: "can be sent on any open path").
            return self.poll_path_close(now, buf);
        }
        let budget = (self.max_datagram_size() as u64).min(self.amplification_budget()) as usize;
        if budget < MIN_INITIAL_DATAGRAM && !self.path.validated && !self.handshake.confirmed {
            return None; // RFC 9000 §8.1: wait for more bytes from the client.
        }
        let closing = matches!(self.lifecycle.state(), State::Closing);
        if !closing {
            self.update_ack_frequency(now);
        }
        let cwnd_open =
            self.bytes_in_flight() < self.path.recovery.cc().window() && self.pacer_allows(now);
        // A PMTU probe is not limited by the amplification budget: none to an
        // unvalidated address (a migrated path, RFC 9000 §9.3.1).
        if !closing && self.path.pmtud.is_some() && self.path.validated {
            if let Some(t) = self.poll_pmtu_probe(now, buf, cwnd_open) {
                return Some(t);
            }
        }
        let mut open: Option<OpenPacket> = None;
        let mut pad_datagram = false;
        // Whether any packet of this datagram counts toward bytes in flight.
        let mut in_flight = false;
        for space in SpaceId::ALL {
            if !self.space_sendable(space) {
                continue;
            }
            let wants = if closing {
                self.close_wanted_in(space)
            } else {
                self.space_wants_to_send(now, space, cwnd_open)
            };
            if !wants {
                continue;
            }
            if budget.saturating_sub(buf.len() - start) < MIN_PACKET_ROOM {
                break;
            }
            if let Some(p) = open.take() {
                in_flight |= self.finish_packet(now, buf, p, 0);
            }
            if space == SpaceId::Handshake && self.side == Side::Client {
                // RFC 9001 §4.9.1: a client discards Initial keys when it first sends Handshake.
                self.discard_space(now, SpaceId::Initial);
            }
            let limit = if space == SpaceId::Data {
                start + budget
            } else {
                (start + budget).min(buf.len() + MAX_LONG_HEADER_PACKET)
            };
            let p = self.write_packet(now, buf, space, limit, closing, cwnd_open);
            if space == SpaceId::Initial && (self.side == Side::Client || p.ack_eliciting) {
                pad_datagram = true;
            }
            open = Some(p);
            if space == SpaceId::Data {
                break; // short headers have no length: the 1-RTT packet is last
            }
        }
        let p = open?;
        let pad = if pad_datagram {
            (start + MIN_INITIAL_DATAGRAM).saturating_sub(buf.len() + TAG_LEN)
        } else {
            0
        };
        in_flight |= self.finish_packet(now, buf, p, pad);
        if closing {
            self.lifecycle.on_close_sent();
        }
        Some(self.datagram_done(now, start, buf, in_flight))
    }

    /// The datagram from `start` is complete: pacing, counters, the loss timer.
    pub(super) fn datagram_done(
        &mut self,
        now: Instant,
        start: usize,
        buf: &[u8],
        in_flight: bool,
    ) -> Transmit {
        let size = buf.len() - start;
        // RFC 9002 §7.7: pacing spreads in-flight data; ACK-only datagrams are not
        // congestion controlled and must not spend the pacer's tokens (a receiver's
        // stream of ACKs would otherwise starve its own MAX_DATA updates).
        if self.config.pacing && in_flight {
            let rate = self.path.pacing_rate();
            self.path.pacer.on_sent(now, size as u64, rate);
        }
        self.stats.datagrams_sent.packets += 1;
        self.stats.datagrams_sent.bytes += size as u64;
        self.path.on_datagram_sent(size);
        self.set_loss_detection_timer(now);
        Transmit {
            destination: self.path.remote,
            source: self.migration.local,
            size,
            ecn: self.ecn.codepoint(),
        }
    }

    /// RFC 9002 §7.7: whether the pacer lets a full-sized datagram of new data leave
    /// now; otherwise remembers when it will.
    fn pacer_allows(&mut self, now: Instant) -> bool {
        if !self.config.pacing {
            return true;
        }
        let size = self.max_datagram_size() as u64;
        match self
            .path
            .pacer
            .next_send_time(now, size, self.path.pacing_rate())
        {
            Some(t) if t > now => {
                if self.data_space_pending() {
                    self.timers.set(Timer::Pacing, t);
                }
                false
            }
            _ => true,
        }
    }

    /// Whether `space` has anything to send now (ACKs due, handshake data, probes,
    /// stream data within the congestion window).
    fn space_wants_to_send(&self, now: Instant, space: SpaceId, cwnd_open: bool) -> bool {
        let sp = &self.spaces[space as usize];
        let ack_due = if space == SpaceId::Data {
            // Path 0's ACK and the PATH_ACKs path 0 carries (`multipath_ack_path.rs`).
            self.acks_due_on(now, PathId::INITIAL)
        } else {
            sp.acks.ack_deadline().is_some_and(|t| t <= now)
        };
        if sp.probes > 0 || (ack_due && !self.initial_ack_held(space)) {
            return true;
        }
        if sp.crypto_send.has_pending() {
            // Handshake data is not held back by the congestion window: it is a few KB,
            // and the 1-RTT data filling the window cannot be acknowledged before the
            // handshake completes (RFC 9001 §5.7) while the application-data PTO is off
            // until confirmation (RFC 9002 §6.2.1), so waiting would deadlock.
            return true;
        }
        if !cwnd_open {
            return false;
        }
        // Side-effect-free reads or-ed together, so the order is free: stream data,
        // the common answer of a sending connection, is asked first, ahead of the
        // dozen control-frame queues that are rarely non-empty.
        space == SpaceId::Data
            && self.may_send_app_data()
            && ((self.streams.has_pending() && self.stream_data_allowed_on(PathId::INITIAL))
                || self.data_frames_pending()
                || self.copies_pending_on(PathId::INITIAL))
    }

    pub(super) fn data_space_pending(&self) -> bool {
        // Order free, as in `space_wants_to_send`.
        self.streams.has_pending()
            || self.data_frames_pending()
            || self.copies_pending_on(PathId::INITIAL)
    }

    /// Frames of the application data space other than the stream writer's.
    pub(super) fn data_frames_pending(&self) -> bool {
        self.handshake.done_pending
            || !self.path.responses.is_empty()
            || !self.cids.pending_new.is_empty()
            || !self.cids.pending_retire.is_empty()
            || self.path_cids.has_pending()
            || self.path_spaces.abandon_to_send().is_some()
            || self.multipath.path0_abandon_pending.is_some()
            || self.multipath.local_status.has_pending()
            || self.multipath.limits_pending()
            || self.ack_frequency.sender.has_pending()
            || self.tokens.new_token.has_pending()
            // Path 0's, or the carrier's once path 0 is abandoned (`multipath_datagram.rs`).
            || self.datagrams_pending_on(self.carrier_path().unwrap_or(PathId::INITIAL))
    }

    /// RFC 9000 §10.2.3: once the handshake is confirmed, CONNECTION_CLOSE goes in
    /// 1-RTT packets only; before, in every space we still have keys for, as the peer
    /// may not read the highest yet (a client whose handshake is complete but whose
    /// Finished has not reached the server: the server reads no 1-RTT packet).
    fn close_wanted_in(&self, space: SpaceId) -> bool {
        !self.handshake.confirmed || space == SpaceId::Data
    }

    /// Writes a packet header and frames for `space`, leaving it open for padding.
    fn write_packet(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        space: SpaceId,
        limit: usize,
        closing: bool,
        cwnd_open: bool,
    ) -> OpenPacket {
        let mut p = self.open_packet(buf, space);
        let max = limit - TAG_LEN;
        self.write_ack(now, buf, &mut p, max);
        if closing {
            self.lifecycle.write_frame(buf, space, max);
            return p;
        }
        self.write_frames(now, buf, &mut p, max, cwnd_open);
        p
    }

    /// Writes the header of the next packet in `space`; frames follow.
    pub(super) fn open_packet(&mut self, buf: &mut Vec<u8>, space: SpaceId) -> OpenPacket {
        let dcid = self.cids.remote_cid();
        self.open_packet_to(buf, space, dcid)
    }

    /// [`Connection::open_packet`] with the Destination Connection ID `dcid` (a probe
    /// on another path carries its own, RFC 9000 §9.5).
    pub(super) fn open_packet_to(
        &mut self,
        buf: &mut Vec<u8>,
        space: SpaceId,
        dcid: ConnectionId,
    ) -> OpenPacket {
        let start = buf.len();
        let sp = &self.spaces[space as usize];
        let pn = sp.next_pn;
        let pn_len = packet_number_len(pn, self.path.recovery.sent(space).largest_acked());
        let zero_rtt = self.sending_zero_rtt(space);
        let (length_offset, pn_offset) = if space == SpaceId::Data && !zero_rtt {
            (
                None,
                write_short_header(buf, &dcid, false, self.key_update.phase(), pn, pn_len),
            )
        } else {
            let scid = self.cids.local_cid();
            // RFC 9000 §17.2.3: 0-RTT packets have a long header.
            let ty = if zero_rtt {
                PacketType::ZeroRtt
            } else {
                space.packet_type()
            };
            // RFC 9369 §4.1: 0-RTT stays in the client's chosen version after an upgrade.
            let version = if zero_rtt {
                self.versions.chosen
            } else {
                self.versions.current
            };
            let o = write_long_header(
                buf,
                ty,
                version,
                &dcid,
                &scid,
                self.header_token(space),
                pn,
                pn_len,
            );
            (Some(o.length_offset), o.pn_offset)
        };
        OpenPacket {
            space,
            start,
            length_offset,
            pn_offset,
            pn,
            payload_start: buf.len(),
            ack_eliciting: false,
            padded: false,
            zero_rtt,
            off_path: false,
            dcid,
            record: SentRecord::default(),
            logged: None,
        }
    }

    fn write_ack(&mut self, now: Instant, buf: &mut Vec<u8>, p: &mut OpenPacket, max: usize) {
        // RFC 9000 §13.4.1, §19.3.2: ACK_ECN once any count is non-zero.
        let ecn = self.ecn.ack_counts(p.space);
        let elsewhere =
            p.space == SpaceId::Data && self.ack_carrier(PathId::INITIAL) != PathId::INITIAL;
        let sp = &mut self.spaces[p.space as usize];
        if !sp.acks.has_new() || elsewhere {
            if p.space == SpaceId::Data {
                self.write_path_acks(now, buf, max, PathId::INITIAL, &mut p.record);
            }
            return;
        }
        let exp = if p.space == SpaceId::Data {
            self.config.ack.ack_delay_exponent
        } else {
            0
        };
        let Some(ack) = sp
            .acks
            .build_ack(now, exp, self.config.ack.max_ack_ranges, ecn)
        else {
            return;
        };
        let frame = Frame::Ack(ack);
        if buf.len() + frame.encoded_len() > max {
            return;
        }
        let at_start = buf.len() == p.payload_start;
        frame.encode(buf);
        if let Some(detail) = self.frame_detail().filter(|_| at_start) {
            let mut frames = self.take_frame_list();
            frames.push(FrameSummary::with_detail(&frame, detail));
            p.logged = Some((frames, buf.len()));
        }
        if p.space == SpaceId::Initial {
            self.handshake.hold.on_initial_ack_sent(&self.timers);
        }
        if let Frame::Ack(a) = frame {
            p.record.ack_largest = Some(a.largest());
            self.spaces[p.space as usize].acks.recycle_ranges(a.ranges);
        }
        if p.space == SpaceId::Data {
            // draft-ietf-quic-multipath §4.1: the other paths' spaces.
            self.write_path_acks(now, buf, max, PathId::INITIAL, &mut p.record);
        }
    }

    /// Handshake data, control frames, stream data, and a PING if a probe needs one.
    fn write_frames(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        p: &mut OpenPacket,
        max: usize,
        cwnd_open: bool,
    ) {
        let space = p.space;
        if space == SpaceId::Initial && self.handshake.hold.ping_pending() && buf.len() < max {
            // Config `handshake.instant_ack_ping`: the instant ACK becomes ack-eliciting,
            // so the datagram is padded (RFC 9000 §14.1) and the client's ACK of it gives
            // the server an RTT sample (RFC 9002 §5.1).
            Frame::Ping.encode(buf);
            p.ack_eliciting = true;
            self.handshake.hold.on_ping_sent();
        }
        let probing = self.spaces[space as usize].probes > 0;
        let may_send_data = cwnd_open || probing;
        if probing && space != SpaceId::Data {
            // RFC 9002 §6.2.4: a probe should carry data. The first of the two probes
            // took the requeued flight; the second sends the unacknowledged CRYPTO data
            // again rather than a bare PING, which a server could not answer when the
            // ClientHello itself was lost (RFC 9002 §6.2.4 ¶"retransmit unacknowledged data").
            let crypto = &mut self.spaces[space as usize].crypto_send;
            if !crypto.has_pending() {
                crypto.requeue_unacked();
            }
        }
        {
            while buf.len() + 8 < max {
                let Some((offset, len)) = self.spaces[space as usize]
                    .crypto_send
                    .write_frame(buf, max - buf.len())
                else {
                    break;
                };
                p.record.frames.push(SentFrame::Crypto { offset, len });
                p.ack_eliciting = true;
            }
        }
        if space == SpaceId::Data && self.may_send_app_data() && may_send_data {
            // Keep a byte for IMMEDIATE_ACK when this packet may fill the window.
            let reserve = usize::from(cwnd_open && self.may_need_immediate_ack());
            self.write_data_frames(now, buf, p, max - reserve);
            if cwnd_open && p.ack_eliciting {
                // ack-frequency §5 / seed 002 §V.D: the last packet before cwnd-blocked.
                self.write_immediate_ack_if_blocking(buf, p.start, max);
            }
        }
        if probing {
            let sp = &mut self.spaces[space as usize];
            sp.probes -= 1;
            if !p.ack_eliciting && buf.len() < max {
                Frame::Ping.encode(buf);
                p.ack_eliciting = true;
            }
        }
    }

    /// The application data space's control frames (no stream data: the path writes
    /// its own) into a packet of another path, once path 0 is abandoned
    /// (`multipath_carrier.rs`); their records join `record`. Returns whether any was
    /// written (they are all ack-eliciting).
    pub(super) fn write_control_frames_on_path(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        record: &mut SentRecord,
        max: usize,
    ) -> bool {
        let at = buf.len();
        let mut p = OpenPacket {
            space: SpaceId::Data,
            start: at,
            length_offset: None,
            pn_offset: at,
            pn: 0,
            payload_start: at,
            ack_eliciting: false,
            padded: false,
            zero_rtt: false,
            off_path: false,
            dcid: self.cids.remote_cid(),
            record: std::mem::take(record),
            logged: None,
        };
        // Path 0 is abandoned: the scheduler never picks it, so no stream data here;
        // PATH_RESPONSEs to challenges that still came on path 0 are not sent on
        // another path (RFC 9000 §8.2.2: on the path of the challenge).
        self.path.responses.clear();
        self.write_data_frames(now, buf, &mut p, max);
        *record = p.record;
        p.ack_eliciting
    }

    fn write_data_frames(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        p: &mut OpenPacket,
        max: usize,
    ) {
        if self.handshake.done_pending && buf.len() < max {
            Frame::HandshakeDone.encode(buf);
            self.handshake.done_pending = false;
            p.record.frames.push(SentFrame::HandshakeDone);
            p.ack_eliciting = true;
        }
        if self.write_ack_frequency(buf, &mut p.record.frames, max) {
            p.ack_eliciting = true;
        }
        if self.tokens.new_token.write(buf, max, &mut p.record.frames) {
            p.ack_eliciting = true;
        }
        while let Some(d) = self.path.responses.last().copied() {
            if buf.len() + 9 > max {
                break;
            }
            self.path.responses.pop();
            Frame::PathResponse(d).encode(buf);
            p.ack_eliciting = true;
        }
        while let Some(&seq) = self.cids.pending_new.front() {
            let Some(f) = self.cids.new_cid_frame(seq) else {
                self.cids.pending_new.pop_front();
                continue;
            };
            let frame = Frame::NewConnectionId(f);
            if buf.len() + frame.encoded_len() > max {
                break;
            }
            frame.encode(buf);
            self.cids.pending_new.pop_front();
            p.record
                .frames
                .push(SentFrame::NewConnectionId { sequence: seq });
            p.ack_eliciting = true;
        }
        while let Some(&sequence) = self.cids.pending_retire.front() {
            if buf.len() + 1 + varint::len(sequence) > max {
                break;
            }
            Frame::RetireConnectionId { sequence }.encode(buf);
            self.cids.pending_retire.pop_front();
            p.record
                .frames
                .push(SentFrame::RetireConnectionId { sequence });
            p.ack_eliciting = true;
        }
        self.write_path_cid_frames(buf, p, max);
        self.write_path_abandon(buf, p, max);
        self.write_path_status(buf, p, max);
        self.write_path_limits(buf, p, max);
        self.write_datagram_frames(now, buf, p, max);
        // draft-ietf-quic-multipath §5.5: the redundant scheduler's copies first, then
        // stream data only on the scheduled path, or in a probe (RFC 9002 §6.2.4).
        if !self.multipath.path0_abandoned && self.copies_pending_on(PathId::INITIAL) {
            p.ack_eliciting |= self.write_copies_into(PathId::INITIAL, buf, &mut p.record, max);
        }
        if self.stream_data_allowed_on(PathId::INITIAL)
            || self.spaces[SpaceId::Data as usize].probes > 0
        {
            self.write_path0_streams(now, buf, p, max);
        }
        // RFC 9002 §7.8: out of data with room in the window means application-limited.
        let app_limited = !self.streams.has_pending()
            && !self.datagrams_pending()
            && self.bytes_in_flight() < self.path.recovery.cc().window();
        self.path.recovery.set_app_limited(app_limited);
    }

    /// The stream writer's frames in path 0's packet.
    fn write_path0_streams(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        p: &mut OpenPacket,
        max: usize,
    ) {
        let before = buf.len();
        let mut records = std::mem::take(&mut self.scratch.stream_records);
        self.streams.write_frames(
            now,
            self.path.recovery.rtt().smoothed(),
            buf,
            max,
            &mut records,
        );
        if buf.len() > before {
            p.ack_eliciting = true;
            self.log_stream_frames(buf, p, before, &records);
            self.on_stream_data_sent(PathId::INITIAL);
            self.queue_copies(PathId::INITIAL, &records);
        }
        // A plain loop: `extend` over a mapped `drain` went through smallvec's generic
        // growth path (~70 instructions a call for the one STREAM frame of a packet).
        let frames = &mut p.record.frames;
        for r in &records {
            frames.push(SentFrame::Stream(r.clone()));
        }
        records.clear();
        self.scratch.stream_records = records;
    }

    /// While a sink is attached: the packet event's summaries of the STREAM frames the
    /// stream writer just wrote at `before..`, taken from its records instead of decoded
    /// again, when they are all it wrote (their encoded sizes add up to the bytes
    /// written); the frames between the last summarised one and `before` are decoded
    /// first. Otherwise (flow-control frames among them) `finish_packet` decodes it all.
    fn log_stream_frames(
        &mut self,
        buf: &[u8],
        p: &mut OpenPacket,
        before: usize,
        records: &[StreamFrameRecord],
    ) {
        let Some(detail) = self.frame_detail() else {
            return;
        };
        let mut written = 0usize;
        for r in records {
            let Some(f) = stream_summary(r) else {
                return;
            };
            written = written.saturating_add(f.wire_len);
        }
        if written != buf.len() - before {
            return;
        }
        let (mut frames, from) = match p.logged.take() {
            Some(logged) => logged,
            None => (self.take_frame_list(), p.payload_start),
        };
        if from < before {
            let decoded = decode_frames(&buf[from..before]).filter_map(Result::ok);
            frames.extend(decoded.map(|f| FrameSummary::with_detail(&f, detail)));
        }
        // A plain loop: `extend` over a `filter_map` (no exact size) went through the
        // generic growth path, ~70 instructions a call for the one or two frames here.
        frames.reserve(records.len());
        for r in records {
            if let Some(f) = stream_summary(r) {
                frames.push(f);
            }
        }
        p.logged = Some((frames, buf.len()));
    }

    /// Pads, fixes the Length field, protects the packet, and records it as sent.
    /// Returns whether the packet counts toward bytes in flight.
    pub(super) fn finish_packet(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        mut p: OpenPacket,
        pad: usize,
    ) -> bool {
        let pn_len = p.payload_start - p.pn_offset;
        // RFC 9001 §5.4.2: the header protection sample needs 4 bytes after the pn start.
        let min_payload = 4usize.saturating_sub(pn_len);
        let pad = pad.max(min_payload.saturating_sub(buf.len() - p.payload_start));
        if pad > 0 {
            buf.resize(buf.len() + pad, 0);
            p.padded = true;
        }
        let payload_end = buf.len();
        if let Some(at) = p.length_offset {
            varint::patch_u14(buf, at, (payload_end + TAG_LEN - p.pn_offset) as u64);
        }
        let logged = self.frame_detail().map(|detail| {
            let (mut frames, from) = match p.logged.take() {
                Some(logged) => logged,
                None => (self.take_frame_list(), p.payload_start),
            };
            // Usually the send path summarised every frame as it wrote it (the ACK, the
            // STREAM frames): nothing is left to decode, and an empty decode still went
            // through `extend`'s generic path.
            if from < payload_end {
                let decoded = decode_frames(&buf[from..payload_end]).filter_map(Result::ok);
                frames.extend(decoded.map(|f| FrameSummary::with_detail(&f, detail)));
            }
            frames
        });
        buf.resize(payload_end + TAG_LEN, 0);
        let size = (buf.len() - p.start) as u64;
        let in_flight = (p.ack_eliciting || p.padded) && !p.off_path;
        let keys = if p.zero_rtt {
            self.zero_rtt_seal_keys()
        } else {
            self.spaces[p.space as usize]
                .keys
                .as_ref()
                .map(|k| &k.local)
        };
        let keys = keys.expect("space can send");
        seal(
            &*keys.packet,
            &*keys.header,
            &mut buf[p.start..],
            p.pn_offset - p.start,
            p.pn,
        )
        .expect("sealing our own packet cannot fail");
        if p.zero_rtt {
            self.zero_rtt.packets += 1;
        }
        let pto = self.path.recovery.rtt().pto_base();
        p.record.ecn = self.ecn.on_sent(now, p.space, p.pn, pto);
        self.log_ecn_changes(now);
        let sp = &mut self.spaces[p.space as usize];
        sp.next_pn += 1;
        // RFC 9002 A.5 OnPacketSent.
        self.path.recovery.on_packet_sent(
            now,
            Outgoing {
                space: p.space,
                pn: p.pn,
                size,
                ack_eliciting: p.ack_eliciting && !p.off_path,
                in_flight,
                data: p.record,
            },
        );
        self.stats.packets_sent[p.space as usize] += 1;
        if p.ack_eliciting {
            // RFC 9000 §10.1: the first ack-eliciting packet after a receipt restarts the timer.
            self.timers.on_ack_eliciting_sent(now);
        }
        if let Some(frames) = logged {
            let ty = if p.zero_rtt {
                PacketType::ZeroRtt
            } else {
                p.space.packet_type()
            };
            let scid = (ty != PacketType::OneRtt).then(|| self.cids.local_cid());
            let header = PacketHeaderInfo {
                ty,
                pn: Some(p.pn),
                dcid: p.dcid,
                scid,
                path_id: self.logged_path_id(ty, 0),
            };
            self.emit_packet(
                now,
                Event::PacketSent {
                    header,
                    size: size as usize,
                    frames,
                },
            );
        }
        in_flight
    }
}

/// The event summary of a STREAM frame the stream writer recorded; `None` for its other
/// frames (flow control, resets), whose records do not keep every field.
fn stream_summary(r: &StreamFrameRecord) -> Option<FrameSummary> {
    match *r {
        StreamFrameRecord::Stream {
            id,
            offset,
            len,
            fin,
        } => Some(FrameSummary::stream(
            id,
            offset,
            usize::try_from(len).ok()?,
            fin,
        )),
        _ => None,
    }
}
