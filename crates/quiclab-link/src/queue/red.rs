//! RED, Random Early Detection (Floyd and Jacobson 1993, recommended by RFC 2309 and
//! RFC 7567), written from the paper's algorithm.
//!
//! On every arrival the average queue length moves toward the instantaneous one,
//! `avg ← (1 − w_q)·avg + w_q·q`; after an idle period it decays as if `m` packets had
//! left an empty queue, `avg ← (1 − w_q)^m·avg`, with `m` the idle time over a typical
//! packet's transmission time (`packet_time_us`). Between `min_th` and `max_th` an
//! arrival is dropped with `p_a = p_b / (1 − count·p_b)`, where
//! `p_b = max_p·(avg − min_th)/(max_th − min_th)` and `count` the arrivals since the
//! last drop (so drops are spread evenly). Above `max_th` every arrival is dropped;
//! with `gentle = true` the probability instead rises from `max_p` to 1 between
//! `max_th` and `2·max_th`. With `ecn = true` an ECN-capable packet is marked CE where
//! a not-ECT one would be dropped (RFC 3168 §5), except above `max_th` (non-gentle) or
//! `2·max_th` (gentle), where the queue is persistently full and RED drops.

use super::fifo::Fifo;
use super::sojourn::QueueCounters;
use super::{EcnMark, Queued};
use quiclab_proto::{DetRng, Instant};
use serde::{Deserialize, Serialize};

/// RED's scenario keys; thresholds in packets of the average queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Hard limit, packets.
    pub packets: u64,
    /// Average queue length where early drops start (default 5 packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// Average queue length where they reach `max_p` (default 15: three times
    /// `min_th`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// Drop probability at `max_th` (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// Weight of the average (default 0.002).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
    /// Gentle RED above `max_th` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// Mark ECN-capable packets instead of dropping them (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// A typical packet's transmission time, µs, for the idle decay (default 120:
    /// 1500 bytes at 100 Mbit/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_time_us: Option<f64>,
}

pub const DEFAULT_MIN_TH: f64 = 5.0;
pub const DEFAULT_MAX_P: f64 = 0.1;
pub const DEFAULT_W_Q: f64 = 0.002;
pub const DEFAULT_PACKET_TIME_US: f64 = 120.0;

/// What RED does with an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    Enqueue,
    /// Drop, or mark if ECN-capable and marking is on.
    Early,
    /// Drop whatever the codepoint.
    Forced,
}

/// The RED state.
#[derive(Debug)]
pub(super) struct Red<T> {
    q: Fifo<T>,
    limit: u64,
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w_q: f64,
    gentle: bool,
    ecn: bool,
    packet_time_ns: f64,
    avg: f64,
    /// Arrivals since the last early drop, -1 below `min_th`.
    count: i64,
    /// When the queue last went empty (`None`: it is not empty).
    idle_since: Option<Instant>,
    rng: DetRng,
    pub(super) stats: QueueCounters,
}

impl<T: EcnMark> Red<T> {
    pub(super) fn new(c: &RedConfig, rng: DetRng) -> Result<Self, String> {
        let min_th = c.min_th.unwrap_or(DEFAULT_MIN_TH);
        let max_th = c.max_th.unwrap_or(3.0 * min_th);
        let max_p = c.max_p.unwrap_or(DEFAULT_MAX_P);
        let w_q = c.w_q.unwrap_or(DEFAULT_W_Q);
        let packet_time_us = c.packet_time_us.unwrap_or(DEFAULT_PACKET_TIME_US);
        if c.packets == 0 {
            return Err("queue.packets must be at least 1".to_string());
        }
        if !(min_th.is_finite() && min_th >= 0.0 && max_th.is_finite() && max_th > min_th) {
            return Err("queue.min_th and queue.max_th: need 0 <= min_th < max_th".to_string());
        }
        if !(max_p > 0.0 && max_p <= 1.0) {
            return Err("queue.max_p must be in (0, 1]".to_string());
        }
        if !(w_q > 0.0 && w_q <= 1.0) {
            return Err("queue.w_q must be in (0, 1]".to_string());
        }
        if !(packet_time_us.is_finite() && packet_time_us > 0.0) {
            return Err("queue.packet_time_us must be finite and > 0".to_string());
        }
        Ok(Red {
            q: Fifo::default(),
            limit: c.packets,
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: c.gentle.unwrap_or(false),
            ecn: c.ecn.unwrap_or(false),
            packet_time_ns: packet_time_us * 1e3,
            avg: 0.0,
            count: -1,
            idle_since: Some(Instant::ZERO),
            rng,
            stats: QueueCounters::default(),
        })
    }

