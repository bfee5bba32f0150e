//! DualPI2, the DualQ Coupled AQM of RFC 9332 with the example algorithm of its
//! Appendix A.1, written from the RFC's description.
//!
//! Two FIFOs share one limit: packets carrying ECT(1) or CE go to the L (L4S) queue,
//! not-ECT and ECT(0) to the C (Classic) queue (RFC 9332 §2.3, §2.5.1.1; A.1
//! `dualpi2_enqueue()`: "ecn(pkt) modulo 2 == 1"). Every `tupdate` a PI controller
//! moves the base probability p' by `alpha·(curq − target) + beta·(curq − prevq)`,
//! clamped to [0, 1] (A.2 Figure 6), curq being the larger of the two queues' head
//! ages (A.2: `max(cq.time(), lq.time())`, so an unresponsive L queue also raises p';
//! A.1's first pass uses `cq.time()` alone). From p' (RFC 9332 §2.4, A.1):
//! - the coupled L probability p_CL = min(k·p', 1);
//! - the Classic probability p_C = p'² (the "squared" drop or mark);
//! - the L queue's native ramp p'_L (A.1 `laqm()`): 0 up to `min_th` of L sojourn
//!   time, 1 from `min_th + range`, linear between; A.2 Figure 5 applies it only when,
//!   after the packet is dequeued, the L queue still holds more than `th_len` (1)
//!   packets ("suppress marking 1 pkt queue"), else p'_L = 0;
//! - an L packet is marked CE when `recur(lq, max(p'_L, p_CL))` fires;
//! - a C packet, when `recur(cq, p_C)` fires, is marked CE if ECN-capable or dropped
//!   if not-ECT.
//!
//! `recur()` (A.1) de-randomizes every decision: a per-queue accumulator adds the
//! likelihood and fires when it exceeds 1 (strictly), so decisions come at exactly the
//! rate asked for, evenly spaced. DualPI2 draws no random numbers.
//!
//! Overload (RFC 9332 §4.2.2, A.2 Figure 5): in the C queue, once p_C ≥ p_Cmax =
//! min(1/k², 1), ECN no longer saves a packet (dropped instead of marked). In the L
//! queue, once p_CL ≥ p_Lmax (1), the ramp is bypassed: a packet is dropped when
//! `recur(lq, p_C)` fires, otherwise marked when `recur(lq, p_CL)` fires (p_CL = 1:
//! every packet not dropped is marked), so unresponsive traffic in either queue
//! cannot take the link.
//!
//! Scheduler: a time-shifted FIFO. RFC 9332 §2.4 and A.1 leave `scheduler()` open (it
//! must give the L queue priority while protecting the C queue from starvation, §4.2.2;
//! Linux uses weighted round robin): here the head packet of the C queue is sent when
//! it has waited more than `tshift` (default twice the target, not an RFC number)
//! longer than the L queue's head, otherwise the L queue's head goes first.
//!
//! Time is integer nanoseconds; the PI update runs at the multiples of `tupdate` since
//! [`Instant::ZERO`], caught up lazily at the next enqueue or dequeue (nothing changes
//! the queue in between, so the delay it sees is the one at the update's own time).

use super::dualpi2_applied::{Decision, DualPi2Report, WindowApplied};
use super::fifo::Fifo;
use super::sojourn::{QueueCounters, QueueReport};
use super::{ms_field, EcnMark, Queued};
use quiclab_proto::{Ecn, Instant};
use serde::{Deserialize, Serialize};

