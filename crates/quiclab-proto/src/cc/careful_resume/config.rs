//! Careful Resume's knobs (draft-ietf-tsvwg-careful-resume): the saved path parameters
//! a connection resumes from and every constant the draft names, with its default.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How packets sent in the Unvalidated Phase are paced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnvalidatedPacing {
    /// draft §4.3 "All packets sent in the Unvalidated Phase MUST use pacing based on
    /// the current RTT", §5.6: ITT = current_rtt · MPS / jump_cwnd, i.e. the rate
    /// jump_cwnd / current_rtt (default).
    #[default]
    CurrentRtt,
    /// The connection's ordinary pacer, RFC 9002 §7.7's 1.25 · cwnd / smoothed_rtt
    /// (with cwnd = jump_cwnd): a common shortcut, for comparison.
    Window,
    /// No pacing while Unvalidated: the jump leaves at line rate (for the seed's
    /// "accurate pacing is essential" comparison; violates the draft's MUST).
    Off,
}

/// `careful_resume = { ... }` in a transport config. Off by default; when `enabled`,
/// the sender resumes from `saved_cwnd_bytes` / `saved_rtt_ms` (observed on an earlier
/// connection to the same endpoint, draft §4.1) through the draft's phases.
/// The CC algorithm underneath must be window-based (NewReno or CUBIC).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CarefulResumeConfig {
    /// Use Careful Resume (default false: the controller runs unwrapped).
    pub enabled: bool,
    /// saved_cwnd in bytes (draft §4.1 "Observing (saved_cwnd)"); required when enabled.
    pub saved_cwnd_bytes: u64,
    /// saved_rtt in ms, the minimum RTT when saved_cwnd was observed; required when
    /// enabled.
    pub saved_rtt_ms: f64,
    /// max_jump in bytes (draft §2: the configured maximum jump_cwnd); `None` = no
    /// limit beyond `jump_fraction · saved_cwnd`.
    pub max_jump_bytes: Option<u64>,
    /// jump_cwnd = min(max_jump, saved_cwnd · jump_fraction); draft §4.3 "MUST be no
    /// more than half of the saved_cwnd": default 0.5.
    pub jump_fraction: f64,
    /// Reconnaissance "Minimum RTT too small" (draft §4.2, §5.4): CR stops when the
    /// minimum RTT is at most saved_rtt · this (default 0.5).
    pub rtt_min_fraction: f64,
    /// draft §5.4: "A current RTT that is more than ten times the saved_rtt is
    /// indicative of a path change" (default 10).
    pub rtt_max_factor: f64,
    /// Safe Retreat: CWND is reduced to PipeSize · this (draft §4.5 "no more than
    /// (PipeSize/2)"; default 0.5).
    pub retreat_fraction: f64,
    /// Beta: on leaving Safe Retreat, ssthresh = PipeSize · beta (draft §4.5, between
    /// 0.5 and 1; default 0.5).
    pub beta: f64,
    /// Limit on the time in the Unvalidated Phase in RTTs (draft §4.3 "more than one
    /// RTT has elapsed"; default 1).
    pub unvalidated_rtts: f64,
    /// How the jump is paced (default `current_rtt`, the draft's rule).
    pub unvalidated_pacing: UnvalidatedPacing,
}

impl Default for CarefulResumeConfig {
    fn default() -> Self {
        CarefulResumeConfig {
            enabled: false,
            saved_cwnd_bytes: 0,
            saved_rtt_ms: 0.0,
            max_jump_bytes: None,
            jump_fraction: 0.5,
            rtt_min_fraction: 0.5,
            rtt_max_factor: 10.0,
            retreat_fraction: 0.5,
            beta: 0.5,
            unvalidated_rtts: 1.0,
            unvalidated_pacing: UnvalidatedPacing::CurrentRtt,
        }
    }
}

/// A Careful Resume knob that cannot work: `key` is relative to `careful_resume`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("careful_resume.{key}: {why}")]
pub struct CarefulResumeConfigError {
    pub key: &'static str,
    pub why: &'static str,
}

impl CarefulResumeConfig {
    /// Whether this is the default (so that configs without the key serialize as before).
    pub fn is_default(&self) -> bool {
        *self == CarefulResumeConfig::default()
    }

    /// saved_rtt as a duration (validated configs only).
    pub fn saved_rtt(&self) -> Duration {
        Duration::from_secs_f64(self.saved_rtt_ms.max(0.0) / 1e3)
    }

    /// Checks every knob (the saved values only when enabled).
    pub fn validate(&self) -> Result<(), CarefulResumeConfigError> {
        let err = |key, why| Err(CarefulResumeConfigError { key, why });
        let fraction = |v: f64| v > 0.0 && v <= 1.0;
        if self.enabled && self.saved_cwnd_bytes == 0 {
            return err("saved_cwnd_bytes", "must be above 0 when enabled");
        }
        if self.enabled && !(self.saved_rtt_ms > 0.0 && self.saved_rtt_ms < 1e7) {
            return err(
                "saved_rtt_ms",
                "must be a number of ms above 0 when enabled",
            );
        }
        if self.max_jump_bytes == Some(0) {
            return err("max_jump_bytes", "must be above 0");
        }
        if !fraction(self.jump_fraction) {
            return err("jump_fraction", "must be in (0, 1]");
        }
        if !(self.rtt_min_fraction >= 0.0 && self.rtt_min_fraction < 1.0) {
            return err("rtt_min_fraction", "must be in [0, 1)");
        }
        if !(self.rtt_max_factor > 1.0 && self.rtt_max_factor.is_finite()) {
            return err("rtt_max_factor", "must be a finite number above 1");
        }
        if !fraction(self.retreat_fraction) {
            return err("retreat_fraction", "must be in (0, 1]");
        }
        if !(0.5..=1.0).contains(&self.beta) {
            return err("beta", "must be in [0.5, 1] (draft §4.5)");
        }
        if !(self.unvalidated_rtts > 0.0 && self.unvalidated_rtts <= 100.0) {
            return err("unvalidated_rtts", "must be in (0, 100]");
        }
        Ok(())
    }
}
