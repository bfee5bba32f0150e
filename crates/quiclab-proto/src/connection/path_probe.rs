//! Path validation's datagrams (RFC 9000 §8.2): a PATH_CHALLENGE or PATH_RESPONSE
//! goes in a 1-RTT packet on its own, padded to 1200 bytes unless the path's
//! anti-amplification budget allows less (§8.2.1, §8.2.2), to the address of the path
//! it is about: the active path, the previously active one (§9.3.3), the server's
//! preferred address a client validates (§9.6.1), a path from another local address of
//! a server's (§9.6.2), or the address a challenge came from (§8.2.2). A probe to
//! another destination or from another local address carries a connection ID of its
//! own (§9.5).
//!
//! Probes are not held back by the congestion window or the pacer (§8.2.2: a
//! PATH_RESPONSE is not delayed; challenges are few, on their own timer, §9.4). Those
//! on the active path count in its recovery like any packet; those on another path
//! count neither toward its bytes in flight nor its RTT (§9.4: packets on the old path
//! must not feed the new path's congestion control).

use super::migration_state::OtherAddress;
use super::send::OpenPacket;
use super::spaces::SpaceId;
use super::transmit::{Transmit, MIN_INITIAL_DATAGRAM};
use super::Connection;
use crate::crypto::TAG_LEN;
use crate::time::Instant;
use crate::wire::{ConnectionId, Frame};
use std::net::SocketAddr;

/// A PATH_CHALLENGE or PATH_RESPONSE frame's bytes (type and 8 bytes of data).
const PATH_FRAME_LEN: usize = 9;

