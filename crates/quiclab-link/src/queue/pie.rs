//! PIE, Proportional Integral controller Enhanced (RFC 8033), written from the RFC's
//! description.
//!
//! Every `tupdate` the drop probability moves by `alpha·(qdelay − target) +
//! beta·(qdelay − qdelay_old)` (RFC 8033 §4.2), the step scaled down while the
//! probability is small (§4.2's auto-tuning: ÷2048 below 10⁻⁶ ... ÷2 below 10 %),
//! capped at +2 % once the probability is above 10 % (§5.5), raised by 2 % when the
//! delay exceeds 250 ms, and decayed by 2 % per update while the queue stays empty
//! (§4.2). Arrivals are dropped at random with that probability (§4.1), except during
//! the burst allowance (150 ms after the queue was last quiet, §4.4), while the delay is below half the
//! target and the probability below 20 %, or with at most two packets queued (§4.1).
//! With `ecn = true` an ECN-capable arrival is marked CE instead of dropped while the
//! probability is at most `mark_ecn_th` (10 %, §5.1). `derandomize = true` adds §5.4's
//! de-randomization (no drop until the accumulated probability reaches 0.85, a
//! certain one at 8.5).
//!
//! The queuing delay is measured with timestamps (RFC 8033 §4.3 allows them in place
//! of §5.2's departure-rate estimate; Linux's default): the age of the head packet at
//! the update, 0 when empty. The update runs
//! at the multiples of `tupdate` since [`Instant::ZERO`], caught up lazily.

use super::fifo::Fifo;
use super::sojourn::QueueCounters;
use super::{ms_field, EcnMark, Queued};
use quiclab_proto::{duration_nanos, DetRng, Instant};
use serde::{Deserialize, Serialize};

/// PIE's scenario keys; absent keys take RFC 8033's defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    /// Hard limit in packets (default 1000, Linux's `limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    /// Target queuing delay, ms (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ms: Option<f64>,
    /// Update interval, ms (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tupdate_ms: Option<f64>,
    /// Integral gain, Hz (default 0.125).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Proportional gain, Hz (default 1.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Burst allowance, ms (default 150).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst_ms: Option<f64>,
    /// Mark ECN-capable packets instead of dropping them (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Highest probability at which ECN-capable packets are marked rather than dropped
    /// (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_ecn_th: Option<f64>,
    /// §5.4 de-randomization (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derandomize: Option<bool>,
}

/// RFC 8033 §4 defaults.
pub const DEFAULT_TARGET_MS: f64 = 15.0;
pub const DEFAULT_TUPDATE_MS: f64 = 15.0;
pub const DEFAULT_ALPHA: f64 = 0.125;
pub const DEFAULT_BETA: f64 = 1.25;
pub const DEFAULT_MAX_BURST_MS: f64 = 150.0;
pub const DEFAULT_MARK_ECN_TH: f64 = 0.1;
pub const DEFAULT_PACKETS: u64 = 1000;
/// With at most two packets queued an arrival is never dropped (RFC 8033 §4.1:
/// `queue_.byte_length() <= 2 * MEAN_PKTSIZE`, counted here in packets).
const MIN_PACKETS: usize = 2;

#[derive(Clone, Debug)]
struct Params {
    packets: u64,
    target_ns: u64,
    tupdate_ns: u64,
    alpha: f64,
    beta: f64,
    max_burst_ns: u64,
    ecn: bool,
    mark_ecn_th: f64,
    derandomize: bool,
}

impl Params {
    fn new(c: &PieConfig) -> Result<Params, String> {
        let packets = c.packets.unwrap_or(DEFAULT_PACKETS);
        if packets == 0 {
            return Err("queue.packets must be at least 1".to_string());
        }
        let alpha = c.alpha.unwrap_or(DEFAULT_ALPHA);
        let beta = c.beta.unwrap_or(DEFAULT_BETA);
        let th = c.mark_ecn_th.unwrap_or(DEFAULT_MARK_ECN_TH);
        for (field, v) in [("alpha", alpha), ("beta", beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("queue.{field} must be finite and >= 0"));
            }
        }
        if !(0.0..=1.0).contains(&th) {
            return Err("queue.mark_ecn_th must be in [0, 1]".to_string());
        }
        let burst = c.max_burst_ms.unwrap_or(DEFAULT_MAX_BURST_MS);
        if !(burst.is_finite() && burst >= 0.0) {
            return Err("queue.max_burst_ms must be finite and >= 0".to_string());
        }
        Ok(Params {
            packets,
            target_ns: duration_nanos(ms_field(
                "target_ms",
                c.target_ms.unwrap_or(DEFAULT_TARGET_MS),
            )?),
            tupdate_ns: duration_nanos(ms_field(
                "tupdate_ms",
                c.tupdate_ms.unwrap_or(DEFAULT_TUPDATE_MS),
            )?),
            alpha,
            beta,
            max_burst_ns: (burst * 1e6).round() as u64,
            ecn: c.ecn.unwrap_or(false),
            mark_ecn_th: th,
            derandomize: c.derandomize.unwrap_or(false),
        })
    }
}

/// RFC 8033 §4.2's auto-tuning: the step shrinks with the probability's scale, so a
/// small probability moves in small steps.
pub fn scaled_step(p: f64, drop_prob: f64) -> f64 {
    let div = if drop_prob < 1e-6 {
        2048.0
    } else if drop_prob < 1e-5 {
        512.0
    } else if drop_prob < 1e-4 {
        128.0
    } else if drop_prob < 1e-3 {
        32.0
    } else if drop_prob < 1e-2 {
        8.0
    } else if drop_prob < 0.1 {
        2.0
    } else {
        1.0
    };
    p / div
}