/// DualPI2's scenario keys. Every constant of RFC 9332 A.1 is a knob; absent keys take
/// the defaults of A.1 Figure 2 (`dualpi2_params_init()`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// Shared limit of both queues in packets (default 10000, Linux's `limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    /// Shared limit in bytes (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// PI2 target queuing delay of the C queue, ms (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ms: Option<f64>,
    /// PI2 update interval, ms (default min(target, RTT_max/3) = 15, A.1 Figure 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tupdate_ms: Option<f64>,
    /// PI2 integral gain, Hz (default 0.1·Tupdate/RTT_max² = 0.15, A.1 Figure 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// PI2 proportional gain, Hz (default 0.3/RTT_max = 3, A.1 Figure 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Coupling factor k: p_CL = k·p' (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
    /// Start of the L queue's marking ramp, µs of sojourn time (default 800).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th_us: Option<f64>,
    /// Width of the ramp, µs (default 400: marking certain from 1.2 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_us: Option<f64>,
    /// The ramp marks only when the L queue still holds more than this many packets
    /// after the dequeue (default 1, A.1 Figure 2 `Th_len`; A.2 Figure 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub th_len: Option<u64>,
    /// Time shift of the scheduler, ms (default 30, twice the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tshift_ms: Option<f64>,
}

/// RFC 9332 A.1 Figure 2 defaults.
pub const DEFAULT_TARGET_MS: f64 = 15.0;
/// A.1 Figure 2 `RTT_max`, the worst-case RTT the PI2 gains are derived from.
pub const RTT_MAX_MS: f64 = 100.0;
pub const DEFAULT_K: f64 = 2.0;
pub const DEFAULT_MIN_TH_US: f64 = 800.0;
pub const DEFAULT_RANGE_US: f64 = 400.0;
pub const DEFAULT_TH_LEN: u64 = 1;
pub const DEFAULT_PACKETS: u64 = 10_000;

/// A.1 Figure 2: `Tupdate = min(target, RTT_max/3)`, ms.
pub fn default_tupdate_ms(target_ms: f64) -> f64 {
    target_ms.min(RTT_MAX_MS / 3.0)
}

/// A.1 Figure 2: `alpha = 0.1·Tupdate/RTT_max²`, Hz (0.15 at the defaults).
pub fn default_alpha(tupdate_ms: f64) -> f64 {
    let rtt_max = RTT_MAX_MS / 1e3;
    0.1 * (tupdate_ms / 1e3) / (rtt_max * rtt_max)
}

/// A.1 Figure 2: `beta = 0.3/RTT_max`, Hz (3 at the defaults).
pub fn default_beta() -> f64 {
    0.3 / (RTT_MAX_MS / 1e3)
}

/// Validated parameters, times in ns.
#[derive(Clone, Debug)]
struct Params {
    packets: u64,
    bytes: Option<u64>,
    target_ns: u64,
    tupdate_ns: u64,
    alpha: f64,
    beta: f64,
    k: f64,
    min_th_ns: u64,
    range_ns: u64,
    th_len: u64,
    tshift_ns: u64,
}

fn positive(field: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("queue.{field} must be finite and > 0"))
    }
}

fn ns(d: std::time::Duration) -> u64 {
    quiclab_proto::duration_nanos(d)
}

impl Params {
    fn new(c: &DualPi2Config) -> Result<Params, String> {
        let packets = c.packets.unwrap_or(DEFAULT_PACKETS);
        if packets == 0 {
            return Err("queue.packets must be at least 1".to_string());
        }
        if c.bytes == Some(0) {
            return Err("queue.bytes must be at least 1".to_string());
        }
        let target = c.target_ms.unwrap_or(DEFAULT_TARGET_MS);
        let target_ns = ns(ms_field("target_ms", target)?);
        let tupdate = c.tupdate_ms.unwrap_or_else(|| default_tupdate_ms(target));
        let range_us = c.range_us.unwrap_or(DEFAULT_RANGE_US);
        let min_th_us = c.min_th_us.unwrap_or(DEFAULT_MIN_TH_US);
        if !(min_th_us.is_finite() && min_th_us >= 0.0) {
            return Err("queue.min_th_us must be finite and >= 0".to_string());
        }
        let alpha = c.alpha.unwrap_or_else(|| default_alpha(tupdate));
        let beta = c.beta.unwrap_or_else(default_beta);
        for (field, v) in [("alpha", alpha), ("beta", beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("queue.{field} must be finite and >= 0"));
            }
        }
        let tshift_ms = c.tshift_ms.unwrap_or(2.0 * target);
        if !(tshift_ms.is_finite() && tshift_ms >= 0.0) {
            return Err("queue.tshift_ms must be finite and >= 0".to_string());
        }
        Ok(Params {
            packets,
            bytes: c.bytes,
            target_ns,
            tupdate_ns: ns(ms_field("tupdate_ms", tupdate)?),
            alpha,
            beta,
            k: positive("k", c.k.unwrap_or(DEFAULT_K))?,
            min_th_ns: (min_th_us * 1e3).round() as u64,
            range_ns: ns(ms_field("range_us", range_us / 1e3)?),
            th_len: c.th_len.unwrap_or(DEFAULT_TH_LEN),
            tshift_ns: (tshift_ms * 1e6).round() as u64,
        })
    }
}

