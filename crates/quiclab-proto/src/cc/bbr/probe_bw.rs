//! The ProbeBW cycle (draft-ietf-ccwg-bbr §5.3.3): DOWN (decelerate), CRUISE, REFILL
//! (one round at the estimated rate), UP (accelerate), with the randomised wait between
//! probes, the Reno-coexistence bound, and the long-term model's adaptation.

use super::{AckPhase, Bbr, BbrState, INF};
use crate::recovery::RateSample;
use crate::time::Instant;
use std::time::Duration;

/// ProbeBW_DOWN's pacing gain (§5.3.3.1).
const DOWN_PACING_GAIN: f64 = 0.9;
/// ProbeBW_UP's pacing and cwnd gains (§5.6.1 table).
const UP_PACING_GAIN: f64 = 1.25;
const UP_CWND_GAIN: f64 = 2.25;

impl Bbr {
    /// §5.3.3.6 StartProbeBW_DOWN.
    pub(super) fn start_probe_bw_down(&mut self, now: Instant) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INF; // not growing inflight_longterm
        self.pick_probe_wait();
        self.cycle_stamp = now; // start wall clock
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_state(BbrState::ProbeBwDown);
        self.pacing_gain = DOWN_PACING_GAIN;
        self.cwnd_gain = self.cfg.cwnd_gain;
    }

    /// §5.3.3.6 StartProbeBW_CRUISE.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.set_state(BbrState::ProbeBwCruise);
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.cfg.cwnd_gain;
    }

    /// §5.3.3.6 StartProbeBW_REFILL.
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(BbrState::ProbeBwRefill);
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.cfg.cwnd_gain;
    }

    /// §5.3.3.6 StartProbeBW_UP.
    fn start_probe_bw_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rs.delivery_rate().unwrap_or(0);
        self.set_state(BbrState::ProbeBwUp);
        self.pacing_gain = UP_PACING_GAIN;
        self.cwnd_gain = UP_CWND_GAIN;
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.6 UpdateProbeBWCyclePhase, on each ACK.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, now: Instant, rs: &RateSample) {
        if !self.full_bw_reached {
            return; // only steady-state behaviour here
        }
        if self.adapt_long_term_model(rs) {
            return; // already decided a transition
        }
        let state = self.state;
        match state {
            BbrState::ProbeBwDown => {
                if self.is_time_to_probe_bw(now) {
                    return;
                }
                if self.is_time_to_cruise() {
                    self.start_probe_bw_cruise();
                }
            }
            BbrState::ProbeBwCruise => {
                self.is_time_to_probe_bw(now);
            }
            // After one round of REFILL, start UP.
            BbrState::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(rs);
            }
            BbrState::ProbeBwUp if self.is_time_to_go_down(rs) => {
                self.prev_probe_too_high = false; // no high loss (yet)
                self.start_probe_bw_down(now);
            }
            _ => {}
        }
    }

    /// §5.3.3.6 IsTimeToCruise: headroom left and the queue drained.
    fn is_time_to_cruise(&self) -> bool {
        if self.bytes_in_flight > self.inflight_with_headroom() {
            return false; // not enough headroom
        }
        self.bytes_in_flight <= self.inflight(1.0)
    }

    /// §5.3.3.6 IsTimeToGoDown.
    fn is_time_to_go_down(&mut self, rs: &RateSample) -> bool {
        // Precautionary bandwidth probing: deceleration.
        if self.prev_probe_too_high && self.bytes_in_flight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited && self.cwnd >= self.inflight_longterm {
            // bw is limited by inflight_longterm: restart the plateau search.
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate().unwrap_or(0);
        } else if self.full_bw_now {
            return true; // we estimate we've fully used the path's bw
        }
        false
    }

    /// §5.3.3.5 IsTimeToProbeBW: the randomised wall-clock wait, or the
    /// Reno-coexistence round bound.
    fn is_time_to_probe_bw(&mut self, now: Instant) -> bool {
        let elapsed = now > self.cycle_stamp + self.bw_probe_wait;
        if elapsed || self.is_reno_coexistence_probe_time() {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.5 PickProbeWait: 0 or 1 rounds, and 2 to 3 s, drawn from the seed.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rng.range(0, 2);
        let extra_ns = self.rng.range(0, 1_000_000_000);
        self.bw_probe_wait = Duration::from_secs(2) + Duration::from_nanos(extra_ns);
    }

    /// §5.3.3.5 IsRenoCoexistenceProbeTime: a Reno flow with this BDP would take
    /// TargetInflight (in packets) rounds to grow back; probe no later (max 63).
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mds;
        self.rounds_since_probe_up >= reno_rounds.min(63)
    }

    /// §5.3.3.6 InflightWithHeadroom.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = self
            .mds
            .max((self.cfg.headroom * self.inflight_longterm as f64) as u64);
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// §5.3.3.6 RaiseInflightLongtermSlope.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(self.mds);
    }

    /// §5.3.3.6 ProbeInflightLongtermUpward.
    fn probe_inflight_longterm_upward(&mut self, rs: &RateSample) {
        if !self.is_cwnd_limited || self.cwnd < self.inflight_longterm {
            return; // not fully using inflight_longterm, so don't grow it
        }
        self.bw_probe_up_acked += rs.newly_acked;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self
                .inflight_longterm
                .saturating_add(delta.saturating_mul(self.mds));
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// §5.3.3.6 AdaptLongTermModel: ack-phase tracking, advancing the max_bw filter
    /// once per cycle, and raising the long-term bound while losses stay low. Returns
    /// whether it decided a state transition.
    fn adapt_long_term_model(&mut self, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            // starting to get bw probing samples
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // end of samples from the bw probing phase
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // Precautionary bandwidth probing: acceleration.
            if self.state.is_probe_bw()
                && self.prev_probe_precautionary
                && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if !self.is_inflight_too_high(rs.lost, rs.tx_in_flight) {
            // Loss rate is safe: adjust upper bounds upward.
            if self.inflight_longterm == INF {
                return false; // no upper bounds to raise
            }
            if rs.tx_in_flight > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight;
            }
            if self.state == BbrState::ProbeBwUp {
                self.probe_inflight_longterm_upward(rs);
            }
        }
        false
    }
}
