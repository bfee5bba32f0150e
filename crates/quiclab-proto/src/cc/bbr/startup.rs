//! Startup and Drain (draft-ietf-ccwg-bbr §5.3.1, §5.3.2): the exponential search for
//! the bottleneck bandwidth, its two exits (a bandwidth plateau, or persistent high
//! loss), and draining the queue Startup built.

use super::{Bbr, BbrState};
use crate::recovery::RateSample;
use crate::time::Instant;

impl Bbr {
    /// §5.3.1 EnterStartup.
    pub(super) fn enter_startup(&mut self) {
        self.set_state(BbrState::Startup);
        self.pacing_gain = self.cfg.startup_pacing_gain;
        self.cwnd_gain = self.cfg.cwnd_gain;
    }

    /// §5.3.1.1 ResetFullBW.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.1 CheckFullBWReached: three non-app-limited rounds without 25% growth.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return; // no need to check for a full pipe now
        }
        let rate = rs.delivery_rate().unwrap_or(0);
        if rate as f64 >= self.full_bw as f64 * 1.25 {
            self.reset_full_bw(); // bw is still growing
            self.full_bw = rate; // new baseline
            return;
        }
        self.full_bw_count += 1; // another round without much growth
        self.full_bw_now = self.full_bw_count >= 3;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// §5.3.1 CheckStartupDone.
    pub(super) fn check_startup_done(&mut self, rs: &RateSample) {
        self.check_startup_high_loss(rs);
        if self.state == BbrState::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// §5.3.1.2 CheckStartupHighLoss: in recovery for a full round, a round's loss
    /// rate above BBR.LossThresh, and at least BBRStartupFullLossCnt lossy ACKs in it
    /// (the count of lost ranges is approximated by ACKs that declared losses, as Linux
    /// BBRv3 counts them).
    fn check_startup_high_loss(&mut self, rs: &RateSample) {
        if self.full_bw_reached || self.state != BbrState::Startup {
            return;
        }
        if rs.newly_lost > 0 {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && self.recovery.is_running()
            && self.loss_events_in_round >= self.cfg.startup_full_loss_count
            && self.is_inflight_too_high(rs.lost, rs.tx_in_flight)
        {
            self.undo_state = Some(BbrState::Startup);
            self.full_bw_reached = true;
            let bdp = self.bdp().unwrap_or(0);
            self.inflight_longterm = bdp.max(self.inflight_latest);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// §5.3.2 EnterDrain.
    fn enter_drain(&mut self) {
        self.set_state(BbrState::Drain);
        self.pacing_gain = self.cfg.drain_pacing_gain; // pace slowly
        self.cwnd_gain = self.cfg.cwnd_gain; // maintain cwnd
        self.drain_start_round = self.round_count;
    }

    /// §5.3.2 CheckDrainDone: the estimated queue is gone, or three rounds passed.
    pub(super) fn check_drain_done(&mut self, now: Instant) {
        if self.state == BbrState::Drain
            && (self.bytes_in_flight <= self.inflight(1.0)
                || self.round_count > self.drain_start_round + 3)
        {
            self.enter_probe_bw(now);
        }
    }

    /// §5.3.3.6 EnterProbeBW.
    fn enter_probe_bw(&mut self, now: Instant) {
        self.cwnd_gain = self.cfg.cwnd_gain;
        self.start_probe_bw_down(now);
    }
}
