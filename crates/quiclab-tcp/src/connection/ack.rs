//! Processing the peer's acknowledgements: the cumulative ACK and SACK blocks update
//! the scoreboard, give RTT samples (RFC 6298 §3 with Karn's rule), feed the shared
//! congestion controller in its documented order, and drive loss detection (RACK,
//! RFC 8985 §6.2, and RFC 6675 §4 IsLost) and recovery (RFC 6675 §5).

use super::{SegmentError, TcpConnection};
use crate::scoreboard::{Delivered, Segment};
use crate::wire::Header;
use quiclab_proto::Instant;
use std::time::Duration;

impl TcpConnection {
    pub(super) fn on_ack(&mut self, now: Instant, h: &Header) -> Result<(), SegmentError> {
        let ack = self.ack_offset(h.ack);
        let limit = self.sb.nxt + u64::from(self.sb.fin_sent);
        if ack > limit as i64 {
            // RFC 9293 §3.10.7.4: an ACK of unsent data is answered with an ACK, dropped.
            self.rx.request_ack();
            return Err(SegmentError::AckOfUnsent);
        }
        self.peer_window = u64::from(h.window) << self.snd_shift;
        if ack < self.sb.una as i64 {
            return Ok(()); // an old duplicate
        }
        let ack = ack as u64;
        let advanced =
            ack > self.sb.una || (self.sb.fin_sent && !self.sb.fin_acked && ack == limit);
        let sack: Vec<(u64, u64)> = if self.sack {
            h.options
                .sack
                .iter()
                .filter_map(|&(l, r)| {
                    let (l, r) = (self.ack_offset(l), self.ack_offset(r));
                    (l >= 0 && r > l && r <= limit as i64).then_some((l as u64, r as u64))
                })
                .collect()
        } else {
            Vec::new()
        };
        let delivered = self.sb.on_ack(ack, &sack);
        self.on_delivered(now, &delivered);
        self.sb.rack_update(now, &delivered, self.rtt.min());
        self.detect_losses(now);
        self.deliver_rate_sample(now);
        if self.recovery_point.is_some_and(|p| self.sb.una >= p) {
            // RFC 6675 §5: recovery ends when RecoveryPoint is acknowledged.
            self.recovery_point = None;
        }
        if advanced {
            // RFC 6298 §5.3 / RFC 8985 §7.2: new data acknowledged restarts the RTO,
            // re-arms the TLP.
            self.rto_backoff = 0;
            self.tlp_out = false;
            self.rearm_rto(now);
        }
        if !delivered.is_empty() {
            self.arm_tlp(now);
        }
        Ok(())
    }

    /// RTT sample from the newest never-retransmitted delivered segment (Karn), then
    /// the controller's per-segment calls and the delivery-rate bookkeeping.
    pub(super) fn on_delivered(&mut self, now: Instant, delivered: &[Delivered]) {
        let newest = delivered
            .iter()
            .filter(|d| !d.seg.retransmitted)
            .max_by_key(|d| d.seg.tx);
        if let Some(d) = newest {
            let sample = now.saturating_duration_since(d.seg.sent);
            self.rtt
                .update(sample, Duration::ZERO, true, Duration::ZERO);
        }
        for d in delivered {
            let s = &d.seg;
            let len = s.end - d.start;
            if len == 0 {
                continue;
            }
            self.delivery.on_acked(now, s.tx, s.sent, len, &s.snapshot);
            self.cc
                .on_packet_acked(now, s.sent, len, self.app_limited, &self.rtt);
        }
    }

    /// RFC 8985 §6.2 step 4: the reordering window. Zero until reordering is seen
    /// while DupThresh segments are SACKed or in recovery (so a hole with three
    /// SACKed segments above it is repaired at once, as RFC 6675 would), else
    /// min_rtt / 4, capped at SRTT.
    fn reo_wnd(&self) -> Duration {
        if !self.sb.reordering_seen
            && (self.recovery_point.is_some()
                || self.sb.sacked_segments() >= crate::scoreboard::DUP_THRESH)
        {
            return Duration::ZERO;
        }
        (self.rtt.min() / 4).min(self.rtt.smoothed())
    }

    /// Marks lost segments (on an ACK or the reordering timer) and tells the
    /// controller; enters recovery (RFC 6675 §5.1 step 4) on the first loss.
    pub(super) fn detect_losses(&mut self, now: Instant) {
        let reo = self.reo_wnd();
        let (lost, timer) = self.sb.detect_losses(now, reo, self.smss, self.sack);
        self.reorder_deadline = timer;
        self.on_lost(now, &lost, false);
    }

    /// The controller's loss calls: each lost segment, then one congestion event.
    pub(super) fn on_lost(&mut self, now: Instant, lost: &[(u64, Segment)], persistent: bool) {
        if lost.is_empty() {
            return;
        }
        let mut bytes = 0;
        let mut newest = Instant::ZERO;
        for (start, s) in lost {
            let len = s.end - start;
            bytes += len;
            newest = newest.max(s.sent);
            self.stats.lost_segments += 1;
            let lp = self.delivery.on_lost(len, &s.snapshot);
            self.cc.on_packet_lost(now, &lp);
        }
        self.cc.on_congestion_event(now, newest, persistent, bytes);
        if self.recovery_point.is_none() {
            self.recovery_point = Some(self.sb.nxt);
            self.stats.recovery_episodes += 1;
        }
    }

    /// The ACK's delivery-rate sample to the controller (after losses, as QUIC does).
    fn deliver_rate_sample(&mut self, now: Instant) {
        let in_flight = self.sb.pipe;
        let Some(rs) = self.delivery.generate(self.rtt.min(), in_flight) else {
            return;
        };
        self.cc.on_rate_sample(now, &rs, &self.rtt);
        if self.cc.wants_app_limited_mark() {
            self.delivery.mark_app_limited(in_flight);
        }
        while self.cc.take_state_change().is_some() {}
    }
}
