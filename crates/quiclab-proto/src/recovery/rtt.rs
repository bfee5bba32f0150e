//! RTT estimation exactly as RFC 9002 §5.
//!
//! All arithmetic is on whole nanoseconds (u128 intermediates, saturating back to
//! `Duration`), so runs are bit-for-bit reproducible.

use std::time::Duration;

/// RFC 9002 §6.1.2: kGranularity.
pub const GRANULARITY: Duration = Duration::from_millis(1);

/// min_rtt, smoothed_rtt, rttvar and latest_rtt (RFC 9002 §5). Before the first sample,
/// smoothed = initial_rtt and rttvar = initial_rtt / 2 (§5.3, §6.2.2).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// latest_rtt; zero before the first sample (RFC 9002 A.3).
    latest: Duration,
    smoothed: Duration,
    rttvar: Duration,
    /// min_rtt; the initial RTT until the first sample replaces it.
    min: Duration,
    first_sample: Option<Duration>,
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

/// Back from u128 nanoseconds, saturating at `u64::MAX` ns (~584 years).
fn from_nanos(n: u128) -> Duration {
    Duration::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
}

impl RttEstimator {
    pub fn new(initial_rtt: Duration) -> Self {
        // RFC 9002 §5.3 / A.3: smoothed = kInitialRtt, rttvar = kInitialRtt / 2.
        RttEstimator {
            latest: Duration::ZERO,
            smoothed: initial_rtt,
            rttvar: initial_rtt / 2,
            min: initial_rtt,
            first_sample: None,
        }
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
        self.latest = latest_rtt;
        if self.first_sample.is_none() {
            // RFC 9002 §5.3: the first sample initialises everything.
            self.first_sample = Some(latest_rtt);
            self.min = latest_rtt;
            self.smoothed = latest_rtt;
            self.rttvar = latest_rtt / 2;
            return;
        }
        // RFC 9002 §5.2: min_rtt ignores ack delay.
        self.min = self.min.min(latest_rtt);
        // RFC 9002 §5.3: cap by max_ack_delay only after handshake confirmation.
        let ack_delay = if handshake_confirmed {
            ack_delay.min(max_ack_delay)
        } else {
            ack_delay
        };
        // RFC 9002 §5.3: never adjust below min_rtt (saturating: ack_delay is peer input).
        let adjusted = if nanos(latest_rtt) >= nanos(self.min) + nanos(ack_delay) {
            latest_rtt - ack_delay
        } else {
            latest_rtt
        };
        let (s, v, a) = (nanos(self.smoothed), nanos(self.rttvar), nanos(adjusted));
        let sample = s.abs_diff(a);
        // RFC 9002 §5.3: rttvar = 3/4 rttvar + 1/4 |smoothed - adjusted| (old smoothed),
        // smoothed = 7/8 smoothed + 1/8 adjusted; one rounding (down) each.
        self.rttvar = from_nanos((3 * v + sample) / 4);
        self.smoothed = from_nanos((7 * s + a) / 8);
    }

