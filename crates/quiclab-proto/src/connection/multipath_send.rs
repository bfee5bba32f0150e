//! Sending for paths above 0 (draft-ietf-quic-multipath §2.3, §2.4, §4.1): PATH_ACK
//! frames for the paths' packet number spaces, ridden on path 0's 1-RTT packets (§4.1
//! lets an ACK of any path go on any path), and packets on a path above 0: its own
//! packet numbers, one of the peer's connection IDs for that path, sealed with the
//! path's nonce and recorded in that path's recovery.
//!
//! A path above 0 carries our PATH_CHALLENGE ([`Connection::multipath_open_path`]),
//! PATH_RESPONSEs to challenges received on it, PINGs ([`Connection::multipath_ping`])
//! and, once our challenge was answered on it, stream data within its own congestion
//! window and its pacer (RFC 9002 §7.7). Every packet on it is ack-eliciting and in
//! flight in its recovery, whose loss detection timer and PTO probes are
//! `multipath_loss.rs`'s. A path above 0 with something to send is tried before path
//! 0; which path carries stream data is the scheduler's pick (`multipath_schedule.rs`).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::path::pacing_rate;
use super::path_spaces::PathSendError;
use super::send::MIN_PACKET_ROOM;
use super::spaces::{SentFrame, SentRecord, SpaceId};
use super::timers::Timer;
use super::transmit::{Transmit, MIN_INITIAL_DATAGRAM};
use super::Connection;
use crate::crypto::protect::seal_on_path;
use crate::crypto::TAG_LEN;
use crate::path_recovery::Outgoing;
use crate::time::Instant;
use crate::wire::header::{packet_number_len, write_short_header};
use crate::wire::{Frame, PathId};

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
        if self.multipath.is_abandoned(path) {
            // §3.4: an abandoned path ID is not used again.
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
    /// Once the path is freed (3 PTO after it was abandoned), its last counts while
    /// remembered (`freed_paths.rs`).
    pub fn multipath_packets(&self, path_id: u32) -> Option<(u64, u64)> {
        let path = PathId(path_id);
        let Some(sp) = self.path_spaces.get(path) else {
            let freed = self.path_spaces.freed.get(path)?;
            return Some((freed.received, freed.sent));
        };
        Some((sp.received, sp.sent))
    }

    /// Whether path `path_id`'s state was freed (§3.4: 3 PTO after it was abandoned;
    /// path 0's as far as it goes, `multipath_free0.rs`).
    pub fn multipath_path_freed(&self, path_id: u32) -> bool {
        let path = PathId(path_id);
        if path == PathId::INITIAL {
            return self.multipath.path0_freed;
        }
        self.multipath.is_abandoned(path) && self.path_spaces.get(path).is_none()
    }

    /// Path `path_id`'s smoothed RTT and bytes in flight (its own recovery, §5), if
    /// its space is open and it has an RTT sample.
    pub fn multipath_path_rtt(&self, path_id: u32) -> Option<(std::time::Duration, u64)> {
        let r = &self.path_spaces.get(PathId(path_id))?.recovery;
        r.rtt()
            .has_sample()
            .then(|| (r.rtt().smoothed(), r.bytes_in_flight()))
    }

    /// Client: opens path `path_id` (above 0) from our local address `local` (a second
    /// interface): a PATH_CHALLENGE goes on it with one of the peer's connection IDs
    /// for that path ID (draft-ietf-quic-multipath §3.1); once the PATH_RESPONSE comes
    /// back on it, stream data is sent on it too. A path ID above the peer's limit
    /// fails with `PathsBlocked` and sends PATHS_BLOCKED (§4.7, `multipath_limits.rs`).
    pub fn multipath_open_path(
        &mut self,
        path_id: u32,
        local: std::net::SocketAddr,
    ) -> Result<(), PathSendError> {
        let blocked = PathId(path_id) > self.multipath.peer_max_path_id();
        if blocked && self.multipath.is_negotiated() && self.handshake.confirmed {
            self.multipath.on_blocked();
            return Err(PathSendError::PathsBlocked);
        }
        self.multipath_ping(path_id)?;
        let token = self.rng.next_u64().to_be_bytes();
        let sp = self.path_space(PathId(path_id));
        sp.pings = sp.pings.saturating_sub(1);
        sp.local = Some(local);
        sp.challenge = Some(token);
        sp.challenge_pending = true;
        Ok(())
    }

    /// Whether path `path_id` (above 0) was validated by the peer's PATH_RESPONSE.
    pub fn multipath_path_validated(&self, path_id: u32) -> bool {
        let path = PathId(path_id);
        match self.path_spaces.get(path) {
            Some(s) => s.validated,
            None => self
                .path_spaces
                .freed
                .get(path)
                .is_some_and(|f| f.validated),
        }
    }

    /// Bytes of the packets received on path `path_id` (above 0).
    pub fn multipath_bytes_received(&self, path_id: u32) -> u64 {
        let path = PathId(path_id);
        match self.path_spaces.get(path) {
            Some(s) => s.received_bytes,
            None => self
                .path_spaces
                .freed
                .get(path)
                .map_or(0, |f| f.received_bytes),
        }
    }

    /// The path above 0 with something to send now, the lowest path ID first: a
    /// challenge, responses, a PING, a PTO probe, or (picked by the scheduler,
    /// `multipath_schedule.rs`; validated, its own window open, its pacer willing)
    /// stream data. A server sends on a path it has not validated
    /// within 3x what it received there (RFC 9000 §8.1). Every path's pacing deadline
    /// is recomputed on the way (RFC 9002 §7.7).
    fn path_to_send(&mut self, now: Instant) -> Option<PathId> {
        let app = self.may_send_app_data();
        let data = app && self.streams.has_pending();
        // The path that carries the queued DATAGRAM frames (`multipath_datagram.rs`).
        let dgram = (app && self.datagrams_pending())
            .then(|| self.datagram_path())
            .flatten();
        // The redundant scheduler's copies wait for the path's own window and pacer.
        let copies: smallvec::SmallVec<[PathId; 2]> = if app && self.sched.copies.len() > 0 {
            (self.path_spaces.iter())
                .map(|(id, _)| id)
                .filter(|id| self.copies_pending_on(*id))
                .collect()
        } else {
            smallvec::SmallVec::new()
        };
        let (side, factor) = (self.side, self.config.amplification_factor);
        let known = self.validated_remote();
        let pacing = self.config.pacing;
        let size = self.max_datagram_size() as u64;
        let choice = self.sched.choice;
        // Path 0 abandoned: the carrier also sends the connection's ACKs and control
        // frames (`multipath_carrier.rs`).
        let carrier = self.carrier_path();
        let carrier_open = carrier
            .and_then(|id| self.path_spaces.get(id))
            .is_some_and(|s| s.recovery.bytes_in_flight() < s.recovery.cc().window());
        let carrier_wants = carrier.is_some() && self.carrier_wants(now, carrier_open);
        // Acknowledgments due on a path above 0 (`multipath_ack_path.rs`; with the
        // default `ack_path = "any"` only once path 0 is abandoned).
        let mut ack_due = Vec::new();
        if self.config.multipath.ack_path != crate::config::AckPath::Any
            || self.multipath.path0_abandoned
        {
            ack_due.extend(
                self.path_spaces
                    .iter()
                    .map(|(id, _)| id)
                    .filter(|id| self.acks_due_on(now, *id)),
            );
        }
        let mut found = None;
        for (id, s) in self.path_spaces.iter_mut() {
            s.pacing_at = None;
            if s.abandoned {
                continue;
            }
            let control = s.challenge_pending || !s.responses.is_empty();
            let room = if control {
                MIN_INITIAL_DATAGRAM
            } else {
                MIN_PACKET_ROOM
            };
            if s.amplification_budget(side, factor, known) < room as u64 {
                continue;
            }
            let mut wants = control || s.pings > 0 || s.probes > 0 || ack_due.contains(&id);
            wants |= carrier_wants && carrier == Some(id);
            let datagrams = dgram == Some(id);
            let copy = copies.contains(&id);
            if (data || datagrams || copy)
                && s.validated
                && s.recovery.bytes_in_flight() < s.recovery.cc().window()
            {
                let rate = pacing_rate(&s.recovery);
                s.pacing_at = s
                    .pacer
                    .next_send_time(now, size, rate)
                    .filter(|t| pacing && *t > now);
                // §5.5: stream data only on the path the scheduler picked.
                wants |= s.pacing_at.is_none() && (choice == Some(id) || datagrams || copy);
            }
            if wants && found.is_none() {
                found = Some(id);
            }
        }
        self.refresh_path_timers();
        found
    }

    /// The next packet on a path above 0, if one has something to send.
    pub(super) fn poll_path_packet(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        if self.path_spaces.len() == 0 && !self.multipath.path0_abandoned {
            // No path above 0 (no multipath, or every other path freed), path 0 in use:
            // the general path (`poll_path_packet_general`) would arm no freeing (path 0 is not abandoned, no
            // other path exists), find no path to send on, and recompute both path
            // timers from no path and `path0_free_at`, which is only set once path 0 is
            // abandoned: both stopped. This is that outcome without the searches; it
            // runs on every poll of a one-path connection.
            self.timers.stop(Timer::PathLoss);
            self.timers.stop(Timer::PathPacing);
            return None;
        }
        self.poll_path_packet_general(now, buf)
    }

    /// [`Connection::poll_path_packet`] without its one-path shortcut (the test of the
    /// shortcut compares the two).
    pub(super) fn poll_path_packet_general(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        // §3.4: an abandoned path's state is freed 3 PTO from now.
        self.arm_path_freeing(now);
        let path = self.path_to_send(now)?;
        self.send_on_path(now, path, buf, false)
    }

    /// A packet on `path` (above 0) with what it has to send; `closing`: only the
    /// CONNECTION_CLOSE (path 0 abandoned, `multipath_carrier.rs`).
    pub(super) fn send_on_path(
        &mut self,
        now: Instant,
        path: PathId,
        buf: &mut Vec<u8>,
        closing: bool,
    ) -> Option<Transmit> {
        let dcid = *self.path_cids.remote_ids(path).first()?;
        let phase = self.key_update.phase();
        let max = buf
            .len()
            .saturating_add(self.max_datagram_size())
            .saturating_sub(TAG_LEN);
        let sp = self.path_spaces.get_mut(path)?;
        let pn = sp.next_pn;
        let pn_len = packet_number_len(pn, sp.recovery.sent(SpaceId::Data).largest_acked());
        let start = buf.len();
        let pn_offset = write_short_header(buf, &dcid, false, phase, pn, pn_len);
        let (record, pad, eliciting) = if closing {
            self.lifecycle.write_frame(buf, SpaceId::Data, max);
            (SentRecord::default(), false, false)
        } else {
            self.write_path_frames(now, path, buf, max)
        };
        // RFC 9000 §8.2.1, §8.2.2: datagrams with PATH_CHALLENGE or PATH_RESPONSE are
        // padded to 1200 bytes; RFC 9001 §5.4.2: 4 bytes after the packet number.
        let min_end = if pad {
            start
                .saturating_add(MIN_INITIAL_DATAGRAM)
                .saturating_sub(TAG_LEN)
        } else {
            pn_offset.saturating_add(4)
        };
        if buf.len() < min_end {
            buf.resize(min_end, 0);
        }
        // qlog: the frames are read before sealing (`multipath_log.rs`).
        let frames_at = pn_offset.saturating_add(pn_len);
        let logged = self
            .logging()
            .then(|| buf.get(frames_at..).unwrap_or_default().to_vec());
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
        if let Some(payload) = logged {
            self.log_path_sent(now, (path, pn, dcid), &payload, size);
        }
        self.path_packet_sent(now, path, pn, size, (record, eliciting))
    }

    /// The frames of a packet on `path`: our challenge, the responses owed there, a
    /// PING asked for, stream data (validated path, open window and pacer, or a PTO
    /// probe, RFC 9002 §6.2.4), and a PING if a probe carries nothing else; first the
    /// PATH_ACKs this path carries (`multipath_ack_path.rs`) and, on the carrier of an
    /// abandoned path 0, the connection's control frames. Returns the packet's record,
    /// whether the datagram is padded (§8.2.1, §8.2.2), and whether the packet is
    /// ack-eliciting (anything besides the acknowledgments).
    fn write_path_frames(
        &mut self,
        now: Instant,
        path: PathId,
        buf: &mut Vec<u8>,
        max: usize,
    ) -> (SentRecord, bool, bool) {
        let app = self.may_send_app_data();
        let picked = self.stream_data_allowed_on(path);
        let frames_start = buf.len();
        let mut record = SentRecord::default();
        let acks_end = if self.carrier_path() == Some(path) {
            // Within the window, or in a PTO probe (RFC 9002 §6.2.4: probes may exceed
            // it), so that a PATH_ABANDON gets out while the window is full.
            let control = self.path_spaces.get(path).is_some_and(|s| {
                s.recovery.bytes_in_flight() < s.recovery.cc().window() || s.probes > 0
            });
            self.write_carrier_frames(now, buf, &mut record, max, control)
        } else {
            self.write_path_acks(now, buf, max, path, &mut record);
            buf.len()
        };
        let before = buf.len();
        // DATAGRAM frames, if this path carries them now (`multipath_datagram.rs`; the
        // carrier wrote them with its control frames).
        let window_open = self.path_spaces.get(path).is_some_and(|s| {
            s.validated
                && !s.abandoned
                && s.recovery.bytes_in_flight() < s.recovery.cc().window()
                && s.pacing_at.is_none()
        });
        if app
            && window_open
            && self.carrier_path() != Some(path)
            && self.datagrams_pending_on(path)
        {
            self.write_datagrams(now, buf, frames_start, max);
        }
        let Some(sp) = self.path_spaces.get_mut(path) else {
            return (record, false, buf.len() > acks_end);
        };
        let mut pad = false;
        if let Some(token) = sp.challenge.filter(|_| sp.challenge_pending) {
            Frame::PathChallenge(token).encode(buf);
            sp.challenge_pending = false;
            pad = true;
        }
        for d in sp.responses.drain(..) {
            Frame::PathResponse(d).encode(buf);
            pad = true;
        }
        if sp.pings > 0 {
            Frame::Ping.encode(buf);
            sp.pings = sp.pings.saturating_sub(1);
        }
        let probing = sp.probes > 0;
        sp.probes = sp.probes.saturating_sub(1);
        let open =
            sp.recovery.bytes_in_flight() < sp.recovery.cc().window() && sp.pacing_at.is_none();
        let copying = app && sp.validated && !sp.abandoned && open;
        if copying && self.copies_pending_on(path) {
            self.write_copies_into(path, buf, &mut record, max);
        }
        let Some(sp) = self.path_spaces.get(path) else {
            return (record, pad, buf.len() > acks_end);
        };
        if app && sp.validated && !sp.abandoned && ((open && picked) || probing) {
            let rtt = sp.recovery.rtt().smoothed();
            let mut records = std::mem::take(&mut self.scratch.stream_records);
            let start = buf.len();
            self.streams.write_frames(now, rtt, buf, max, &mut records);
            if buf.len() > start {
                self.on_stream_data_sent(path);
                self.queue_copies(path, &records);
            }
            record
                .frames
                .extend(records.drain(..).map(SentFrame::Stream));
            self.scratch.stream_records = records;
        }
        if probing && buf.len() == before {
            Frame::Ping.encode(buf);
        }
        (record, pad, buf.len() > acks_end)
    }

    /// A packet of `size` bytes left on `path`: recorded in its own recovery (RFC 9002
    /// A.5, §5 of the draft), counted, and its datagram described. A packet of ACK
    /// frames only (`eliciting` false) is not in flight and spends no pacer tokens.
    fn path_packet_sent(
        &mut self,
        now: Instant,
        path: PathId,
        pn: u64,
        size: usize,
        (mut record, eliciting): (SentRecord, bool),
    ) -> Option<Transmit> {
        let (local, remote) = (self.migration.local, self.path.remote);
        let pacing = self.config.pacing;
        // RFC 9001 §6.1, §6.6: the packet counts in the current key phase.
        self.key_phase_on_path_sent(path, pn);
        let sp = self.path_spaces.get_mut(path)?;
        // RFC 9000 §13.4.2 per path: the codepoint of the path's own ECN state.
        let pto = sp.recovery.rtt().pto_base();
        let ecn = sp.ecn.on_sent(now, SpaceId::Data, pn, pto);
        record.ecn = ecn;
        sp.next_pn = sp.next_pn.saturating_add(1);
        sp.sent = sp.sent.saturating_add(1);
        sp.sent_bytes = sp.sent_bytes.saturating_add(size as u64);
        if pacing && eliciting {
            // RFC 9002 §7.7: every ack-eliciting packet on the path is in flight and
            // spends its pacer's tokens.
            let rate = pacing_rate(&sp.recovery);
            sp.pacer.on_sent(now, size as u64, rate);
        }
        sp.recovery.on_packet_sent(
            now,
            Outgoing {
                space: SpaceId::Data,
                pn,
                size: size as u64,
                // RFC 9002 §2: a packet of PATH_ACKs only is neither.
                ack_eliciting: eliciting,
                in_flight: eliciting,
                data: record,
            },
        );
        let destination = sp.remote.unwrap_or(remote);
        let source = sp.local.or(local);
        let stats = &mut self.stats.datagrams_sent;
        stats.packets = stats.packets.saturating_add(1);
        stats.bytes = stats.bytes.saturating_add(size as u64);
        if eliciting {
            self.timers.on_ack_eliciting_sent(now);
        }
        self.arm_path_loss_timer(now, path);
        Some(Transmit {
            destination,
            source,
            size,
            ecn,
        })
    }
}

#[cfg(test)]
#[path = "multipath_send_tests.rs"]
mod tests;
