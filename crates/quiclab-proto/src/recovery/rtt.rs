//! RTT estimation exactly as RFC 9002 §5.

use std::time::Duration;

/// RFC 9002 §6.1.2: kGranularity.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// min_rtt, smoothed_rtt, rttvar and latest_rtt (RFC 9002 §5). Before the first sample,
/// smoothed = initial_rtt and rttvar = initial_rtt / 2 (§5.3, §6.2.2).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    _p: (),
}

impl RttEstimator {
    pub fn new(initial_rtt: Duration) -> Self {
        let _ = initial_rtt;
        todo!("H3")
    }

    /// Takes an RTT sample (RFC 9002 §5.1-5.3): `ack_delay` is the peer's reported delay,
    /// ignored for the first sample, capped at `max_ack_delay` once the handshake is
    /// confirmed, and subtracted only when that leaves at least min_rtt.
    pub fn update(
        &mut self,
        latest_rtt: Duration,
        ack_delay: Duration,
        handshake_confirmed: bool,
        max_ack_delay: Duration,
    ) {
        let _ = (latest_rtt, ack_delay, handshake_confirmed, max_ack_delay);
        todo!("H3")
    }

    pub fn smoothed(&self) -> Duration {
        todo!("H3")
    }
    pub fn rttvar(&self) -> Duration {
        todo!("H3")
    }
    /// min_rtt; the initial RTT before any sample.
    pub fn min(&self) -> Duration {
        todo!("H3")
    }
    pub fn latest(&self) -> Duration {
        todo!("H3")
    }
    /// The first sample taken, if any.
    pub fn first_sample(&self) -> Option<Duration> {
        todo!("H3")
    }
    pub fn has_sample(&self) -> bool {
        self.first_sample().is_some()
    }
    /// smoothed_rtt + max(4 * rttvar, kGranularity): the PTO without max_ack_delay (§6.2.1).
    pub fn pto_base(&self) -> Duration {
        todo!("H3")
    }
    /// max(time_threshold * max(smoothed_rtt, latest_rtt), kGranularity) (§6.1.2).
    pub fn loss_delay(&self, time_threshold: f64) -> Duration {
        let _ = time_threshold;
        todo!("H3")
    }
}
