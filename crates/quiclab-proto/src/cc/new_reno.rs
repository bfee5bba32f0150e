//! NewReno as specified in RFC 9002 §7 and Appendix B.

use super::CongestionController;
use crate::recovery::RttEstimator;
use crate::time::Instant;

/// How the window grows in congestion avoidance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowGrowth {
    /// RFC 9002 B.5: cwnd += max_datagram_size * acked_bytes / cwnd per ACKed packet.
    #[default]
    Approximate,
    /// Exact byte counting (RFC 3465): one max_datagram_size per full cwnd acknowledged.
    Exact,
}

/// NewReno's knobs; defaults are RFC 9002's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Initial window in packets; `None` = RFC 9002 §7.2: min(10 * mds, max(2 * mds, 14720)).
    pub initial_window_packets: Option<u64>,
    /// Minimum window in packets (RFC 9002: 2).
    pub minimum_window_packets: u64,
    /// kLossReductionFactor (RFC 9002: 0.5).
    pub loss_reduction_factor: f64,
    pub growth: WindowGrowth,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            initial_window_packets: None,
            minimum_window_packets: 2,
            loss_reduction_factor: 0.5,
            growth: WindowGrowth::Approximate,
        }
    }
}

/// RFC 9002 NewReno.
#[derive(Debug)]
pub struct NewReno {
    _config: NewRenoConfig,
}

impl NewReno {
    pub fn new(config: NewRenoConfig, max_datagram_size: u64) -> Self {
        let _ = max_datagram_size;
        let _ = config;
        todo!("H3")
    }
}

impl CongestionController for NewReno {
    fn on_packet_sent(&mut self, _now: Instant, _bytes: u64, _bytes_in_flight: u64) {
        todo!("H3")
    }
    fn on_packet_acked(
        &mut self,
        _now: Instant,
        _sent_time: Instant,
        _bytes: u64,
        _app_limited: bool,
        _rtt: &RttEstimator,
    ) {
        todo!("H3")
    }
    fn on_congestion_event(
        &mut self,
        _now: Instant,
        _sent: Instant,
        _persistent: bool,
        _lost: u64,
    ) {
        todo!("H3")
    }
    fn window(&self) -> u64 {
        todo!("H3")
    }
    fn ssthresh(&self) -> u64 {
        todo!("H3")
    }
    fn in_slow_start(&self) -> bool {
        todo!("H3")
    }
    fn name(&self) -> &'static str {
        "new_reno"
    }
}
