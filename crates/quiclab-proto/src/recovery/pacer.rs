//! Pacing (RFC 9002 §7.7): a token bucket filled at 1.25 · cwnd / smoothed_rtt that holds
//! at most a burst of packets, so the window is spread over the RTT instead of being sent
//! in one line-rate burst. Integer nanosecond/byte arithmetic only.

use crate::time::Instant;
use std::time::Duration;

/// Burst allowance in packets (RFC 9002 §7.7 suggests limiting bursts to the initial
/// window, i.e. about 10 packets).
pub const DEFAULT_BURST_PACKETS: u64 = 10;

/// Token-bucket pacer for one path.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Bucket size in bytes.
    capacity: u64,
    /// Bytes that may leave now (as of `last`).
    tokens: u64,
    /// When `tokens` was last brought up to date; `None` before the first send.
    last: Option<Instant>,
}

/// rate · elapsed in bytes, with rate = 5/4 · cwnd / srtt (RFC 9002 §7.7, N = 1.25).
fn earned(elapsed: Duration, cwnd: u64, srtt: Duration) -> u64 {
    let srtt = srtt.as_nanos().max(1);
    let b = elapsed.as_nanos() * 5 * u128::from(cwnd) / (4 * srtt);
    u64::try_from(b).unwrap_or(u64::MAX)
}

impl Pacer {
    /// A pacer allowing bursts of [`DEFAULT_BURST_PACKETS`] datagrams.
    pub fn new(max_datagram_size: u64) -> Self {
        Self::with_burst(DEFAULT_BURST_PACKETS.saturating_mul(max_datagram_size))
    }

    /// A pacer whose bucket holds `burst_bytes` (starts full).
    pub fn with_burst(burst_bytes: u64) -> Self {
        let capacity = burst_bytes.max(1);
        Pacer {
            capacity,
            tokens: capacity,
            last: None,
        }
    }

    /// Tokens available at `now`, and the time they are counted from. The clock only
    /// advances once a whole byte was earned, so very frequent calls do not starve the
    /// bucket; each refill drops under one byte of rounding.
    fn refill(&self, now: Instant, cwnd: u64, srtt: Duration) -> (u64, Instant) {
        let Some(last) = self.last else {
            return (self.tokens, now);
        };
        let gained = earned(now - last, cwnd, srtt);
        if gained == 0 {
            return (self.tokens, last);
        }
        (self.tokens.saturating_add(gained).min(self.capacity), now)
    }

    /// When a packet of `bytes` may be sent: `None` = now (or pacing does not apply:
    /// no RTT estimate, or an unlimited window); else the earliest instant.
    pub fn next_send_time(
        &self,
        now: Instant,
        bytes: u64,
        cwnd: u64,
        srtt: Duration,
    ) -> Option<Instant> {
        if srtt.is_zero() || cwnd == u64::MAX || cwnd == 0 {
            return None;
        }
        let (tokens, _) = self.refill(now, cwnd, srtt);
        // A packet bigger than the bucket waits for a full bucket, not forever.
        let need = bytes.min(self.capacity);
        if tokens >= need {
            return None;
        }
        // Smallest wait with earned(wait) >= need - tokens: ceil(missing·4·srtt / (5·cwnd)).
        let missing = u128::from(need - tokens);
        let num = missing * 4 * srtt.as_nanos();
        let den = 5 * u128::from(cwnd);
        let wait = u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX);
        Some(now.saturating_add(Duration::from_nanos(wait)))
    }

    /// A packet of `bytes` was sent at `now`: spend its tokens (never below zero).
    pub fn on_sent(&mut self, now: Instant, bytes: u64, cwnd: u64, srtt: Duration) {
        let (tokens, at) = if srtt.is_zero() || cwnd == u64::MAX {
            (self.capacity, now)
        } else {
            self.refill(now, cwnd, srtt)
        };
        self.tokens = tokens.saturating_sub(bytes);
        self.last = Some(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: u64 = 1200;

    #[test]
    fn burst_then_paced() {
        let srtt = Duration::from_millis(100);
        let cwnd = 120_000; // rate 1.25 * 120000 / 100 ms = 1500 bytes per ms.
        let mut p = Pacer::new(MDS);
        let t0 = Instant::from_millis(1_000);
        for _ in 0..10 {
            assert_eq!(p.next_send_time(t0, MDS, cwnd, srtt), None);
            p.on_sent(t0, MDS, cwnd, srtt);
        }
        // Bucket empty: 1200 bytes take 0.8 ms.
        let next = p.next_send_time(t0, MDS, cwnd, srtt).unwrap();
        assert_eq!(next, t0 + Duration::from_micros(800));
        assert_eq!(p.next_send_time(next, MDS, cwnd, srtt), None);
        p.on_sent(next, MDS, cwnd, srtt);
        // Sending on schedule for one RTT (both ends included) moves 1.25 windows.
        let (mut now, mut sent) = (next, 0u64);
        while now <= next + srtt {
            match p.next_send_time(now, MDS, cwnd, srtt) {
                None => {
                    p.on_sent(now, MDS, cwnd, srtt);
                    sent += MDS;
                }
                Some(t) => now = t,
            }
        }
        assert_eq!(sent, cwnd * 5 / 4);
    }

    #[test]
    fn refills_to_burst_only() {
        let srtt = Duration::from_millis(10);
        let mut p = Pacer::with_burst(2 * MDS);
        let t0 = Instant::ZERO;
        p.on_sent(t0, 2 * MDS, 12_000, srtt);
        // After a long idle period only the burst is available.
        let later = Instant::from_millis(500);
        assert_eq!(p.next_send_time(later, MDS, 12_000, srtt), None);
        p.on_sent(later, MDS, 12_000, srtt);
        p.on_sent(later, MDS, 12_000, srtt);
        assert!(p.next_send_time(later, MDS, 12_000, srtt).is_some());
        // Oversized packets wait for a full bucket rather than forever.
        assert!(p.next_send_time(later, 10 * MDS, 12_000, srtt).is_some());
    }

    #[test]
    fn no_pacing_without_estimate_or_window() {
        let mut p = Pacer::with_burst(MDS);
        p.on_sent(Instant::ZERO, MDS, 12_000, Duration::from_millis(10));
        assert!(p
            .next_send_time(Instant::ZERO, MDS, 12_000, Duration::ZERO)
            .is_none());
        assert!(p
            .next_send_time(Instant::ZERO, MDS, u64::MAX, Duration::from_millis(10))
            .is_none());
    }
}
