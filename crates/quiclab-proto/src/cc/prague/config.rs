//! Prague's knobs (draft-briscoe-iccrg-prague-congestion-control-04); every default is
//! the draft's (or, where the draft defers to it, the reference Linux TCP Prague's).

/// Prague's constants as knobs. `congestion_control = { algorithm = "prague", ... }`;
/// Prague needs the transport's `ecn = "ect1"` (the L4S identifier, RFC 9331 §4), which
/// `TransportConfig::validate` checks.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PragueConfig {
    /// Initial window in packets; `None` = RFC 9002 §7.2: min(10 * mds, max(2 * mds, 14720)).
    pub initial_window_packets: Option<u64>,
    /// Minimum window in packets (RFC 9002 §7.2: 2). The draft's fractional windows
    /// (below 2 packets, by pacing) are not implemented.
    pub minimum_window_packets: u64,
    /// g, the gain of the per-round-trip EWMA of the CE fraction (the draft's ECN
    /// response, taken from DCTCP, RFC 8257 §3.3: 1/16). In (0, 1].
    pub alpha_gain: f64,
    /// alpha before the first round ends (RFC 8257 §3.3 and the reference
    /// implementation: 1, so that a CE mark in the first rounds halves the window).
    /// In [0, 1].
    pub initial_alpha: f64,
    /// Segments added per round trip in congestion avoidance, counted on unmarked
    /// acknowledged bytes only (the draft's additive increase, Reno's: 1).
    /// Finite, above 0.
    pub additive_increase_segments: f64,
    /// The window multiplier on a loss (the draft's loss response: classic,
    /// Reno-friendly; the reference implementation halves: 0.5). In (0, 1].
    pub loss_reduction_factor: f64,
    /// Reduced RTT dependence (the draft's RTT-independence option; on by
    /// default in the reference Linux implementation, `prague_rtt_scaling` =
    /// RTT_CONTROL_RATE): below `target_rtt_ms` the additive increase per round trip is
    /// scaled by (srtt / target)² so that the rate grows as a flow's at the target
    /// RTT, and alpha is updated once per max(srtt, target) (the "virtual RTT").
    pub rtt_independence: bool,
    /// The target RTT of reduced RTT dependence, in ms (the reference implementation's 25). At least 1.
    pub target_rtt_ms: u64,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig {
            initial_window_packets: None,
            minimum_window_packets: 2,
            alpha_gain: 1.0 / 16.0,
            initial_alpha: 1.0,
            additive_increase_segments: 1.0,
            loss_reduction_factor: 0.5,
            rtt_independence: true,
            target_rtt_ms: 25,
        }
    }
}

impl PragueConfig {
    /// Rejects values that could not work: `Err((key, why))` with the key's dotted path.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if !(self.alpha_gain > 0.0 && self.alpha_gain <= 1.0) {
            return Err(("congestion_control.alpha_gain", "must be in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&self.initial_alpha) {
            return Err(("congestion_control.initial_alpha", "must be in [0, 1]"));
        }
        if !(self.additive_increase_segments > 0.0 && self.additive_increase_segments.is_finite()) {
            return Err((
                "congestion_control.additive_increase_segments",
                "must be a finite number above 0",
            ));
        }
        if !(self.loss_reduction_factor > 0.0 && self.loss_reduction_factor <= 1.0) {
            return Err((
                "congestion_control.loss_reduction_factor",
                "must be in (0, 1]",
            ));
        }
        if self.minimum_window_packets == 0 {
            return Err((
                "congestion_control.minimum_window_packets",
                "must be at least 1",
            ));
        }
        if self.target_rtt_ms == 0 {
            return Err(("congestion_control.target_rtt_ms", "must be at least 1"));
        }
        Ok(())
    }
}
