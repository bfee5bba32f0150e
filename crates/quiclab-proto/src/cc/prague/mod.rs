//! Prague, the L4S scalable congestion control of
//! draft-briscoe-iccrg-prague-congestion-control-04 (the latest revision, July 2024;
//! "the draft" below), driven the QUIC way (RFC 9002 §7).
//!
//! What it does, per the draft:
//! - packets carry ECT(1), the L4S identifier (RFC 9331 §4): the transport's
//!   `ecn = "ect1"`, which config validation requires with Prague;
//! - alpha, the EWMA of the fraction of packets the peer reports CE-marked, updated
//!   once per round trip with gain g = 1/16 (DCTCP's estimator, RFC 8257 §3.3);
//! - on CE feedback the window shrinks to cwnd · (1 − alpha/2), at most once per round
//!   trip (one "CWR" period, as RFC 9002 §7.3.2's recovery period); nothing is
//!   retransmitted;
//! - additive increase of one segment per round trip, on the acknowledged bytes that
//!   were not CE-marked; slow start as RFC 9002 §7.3.1 until the first reduction;
//! - on loss, the classic response (cwnd · 0.5, once per recovery period, RFC 9002
//!   §7.3.2), and persistent congestion collapses to the minimum window (§7.6.2);
//! - reduced RTT dependence (on by default, as the reference implementation): below
//!   the 25 ms target RTT the additive increase is scaled by (srtt / target)², and
//!   alpha is updated once per max(srtt, target).
//!
//! Choices and omissions (each a place where the draft leaves room or that is not
//! built):
//! - The mark fraction is counted in packets (DCTCP's is in bytes): QUIC's ECN counts
//!   are packet counts (RFC 9000 §13.4.1) and full-size packets dominate a bulk flow.
//!   An ACK's newly CE-marked count is capped at the packets it newly acknowledged
//!   (CE on packets that are not in flight would otherwise push the fraction above 1).
//! - When ECN validation fails (RFC 9000 §13.4.2) the connection sends not-ECT and
//!   reports no more CE: Prague then responds to losses only, the classic behaviour the
//!   draft falls back to. The draft's detection of a classic-ECN (RFC 3168) bottleneck
//!   by delay variation, off by default in the reference implementation, is not
//!   implemented; nor are fractional windows below two packets or paced chirping.
//! - No spurious-loss undo.

mod config;
#[cfg(test)]
mod tests;

pub use config::PragueConfig;

use super::recovery_period::RecoveryPeriod;
use super::{initial_window, AckResponse, AckSummary, CongestionController, ScalableEcnEstimate};
use crate::recovery::RttEstimator;
use crate::time::Instant;
use std::time::Duration;

/// One round of the mark-fraction estimate: the packets acknowledged and the ones
/// reported CE-marked since it began.
#[derive(Clone, Copy, Debug)]
struct MarkRound {
    /// When it began (an ACK's arrival); it ends on the ACK of a packet sent at or
    /// after this time, once the virtual RTT has passed.
    start: Instant,
    acked: u64,
    marked: u64,
}

/// Prague (see the module docs).
#[derive(Debug)]
pub struct Prague {
    config: PragueConfig,
    mds: u64,
    /// kMinimumWindow in bytes (RFC 9002 §7.2).
    min_window: u64,
    cwnd: u64,
    ssthresh: u64,
    /// The EWMA of the CE fraction, in [0, 1].
    alpha: f64,
    /// The fraction of the last completed round, for logs.
    last_fraction: Option<f64>,
    /// `None` until the first ACK.
    round: Option<MarkRound>,
    /// One ECN reduction per round trip: the period from a reduction until a packet
    /// sent after it is acknowledged.
    cwr: RecoveryPeriod,
    /// RFC 9002 §7.3.2: one loss reduction per recovery period.
    recovery: RecoveryPeriod,
    /// The fractional bytes of additive increase carried between ACKs.
    ai_credit: f64,
}

impl Prague {
    /// A controller in slow start at the initial window, for a path whose maximum
    /// datagram size is `max_datagram_size` bytes. `config` must have passed
    /// [`PragueConfig::validate`].
    pub fn new(config: PragueConfig, max_datagram_size: u64) -> Self {
        let mds = max_datagram_size.max(1);
        let min_window = config.minimum_window_packets.saturating_mul(mds);
        Prague {
            mds,
            min_window,
            cwnd: initial_window(config.initial_window_packets, mds).max(min_window),
            ssthresh: u64::MAX,
            alpha: config.initial_alpha,
            last_fraction: None,
            round: None,
            cwr: RecoveryPeriod::default(),
            recovery: RecoveryPeriod::default(),
            ai_credit: 0.0,
            config,
        }
    }