impl Connection {
    /// The next path validation datagram, if any is owed: the active path's
    /// challenge and responses first, then the old path's challenge, then responses
    /// owed to other addresses.
    pub(super) fn poll_path_probe(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        if !self.spaces[SpaceId::Data as usize].can_send() || self.sending_zero_rtt(SpaceId::Data) {
            return None;
        }
        if let Some(t) = self.poll_active_probe(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.poll_old_path_probe(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.poll_preferred_probe(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.poll_local_path_probe(now, buf) {
            return Some(t);
        }
        self.poll_other_response(now, buf)
    }

    /// Client: a PATH_CHALLENGE to the server's preferred address, with the
    /// connection ID meant for it (RFC 9000 §9.6.1, §5.1.1). The server's address
    /// needs no amplification limit.
    fn poll_preferred_probe(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (remote, seq, token) = (self.migration.preferred.as_ref())
            .filter(|p| p.validation.send_pending())
            .map(|p| (p.remote, p.cid_seq, p.validation.token()))?;
        let dcid = self.cids.remote_at(seq)?;
        let budget = self.probe_budget(u64::MAX);
        let mut none = Vec::new();
        let (start, _) =
            self.write_probe(now, buf, (dcid, Some(token)), &mut none, budget, false)?;
        let pto = self.probe_pto();
        if let Some(p) = self.migration.preferred.as_mut() {
            p.validation.on_sent(now, pto);
        }
        self.arm_path_validation_timer();
        let source = self.migration.local;
        Some(self.off_path_done(start, buf, remote, source))
    }

    /// Server: the challenge of a path from another local address (the preferred
    /// address, RFC 9000 §9.6.2: the server MUST probe from it) and the responses owed
    /// from there, with the peer ID a new path takes (§9.5).
    fn poll_local_path_probe(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (local, remote, token, mut responses) = {
            let lp = self.migration.local_path.as_mut()?;
            let token = (lp.validation.as_ref())
                .filter(|v| v.send_pending())
                .map(|v| v.token());
            if token.is_none() && lp.responses.is_empty() {
                return None;
            }
            (
                lp.local,
                lp.remote,
                token,
                std::mem::take(&mut lp.responses),
            )
        };
        let allowed = if remote == self.path.remote && self.path.validated {
            u64::MAX
        } else {
            let factor = self.config.amplification_factor;
            self.migration
                .other_mut(remote)
                .map_or(0, |o| o.budget(factor))
        };
        let budget = self.probe_budget(allowed);
        let dcid = (self.cids.next_unused_remote()).unwrap_or_else(|| self.cids.remote_cid());
        let written = self.write_probe(now, buf, (dcid, token), &mut responses, budget, false);
        let s = &mut self.migration.stats;
        s.responses_dropped = s.responses_dropped.saturating_add(responses.len() as u64);
        let (start, _) = written?;
        if token.is_some() {
            let pto = self.probe_pto();
            if let Some(v) =
                (self.migration.local_path.as_mut()).and_then(|l| l.validation.as_mut())
            {
                v.on_sent(now, pto);
            }
            self.arm_path_validation_timer();
        }
        Some(self.off_path_done(start, buf, remote, local))
    }

    /// The peer ID for a datagram to `remote`: the preferred address's own while a
    /// client validates it (RFC 9000 §9.5), else the active one.
    fn dcid_for(&self, remote: SocketAddr) -> ConnectionId {
        (self.migration.preferred.as_ref())
            .filter(|p| p.remote == remote)
            .and_then(|p| self.cids.remote_at(p.cid_seq))
            .unwrap_or_else(|| self.cids.remote_cid())
    }

    fn poll_active_probe(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let challenge = self
            .migration
            .validation
            .as_ref()
            .filter(|v| v.send_pending())
            .map(|v| v.token());
        if challenge.is_none() && self.path.responses.is_empty() {
            return None;
        }
        let budget = self.probe_budget(self.amplification_budget());
        let mut responses = std::mem::take(&mut self.path.responses);
        let dcid = self.cids.remote_cid();
        let probe = (dcid, challenge);
        let written = self.write_probe(now, buf, probe, &mut responses, budget, true);
        self.path.responses = responses;
        let (start, in_flight) = written?;
        if challenge.is_some() {
            self.on_challenge_sent(now, true);
        }
        Some(self.datagram_done(now, start, buf, in_flight))
    }

    fn poll_old_path_probe(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (remote, token) = self
            .migration
            .old_path_check
            .as_ref()
            .filter(|(_, v)| v.send_pending())
            .map(|(r, v)| (*r, v.token()))?;
        // The previously active path was validated: no amplification limit.
        let budget = self.probe_budget(u64::MAX);
        let probe = (self.cids.remote_cid(), Some(token));
        let (start, _) = self.write_probe(now, buf, probe, &mut Vec::new(), budget, false)?;
        self.on_challenge_sent(now, false);
        let source = self.migration.local;
        Some(self.off_path_done(start, buf, remote, source))
    }

    fn poll_other_response(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let factor = self.config.amplification_factor;
        let (remote, budget, mut responses) = {
            let other: &mut OtherAddress = self.migration.other_owing_response()?;
            let responses = std::mem::take(&mut other.responses);
            (other.remote, other.budget(factor), responses)
        };
        let budget = self.probe_budget(budget);
        let probe = (self.dcid_for(remote), None);
        let written = self.write_probe(now, buf, probe, &mut responses, budget, false);
        // What did not fit (or could not be sent at all) is dropped: the peer sends
        // more challenges as needed (RFC 9000 §8.2.2).
        let dropped = responses.len() as u64;
        let s = &mut self.migration.stats;
        s.responses_dropped = s.responses_dropped.saturating_add(dropped);
        let (start, _) = written?;
        let source = self.migration.local;
        Some(self.off_path_done(start, buf, remote, source))
    }

    /// The datagram size a probe may take: 1200 bytes (RFC 9000 §8.2.1, §8.2.2), or
    /// less when the amplification budget `allowed` says so.
    fn probe_budget(&self, allowed: u64) -> usize {
        let full = self.max_datagram_size().min(MIN_INITIAL_DATAGRAM);
        usize::try_from(allowed).map_or(full, |a| a.min(full))
    }

    /// Writes one 1-RTT packet to the peer ID `dcid` with `challenge` and as many
    /// `responses` (newest first) as fit in `budget` bytes, padded to it. Returns the
    /// datagram's start and whether it counts in flight, or `None` when not even one
    /// frame fits.
    fn write_probe(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        (dcid, challenge): (ConnectionId, Option<[u8; 8]>),
        responses: &mut Vec<[u8; 8]>,
        budget: usize,
        on_active_path: bool,
    ) -> Option<(usize, bool)> {
        // Short header: flags, DCID, a packet number of up to 4 bytes.
        let overhead = 1 + dcid.len() + 4 + TAG_LEN;
        if budget < overhead + PATH_FRAME_LEN {
            return None;
        }
        let start = buf.len();
        let end = start + budget - TAG_LEN;
        let mut p: OpenPacket = self.open_packet_to(buf, SpaceId::Data, dcid);
        p.off_path = !on_active_path;
        if let Some(token) = challenge {
            Frame::PathChallenge(token).encode(buf);
            self.migration.stats.challenges_sent += 1;
        }
        while buf.len() + PATH_FRAME_LEN <= end {
            let Some(data) = responses.pop() else { break };
            Frame::PathResponse(data).encode(buf);
            self.migration.stats.responses_sent += 1;
        }
        p.ack_eliciting = true;
        let pad = end.saturating_sub(buf.len());
        let in_flight = self.finish_packet(now, buf, p, pad);
        Some((start, in_flight))
    }

    /// A challenge left: the validation's retransmission timer starts, on the PTO of
    /// the path concerned (RFC 9000 §9.4; RFC 9002 §6.2.1).
    fn on_challenge_sent(&mut self, now: Instant, active: bool) {
        let pto = self.probe_pto();
        let v = if active {
            self.migration.validation.as_mut()
        } else {
            self.migration.old_path_check.as_mut().map(|(_, v)| v)
        };
        if let Some(v) = v {
            v.on_sent(now, pto);
        }
        self.arm_path_validation_timer();
    }

    /// The active path's PTO, which paces a validation's challenges.
    fn probe_pto(&self) -> std::time::Duration {
        (self.path.recovery.rtt().pto_base()).saturating_add(self.peer_max_ack_delay())
    }

    /// A datagram from `start` went to `remote` from `source`, not on the active path:
    /// counted there.
    fn off_path_done(
        &mut self,
        start: usize,
        buf: &[u8],
        remote: SocketAddr,
        source: Option<SocketAddr>,
    ) -> Transmit {
        let size = buf.len() - start;
        self.stats.datagrams_sent.packets += 1;
        self.stats.datagrams_sent.bytes += size as u64;
        if let Some(other) = self.migration.other_mut(remote) {
            other.sent = other.sent.saturating_add(size as u64);
        }
        Transmit {
            destination: remote,
            source,
            size,
            ecn: self.ecn.codepoint(),
        }
    }
}
