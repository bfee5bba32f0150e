//! The pacing rate's multiple of cwnd / SRTT when `pacing` is on: QUIC's constant 1.25
//! (RFC 9002 §7.7, the default) or Linux's, which paces slow start at twice the current
//! rate and the rest at 1.2 times (tcp_update_pacing_rate, sysctls
//! tcp_pacing_ss_ratio = 200 and tcp_pacing_ca_ratio = 120).

use quiclab_proto::PacingRate;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `pacing_ratio`: how the pacing rate follows the window.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PacingRatio {
    /// RFC 9002 §7.7's 1.25 · cwnd / SRTT, as quiclab's QUIC paces (default).
    #[default]
    Rfc9002,
    /// Linux's: 2 · max(cwnd, in flight) / SRTT while cwnd < ssthresh / 2 (deep in slow
    /// start), else 1.2 · max(cwnd, in flight) / SRTT.
    Linux,
}

/// Linux's tcp_pacing_ss_ratio and tcp_pacing_ca_ratio, percent (their defaults).
const LINUX_SS_PERCENT: u64 = 200;
const LINUX_CA_PERCENT: u64 = 120;

impl PacingRatio {
    pub fn is_rfc9002(&self) -> bool {
        *self == PacingRatio::Rfc9002
    }

    /// The pacing rate for a window of `cwnd` bytes with `ssthresh` and `in_flight`
    /// bytes outstanding; `None` without an RTT estimate or with an empty or unlimited
    /// window (no pacing).
    pub fn rate(
        &self,
        cwnd: u64,
        ssthresh: u64,
        in_flight: u64,
        srtt: Duration,
    ) -> Option<PacingRate> {
        match self {
            PacingRatio::Rfc9002 => PacingRate::from_window(cwnd, srtt),
            PacingRatio::Linux => {
                // tcp_update_pacing_rate: "approaching the end of slow start" from
                // ssthresh / 2 on, where it slows to the congestion-avoidance ratio.
                let percent = if cwnd < ssthresh / 2 {
                    LINUX_SS_PERCENT
                } else {
                    LINUX_CA_PERCENT
                };
                PacingRate::from_window_percent(cwnd.max(in_flight), srtt, percent)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRTT: Duration = Duration::from_millis(100);

    #[test]
    fn linux_paces_slow_start_at_twice_and_the_rest_at_1_2_times_the_window_rate() {
        let linux = PacingRatio::Linux;
        // 100 kB per 100 ms is 1 MB/s: 2 MB/s in slow start (cwnd < ssthresh / 2).
        let ss = linux.rate(100_000, u64::MAX, 0, SRTT).unwrap();
        assert_eq!(ss.bytes_per_sec(), 2_000_000);
        // From ssthresh / 2 on, and in congestion avoidance: 1.2 MB/s.
        let near = linux.rate(100_000, 200_000, 0, SRTT).unwrap();
        assert_eq!(near.bytes_per_sec(), 1_200_000);
        let ca = linux.rate(100_000, 100_000, 0, SRTT).unwrap();
        assert_eq!(ca.bytes_per_sec(), 1_200_000);
        // More in flight than the window (after a reduction): the flight counts.
        let flight = linux.rate(100_000, 100_000, 150_000, SRTT).unwrap();
        assert_eq!(flight.bytes_per_sec(), 1_800_000);
    }

    #[test]
    fn rfc9002_is_quics_1_25() {
        let r = PacingRatio::Rfc9002
            .rate(100_000, u64::MAX, 0, SRTT)
            .unwrap();
        assert_eq!(r.bytes_per_sec(), 1_250_000);
        assert!(PacingRatio::Linux
            .rate(100_000, u64::MAX, 0, Duration::ZERO)
            .is_none());
        assert!(PacingRatio::Linux
            .rate(u64::MAX, u64::MAX, 0, SRTT)
            .is_none());
    }
}
