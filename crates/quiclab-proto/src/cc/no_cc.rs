//! No congestion control: an unlimited window, for validation experiments.

use super::CongestionController;
use crate::recovery::RttEstimator;
use crate::time::Instant;

/// A controller that never limits sending.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCongestionControl;

impl CongestionController for NoCongestionControl {
    fn on_packet_sent(&mut self, _: Instant, _: u64, _: u64) {}
    fn on_packet_acked(&mut self, _: Instant, _: Instant, _: u64, _: bool, _: &RttEstimator) {}
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {}
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn in_slow_start(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "none"
    }
}
