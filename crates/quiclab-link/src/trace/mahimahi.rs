//! Mahimahi packet-delivery traces (`mm-link`'s format) and the delivery opportunities
//! they give a link direction.
//!
//! The file holds one integer millisecond timestamp per line, non-decreasing; each line
//! is one opportunity to deliver up to [`OPPORTUNITY_BYTES`] bytes at that time (equal
//! timestamps are several opportunities at once). The trace repeats with a period equal
//! to its last timestamp, so a one-line file `1` is an opportunity every millisecond:
//! 1504 B/ms = 12.032 Mbit/s.
//!
//! Byte accounting, as Mahimahi's `LinkQueue::rationalize` does it: an opportunity's
//! bytes go to the head packet; a packet that needs fewer leaves the rest of the
//! opportunity to the packets behind it (at the same instant), and a packet that needs
//! more keeps what it got and continues in the next opportunities, leaving the link
//! when the opportunity that covers its last byte comes. An opportunity that finds the
//! queue empty is lost (its bytes are not banked). Each packet is charged its IP size
//! (UDP payload + 28 bytes, [`crate::link::Packet::wire_size`]), which is what Mahimahi
//! reads from its TUN device. One difference: Mahimahi refuses packets over 1504 bytes
//! (its TUN MTU); here a larger packet simply spans as many opportunities as its bytes
//! need, by the same rule.

use quiclab_proto::Instant;
use std::time::Duration;

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`, its default TUN
/// payload size).
pub const OPPORTUNITY_BYTES: u64 = 1504;

/// Why a Mahimahi trace cannot be used (lines are 1-based).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MahimahiError {
    #[error("empty: no delivery opportunity")]
    Empty,
    #[error("line {line}: empty line (one timestamp per line)")]
    BlankLine { line: usize },
    #[error("line {line}: not a non-negative integer millisecond timestamp: {text:?}")]
    NotInteger { line: usize, text: String },
    #[error("line {line}: {value} ms is before the previous timestamp ({previous} ms)")]
    Decreasing {
        line: usize,
        previous: u64,
        value: u64,
    },
    #[error("every timestamp is 0: the trace must last a nonzero time")]
    ZeroPeriod,
}

/// A parsed trace: opportunity times within one period, and the period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    times_ms: Vec<u64>,
    period_ms: u64,
}

/// At most this many characters of a bad line are quoted in an error.
const QUOTE_CHARS: usize = 40;

impl DeliveryTrace {
    /// Parses the file's text (Mahimahi's rules: every line one integer, no blank
    /// lines, non-decreasing, last timestamp above 0).
    pub fn parse(text: &str) -> Result<DeliveryTrace, MahimahiError> {
        let mut times_ms: Vec<u64> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() {
                return Err(MahimahiError::BlankLine { line });
            }
            let value: u64 = t.parse().map_err(|_| MahimahiError::NotInteger {
                line,
                text: t.chars().take(QUOTE_CHARS).collect(),
            })?;
            if let Some(&previous) = times_ms.last() {
                if value < previous {
                    return Err(MahimahiError::Decreasing {
                        line,
                        previous,
                        value,
                    });
                }
            }
            times_ms.push(value);
        }
        let period_ms = *times_ms.last().ok_or(MahimahiError::Empty)?;
        if period_ms == 0 {
            return Err(MahimahiError::ZeroPeriod);
        }
        Ok(DeliveryTrace {
            times_ms,
            period_ms,
        })
    }

    /// The period (the last timestamp), ms.
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }

    /// Opportunities per period.
    pub fn len(&self) -> u64 {
        self.times_ms.len() as u64
    }

    /// Never true: a parsed trace has at least one opportunity.
    pub fn is_empty(&self) -> bool {
        self.times_ms.is_empty()
    }

    /// Mean capacity over a period, bit/s (`len * 1504 * 8` bits per period).
    pub fn mean_rate_bps(&self) -> f64 {
        self.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 * 1000.0 / self.period_ms as f64
    }

    /// The time of opportunity `n` (counted from 0 over the repeated trace).
    fn time_of(&self, n: u64) -> Instant {
        let (cycle, i) = (n / self.len(), (n % self.len()) as usize);
        let ms = cycle
            .saturating_mul(self.period_ms)
            .saturating_add(self.times_ms[i]);
        Instant::ZERO + Duration::from_millis(ms)
    }

    /// The first opportunity at or after `t`.
    fn first_at_or_after(&self, t: Instant) -> u64 {
        let ns = t.saturating_duration_since(Instant::ZERO).as_nanos();
        // Opportunities fall on whole milliseconds: the first one at or after
        // ceil(t) ms.
        let ms = u64::try_from(ns.div_ceil(1_000_000)).unwrap_or(u64::MAX);
        let cycle = ms / self.period_ms;
        // The previous cycle's last timestamps fall on this cycle's start.
        for c in cycle.saturating_sub(1)..=cycle.saturating_add(1) {
            let base = c.saturating_mul(self.period_ms);
            let i = self
                .times_ms
                .partition_point(|&x| base.saturating_add(x) < ms);
            if i < self.times_ms.len() {
                return c.saturating_mul(self.len()).saturating_add(i as u64);
            }
        }
        cycle.saturating_add(2).saturating_mul(self.len())
    }
}

/// A link direction's use of its trace's opportunities.
///
/// # Call contract
/// Times never decrease. Before sending a packet at `now`, call [`Self::ready`]; only
/// when it returns `None` may [`Self::send`] follow at the same `now`.
#[derive(Clone, Debug)]
pub struct Opportunities {
    trace: DeliveryTrace,
    /// The next opportunity not used yet.
    next: u64,
    /// The opportunity in use: its time and the bytes it has left.
    open: Option<(Instant, u64)>,
}

impl Opportunities {
    pub fn new(trace: DeliveryTrace) -> Opportunities {
        Opportunities {
            trace,
            next: 0,
            open: None,
        }
    }

    /// `None` when an opportunity with bytes left is at `now` (opening the next one if
    /// it falls at `now`); otherwise the time of the next opportunity, when the link
    /// must look again. Opportunities passed while the link was idle are lost.
    pub fn ready(&mut self, now: Instant) -> Option<Instant> {
        if matches!(self.open, Some((t, left)) if t == now && left > 0) {
            return None;
        }
        self.open = None;
        self.next = self.next.max(self.trace.first_at_or_after(now));
        let t = self.trace.time_of(self.next);
        if t > now {
            return Some(t);
        }
        self.next = self.next.saturating_add(1);
        self.open = Some((t, OPPORTUNITY_BYTES));
        None
    }

    /// Starts a packet of `size` bytes at `now` (after [`Self::ready`] returned `None`)
    /// and returns when its last byte leaves: `now` if the open opportunity's bytes
    /// cover it, else the opportunity that completes it; that opportunity's surplus is
    /// left for the next packet.
    pub fn send(&mut self, now: Instant, size: u64) -> Instant {
        let left = match self.open {
            Some((t, left)) if t == now => left,
            _ => 0,
        };
        if size <= left {
            self.open = Some((now, left - size));
            return now;
        }
        let rest = size - left;
        let k = rest.div_ceil(OPPORTUNITY_BYTES);
        let last = self.next.saturating_add(k - 1);
        let done = self.trace.time_of(last);
        self.next = last.saturating_add(1);
        self.open = Some((done, k * OPPORTUNITY_BYTES - rest));
        done
    }
}
