//! BBR's network path model (draft-ietf-ccwg-bbr §5.5): packet-timed rounds, the max_bw
//! filter, ACK aggregation, the short-term (bw_shortterm, inflight_shortterm) and
//! long-term (inflight_longterm) bounds, and the response to loss.

use super::{Bbr, BbrState, INF};
use crate::recovery::{LostPacket, RateSample};
use crate::time::Instant;

/// `v · f` for a volume or rate, rounded down; infinity stays infinity.
pub(super) fn scale(v: u64, f: f64) -> u64 {
    if v == INF {
        INF
    } else {
        (v as f64 * f) as u64
    }
}

impl Bbr {
    /// §5.5.1 UpdateRound: a round ends when a packet sent after its start is ACKed.
    fn update_round(&mut self, rs: &RateSample) {
        if rs.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
            self.round_start = true;
            // C.is_cwnd_limited looks back one round.
            self.is_cwnd_limited = self.cwnd_limited_in_round;
            self.cwnd_limited_in_round = false;
        } else {
            self.round_start = false;
        }
    }

    /// §5.5.1 StartRound.
    pub(super) fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    /// §5.5.5 UpdateMaxBw.
    fn update_max_bw(&mut self, rs: &RateSample) {
        self.update_round(rs);
        let rate = rs.delivery_rate().unwrap_or(0);
        if rate > 0 && (rate >= self.max_bw || !rs.is_app_limited) {
            // §5.5.5: a window of BBR.MaxBwFilterLen = 2 ProbeBW cycles.
            self.max_bw = self.max_bw_filter.update(rate, self.cycle_count, 2);
        }
    }

    /// §5.5.6 AdvanceMaxBwFilter.
    pub(super) fn advance_max_bw_filter(&mut self) {
        self.cycle_count += 1;
        self.max_bw_filter.expire(self.cycle_count, 2);
        self.max_bw = self.max_bw_filter.best();
    }

    /// §5.5.10.3 UpdateLatestDeliverySignals (near the start of ACK processing).
    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rs.delivery_rate().unwrap_or(0));
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 AdvanceLatestDeliverySignals (near the end of ACK processing).
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = rs.delivery_rate().unwrap_or(0);
            self.inflight_latest = rs.delivered;
        }
    }

    /// §5.5.10.3 ResetCongestionSignals.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 UpdateCongestionSignals.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_max_bw(rs);
        if !self.loss_round_start {
            return; // wait until the end of the round trip
        }
        self.adapt_lower_bounds_from_congestion();
        self.is_loss_in_round = false;
    }

    /// §5.5.10.3 AdaptLowerBoundsFromCongestion: once per round, when not probing.
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        if self.is_loss_in_round {
            // InitLowerBounds
            if self.bw_shortterm == INF {
                self.bw_shortterm = self.max_bw;
            }
            if self.inflight_shortterm == INF {
                self.inflight_shortterm = self.cwnd;
            }
            // LossLowerBounds
            let beta = self.cfg.beta;
            self.bw_shortterm = self.bw_latest.max(scale(self.bw_shortterm, beta));
            self.inflight_shortterm = self
                .inflight_latest
                .max(scale(self.inflight_shortterm, beta));
        }
    }

    /// §5.5.10.3 ResetShortTermModel.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    /// §5.5.10.3 BoundBWForModel.
    pub(super) fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.min(self.bw_shortterm);
    }

    /// §5.3.3.6 IsProbingBW.
    pub(super) fn is_probing_bw(&self) -> bool {
        matches!(
            self.state,
            BbrState::Startup | BbrState::ProbeBwRefill | BbrState::ProbeBwUp
        )
    }

    /// §5.5.9 UpdateACKAggregation: the data ACKed beyond what BBR.bw explains.
    pub(super) fn update_ack_aggregation(&mut self, now: Instant, rs: &RateSample) {
        if self.cfg.extra_acked_filter_rounds == 0 {
            return;
        }
        let interval = now.saturating_duration_since(self.extra_acked_interval_start);
        let mut expected = mul_rate(self.bw, interval.as_nanos());
        // Reset the interval if the ACK rate is below the expected rate.
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = now;
            expected = 0;
        }
        self.extra_acked_delivered += rs.newly_acked;
        let extra =
            (self.extra_acked_delivered - expected.min(self.extra_acked_delivered)).min(self.cwnd);
        let window = if self.full_bw_reached {
            self.cfg.extra_acked_filter_rounds
        } else {
            1 // in Startup, just remember one round
        };
        self.extra_acked = self
            .extra_acked_filter
            .update(extra, self.round_count, window);
    }

    /// §5.5.10.2 IsInflightTooHigh, for (lost, tx_in_flight).
    pub(super) fn is_inflight_too_high(&self, lost: u64, tx_in_flight: u64) -> bool {
        // QUIC has selective ACKs (C.has_selective_acks), so only the rate matters.
        lost as f64 > tx_in_flight as f64 * self.cfg.loss_thresh
    }

    /// §5.5.10.2 NoteLoss.
    fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered;
            self.save_state_upon_loss();
        }
        self.is_loss_in_round = true;
    }

    /// §5.5.10.2 HandleLostPacket.
    pub(super) fn handle_lost_packet(&mut self, now: Instant, p: &LostPacket) {
        self.note_loss();
        if !self.is_bw_probe_sample {
            return; // not a packet sent while probing bandwidth
        }
        let tx_in_flight = p.snapshot.tx_in_flight;
        let lost = p.lost - p.snapshot.lost;
        if self.is_inflight_too_high(lost, tx_in_flight) {
            let at_loss = self.inflight_at_loss(p.size, tx_in_flight, lost);
            self.handle_inflight_too_high(now, at_loss, p.snapshot.is_app_limited);
        }
    }

    /// A CE mark, as a loss signal (an assumption: the draft only says CE marks are
    /// congestion, draft §3.7). NoteLoss (§5.5.10.2), so that the round counts as lossy and
    /// AdaptLowerBoundsFromCongestion (§5.5.10.3) cuts bw_shortterm and
    /// inflight_shortterm by beta at the round's end, once per round; and while the
    /// flow probes bandwidth, HandleInflightTooHigh (§5.5.10.2) as for a loss rate
    /// above BBR.LossThresh, with the bytes in flight at the last ACK as the
    /// inflight at the mark: inflight_longterm (inflight_hi) is set and ProbeBW_UP
    /// ends, once per probe. No recovery period, no packet conservation: nothing
    /// was lost.
    pub(super) fn handle_ce(&mut self, now: Instant) {
        self.note_loss();
        if self.is_bw_probe_sample {
            let in_flight = self.bytes_in_flight;
            self.handle_inflight_too_high(now, in_flight, self.app_limited);
        }
    }

    /// §5.5.10.2 InflightAtLoss: where within the packet the loss rate crossed
    /// BBR.LossThresh.
    fn inflight_at_loss(&self, size: u64, tx_in_flight: u64, lost: u64) -> u64 {
        let inflight_prev = tx_in_flight.saturating_sub(size) as f64;
        let lost_prev = lost.saturating_sub(size) as f64;
        let t = self.cfg.loss_thresh;
        let lost_prefix = ((t * inflight_prev - lost_prev) / (1.0 - t)).max(0.0);
        (inflight_prev + lost_prefix) as u64
    }

    /// §5.5.10.2 HandleInflightTooHigh.
    pub(super) fn handle_inflight_too_high(
        &mut self,
        now: Instant,
        tx_in_flight: u64,
        app_limited: bool,
    ) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // only react once per bw probe
        if !app_limited {
            let target = scale(self.target_inflight(), self.cfg.beta);
            self.inflight_longterm = tx_in_flight.max(target);
        }
        if self.state == BbrState::ProbeBwUp {
            self.undo_state = Some(BbrState::ProbeBwUp);
            self.start_probe_bw_down(now);
        }
    }

    /// §5.5.11.1 SaveStateUponLoss.
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    /// §5.5.11.2 HandleSpuriousLossDetection: the loss episode was spurious; restore
    /// the model saved at its start, and the probing state it ended.
    pub(super) fn handle_spurious_loss_detection(&mut self) {
        self.restore_cwnd();
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        // If the flow was probing bandwidth, return to that state.
        match self.undo_state {
            Some(BbrState::Startup) if self.state != BbrState::Startup => {
                self.full_bw_reached = false;
                if self.state != BbrState::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(BbrState::ProbeBwUp)
                if self.state != BbrState::ProbeBwUp && self.state != BbrState::ProbeRtt =>
            {
                self.start_probe_bw_refill();
            }
            _ => {}
        }
        self.undo_state = None;
    }

    /// §5.3.3.6 TargetInflight: the BDP, unless congestion cut cwnd.
    pub(super) fn target_inflight(&self) -> u64 {
        self.bdp().unwrap_or(self.initial_cwnd).min(self.cwnd)
    }

    /// BBR.bdp = BBR.bw · BBR.min_rtt (§5.6.4.2); `None` without an RTT sample.
    pub(super) fn bdp(&self) -> Option<u64> {
        self.min_rtt.map(|r| mul_rate(self.bw, r.as_nanos()))
    }
}

/// bytes/s · ns -> bytes, saturating.
pub(super) fn mul_rate(rate: u64, nanos: u128) -> u64 {
    u64::try_from(u128::from(rate) * nanos / 1_000_000_000).unwrap_or(u64::MAX)
}