    /// alpha, the EWMA of the CE fraction per round trip.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The CE fraction of the last completed round (`None` before the first ends).
    pub fn last_ce_fraction(&self) -> Option<f64> {
        self.last_fraction
    }

    /// The virtual RTT: the round length for alpha, max(srtt, target) under reduced RTT
    /// dependence, else srtt (the round then ends on the first packet sent after it
    /// began being acknowledged).
    fn virtual_rtt(&self, rtt: &RttEstimator) -> Duration {
        if self.config.rtt_independence {
            rtt.smoothed()
                .max(Duration::from_millis(self.config.target_rtt_ms))
        } else {
            Duration::ZERO
        }
    }

    /// The additive increase per round trip in segments: the knob, scaled by
    /// (srtt / target)² below the target RTT under reduced RTT dependence (the
    /// reference implementation's RTT_CONTROL_RATE: the rate grows by one segment per
    /// target RTT per target RTT, as a flow's at the target RTT).
    fn increase_per_rtt(&self, rtt: &RttEstimator) -> f64 {
        let ai = self.config.additive_increase_segments;
        let target = Duration::from_millis(self.config.target_rtt_ms);
        let srtt = rtt.smoothed();
        if !self.config.rtt_independence || srtt >= target {
            return ai;
        }
        let ratio = srtt.as_secs_f64() / target.as_secs_f64();
        ai * ratio * ratio
    }

    /// One acknowledged packet's growth: slow start, or additive increase when it was
    /// not CE-marked (a marked one adds nothing, as the reference implementation's
    /// `acked − ce` increase).
    fn grow(&mut self, sent_time: Instant, bytes: u64, marked: bool, ack: &AckSummary<'_>) {
        // RFC 9002 B.5: packets sent before a loss reduction change nothing; one sent
        // after it ends the period (§7.3.2). The additive increase goes on in the round
        // after an ECN reduction (the reference implementation grows on every ACK's
        // unmarked bytes; only its loss recovery stops growth): the scalable response
        // relies on it, W · p ≈ 2 (RFC 9332 §2.1).
        let after_loss = self.recovery.on_ack(sent_time);
        self.cwr.on_ack(sent_time);
        if !after_loss || ack.app_limited || marked {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 9002 §7.3.1 slow start.
            self.cwnd = self.cwnd.saturating_add(bytes);
            return;
        }
        // Additive increase: ai · mds per cwnd of acknowledged bytes.
        let step = self.increase_per_rtt(ack.rtt) * self.mds as f64 * bytes as f64
            / self.cwnd.max(1) as f64;
        self.ai_credit += step;
        let whole = self.ai_credit.floor();
        self.ai_credit -= whole;
        self.cwnd = self.cwnd.saturating_add(whole as u64);
    }

    /// Counts one ACK into the round and, when the round is over, folds its CE fraction
    /// into alpha: alpha ← (1 − g) · alpha + g · F (RFC 8257 §3.3, the draft's EWMA).
    fn count_round(
        &mut self,
        now: Instant,
        largest_sent: Instant,
        acked: u64,
        marked: u64,
        rtt: &RttEstimator,
    ) {
        let virtual_rtt = self.virtual_rtt(rtt);
        let round = self.round.get_or_insert(MarkRound {
            start: now,
            acked: 0,
            marked: 0,
        });
        round.acked = round.acked.saturating_add(acked);
        round.marked = round.marked.saturating_add(marked);
        let ended = largest_sent >= round.start
            && now.saturating_duration_since(round.start) >= virtual_rtt;
        if !ended || round.acked == 0 {
            return;
        }
        let fraction = round.marked as f64 / round.acked as f64;
        let g = self.config.alpha_gain;
        self.alpha = ((1.0 - g) * self.alpha + g * fraction).clamp(0.0, 1.0);
        self.last_fraction = Some(fraction);
        *round = MarkRound {
            start: now,
            acked: 0,
            marked: 0,
        };
    }

