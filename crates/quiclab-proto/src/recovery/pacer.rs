//! Pacing (RFC 9002 §7.7): a token bucket filled at the pacing rate that holds at most a
//! burst of packets, so the window is spread over the RTT instead of being sent in one
//! line-rate burst. The rate is RFC 9002's 1.25 · cwnd / smoothed_rtt unless the
//! congestion controller sets one (BBR, draft-ietf-ccwg-bbr §5.6.2). Integer
//! nanosecond/byte arithmetic only.

use crate::time::Instant;
use std::time::Duration;

/// Burst allowance in packets (RFC 9002 §7.7 suggests limiting bursts to the initial
/// window, i.e. about 10 packets).
pub const DEFAULT_BURST_PACKETS: u64 = 10;

/// Most packets a time-bounded burst may hold: one GSO batch of the real-UDP driver
/// (Linux caps a GSO send at 64 segments).
pub const MAX_BURST_PACKETS: u64 = 64;

/// A time-bounded burst may also hold two full GSO sends (a GSO send is one UDP
/// datagram to the kernel, at most 65,507 bytes), whichever is more: 90 datagrams of
/// 1,452 bytes rather than 52, so a burst is two full `sendmsg` calls instead of one
/// full and one of 9 datagrams (issue 29; docs/performance-history.md, 2026-11-29).
/// RFC 9002 §7.7: a sender that knows the path absorbs larger bursts MAY use a larger
/// limit; the bucket still never holds more than the interval's worth of the rate.
pub const MAX_BURST_BYTES: u64 = 2 * 65_507;

/// How large a burst the bucket holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Burst {
    /// A fixed number of bytes.
    Fixed(u64),
    /// What the pacing rate earns in `ns` nanoseconds, within `[min, max]` bytes. For
    /// a real host whose timers cannot wake for every packet at high rates (Linux's
    /// TCP sizes its TSO bursts to ~1 ms of the pacing rate; quinn to 2 ms of the
    /// window's rate). RFC 9002 §7.7: a sender that knows the path absorbs larger
    /// bursts MAY use a larger limit than the initial window.
    Interval { ns: u64, min: u64, max: u64 },
}

/// Token-bucket pacer for one path.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Burst size rule (the bucket's capacity).
    burst: Burst,
    /// Bytes that may leave now (as of `last`).
    tokens: u64,
    /// Time-bounded bursts only: the last burst emptied the bucket, so nothing leaves
    /// until a whole burst has been earned again (a wake-up for another reason, such
    /// as an ACK, does not release a partial one).
    refilling: bool,
    /// When `tokens` was last brought up to date; `None` before the first send.
    last: Option<Instant>,
    /// Time-bounded bursts only: the bucket's sizes at the rate of the last send
    /// (`on_sent` stores them). They are a pure function of the immutable `burst` and
    /// of the rate, so reusing them while the rate is the same gives the same answers
    /// (test `remembered_sizes_match_fresh_ones`); the rate changes only when an ACK
    /// moves the window or the RTT, so a real host's GSO burst of ~45 datagrams does
    /// its two divisions once instead of three times per datagram (issue 29).
    sizes: Option<Sizes>,
}

/// What a time-bounded bucket holds at `rate`, and what half its interval earns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sizes {
    rate: PacingRate,
    capacity: u64,
    half_interval: u64,
}

/// The rate the bucket fills at, as the exact fraction `num / den` bytes per nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacingRate {
    num: u128,
    den: u128,
}

impl PacingRate {
    /// RFC 9002 §7.7: 5/4 · cwnd / srtt (N = 1.25); `None` when pacing does not apply
    /// (no RTT estimate, or an empty or unlimited window).
    pub fn from_window(cwnd: u64, srtt: Duration) -> Option<Self> {
        if srtt.is_zero() || cwnd == u64::MAX || cwnd == 0 {
            return None;
        }
        Some(PacingRate {
            num: 5 * u128::from(cwnd),
            den: 4 * srtt.as_nanos().max(1),
        })
    }

    /// `percent` / 100 · cwnd / srtt (a TCP's pacing ratio: quiclab-tcp's
    /// `pacing_ratio`); `None` as for [`PacingRate::from_window`].
    pub fn from_window_percent(cwnd: u64, srtt: Duration, percent: u64) -> Option<Self> {
        if srtt.is_zero() || cwnd == u64::MAX || cwnd == 0 || percent == 0 {
            return None;
        }
        Some(PacingRate {
            num: u128::from(percent) * u128::from(cwnd),
            den: 100 * srtt.as_nanos().max(1),
        })
    }