/// The PIE state.
#[derive(Debug)]
pub(super) struct Pie<T> {
    p: Params,
    q: Fifo<T>,
    drop_prob: f64,
    qdelay_old_ns: u64,
    burst_allowance_ns: u64,
    accu_prob: f64,
    next_update: Instant,
    rng: DetRng,
    pub(super) stats: QueueCounters,
}

impl<T: EcnMark> Pie<T> {
    pub(super) fn new(c: &PieConfig, rng: DetRng) -> Result<Self, String> {
        let p = Params::new(c)?;
        Ok(Pie {
            burst_allowance_ns: p.max_burst_ns,
            next_update: Instant::from_nanos(p.tupdate_ns),
            p,
            q: Fifo::default(),
            drop_prob: 0.0,
            qdelay_old_ns: 0,
            accu_prob: 0.0,
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
        self.p.ecn
    }
    pub(super) fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// Sets the drop probability and ends the burst allowance (tests of drop_early).
    #[cfg(test)]
    pub(super) fn force(&mut self, drop_prob: f64) {
        self.drop_prob = drop_prob;
        self.burst_allowance_ns = 0;
    }

    /// RFC 8033 §4.2 `calculate_drop_prob()` and §4.4's burst allowance, with the
    /// current queuing delay `qdelay_ns`.
    pub(super) fn update(&mut self, qdelay_ns: u64) {
        let secs = |ns: u64| ns as f64 / 1e9;
        let (cur, old, target) = (
            secs(qdelay_ns),
            secs(self.qdelay_old_ns),
            secs(self.p.target_ns),
        );
        let mut step = scaled_step(
            self.p.alpha * (cur - target) + self.p.beta * (cur - old),
            self.drop_prob,
        );
        // Do not jump by more than 2 % at once above 10 % (RFC 8033 §5.5).
        if self.drop_prob >= 0.1 && step > 0.02 {
            step = 0.02;
        }
        self.drop_prob += step;
        // Decay while the queue is idle (both delays zero).
        if qdelay_ns == 0 && self.qdelay_old_ns == 0 {
            self.drop_prob *= 0.98;
        }
        // A delay beyond 250 ms adds 2 % outright.
        if cur > 0.25 {
            self.drop_prob += 0.02;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance_ns = self.burst_allowance_ns.saturating_sub(self.p.tupdate_ns);
        // RFC 8033 §4.4: a new allowance only after two quiet updates in a row (the
        // current and the previous delay below half the target), so the history is
        // updated after this test.
        let half = self.p.target_ns / 2;
        if self.drop_prob == 0.0 && qdelay_ns < half && self.qdelay_old_ns < half {
            self.burst_allowance_ns = self.p.max_burst_ns;
        }
        self.qdelay_old_ns = qdelay_ns;
    }

    /// The burst allowance left, ns (tests of §4.4).
    #[cfg(test)]
    pub(super) fn burst_allowance_ns(&self) -> u64 {
        self.burst_allowance_ns
    }

    fn catch_up(&mut self, now: Instant) {
        while now >= self.next_update {
            if self.q.is_empty()
                && self.drop_prob == 0.0
                && self.qdelay_old_ns == 0
                && self.burst_allowance_ns == self.p.max_burst_ns
            {
                let t = self.p.tupdate_ns;
                self.next_update = Instant::from_nanos((now.as_nanos() / t + 1).saturating_mul(t));
                return;
            }
            let qdelay = self.q.head_age_ns(self.next_update);
            self.update(qdelay);
            self.next_update = Instant::from_nanos(
                self.next_update
                    .as_nanos()
                    .saturating_add(self.p.tupdate_ns),
            );
        }
    }

    /// RFC 8033 §4.1 `drop_early()` (with §5.4 when de-randomizing): whether to drop or
    /// mark the arrival.
    fn drop_early(&mut self) -> bool {
        if self.burst_allowance_ns > 0 {
            return false;
        }
        let half = self.p.target_ns / 2;
        if self.qdelay_old_ns < half && self.drop_prob < 0.2 {
            return false;
        }
        // RFC 8033 §4.1: no early drop with at most two packets queued.
        if self.q.len() <= MIN_PACKETS {
            return false;
        }
        let u = self.rng.next_f64();
        if self.p.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                self.accu_prob = 0.0;
                return true;
            }
        }
        let hit = u < self.drop_prob;
        if hit {
            self.accu_prob = 0.0;
        }
        hit
    }

    /// Tail drop at the limit, then PIE's random drop (or mark) on arrival.
    pub(super) fn enqueue(&mut self, now: Instant, size: u64, mut item: T) -> Result<(), T> {
        self.catch_up(now);
        if self.q.len() as u64 >= self.p.packets {
            self.stats.drops += 1;
            return Err(item);
        }
        if self.drop_early() {
            // RFC 8033 §5.1: mark instead while the probability is low.
            let mark = self.p.ecn && self.drop_prob <= self.p.mark_ecn_th && item.mark_ce();
            if !mark {
                self.stats.drops += 1;
                return Err(item);
            }
            self.stats.marks += 1;
        }
        self.q.push(now, size, item);
        Ok(())
    }

    pub(super) fn dequeue(&mut self, now: Instant) -> Option<Queued<T>> {
        self.catch_up(now);
        self.q.pop()
    }
}
