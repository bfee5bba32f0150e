//! Processing the peer's acknowledgements: the cumulative ACK and SACK blocks update
//! the scoreboard, give RTT samples (RFC 6298 §3 with Karn's rule), drive loss
//! detection (RACK, RFC 8985 §6.2, and RFC 6675 §4 IsLost) and recovery (RFC 6675 §5),
//! and hand the shared congestion controller one summary per ACK
//! (`CongestionController::on_ack`).

use super::{SegmentError, TcpConnection};
use crate::prr::{Prr, Recovery};
use crate::scoreboard::{Delivered, Segment};
use crate::wire::Header;
use quiclab_proto::cc::{AckSummary, AckedPacket, CongestionEvent};
use quiclab_proto::{Instant, LostPacket, RateSample};
use std::time::Duration;

impl TcpConnection {
    /// `handshake_ace`: the ACK's ACE field is the handshake encoding (RFC 9768
    /// §3.2.2.1), not a counter.
    pub(super) fn on_ack(
        &mut self,
        now: Instant,
        h: &Header,
        handshake_ace: bool,
    ) -> Result<(), SegmentError> {
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
        let delivered_bytes: u64 = delivered.iter().map(|d| d.seg.end - d.start).sum();
        let newest_sent = delivered.iter().map(|d| d.seg.sent).max();
        let segments = delivered.iter().filter(|d| d.seg.end > d.start).count() as u64;
        self.pending_ce = self.ecn_on_ack(now, h, newest_sent, segments, handshake_ace);
        // RFC 5682 §3: F-RTO's verdict on a timeout, before the losses and the
        // controller hear of this ACK.
        self.frto_on_ack(&delivered, advanced);
        let acked = self.on_delivered(now, &delivered);
        self.sb.rack_update(now, &delivered, self.rtt.min());
        let losses = self.find_losses(now);
        // The ACK's delivery-rate sample, after the losses (as QUIC does).
        let rate_sample = self.delivery.generate(self.rtt.min(), self.sb.pipe);
        self.inform_controller(now, &acked, &losses, rate_sample.as_ref());
        if self.recovery_point.is_some_and(|p| self.sb.una >= p) {
            // RFC 6675 §5: recovery ends when RecoveryPoint is acknowledged; with PRR
            // the window is the controller's again (RFC 9937 §5: cwnd = ssthresh).
            self.recovery_point = None;
            self.prr = None;
        }
        self.prr_on_ack(delivered_bytes, advanced && losses.lost.is_empty());
        if advanced {
            // RFC 6298 §5.3 / RFC 8985 §7.2: new data acknowledged restarts the RTO,
            // re-arms the TLP.
            self.rto_backoff = 0;
            self.rto_retransmit = false;
            self.tlp_out = false;
            self.rearm_rto(now);
        }
        if !delivered.is_empty() {
            self.arm_tlp(now);
        }
        Ok(())
    }

    /// RTT sample from the newest never-retransmitted delivered segment (Karn), then
    /// the delivery-rate bookkeeping; returns the segments as the controller reads them
    /// (the caller hands them over in one [`AckSummary`]).
    pub(super) fn on_delivered(
        &mut self,
        now: Instant,
        delivered: &[Delivered],
    ) -> Vec<AckedPacket> {
        let newest = delivered
            .iter()
            .filter(|d| !d.seg.retransmitted)
            .max_by_key(|d| d.seg.tx);
        if let Some(d) = newest {
            let sample = now.saturating_duration_since(d.seg.sent);
            self.rtt_sample(sample);
        }
        let mut acked = Vec::with_capacity(delivered.len());
        for d in delivered {
            let s = &d.seg;
            let len = s.end - d.start;
            if len == 0 {
                continue;
            }
            self.delivery.on_acked(now, s.tx, s.sent, len, &s.snapshot);
            acked.push(AckedPacket {
                time_sent: s.sent,
                bytes: len,
                max_datagram_size: None,
            });
        }
        acked
    }