    pub(super) fn len_packets(&self) -> usize {
        self.q.len()
    }
    pub(super) fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    pub(super) fn marks_ecn(&self) -> bool {
        self.ecn
    }
    pub(super) fn average(&self) -> f64 {
        self.avg
    }

    /// Sets the average queue (tests of the probability).
    #[cfg(test)]
    pub(super) fn set_average(&mut self, avg: f64) {
        self.avg = avg;
        self.idle_since = None;
    }

    /// The average queue at an arrival at `now` (Floyd & Jacobson §4).
    fn update_average(&mut self, now: Instant) {
        match self.idle_since {
            Some(since) if self.q.is_empty() => {
                let idle = now.as_nanos().saturating_sub(since.as_nanos()) as f64;
                let m = idle / self.packet_time_ns;
                self.avg *= (1.0 - self.w_q).powf(m);
                // The decay covers the idle time up to now.
                self.idle_since = Some(now);
            }
            _ => {
                let q = self.q.len() as f64;
                self.avg = (1.0 - self.w_q) * self.avg + self.w_q * q;
            }
        }
    }

    /// The base probability p_b at the current average (0 below `min_th`; `None`
    /// where every arrival is dropped).
    pub(super) fn p_b(&self) -> Option<f64> {
        let avg = self.avg;
        if avg < self.min_th {
            Some(0.0)
        } else if avg < self.max_th {
            Some(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            Some(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            None
        }
    }

    /// The verdict for an arrival, after the average was updated.
    fn verdict(&mut self) -> RedVerdict {
        match self.p_b() {
            None => {
                self.count = 0;
                RedVerdict::Forced
            }
            Some(p_b) if p_b <= 0.0 => {
                self.count = -1;
                RedVerdict::Enqueue
            }
            Some(p_b) => {
                self.count += 1;
                let spread = 1.0 - self.count as f64 * p_b;
                let p_a = if spread <= 0.0 {
                    1.0
                } else {
                    (p_b / spread).min(1.0)
                };
                if self.rng.next_f64() < p_a {
                    self.count = 0;
                    RedVerdict::Early
                } else {
                    RedVerdict::Enqueue
                }
            }
        }
    }

    pub(super) fn enqueue(&mut self, now: Instant, size: u64, mut item: T) -> Result<(), T> {
        self.update_average(now);
        let verdict = self.verdict();
        let full = self.q.len() as u64 >= self.limit;
        let drop = match verdict {
            _ if full => true,
            RedVerdict::Enqueue => false,
            RedVerdict::Forced => true,
            RedVerdict::Early => {
                let marked = self.ecn && item.mark_ce();
                if marked {
                    self.stats.marks += 1;
                }
                !marked
            }
        };
        if drop {
            self.stats.drops += 1;
            return Err(item);
        }
        self.idle_since = None;
        self.q.push(now, size, item);
        Ok(())
    }

    pub(super) fn dequeue(&mut self, now: Instant) -> Option<Queued<T>> {
        let q = self.q.pop()?;
        if self.q.is_empty() {
            self.idle_since = Some(now);
        }
        Some(q)
    }
}