    /// CE feedback for a packet sent at `sent_time`: cwnd · (1 − alpha/2), at most
    /// once per round trip, and not within a loss's recovery period.
    fn on_ce(&mut self, now: Instant, sent_time: Instant) {
        if self.recovery.covers(sent_time) || !self.cwr.on_congestion_event(now, sent_time) {
            return;
        }
        let reduced = (self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
        self.cwnd = reduced.max(self.min_window);
        // The first reduction ends slow start.
        self.ssthresh = self.cwnd;
        self.ai_credit = 0.0;
    }
}

impl CongestionController for Prague {
    /// The trait's steps, with the CE count the per-packet steps cannot carry.
    fn on_ack(&mut self, ack: &AckSummary<'_>) -> AckResponse {
        let now = ack.now;
        let was_slow_start = self.in_slow_start();
        let acked = ack.acked.len() as u64;
        let marked = ack.newly_ce_marked.min(acked);
        let mut marked_left = marked;
        for p in ack.acked {
            if let Some(mds) = p.max_datagram_size {
                self.on_max_datagram_size(mds);
            }
            let is_marked = marked_left > 0;
            marked_left = marked_left.saturating_sub(1);
            self.grow(p.time_sent, p.bytes, is_marked, ack);
        }
        if let Some(largest) = ack.acked.last() {
            self.count_round(now, largest.time_sent, acked, marked, ack.rtt);
        }
        if ack.newly_ce_marked > 0 {
            let sent = ack.ce_event.or(ack.acked.last().map(|p| p.time_sent));
            if let Some(sent) = sent {
                self.on_ce(now, sent);
            }
        }
        // A loss within a recovery period is no new episode (RFC 9002 §7.3.2); an ECN
        // round does not hide one.
        let in_recovery_at_loss = self.recovery.is_running();
        if let Some(c) = ack.congestion {
            self.on_congestion_event(now, c.largest_lost_sent_time, c.persistent, c.lost_bytes);
        }
        AckResponse {
            was_slow_start,
            in_recovery_at_loss,
            ..AckResponse::default()
        }
    }

    fn on_packet_sent(&mut self, _now: Instant, _bytes: u64, _bytes_in_flight: u64) {}

    /// Only reached through a caller that walks the steps itself (`on_ack` is Prague's
    /// entry point): the packet grows the window as an unmarked one.
    fn on_packet_acked(
        &mut self,
        now: Instant,
        sent_time: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        let acked = [super::AckedPacket {
            time_sent: sent_time,
            bytes,
            max_datagram_size: None,
        }];
        let summary = AckSummary {
            acked: &acked,
            app_limited,
            ..AckSummary::losses(now, rtt, &[], None)
        };
        self.on_ack(&summary);
    }

    /// The classic response to loss (the draft's fallback): cwnd · loss_reduction_factor
    /// once per recovery period (RFC 9002 §7.3.2); persistent congestion collapses to
    /// the minimum window (§7.6.2).
    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        _lost_bytes: u64,
    ) {
        if self
            .recovery
            .on_congestion_event(now, largest_lost_sent_time)
        {
            let reduced = (self.cwnd as f64 * self.config.loss_reduction_factor) as u64;
            self.cwnd = reduced.max(self.min_window);
            self.ssthresh = self.cwnd;
            self.ai_credit = 0.0;
            // No ECN reduction for packets sent before this one.
            self.cwr.on_congestion_event(now, largest_lost_sent_time);
        }
        if persistent {
            self.recovery.reset();
            self.cwr.reset();
            self.cwnd = self.min_window;
            self.ai_credit = 0.0;
        }
    }

    /// CE feedback reached through the per-step path (a summary's `ce_event` without a
    /// count): one mark's worth, the reduction at most once per round trip.
    fn on_ecn_ce(&mut self, now: Instant, sent_time: Instant) {
        self.on_ce(now, sent_time);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    fn in_recovery(&self) -> bool {
        self.recovery.is_running() || self.cwr.is_running()
    }
    fn name(&self) -> &'static str {
        "prague"
    }
    fn on_max_datagram_size(&mut self, mds: u64) {
        self.mds = mds.max(1);
    }
    fn scalable_ecn(&self) -> Option<ScalableEcnEstimate> {
        Some(ScalableEcnEstimate::new(self.alpha, self.last_fraction))
    }
}