    pub fn smoothed(&self) -> Duration {
        self.smoothed
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// min_rtt; the initial RTT before any sample.
    pub fn min(&self) -> Duration {
        self.min
    }
    /// latest_rtt; zero before any sample.
    pub fn latest(&self) -> Duration {
        self.latest
    }
    /// The first sample taken, if any.
    pub fn first_sample(&self) -> Option<Duration> {
        self.first_sample
    }
    pub fn has_sample(&self) -> bool {
        self.first_sample().is_some()
    }
    /// smoothed_rtt + max(4 * rttvar, kGranularity): the PTO without max_ack_delay (§6.2.1).
    pub fn pto_base(&self) -> Duration {
        let var = from_nanos(4 * nanos(self.rttvar)).max(GRANULARITY);
        self.smoothed.saturating_add(var)
    }
    /// max(time_threshold * max(smoothed_rtt, latest_rtt), kGranularity) (§6.1.2).
    ///
    /// The RFC's 9/8 is computed in integers; other thresholds go through one f64
    /// multiplication (exact for RTTs below 2^53 ns), rounded down.
    pub fn loss_delay(&self, time_threshold: f64) -> Duration {
        let base = nanos(self.smoothed.max(self.latest));
        let d = if time_threshold == 1.125 {
            from_nanos(base * 9 / 8)
        } else {
            // `as` saturates and maps NaN/negatives to zero: no panic on odd configs.
            Duration::from_nanos((base as f64 * time_threshold) as u64)
        };
        d.max(GRANULARITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn initial_state() {
        let r = RttEstimator::new(MS(333));
        assert_eq!(r.smoothed(), MS(333));
        assert_eq!(r.rttvar(), Duration::from_micros(166_500));
        assert_eq!(r.min(), MS(333));
        assert_eq!(r.latest(), Duration::ZERO);
        assert!(!r.has_sample());
        // 333 + 4 * 166.5 = 999 ms.
        assert_eq!(r.pto_base(), MS(999));
    }

    #[test]
    fn first_sample_ignores_ack_delay() {
        let mut r = RttEstimator::new(MS(333));
        r.update(MS(100), MS(50), true, MS(25));
        assert_eq!(r.smoothed(), MS(100));
        assert_eq!(r.rttvar(), MS(50));
        assert_eq!(r.min(), MS(100));
        assert_eq!(r.latest(), MS(100));
        assert_eq!(r.first_sample(), Some(MS(100)));
    }

    #[test]
    fn subsequent_samples_hand_computed() {
        let mut r = RttEstimator::new(MS(333));
        r.update(MS(100), Duration::ZERO, false, MS(25));
        // latest 120, ack_delay 10 (not capped: unconfirmed), 120 >= 100 + 10: adj = 110.
        // rttvar = 3/4*50 + 1/4*|100-110| = 37.5 + 2.5 = 40; smoothed = 87.5 + 13.75 = 101.25.
        r.update(MS(120), MS(10), false, MS(25));
        assert_eq!(r.rttvar(), MS(40));
        assert_eq!(r.smoothed(), Duration::from_micros(101_250));
        assert_eq!(r.min(), MS(100));
        // latest 90: new min_rtt 90 (ack delay ignored); 90 < 90 + 5 so no adjustment.
        // rttvar = 30 + 1/4*11.25 = 32.8125; smoothed = 7/8*101.25 + 11.25 = 99.84375.
        r.update(MS(90), MS(5), false, MS(25));
        assert_eq!(r.min(), MS(90));
        assert_eq!(r.rttvar(), Duration::from_nanos(32_812_500));
        assert_eq!(r.smoothed(), Duration::from_nanos(99_843_750));
    }

    #[test]
    fn ack_delay_capped_only_when_confirmed() {
        let mk = || {
            let mut r = RttEstimator::new(MS(333));
            r.update(MS(100), Duration::ZERO, false, MS(25));
            r
        };
        // Unconfirmed: 200 - 80 = 120 used. smoothed = 87.5 + 15 = 102.5.
        let mut a = mk();
        a.update(MS(200), MS(80), false, MS(25));
        assert_eq!(a.smoothed(), Duration::from_micros(102_500));
        // Confirmed: delay capped at 25, adj = 175; smoothed = 87.5 + 21.875 = 109.375.
        let mut b = mk();
        b.update(MS(200), MS(80), true, MS(25));
        assert_eq!(b.smoothed(), Duration::from_micros(109_375));
        // rttvar = 37.5 + 1/4*75 = 56.25.
        assert_eq!(b.rttvar(), Duration::from_micros(56_250));
    }

    #[test]
    fn huge_peer_ack_delay_does_not_panic() {
        let mut r = RttEstimator::new(MS(333));
        r.update(MS(100), Duration::ZERO, false, MS(25));
        r.update(MS(100), Duration::MAX, false, MS(25));
        assert_eq!(r.smoothed(), MS(100));
    }

    #[test]
    fn loss_delay_and_pto() {
        let mut r = RttEstimator::new(MS(333));
        r.update(MS(80), Duration::ZERO, false, MS(25));
        // max(smoothed 80, latest 80) * 9/8 = 90.
        assert_eq!(r.loss_delay(9.0 / 8.0), MS(90));
        assert_eq!(r.loss_delay(1.5), MS(120));
        // 80 + 4 * 40 = 240.
        assert_eq!(r.pto_base(), MS(240));
        let mut tiny = RttEstimator::new(MS(333));
        tiny.update(Duration::from_micros(100), Duration::ZERO, false, MS(25));
        assert_eq!(tiny.loss_delay(1.125), GRANULARITY);
        // smoothed 100us + max(4 * 50us, 1ms) = 1.1ms.
        assert_eq!(tiny.pto_base(), Duration::from_micros(1_100));
    }
}
