//! Congestion control behind a trait, one file per controller (RFC 9002 §7).

mod cubic;
mod hystart;
mod new_reno;
mod no_cc;
mod recovery_period;

pub use cubic::{Cubic, CubicConfig};
pub use hystart::{Hystart, HystartConfig, HystartPhase, SlowStartStep};
pub use new_reno::{NewReno, NewRenoConfig, WindowGrowth};
pub use no_cc::NoCongestionControl;

use crate::events::CongestionState;
use crate::recovery::RttEstimator;
use crate::time::Instant;
use std::fmt::Debug;

/// A congestion controller. The connection calls it in this order per event:
/// `on_packet_sent` for each in-flight packet; on an ACK, `on_packet_acked` for each newly
/// acknowledged in-flight packet (after the RTT update), then `on_congestion_event` once
/// if packets were declared lost.
pub trait CongestionController: Debug + Send {
    /// An in-flight packet of `bytes` left; `bytes_in_flight` includes it.
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64);
    /// An in-flight packet sent at `sent_time` was acknowledged. `app_limited`: the
    /// sender was not using the window (RFC 9002 §7.8), so the window must not grow.
    fn on_packet_acked(
        &mut self,
        now: Instant,
        sent_time: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    );
    /// Packets were lost; `largest_lost_sent_time` is the send time of the newest lost
    /// packet (RFC 9002 §7.3.2: one reduction per recovery period). `persistent`: §7.6.
    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        lost_bytes: u64,
    );
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow start threshold in bytes (`u64::MAX` while unset).
    fn ssthresh(&self) -> u64;
    fn in_slow_start(&self) -> bool;
    fn name(&self) -> &'static str;
    /// Whether a recovery period is running (RFC 9002 §7.3.2): entered on a congestion
    /// event, left when a packet sent after its start is acknowledged.
    fn in_recovery(&self) -> bool {
        false
    }
    /// The state for qlog `congestion_state_updated`. Application-limited is the
    /// connection's knowledge, so it is never reported here.
    fn congestion_state(&self) -> CongestionState {
        if self.in_recovery() {
            CongestionState::Recovery
        } else if self.in_slow_start() {
            CongestionState::SlowStart
        } else {
            CongestionState::CongestionAvoidance
        }
    }
}

/// Which controller a connection runs; part of the serde transport config.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "algorithm", rename_all = "snake_case", deny_unknown_fields)]
pub enum CongestionControl {
    NewReno(NewRenoConfig),
    /// CUBIC (RFC 9438).
    Cubic(CubicConfig),
    /// No congestion control: the window is unlimited (flow control still applies), for
    /// validation experiments.
    None,
}

impl Default for CongestionControl {
    fn default() -> Self {
        CongestionControl::NewReno(NewRenoConfig::default())
    }
}

impl CongestionControl {
    /// A fresh controller for a path whose maximum datagram size is `max_datagram_size`.
    pub fn build(&self, max_datagram_size: u64) -> Box<dyn CongestionController> {
        match self {
            CongestionControl::NewReno(c) => Box::new(NewReno::new(c.clone(), max_datagram_size)),
            CongestionControl::Cubic(c) => Box::new(Cubic::new(c.clone(), max_datagram_size)),
            CongestionControl::None => Box::new(NoCongestionControl),
        }
    }
}

/// RFC 9002 §7.2 initial window in bytes: `packets` * mds if configured, else
/// min(10 * mds, max(2 * mds, 14720)).
fn initial_window(packets: Option<u64>, mds: u64) -> u64 {
    match packets {
        Some(p) => p.saturating_mul(mds),
        None => (10 * mds).min((2 * mds).max(14_720)),
    }
}
