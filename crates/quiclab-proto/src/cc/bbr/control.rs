//! BBR's control parameters (draft-ietf-ccwg-bbr §5.6): the pacing rate and the
//! congestion window, bounded by the model and by ProbeRTT.

use super::model::scale;
use super::{Bbr, BbrState, INF};
use crate::recovery::RateSample;
use std::time::Duration;

impl Bbr {
    /// §5.2.3 UpdateControlParameters (SetSendQuantum is the pacer's fixed burst).
    pub(super) fn update_control_parameters(&mut self, rs: &RateSample) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
        self.set_cwnd(rs);
    }

    /// §5.6.2 InitPacingRate: StartupPacingGain · InitialCwnd / srtt (1 ms without one).
    pub(super) fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let srtt_ns = srtt
            .filter(|d| !d.is_zero())
            .map_or(1_000_000, |d| d.as_nanos());
        let nominal = u128::from(self.initial_cwnd) * 1_000_000_000 / srtt_ns;
        let nominal = u64::try_from(nominal).unwrap_or(u64::MAX);
        self.pacing_rate = scale(nominal, self.cfg.startup_pacing_gain);
    }

    /// §5.6.2 SetPacingRateWithGain: gain · bw · (1 − margin); only downwards once the
    /// pipe was filled.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let margin = (100.0 - self.cfg.pacing_margin_percent) / 100.0;
        let rate = scale(self.bw, gain * margin);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.4.2 BDPMultiple.
    fn bdp_multiple(&self, gain: f64) -> u64 {
        match self.bdp() {
            None => self.initial_cwnd, // no valid RTT samples yet
            Some(bdp) => scale(bdp, gain),
        }
    }

    /// §5.6.4.2 QuantizationBudget.
    fn quantization_budget(&self, inflight_cap: u64) -> u64 {
        let mut cap = inflight_cap
            .max(self.offload_budget())
            .max(self.min_pipe_cwnd());
        if self.state == BbrState::ProbeBwUp {
            cap = cap.saturating_add(2 * self.mds);
        }
        cap
    }

    /// §5.6.4.2 Inflight(gain).
    pub(super) fn inflight(&self, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(gain))
    }

    /// §5.6.4.2 UpdateMaxInflight: BBR.max_inflight.
    fn max_inflight(&self) -> u64 {
        let cap = self
            .bdp_multiple(self.cwnd_gain)
            .saturating_add(self.extra_acked);
        self.quantization_budget(cap)
    }

    /// §5.6.4.6 SetCwnd.
    fn set_cwnd(&mut self, rs: &RateSample) {
        let max_inflight = self.max_inflight();
        if self.full_bw_reached {
            self.cwnd = self.cwnd.saturating_add(rs.newly_acked).min(max_inflight);
        } else if self.cwnd < max_inflight || self.delivered < self.initial_cwnd {
            self.cwnd = self.cwnd.saturating_add(rs.newly_acked);
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        self.bound_cwnd_for_probe_rtt();
        self.bound_cwnd_for_model();
    }

    /// §5.6.4.5 ProbeRTTCwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(0.5).max(self.min_pipe_cwnd())
    }

    /// §5.6.4.5 BoundCwndForProbeRTT.
    fn bound_cwnd_for_probe_rtt(&mut self) {
        if self.state == BbrState::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// §5.6.4.7 BoundCwndForModel: the volume caps of the §5.6.1 table.
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = INF;
        if self.state.is_probe_bw() && self.state != BbrState::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, BbrState::ProbeRtt | BbrState::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        // Apply inflight_shortterm (possibly infinite).
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }

    /// §5.6.4.4 SaveCwnd.
    pub(super) fn save_cwnd(&mut self) {
        if !self.recovery.is_running() && self.state != BbrState::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// SaveCwnd at the moment recovery starts (the period is already marked running by
    /// then, so the "not in recovery" branch is taken explicitly).
    pub(super) fn save_cwnd_outside_recovery(&mut self) {
        if self.state != BbrState::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §5.6.4.4 RestoreCwnd.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }
}
