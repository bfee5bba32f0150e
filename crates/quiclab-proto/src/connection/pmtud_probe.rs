//! The connection's side of PMTU discovery (RFC 9000 §14.3): sending the probes the
//! search in `pmtud.rs` asks for, and telling it of their fate.

use super::pmtud::{PmtuChange, Pmtud, FIRST_PROBE_AFTER_RTTS};
use super::send::OpenPacket;
use super::spaces::SpaceId;
use super::transmit::Transmit;
use super::Connection;
use crate::events::Event;
use crate::path_recovery::MtuProbe;
use crate::time::Instant;
use crate::wire::Frame;

impl Connection {
    /// A PMTU probe datagram, when the search wants one and the window, the pacer and
    /// the state allow it: one 1-RTT packet of PING and PADDING, `size` bytes in all
    /// (RFC 9000 §14.4), on its own in the datagram.
    pub(super) fn poll_pmtu_probe(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        cwnd_open: bool,
    ) -> Option<Transmit> {
        if !cwnd_open || !self.handshake.confirmed {
            return None;
        }
        // Cheapest first: after the search this is a few comparisons per datagram.
        let peer_max = self.params.peer()?.max_udp_payload_size;
        let pmtud = self.path.pmtud.as_mut()?;
        pmtud.limit_to_peer(peer_max);
        let size = pmtud.probe_size()?;
        let confirmed = self.stats.handshake_confirmed_at?;
        if now < confirmed + self.path.recovery.rtt().smoothed() * FIRST_PROBE_AFTER_RTTS
            || !self.data_space_pending()
        {
            return None;
        }
        let space = SpaceId::Data;
        if self.spaces[space as usize].keys.is_none() || self.sending_zero_rtt(space) {
            return None;
        }
        let start = buf.len();
        let mut p: OpenPacket = self.open_packet(buf, space);
        Frame::Ping.encode(buf);
        p.ack_eliciting = true;
        let pn = p.pn;
        let pad = (start + usize::from(size)).saturating_sub(buf.len() + crate::crypto::TAG_LEN);
        let in_flight = self.finish_packet(now, buf, p, pad);
        if let Some(m) = self.path.pmtud.as_mut() {
            m.on_probe_sent(pn, size);
        }
        self.stats.pmtu_probes_sent += 1;
        Some(self.datagram_done(now, start, buf, in_flight))
    }

    /// A 1-RTT packet was acknowledged: if it was the probe, the size goes up (loss
    /// recovery told the controller already, RFC 9002 §7.2; `MtuProbe::confirms`).
    pub(super) fn on_pmtu_probe_acked(&mut self, now: Instant, pn: u64) {
        let Some(change) = self.path.pmtud.as_mut().and_then(|m| m.on_acked(pn)) else {
            return;
        };
        self.log_pmtu(now, change);
    }

    /// The PMTU probe in flight, for loss recovery.
    pub(super) fn mtu_probe(&self) -> Option<MtuProbe> {
        self.path.pmtud.as_ref().and_then(Pmtud::outstanding)
    }

    /// Whether lost 1-RTT packet `pn` was the probe (then it is no congestion signal);
    /// a probe's loss is taken here.
    pub(super) fn on_pmtu_probe_lost(&mut self, now: Instant, pn: u64) -> bool {
        let Some(m) = self.path.pmtud.as_mut() else {
            return false;
        };
        if !m.is_probe(pn) {
            return false;
        }
        self.stats.pmtu_probes_lost += 1;
        if let Some(change) = m.on_lost(pn) {
            self.log_pmtu(now, change);
        }
        true
    }

    fn log_pmtu(&mut self, now: Instant, c: PmtuChange) {
        if self.logging() {
            self.emit(
                now,
                Event::MtuUpdated {
                    old: c.old,
                    new: c.new,
                    done: c.done,
                },
            );
        }
    }
}
