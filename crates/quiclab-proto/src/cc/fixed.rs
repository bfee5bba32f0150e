//! A fixed window and, optionally, a fixed pacing rate: a sender that does not react to
//! the network, for measurements where the sending schedule must be known in advance
//! (a pacing-accuracy benchmark, a constant-rate probe through an emulated link). Like
//! `none`, it is not a congestion controller for shared paths.

use super::CongestionController;
use crate::recovery::RttEstimator;
use crate::time::Instant;

/// `congestion_control = { algorithm = "fixed", ... }`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FixedConfig {
    /// The window in packets of the maximum datagram size (default 1000: ~1.2 MB, so a
    /// paced sender on a path under ~50 ms is limited by its rate, not the window).
    pub window_packets: u64,
    /// Pacing rate in Mbit/s of datagram bytes (what the pacer counts: UDP payloads).
    /// `None` (default): RFC 9002 §7.7's 1.25 · window / smoothed_rtt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing_rate_mbps: Option<f64>,
}

impl Default for FixedConfig {
    fn default() -> Self {
        FixedConfig {
            window_packets: 1000,
            pacing_rate_mbps: None,
        }
    }
}

impl FixedConfig {
    /// The key and reason of the first invalid knob.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if self.window_packets == 0 {
            return Err(("congestion_control.window_packets", "must be at least 1"));
        }
        if let Some(r) = self.pacing_rate_mbps {
            // Up to 1 Tbit/s; at least 1 kbit/s, so the rate is a whole number of bytes/s.
            if !(0.001..=1_000_000.0).contains(&r) {
                return Err((
                    "congestion_control.pacing_rate_mbps",
                    "must be 0.001 to 1,000,000 (Mbit/s)",
                ));
            }
        }
        Ok(())
    }
}

/// The controller: constant window, constant rate (when set), no reaction to losses.
#[derive(Clone, Debug)]
pub struct Fixed {
    window: u64,
    /// Bytes per second; `None`: the pacer's RFC 9002 rate.
    rate: Option<u64>,
}

impl Fixed {
    pub fn new(config: &FixedConfig, max_datagram_size: u64) -> Self {
        Fixed {
            window: config.window_packets.saturating_mul(max_datagram_size),
            // Mbit/s -> bytes/s; at least 125 for a validated rate.
            rate: config
                .pacing_rate_mbps
                .map(|mbps| (mbps * 1e6 / 8.0).round() as u64),
        }
    }
}

impl CongestionController for Fixed {
    fn on_packet_sent(&mut self, _: Instant, _: u64, _: u64) {}
    fn on_packet_acked(&mut self, _: Instant, _: Instant, _: u64, _: bool, _: &RttEstimator) {}
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {}
    fn window(&self) -> u64 {
        self.window
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn in_slow_start(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportConfig;

    #[test]
    fn window_and_rate_stay_fixed() {
        let cfg = FixedConfig {
            window_packets: 100,
            pacing_rate_mbps: Some(200.0),
        };
        let mut f = Fixed::new(&cfg, 1200);
        assert_eq!(f.window(), 120_000);
        assert_eq!(f.pacing_rate(), Some(25_000_000));
        let rtt = RttEstimator::new(std::time::Duration::from_millis(10));
        f.on_packet_acked(Instant::ZERO, Instant::ZERO, 1200, false, &rtt);
        f.on_congestion_event(Instant::ZERO, Instant::ZERO, true, 12_000);
        assert_eq!((f.window(), f.pacing_rate()), (120_000, Some(25_000_000)));
        let unpaced = Fixed::new(&FixedConfig::default(), 1200);
        assert_eq!(unpaced.pacing_rate(), None);
    }

    #[test]
    fn parses_from_toml_and_validates() {
        let c: TransportConfig = toml::from_str(
            "congestion_control = { algorithm = \"fixed\", window_packets = 50, pacing_rate_mbps = 100 }",
        )
        .unwrap();
        c.validate().unwrap();
        assert_eq!(c.congestion_control.build(1200).window(), 60_000);
        assert_eq!(
            c.congestion_control.build(1200).pacing_rate(),
            Some(12_500_000)
        );
        for (bad, key) in [
            ("window_packets = 0", "congestion_control.window_packets"),
            (
                "pacing_rate_mbps = 0",
                "congestion_control.pacing_rate_mbps",
            ),
            (
                "pacing_rate_mbps = -5",
                "congestion_control.pacing_rate_mbps",
            ),
        ] {
            let text = format!("congestion_control = {{ algorithm = \"fixed\", {bad} }}");
            let c: TransportConfig = toml::from_str(&text).unwrap();
            assert_eq!(c.validate().unwrap_err().key, key, "{bad}");
        }
    }
}