    /// RFC 8985 §6.2 step 4: the reordering window. Zero until reordering is seen
    /// while DupThresh segments are SACKed or in recovery (so a hole with three
    /// SACKed segments above it is repaired at once, as RFC 6675 would), else
    /// min_rtt / 4, capped at SRTT.
    pub(super) fn reo_wnd(&self) -> Duration {
        if !self.sb.reordering_seen
            && (self.recovery_point.is_some()
                || self.sb.sacked_segments() >= crate::scoreboard::DUP_THRESH)
        {
            return Duration::ZERO;
        }
        (self.rtt.min() / 4).min(self.rtt.smoothed())
    }

    /// Marks lost segments (on an ACK or the reordering timer); enters recovery
    /// (RFC 6675 §5.1 step 4) on the first loss. The controller hears of them next.
    pub(super) fn find_losses(&mut self, now: Instant) -> Losses {
        let reo = self.reo_wnd();
        let (lost, timer) = self.sb.detect_losses(now, reo, self.smss, self.sack);
        self.reorder_deadline = timer;
        self.declare_lost(&lost, false)
    }

    /// The lost segments' bookkeeping: statistics, the delivery-rate estimator, the
    /// congestion event (one per detection), the recovery point.
    pub(super) fn declare_lost(&mut self, lost: &[(u64, Segment)], persistent: bool) -> Losses {
        let mut out = Losses::default();
        if lost.is_empty() {
            return out;
        }
        let mut bytes = 0;
        let mut newest = Instant::ZERO;
        for (start, s) in lost {
            let len = s.end - start;
            bytes += len;
            newest = newest.max(s.sent);
            self.stats.lost_segments += 1;
            out.lost.push(self.delivery.on_lost(len, &s.snapshot));
        }
        out.congestion = Some(CongestionEvent {
            largest_lost_sent_time: newest,
            persistent,
            lost_bytes: bytes,
        });
        if self.recovery_point.is_none() {
            self.recovery_point = Some(self.sb.nxt);
            self.stats.recovery_episodes += 1;
            // RFC 9937 §5: RecoverFS, the flight with the segments just declared lost.
            let prr = !persistent && self.config.recovery == Recovery::Prr;
            self.prr = prr.then(|| Prr::start(self.sb.pipe + bytes));
        }
        out
    }

    /// RFC 9937 §5 on an ACK (or a loss detection by timer, `delivered` 0) during a
    /// fast recovery with PRR, after the controller set ssthresh: the window until
    /// the next one.
    pub(super) fn prr_on_ack(&mut self, delivered: u64, safe_ack: bool) {
        let (pipe, ssthresh, smss) = (self.sb.pipe, self.cc.ssthresh(), self.smss);
        if ssthresh == u64::MAX {
            // A controller without a slow-start threshold (BBR, none): its window.
            self.prr = None;
        }
        if let Some(prr) = &mut self.prr {
            prr.on_ack(delivered, pipe, ssthresh, safe_ack, smss);
        }
    }

    /// The window sends are held to: PRR's during its recovery, else the controller's.
    /// PRR's lets a segment go only if all of it fits (Linux counts PRR's sndcnt in
    /// whole segments), hence the window less one byte under a segment.
    pub(super) fn send_window(&self) -> u64 {
        match &self.prr {
            Some(prr) => prr.window().saturating_sub(self.smss - 1),
            None => self.cc.window(),
        }
    }

    /// The controller's one call per ACK (or per loss detection by timer: nothing
    /// acknowledged, no rate sample), then the app-limited mark it may ask for.
    pub(super) fn inform_controller(
        &mut self,
        now: Instant,
        acked: &[AckedPacket],
        losses: &Losses,
        rate_sample: Option<&RateSample>,
    ) {
        let ce = std::mem::take(&mut self.pending_ce);
        let response = self.cc.on_ack(&AckSummary {
            now,
            spurious_congestion: false,
            acked,
            app_limited: self.app_limited,
            rtt: &self.rtt,
            lost: &losses.lost,
            congestion: losses.congestion,
            ce_event: ce.event,
            newly_ce_marked: ce.newly_marked,
            rate_sample,
        });
        if response.mark_app_limited {
            self.delivery.mark_app_limited(self.sb.pipe);
        }
    }
}

/// Segments declared lost, as the controller reads them.
#[derive(Default)]
pub(super) struct Losses {
    lost: Vec<LostPacket>,
    congestion: Option<CongestionEvent>,
}