/// The coupled probabilities from the base probability p' (RFC 9332 §2.4, A.1):
/// (p_CL = min(k·p', 1), p_C = p'²).
pub fn coupled(p_prime: f64, k: f64) -> (f64, f64) {
    ((k * p_prime).min(1.0), p_prime * p_prime)
}

/// The L queue's native ramp (RFC 9332 A.1 `laqm()`): 0 at or below `min_th_ns`, 1 at
/// or above `maxTh = min_th_ns + range_ns`, linear between.
pub fn ramp(sojourn_ns: u64, min_th_ns: u64, range_ns: u64) -> f64 {
    if sojourn_ns <= min_th_ns {
        0.0
    } else if sojourn_ns >= min_th_ns.saturating_add(range_ns) {
        1.0
    } else {
        (sojourn_ns - min_th_ns) as f64 / range_ns as f64
    }
}

/// The DualPI2 state.
#[derive(Debug)]
pub(super) struct DualPi2<T> {
    p: Params,
    l: Fifo<T>,
    c: Fifo<T>,
    /// Base probability p'.
    p_prime: f64,
    /// The queue delay at the previous update (A.2 `prevq`), ns.
    prev_qdelay_ns: u64,
    next_update: Instant,
    /// A.1 `recur()` accumulators (`lq.count`, `cq.count`).
    l_recur: Recur,
    c_recur: Recur,
    pub(super) l_stats: QueueCounters,
    pub(super) c_stats: QueueCounters,
    /// What was applied per queue and p' over time, in the window (`dualpi2_applied.rs`;
    /// boxed: rarely touched, and it keeps the AQM enum's variants alike in size).
    applied: Box<WindowApplied>,
    /// Whether sent packets' sojourn times are recorded (the measurement window).
    pub(super) recording: bool,
}

/// Which queue a packet belongs to (RFC 9332 §2.5.1.1: ECT(1) and CE are L).
fn is_l4s(ecn: Ecn) -> bool {
    matches!(ecn, Ecn::Ect1 | Ecn::Ce)
}

impl<T: EcnMark> DualPi2<T> {
    pub(super) fn new(c: &DualPi2Config) -> Result<Self, String> {
        let p = Params::new(c)?;
        let first = Instant::from_nanos(p.tupdate_ns);
        Ok(DualPi2 {
            p,
            l: Fifo::default(),
            c: Fifo::default(),
            p_prime: 0.0,
            prev_qdelay_ns: 0,
            next_update: first,
            l_recur: Recur::default(),
            c_recur: Recur::default(),
            l_stats: QueueCounters::default(),
            c_stats: QueueCounters::default(),
            applied: Box::default(),
            recording: true,
        })
    }

    pub(super) fn len_packets(&self) -> usize {
        self.l.len() + self.c.len()
    }
    pub(super) fn len_bytes(&self) -> u64 {
        self.l.bytes().saturating_add(self.c.bytes())
    }
    pub(super) fn marks(&self) -> u64 {
        self.l_stats.marks.saturating_add(self.c_stats.marks)
    }

    /// The L and C queues' reports, each with what was applied to it in the window.
    pub(super) fn reports(&self) -> Vec<QueueReport> {
        let mut l = self.l_stats.report("l");
        l.applied = Some(self.applied.l.report());
        let mut c = self.c_stats.report("c");
        c.applied = Some(self.applied.c.report());
        vec![l, c]
    }

