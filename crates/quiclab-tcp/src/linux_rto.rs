//! Linux's retransmission timeout (`[flows.tcp] rto = "linux"`): the RTT variance
//! estimator of tcp_rtt_estimator and the RTO of tcp_set_rto, next to RFC 6298's.
//!
//! RFC 6298 §2.3 sets RTO = SRTT + max(G, 4 · RTTVAR) and then raises it to the
//! minimum RTO (Linux's 200 ms makes that about 200 ms on a steady path). Linux keeps
//! the same SRTT (gain 1/8) and a mean deviation `mdev` (4 · RTTVAR, gain 1/4, but
//! only 1/32 when the RTT falls, so a drop in RTT does not raise the RTO), and adds
//! to SRTT the largest `mdev` of the last round trip, never less than the minimum
//! RTO: RTO = SRTT + max(mdev over the last round trip, 200 ms), about 388 ms on a
//! steady 188 ms path. Between round trips the variance decays a quarter of the way
//! towards the last round's largest `mdev`. Before the first sample the RTO is the
//! initial one (RFC 6298 §2.1: 1 s), and it backs off exponentially (§5.5), as with
//! RFC 6298.
#![deny(clippy::arithmetic_side_effects)]

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How the retransmission timeout is computed from the RTT samples.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RtoAlgorithm {
    /// RFC 6298 §2: max(SRTT + max(G, 4 · RTTVAR), `min_rto_ms`) (default).
    #[default]
    Rfc6298,
    /// Linux's: SRTT + max(mdev over the last round trip, `min_rto_ms`).
    Linux,
}

impl RtoAlgorithm {
    pub fn is_rfc6298(&self) -> bool {
        *self == RtoAlgorithm::Rfc6298
    }
}

/// Linux's variance state (tcp_sock's mdev_us, mdev_max_us, rttvar_us, rtt_seq), in
/// nanoseconds; `mdev` is four times the mean deviation, as Linux stores it.
#[derive(Clone, Debug, Default)]
pub struct LinuxRttVar {
    mdev: u64,
    mdev_max: u64,
    rttvar: u64,
    /// SND.NXT (a stream offset) when the current round trip began: once SND.UNA
    /// passes it, the round is over.
    rtt_seq: u64,
    sampled: bool,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl LinuxRttVar {
    /// One RTT sample. `srtt`: the smoothed RTT before this sample (ignored for the
    /// first); `una` / `nxt`: SND.UNA after the ACK and SND.NXT; `rto_min`: the
    /// minimum RTO.
    pub fn on_sample(
        &mut self,
        srtt: Duration,
        sample: Duration,
        una: u64,
        nxt: u64,
        rto_min: Duration,
    ) {
        let (m, min) = (nanos(sample), nanos(rto_min));
        if !self.sampled {
            // The first sample: RTO = 3 · RTT (RFC 6298 §2.2's RTTVAR = R/2, times 4).
            self.sampled = true;
            self.mdev = m.saturating_mul(2);
            self.rttvar = self.mdev.max(min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = nxt;
            return;
        }
        let srtt = nanos(srtt);
        let quarter = self.mdev / 4;
        if m >= srtt {
            // mdev += |err| - mdev/4: gain 1/4.
            let err = m.saturating_sub(srtt);
            self.mdev = self.mdev.saturating_sub(quarter).saturating_add(err);
        } else {
            // The RTT fell: gain 1/32 when the error exceeds mdev/4, else as above
            // (Linux's "finer gain" like Eifel's, so the RTO does not grow on a drop).
            let err = srtt.saturating_sub(m);
            if err > quarter {
                self.mdev = self.mdev.saturating_add(err.saturating_sub(quarter) / 8);
            } else {
                self.mdev = self.mdev.saturating_sub(quarter).saturating_add(err);
            }
        }
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if una > self.rtt_seq {
            // A round trip ended: decay towards its largest mdev, start the next.
            if self.mdev_max < self.rttvar {
                self.rttvar = self
                    .rttvar
                    .saturating_sub(self.rttvar.saturating_sub(self.mdev_max) / 4);
            }
            self.rtt_seq = nxt;
            self.mdev_max = min;
        }
    }

    /// The variance term Linux adds to SRTT (at least the minimum RTO once sampled).
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos(self.rttvar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_millis(200);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn first_sample_gives_three_rtts_then_decays_to_the_minimum() {
        let mut v = LinuxRttVar::default();
        v.on_sample(ms(0), ms(188), 0, 5, MIN);
        // RTO = 188 + max(2 · 188, 200) = 564 ms, as RFC 6298's 188 + 4 · 94.
        assert_eq!(v.rttvar(), ms(376));
        // One sample per round at a steady 188 ms: mdev loses a quarter per sample;
        // the variance stays while the round's largest mdev (at least 200 ms) is not
        // below it, then moves a quarter of the way towards it each round.
        let mut una = 0;
        let (mut mdev, mut round_max, mut rttvar) = (376.0f64, 376.0f64, 376.0f64);
        for _ in 0..60 {
            una += 10;
            v.on_sample(ms(188), ms(188), una, una + 5, MIN);
            mdev *= 0.75;
            round_max = round_max.max(mdev);
            rttvar -= (rttvar - round_max).max(0.0) / 4.0;
            round_max = 200.0;
            let got = v.rttvar().as_secs_f64() * 1e3;
            assert!((got - rttvar).abs() < 0.01, "{got} vs {rttvar}");
        }
        assert!(
            v.rttvar() - MIN < Duration::from_micros(10),
            "{:?}",
            v.rttvar()
        );
    }

    #[test]
    fn a_spike_raises_the_variance_at_once_and_a_drop_barely() {
        let mut v = LinuxRttVar::default();
        v.on_sample(ms(0), ms(100), 0, 10, MIN);
        for una in 1..40 {
            v.on_sample(ms(100), ms(100), una * 10, una * 10 + 10, MIN);
        }
        let floor = v.rttvar();
        assert!(floor - MIN < ms(1));
        // A sample 300 ms above SRTT: mdev = 3/4 · ~0 + 300 ms, above the floor.
        v.on_sample(ms(100), ms(400), 400, 410, MIN);
        assert!(v.rttvar().abs_diff(ms(300)) < ms(1), "{:?}", v.rttvar());
        // A sample 90 ms below SRTT after a steady period moves mdev by 1/32 only.
        let mut w = LinuxRttVar::default();
        w.on_sample(ms(0), ms(100), 0, 10, MIN);
        for una in 1..40 {
            w.on_sample(ms(100), ms(100), una * 10, una * 10 + 10, MIN);
        }
        let before = w.mdev;
        w.on_sample(ms(100), ms(10), 395, 400, MIN);
        let grew = w.mdev.saturating_sub(before);
        let quarter = before / 4;
        assert_eq!(grew, (nanos(ms(90)) - quarter) / 8);
    }
}
