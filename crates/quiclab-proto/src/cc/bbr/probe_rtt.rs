//! BBR.min_rtt and ProbeRTT (draft-ietf-ccwg-bbr §5.3.4, §5.5.7), and restarting from
//! idle (§5.4).

use super::{AckPhase, Bbr, BbrState};
use crate::recovery::RateSample;
use crate::time::Instant;

impl Bbr {
    /// §5.3.4.4 UpdateMinRTT: the ProbeRTT-interval minimum feeds the 10 s min_rtt.
    pub(super) fn update_min_rtt(&mut self, now: Instant, rs: &RateSample) {
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + self.cfg.probe_rtt_interval();
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.cfg.min_rtt_filter_len();
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    /// §5.3.4.4 CheckProbeRTT.
    pub(super) fn check_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
        if self.state != BbrState::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == BbrState::ProbeRtt {
            self.handle_probe_rtt(now);
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// §5.3.4.4 EnterProbeRTT.
    fn enter_probe_rtt(&mut self) {
        self.set_state(BbrState::ProbeRtt);
        self.probe_rtt_count += 1;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 0.5; // BBR.ProbeRTTCwndGain
    }

    /// §5.3.4.4 HandleProbeRTT. (MarkConnectionAppLimited is the connection's: it asks
    /// `wants_app_limited_mark` after each rate sample.)
    fn handle_probe_rtt(&mut self, now: Instant) {
        match self.probe_rtt_done_stamp {
            None if self.bytes_in_flight <= self.probe_rtt_cwnd() => {
                // Wait for at least ProbeRTTDuration and one round.
                self.probe_rtt_done_stamp = Some(now + self.cfg.probe_rtt_duration());
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            None => {}
            Some(_) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
    }

    /// §5.3.4.4 CheckProbeRTTDone.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_some_and(|t| now > t) {
            // Schedule the next ProbeRTT.
            self.probe_rtt_min_stamp = now;
            self.restore_cwnd();
            self.exit_probe_rtt(now);
        }
    }

    /// §5.3.4.5 ExitProbeRTT.
    fn exit_probe_rtt(&mut self, now: Instant) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// §5.4.1 HandleRestartFromIdle, before a send into an empty flight while the
    /// last sample was application-limited.
    pub(super) fn handle_restart_from_idle(&mut self, now: Instant) {
        if !self.app_limited {
            return;
        }
        self.idle_restart = true;
        self.extra_acked_interval_start = now;
        if self.state.is_probe_bw() {
            self.set_pacing_rate_with_gain(1.0);
        } else if self.state == BbrState::ProbeRtt {
            self.check_probe_rtt_done(now);
        }
    }
}