    /// The time average of p' over the window's PI updates.
    pub(super) fn pi_report(&self) -> DualPi2Report {
        self.applied.pi.report()
    }

    /// (p', p_CL, p_C) now.
    pub(super) fn probabilities(&self) -> (f64, f64, f64) {
        let (p_cl, p_c) = coupled(self.p_prime, self.p.k);
        (self.p_prime, p_cl, p_c)
    }

    /// Sets p' (tests of the coupling and of overload).
    #[cfg(test)]
    pub(super) fn set_p_prime(&mut self, p: f64) {
        self.p_prime = p;
    }

    /// RFC 9332 A.2 Figure 6 `dualpi2_update()`: one PI step with the queue delay
    /// `qdelay_ns`, p' clamped to [0, 1].
    fn pi_update(&mut self, qdelay_ns: u64) {
        let secs = |ns: u64| ns as f64 / 1e9;
        let q = secs(qdelay_ns);
        let delta = self.p.alpha * (q - secs(self.p.target_ns))
            + self.p.beta * (q - secs(self.prev_qdelay_ns));
        self.p_prime = (self.p_prime + delta).clamp(0.0, 1.0);
        self.prev_qdelay_ns = qdelay_ns;
    }

    /// Runs the PI updates due at or before `now`, each with the C queue as it was then.
    fn catch_up(&mut self, now: Instant) {
        while now >= self.next_update {
            if self.len_packets() == 0 && self.p_prime == 0.0 && self.prev_qdelay_ns == 0 {
                // Idle and at rest: every update until now would leave the state as
                // it is; jump to the first update after `now` on the same grid.
                let t = self.p.tupdate_ns;
                let steps = now.as_nanos() / t + 1;
                if self.recording {
                    // The skipped updates each held p' at 0.
                    let skipped = (now.as_nanos() - self.next_update.as_nanos()) / t + 1;
                    self.applied.pi.record(0.0, skipped);
                }
                self.next_update = Instant::from_nanos(steps.saturating_mul(t));
                return;
            }
            // A.2 Figure 6: "use greatest queuing time" of the two queues.
            let qdelay = self
                .c
                .head_age_ns(self.next_update)
                .max(self.l.head_age_ns(self.next_update));
            self.pi_update(qdelay);
            if self.recording {
                self.applied.pi.record(self.p_prime, 1);
            }
            self.next_update = Instant::from_nanos(
                self.next_update
                    .as_nanos()
                    .saturating_add(self.p.tupdate_ns),
            );
        }
    }