    /// A rate set by the controller, in bytes per second; `None` for 0 (no pacing).
    pub fn from_bytes_per_sec(rate: u64) -> Option<Self> {
        (rate > 0).then(|| PacingRate {
            num: u128::from(rate),
            den: 1_000_000_000,
        })
    }

    /// The rate in bytes per second (rounded down), for logs.
    pub fn bytes_per_sec(&self) -> u64 {
        u64::try_from(self.num * 1_000_000_000 / self.den).unwrap_or(u64::MAX)
    }
}

/// `a · b / d` rounded down (`up`: rounded up), exactly. Runs on every datagram: when
/// all operands and the product fit in 64 bits (the usual case: nanoseconds since the
/// last send times a window), it avoids the u128 multiply and the slow software
/// 128-bit division; the result is the same either way.
fn mul_div(a: u128, b: u128, d: u128, up: bool) -> u128 {
    if let (Ok(a64), Ok(b64), Ok(d64)) = (u64::try_from(a), u64::try_from(b), u64::try_from(d)) {
        if let Some(p) = a64.checked_mul(b64) {
            return u128::from(if up { p.div_ceil(d64) } else { p / d64 });
        }
    }
    if up {
        (a * b).div_ceil(d)
    } else {
        a * b / d
    }
}

/// rate · elapsed in bytes.
fn earned(elapsed: Duration, rate: PacingRate) -> u64 {
    let b = mul_div(elapsed.as_nanos(), rate.num, rate.den, false);
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
            burst: Burst::Fixed(capacity),
            tokens: capacity,
            refilling: false,
            last: None,
            sizes: None,
        }
    }

    /// A pacer whose bucket holds what the pacing rate earns in `interval`, between
    /// [`DEFAULT_BURST_PACKETS`] datagrams of `max_datagram_size` and the larger of
    /// [`MAX_BURST_PACKETS`] such datagrams and [`MAX_BURST_BYTES`] (starts holding the
    /// minimum).
    pub fn with_burst_interval(max_datagram_size: u64, interval: Duration) -> Self {
        let min = DEFAULT_BURST_PACKETS
            .saturating_mul(max_datagram_size)
            .max(1);
        let max = MAX_BURST_PACKETS
            .saturating_mul(max_datagram_size)
            .max(MAX_BURST_BYTES)
            .max(min);
        let ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
        Pacer {
            burst: Burst::Interval { ns, min, max },
            tokens: min,
            refilling: false,
            last: None,
            sizes: None,
        }
    }

    /// The bucket's size in bytes at `rate`.
    fn capacity(&self, rate: Option<PacingRate>) -> u64 {
        match (self.burst, rate) {
            (Burst::Fixed(bytes), _) => bytes,
            (Burst::Interval { min, .. }, None) => min,
            (Burst::Interval { .. }, Some(rate)) => self.sizes(rate).capacity,
        }
    }

    /// A time-bounded bucket's sizes at `rate`: the remembered ones when `on_sent`
    /// stored them at this rate, else computed (the same values: see the field `sizes`).
    #[inline]
    fn sizes(&self, rate: PacingRate) -> Sizes {
        match self.sizes {
            Some(s) if s.rate == rate => s,
            _ => self.compute_sizes(rate),
        }
    }

    /// [`Pacer::sizes`] computed from `burst` and `rate` alone (fixed bursts: the fixed
    /// size, and no interval).
    #[inline(never)]
    fn compute_sizes(&self, rate: PacingRate) -> Sizes {
        let (capacity, half_interval) = match self.burst {
            Burst::Fixed(bytes) => (bytes, 0),
            Burst::Interval { ns, min, max } => (
                earned(Duration::from_nanos(ns), rate).clamp(min, max),
                earned(Duration::from_nanos(ns / 2), rate),
            ),
        };
        Sizes {
            rate,
            capacity,
            half_interval,
        }
    }

    /// Tokens available at `now`, and the time they are counted from. The clock only
    /// advances once a whole byte was earned, so very frequent calls do not starve the
    /// bucket; each refill drops under one byte of rounding.
    fn refill(&self, now: Instant, rate: PacingRate) -> (u64, Instant) {
        let Some(last) = self.last else {
            return (self.tokens, now);
        };
        let gained = earned(now - last, rate);
        if gained == 0 {
            return (self.tokens, last);
        }
        let capacity = self.capacity(Some(rate));
        (self.tokens.saturating_add(gained).min(capacity), now)
    }

    /// When a packet of `bytes` may be sent: `None` = now (or pacing does not apply:
    /// `rate` is `None`); else the earliest instant.
    pub fn next_send_time(
        &self,
        now: Instant,
        bytes: u64,
        rate: Option<PacingRate>,
    ) -> Option<Instant> {
        let rate = rate?;
        let (tokens, _) = self.refill(now, rate);
        let target = self.target(bytes, rate);
        // Fixed bursts: a packet leaves once its tokens are there, so a sender on time
        // sends one packet per wake-up. Time-bounded bursts: once a burst emptied the
        // bucket, the next leaves when half an interval's worth is earned, so the sender
        // wakes once per burst and sends it back to back (one wake-up and one GSO batch
        // per half interval; Linux's TSO autosizing batches ~1 ms of its rate).
        let need = if self.refilling {
            target
        } else {
            target.min(bytes)
        };
        if tokens >= need {
            return None;
        }
        // Smallest wait with earned(wait) >= target - tokens: ceil(missing · den / num).
        let missing = u128::from(target - tokens);
        let wait = u64::try_from(mul_div(missing, rate.den, rate.num, true)).unwrap_or(u64::MAX);
        Some(now.saturating_add(Duration::from_nanos(wait)))
    }

    /// A packet of `bytes` was sent at `now` while the rate was `rate`: spend its
    /// tokens (never below zero).
    pub fn on_sent(&mut self, now: Instant, bytes: u64, rate: Option<PacingRate>) {
        if let (Burst::Interval { .. }, Some(rate)) = (self.burst, rate) {
            if self.sizes.is_none_or(|s| s.rate != rate) {
                self.sizes = Some(self.compute_sizes(rate));
            }
        }
        let (tokens, at) = match rate {
            None => (self.capacity(None), now),
            Some(rate) => self.refill(now, rate),
        };
        self.tokens = tokens.saturating_sub(bytes);
        self.last = Some(at);
        // A time-bounded burst ends when the bucket cannot pay for another such packet.
        self.refilling = matches!(self.burst, Burst::Interval { .. }) && self.tokens < bytes;
    }

    /// The tokens a packet of `bytes` waits for when the bucket is short: its own size
    /// (fixed bursts), or what half the interval earns (time-bounded), never more than
    /// half the bucket.
    fn target(&self, bytes: u64, rate: PacingRate) -> u64 {
        match self.burst {
            // A packet bigger than the bucket waits for a full bucket, not forever.
            Burst::Fixed(capacity) => bytes.min(capacity),
            // Half the interval's worth, at most half the bucket: a wake-up late by up
            // to half an interval still finds its tokens (waiting for a full bucket
            // would drop the lateness, and the rate with it). At low rates that is one
            // packet, paced as with fixed bursts.
            Burst::Interval { .. } => {
                let s = self.sizes(rate);
                let need = bytes.min(s.capacity);
                s.half_interval.clamp(need, (s.capacity / 2).max(need))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: u64 = 1200;

    #[test]
    fn mul_div_fast_path_matches_u128() {
        let vals = [
            0u128,
            1,
            3,
            7,
            1_000,
            1 << 31,
            u128::from(u32::MAX),
            1 << 40,
        ];
        let big = [u128::from(u64::MAX), 1 << 64, (1 << 70) + 5];
        for &a in vals.iter().chain(&big) {
            for &b in &vals {
                for d in [1u128, 3, 4_000_000_000, u128::from(u64::MAX), 1 << 65] {
                    assert_eq!(mul_div(a, b, d, false), a * b / d, "{a} {b} {d}");
                    assert_eq!(mul_div(a, b, d, true), (a * b).div_ceil(d), "{a} {b} {d}");
                }
            }
        }
    }

    #[test]
    fn burst_then_paced() {
        let srtt = Duration::from_millis(100);
        let cwnd = 120_000; // rate 1.25 * 120000 / 100 ms = 1500 bytes per ms.
        let mut p = Pacer::new(MDS);
        let t0 = Instant::from_millis(1_000);
        for _ in 0..10 {
            assert_eq!(
                p.next_send_time(t0, MDS, PacingRate::from_window(cwnd, srtt)),
                None
            );
            p.on_sent(t0, MDS, PacingRate::from_window(cwnd, srtt));
        }
        // Bucket empty: 1200 bytes take 0.8 ms.
        let next = p
            .next_send_time(t0, MDS, PacingRate::from_window(cwnd, srtt))
            .unwrap();
        assert_eq!(next, t0 + Duration::from_micros(800));
        assert_eq!(
            p.next_send_time(next, MDS, PacingRate::from_window(cwnd, srtt)),
            None
        );
        p.on_sent(next, MDS, PacingRate::from_window(cwnd, srtt));
        // Sending on schedule for one RTT (both ends included) moves 1.25 windows.
        let (mut now, mut sent) = (next, 0u64);
        while now <= next + srtt {
            match p.next_send_time(now, MDS, PacingRate::from_window(cwnd, srtt)) {
                None => {
                    p.on_sent(now, MDS, PacingRate::from_window(cwnd, srtt));
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
        p.on_sent(t0, 2 * MDS, PacingRate::from_window(12_000, srtt));
        // After a long idle period only the burst is available.
        let later = Instant::from_millis(500);
        assert_eq!(
            p.next_send_time(later, MDS, PacingRate::from_window(12_000, srtt)),
            None
        );
        p.on_sent(later, MDS, PacingRate::from_window(12_000, srtt));
        p.on_sent(later, MDS, PacingRate::from_window(12_000, srtt));
        assert!(p
            .next_send_time(later, MDS, PacingRate::from_window(12_000, srtt))
            .is_some());
        // Oversized packets wait for a full bucket rather than forever.
        assert!(p
            .next_send_time(later, 10 * MDS, PacingRate::from_window(12_000, srtt))
            .is_some());
    }

    #[test]
    fn interval_burst_follows_the_rate_within_bounds() {
        let ms = Duration::from_millis(1);
        // 1.25 * 1.2 MB / 10 ms = 150 kB per ms: 1 ms holds 125 datagrams, capped at two
        // full GSO sends (109 datagrams; more than 64 of 1,200 bytes).
        let fast = PacingRate::from_window(1_200_000, Duration::from_millis(10));
        // 1.25 * 120 kB / 100 ms = 1.5 kB per ms: below the 10-datagram minimum.
        let slow = PacingRate::from_window(120_000, Duration::from_millis(100));
        // 1.25 * 1.2 MB / 50 ms = 30 kB per ms: 25 datagrams.
        let mid = PacingRate::from_window(1_200_000, Duration::from_millis(50));
        let p = Pacer::with_burst_interval(MDS, ms);
        assert_eq!(p.capacity(fast), MAX_BURST_BYTES);
        const { assert!(MAX_BURST_BYTES > MAX_BURST_PACKETS * MDS) };
        // Large datagrams keep the 64-datagram bound (it is the larger one): 1.5 MB per
        // ms is capped at 64 datagrams of 9,000 bytes.
        let jumbo = Pacer::with_burst_interval(9_000, ms);
        let faster = PacingRate::from_window(12_000_000, Duration::from_millis(10));
        assert_eq!(jumbo.capacity(faster), MAX_BURST_PACKETS * 9_000);
        assert_eq!(p.capacity(slow), DEFAULT_BURST_PACKETS * MDS);
        assert_eq!(p.capacity(mid), 25 * MDS);
        assert_eq!(p.capacity(None), DEFAULT_BURST_PACKETS * MDS);
        // After an idle period at the mid rate the full bucket (25 datagrams) leaves back
        // to back; then nothing leaves until half the bucket is earned again (0.5 ms),
        // even for a wake-up in between (an ACK arriving), and then 12 leave at once.
        let mut p = p;
        let t0 = Instant::from_millis(1);
        p.on_sent(t0, MDS, mid);
        let now = Instant::from_millis(100);
        for _ in 0..25 {
            assert_eq!(p.next_send_time(now, MDS, mid), None);
            p.on_sent(now, MDS, mid);
        }
        let half_ms = Duration::from_micros(500);
        assert_eq!(p.next_send_time(now, MDS, mid), Some(now + half_ms));
        let early = now + Duration::from_micros(250);
        assert_eq!(p.next_send_time(early, MDS, mid), Some(now + half_ms));
        let at = now + half_ms;
        let mut burst = 0;
        while p.next_send_time(at, MDS, mid).is_none() {
            p.on_sent(at, MDS, mid);
            burst += 1;
        }
        assert_eq!(burst, 12);
        // At the slow rate half an interval earns 750 bytes, under one datagram: after a
        // drained bucket each datagram waits for its own tokens (0.8 ms), as with fixed
        // bursts.
        let mut p = Pacer::with_burst_interval(MDS, ms);
        for _ in 0..10 {
            p.on_sent(Instant::from_millis(100), MDS, slow);
        }
        assert_eq!(
            p.next_send_time(Instant::from_millis(100), MDS, slow),
            Some(Instant::from_millis(100) + Duration::from_micros(800))
        );
    }

    /// The sizes `on_sent` remembers give the answers of sizes computed afresh: a
    /// pacer driven through rate changes (within and between bursts), idle gaps and
    /// drained buckets answers and counts as a twin whose memory is wiped before each
    /// call. (Checked to fail with the memory keyed on nothing but its presence.)
    #[test]
    fn remembered_sizes_match_fresh_ones() {
        let ms = Duration::from_millis(1);
        let rates: Vec<PacingRate> = [(1_200_000, 10), (1_200_000, 50), (120_000, 100)]
            .iter()
            .chain(&[(3_000_000, 7), (1_250_000, 10)])
            .map(|&(cwnd, rtt)| PacingRate::from_window(cwnd, Duration::from_millis(rtt)))
            .map(Option::unwrap)
            .collect();
        let mut a = Pacer::with_burst_interval(MDS, ms);
        let mut b = a.clone();
        let (mut now, mut x, mut hits) = (Instant::from_millis(1), 7u64, 0);
        for step in 0..20_000 {
            // A small linear congruential sequence: the rate changes every few sends,
            // time moves by 0-300 µs.
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let rate = Some(rates[(x >> 33) as usize % rates.len()]);
            if (x >> 20) % 4 == 0 {
                now += Duration::from_micros((x >> 40) % 300);
            }
            let bytes = if step % 7 == 0 { MDS / 3 } else { MDS };
            b.sizes = None;
            let answer = a.next_send_time(now, bytes, rate);
            assert_eq!(answer, b.next_send_time(now, bytes, rate), "step {step}");
            hits += usize::from(a.sizes.is_some_and(|s| Some(s.rate) == rate));
            if answer.is_none() || step % 5 == 0 {
                b.sizes = None;
                a.on_sent(now, bytes, rate);
                b.on_sent(now, bytes, rate);
                let state = |p: &Pacer| (p.tokens, p.refilling, p.last);
                assert_eq!(state(&a), state(&b), "step {step}");
            }
        }
        // The memory was used (and the rates changed under it).
        assert!(hits > 1_000 && hits < 19_000, "{hits}");
    }

    #[test]
    fn fixed_burst_ignores_the_rate() {
        let p = Pacer::new(MDS);
        let fast = PacingRate::from_window(1_200_000, Duration::from_millis(10));
        assert_eq!(p.capacity(fast), DEFAULT_BURST_PACKETS * MDS);
    }

    #[test]
    fn explicit_rate() {
        // 1.5 MB/s = 1500 bytes per ms, as the window rate of `burst_then_paced`.
        let rate = PacingRate::from_bytes_per_sec(1_500_000);
        assert_eq!(rate.unwrap().bytes_per_sec(), 1_500_000);
        let mut p = Pacer::with_burst(MDS);
        let t0 = Instant::from_millis(1);
        p.on_sent(t0, MDS, rate);
        let next = p.next_send_time(t0, MDS, rate).unwrap();
        assert_eq!(next, t0 + Duration::from_micros(800));
        assert_eq!(PacingRate::from_bytes_per_sec(0), None);
        let w = PacingRate::from_window(120_000, Duration::from_millis(100)).unwrap();
        assert_eq!(w.bytes_per_sec(), 1_500_000);
    }

    #[test]
    fn no_pacing_without_estimate_or_window() {
        let mut p = Pacer::with_burst(MDS);
        p.on_sent(
            Instant::ZERO,
            MDS,
            PacingRate::from_window(12_000, Duration::from_millis(10)),
        );
        assert!(p
            .next_send_time(
                Instant::ZERO,
                MDS,
                PacingRate::from_window(12_000, Duration::ZERO)
            )
            .is_none());
        assert!(p
            .next_send_time(
                Instant::ZERO,
                MDS,
                PacingRate::from_window(u64::MAX, Duration::from_millis(10))
            )
            .is_none());
    }
}
