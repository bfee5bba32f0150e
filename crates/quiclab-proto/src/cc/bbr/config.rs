//! BBR's knobs (`congestion_control = { algorithm = "bbr", ... }`); defaults are the
//! constants of draft-ietf-ccwg-bbr §2.

use std::time::Duration;

/// BBRv3's constants as knobs. Every default is the draft's value.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrConfig {
    /// Initial window in packets; `None` = RFC 9002 §7.2: min(10 * mds, max(2 * mds,
    /// 14720)) (draft §5.6.4.1: the transport's initial window).
    pub initial_window_packets: Option<u64>,
    /// BBR.StartupPacingGain (§2.6: 4 ln 2 ≈ 2.77).
    pub startup_pacing_gain: f64,
    /// BBR.DefaultCwndGain (§2.7: 2).
    pub cwnd_gain: f64,
    /// BBR.DrainPacingGain (§2.6: 0.5).
    pub drain_pacing_gain: f64,
    /// BBR.LossThresh: the tolerated loss rate per round while probing (§2.9: 0.02).
    pub loss_thresh: f64,
    /// BBR.Beta: multiplicative decrease per lossy round (§2.9: 0.7).
    pub beta: f64,
    /// BBR.Headroom: share of inflight_longterm left free for other flows (§2.9: 0.15).
    pub headroom: f64,
    /// BBR.PacingMarginPercent (§2.6: 1).
    pub pacing_margin_percent: f64,
    /// BBR.ProbeRTTInterval in ms (§2.14.2: 5000).
    pub probe_rtt_interval_ms: u64,
    /// BBR.ProbeRTTDuration in ms (§2.14.2: 200).
    pub probe_rtt_duration_ms: u64,
    /// BBR.MinRTTFilterLen in ms (§2.14.1: 10000).
    pub min_rtt_filter_len_ms: u64,
    /// BBR.ExtraAckedFilterLen in rounds (§2.11: 10); 0 turns the ACK-aggregation
    /// allowance (BBR.extra_acked, §5.5.9) off.
    pub extra_acked_filter_rounds: u64,
    /// BBRStartupFullLossCnt: lossy ACKs in a round that may end Startup (§5.3.1.2: 6).
    pub startup_full_loss_count: u64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            initial_window_packets: None,
            startup_pacing_gain: 2.77,
            cwnd_gain: 2.0,
            drain_pacing_gain: 0.5,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            pacing_margin_percent: 1.0,
            probe_rtt_interval_ms: 5_000,
            probe_rtt_duration_ms: 200,
            min_rtt_filter_len_ms: 10_000,
            extra_acked_filter_rounds: 10,
            startup_full_loss_count: 6,
        }
    }
}

/// Why a [`BbrConfig`] cannot work: the knob's name and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbrConfigError {
    /// The knob, as spelled in the scenario file.
    pub key: &'static str,
    pub why: &'static str,
}

impl BbrConfig {
    pub(crate) fn probe_rtt_interval(&self) -> Duration {
        Duration::from_millis(self.probe_rtt_interval_ms)
    }
    pub(crate) fn probe_rtt_duration(&self) -> Duration {
        Duration::from_millis(self.probe_rtt_duration_ms)
    }
    pub(crate) fn min_rtt_filter_len(&self) -> Duration {
        Duration::from_millis(self.min_rtt_filter_len_ms)
    }

    /// Checks every knob; the first bad one is reported.
    pub fn validate(&self) -> Result<(), BbrConfigError> {
        let err = |key, why| Err(BbrConfigError { key, why });
        let gains = [
            ("startup_pacing_gain", self.startup_pacing_gain),
            ("cwnd_gain", self.cwnd_gain),
            ("drain_pacing_gain", self.drain_pacing_gain),
        ];
        for (key, g) in gains {
            if !(g.is_finite() && g > 0.0 && g <= 100.0) {
                return err(key, "must be a number in (0, 100]");
            }
        }
        if !(self.loss_thresh > 0.0 && self.loss_thresh < 1.0) {
            return err("loss_thresh", "must be in (0, 1)");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return err("beta", "must be in (0, 1)");
        }
        if !(self.headroom >= 0.0 && self.headroom < 1.0) {
            return err("headroom", "must be in [0, 1)");
        }
        if !(self.pacing_margin_percent >= 0.0 && self.pacing_margin_percent < 100.0) {
            return err("pacing_margin_percent", "must be in [0, 100)");
        }
        if self.probe_rtt_duration_ms == 0 || self.probe_rtt_duration_ms > 3_600_000 {
            return err("probe_rtt_duration_ms", "must be in [1, 3600000]");
        }
        if self.probe_rtt_interval_ms == 0 || self.probe_rtt_interval_ms > 3_600_000 {
            return err("probe_rtt_interval_ms", "must be in [1, 3600000]");
        }
        // §5.5.7: the min_rtt window covers a whole ProbeRTT cycle.
        if self.min_rtt_filter_len_ms < self.probe_rtt_interval_ms
            || self.min_rtt_filter_len_ms > 3_600_000
        {
            return err(
                "min_rtt_filter_len_ms",
                "must be at least probe_rtt_interval_ms and at most 3600000",
            );
        }
        if self.extra_acked_filter_rounds > 1_000 {
            return err("extra_acked_filter_rounds", "must be at most 1000");
        }
        if self.startup_full_loss_count == 0 {
            return err("startup_full_loss_count", "must be at least 1");
        }
        if self.initial_window_packets == Some(0) {
            return err("initial_window_packets", "must be at least 1");
        }
        Ok(())
    }
}