    /// RFC 9332 A.1 `dualpi2_enqueue()`: the shared limit, then the classifier.
    pub(super) fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        self.catch_up(now);
        let l4s = is_l4s(item.ecn());
        let full = self.len_packets() as u64 >= self.p.packets
            || self
                .p
                .bytes
                .is_some_and(|m| self.len_bytes().saturating_add(size) > m);
        if full {
            let stats = if l4s {
                &mut self.l_stats
            } else {
                &mut self.c_stats
            };
            stats.count_drop(self.recording);
            return Err(item);
        }
        if l4s {
            self.l.push(now, size, item);
        } else {
            self.c.push(now, size, item);
        }
        Ok(())
    }

    /// The time-shifted FIFO: true to serve L next.
    fn serve_l(&self) -> bool {
        match (self.l.head_time(), self.c.head_time()) {
            (Some(_), None) => true,
            (None, _) => false,
            (Some(l), Some(c)) => {
                // C goes first once its head waited `tshift` longer than L's head.
                c.as_nanos().saturating_add(self.p.tshift_ns) >= l.as_nanos()
            }
        }
    }

    /// RFC 9332 A.1 `dualpi2_dequeue()` with the edge cases of A.2 Figure 5: the packet
    /// to send, if any; dropped packets go to `dropped`.
    pub(super) fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        self.catch_up(now);
        loop {
            let sent = if self.serve_l() {
                self.dequeue_l(now)?
            } else {
                self.dequeue_c(now)?
            };
            match sent {
                Ok(q) => return Some(q),
                Err(item) => dropped.push(item),
            }
        }
    }

    /// The L queue's head with its fate: `Ok` to send (maybe marked), `Err` dropped.
    fn dequeue_l(&mut self, now: Instant) -> Option<Result<Queued<T>, T>> {
        let (p_prime, p_cl, p_c) = self.probabilities();
        let mut q = self.l.pop()?;
        let sojourn = now.as_nanos().saturating_sub(q.enqueued_at.as_nanos());
        let mut decision = Decision {
            p_prime,
            coupled: p_cl,
            native: 0.0,
            signalled: false,
        };
        let mark = if p_cl < P_LMAX {
            // A.2 Figure 5 lines 5a-5d: the ramp only while the L queue still holds
            // more than Th_len packets after this dequeue.
            if self.l.len() as u64 > self.p.th_len {
                decision.native = ramp(sojourn, self.p.min_th_ns, self.p.range_ns);
            }
            // A.1: p_L = max(p'_L, p_CL), then `recur(lq, p_L)`.
            self.l_recur.fire(decision.native.max(p_cl))
        } else if self.l_recur.fire(p_c) {
            // A.2 Figure 5, overload saturation: drop with p_C, mark the rest with p_CL.
            self.l_stats.count_drop(self.recording);
            decision.signalled = true;
            self.record(true, decision);
            return Some(Err(q.item));
        } else {
            self.l_recur.fire(p_cl)
        };
        decision.signalled = mark;
        if mark && q.item.mark_ce() {
            self.l_stats.count_mark(self.recording);
        }
        self.l_stats.count_sent(self.recording, sojourn);
        self.record(true, decision);
        Some(Ok(q))
    }

    /// The C queue's head with its fate: `Ok` to send (maybe marked), `Err` dropped.
    fn dequeue_c(&mut self, now: Instant) -> Option<Result<Queued<T>, T>> {
        let (p_prime, _, p_c) = self.probabilities();
        // A.1 Figure 2: p_Cmax = min(1/k², 1).
        let p_cmax = (1.0 / (self.p.k * self.p.k)).min(1.0);
        let mut q = self.c.pop()?;
        let sojourn = now.as_nanos().saturating_sub(q.enqueued_at.as_nanos());
        let signalled = self.c_recur.fire(p_c);
        self.record(
            false,
            Decision {
                p_prime,
                coupled: p_c,
                native: 0.0,
                signalled,
            },
        );
        if signalled {
            // A.1 Figure 3: not-ECT is dropped; A.2: overload disables ECN.
            if p_c < p_cmax && q.item.mark_ce() {
                self.c_stats.count_mark(self.recording);
            } else {
                self.c_stats.count_drop(self.recording);
                return Some(Err(q.item));
            }
        }
        self.c_stats.count_sent(self.recording, sojourn);
        Some(Ok(q))
    }

    /// Adds a decision to the L (`l4s`) or C queue's window sums, while recording.
    fn record(&mut self, l4s: bool, d: Decision) {
        if self.recording {
            if l4s {
                self.applied.l.record(d);
            } else {
                self.applied.c.record(d);
            }
        }
    }
}

/// A.1 Figure 2 `p_Lmax`: the L queue is in overload saturation once p_CL reaches it.
const P_LMAX: f64 = 1.0;

/// RFC 9332 A.1 `recur(queue, likelihood)`: a per-queue accumulator that fires at
/// exactly the rate `likelihood` over successive calls, evenly spaced.
#[derive(Debug, Default)]
struct Recur {
    count: f64,
}

impl Recur {
    /// Adds `likelihood`; true (and subtracts 1) once the count exceeds 1. The RFC's
    /// comparison is strict (`count > 1`).
    fn fire(&mut self, likelihood: f64) -> bool {
        self.count += likelihood;
        if self.count > 1.0 {
            self.count -= 1.0;
            true
        } else {
            false
        }
    }
}
