//! Link queues: drop-tail with a packet or byte limit, CoDel (RFC 8289), and the AQMs
//! DualPI2 (RFC 9332), PIE (RFC 8033), FQ-CoDel (RFC 8290) and RED, one file each. AQMs can mark ECN-capable packets CE
//! instead of dropping them (RFC 3168 §5). A full queue always drops, whatever the
//! codepoint.
//!
//! All time arithmetic is in integer nanoseconds ([`Instant`]), so a queue's decisions
//! are the same on every platform; random decisions draw from the [`DetRng`] the link
//! hands in, so a seed gives the same fates. Every queue keeps its counters
//! (`sojourn.rs`): sojourn-time quantiles in bounded memory, and per sub-queue for
//! DualPI2.

mod codel;
mod dualpi2;
mod dualpi2_applied;
mod fifo;
mod fq_codel;
mod pie;
mod red;
mod sojourn;
#[cfg(test)]
mod tests_aqm;

use codel::Codel;
use dualpi2::DualPi2;
pub use dualpi2::{coupled, ramp, DualPi2Config};
pub use dualpi2_applied::{AppliedReport, DualPi2Report};
use fq_codel::FqCodel;
pub use fq_codel::FqCodelConfig;
use pie::Pie;
pub use pie::{scaled_step, PieConfig};
use quiclab_proto::{duration_nanos, DetRng, Ecn, Instant};
use red::Red;
pub use red::RedConfig;
use serde::{Deserialize, Serialize};
pub use sojourn::{QueueCounters, QueueReport, SojournHistogram, MAX_BUCKETS};
use std::collections::VecDeque;
use std::time::Duration;

/// Queue discipline and size of a link's transmit queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "discipline", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueConfig {
    /// Drop arrivals when the queue holds `packets` packets (or `bytes` bytes, if set).
    DropTail {
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    /// CoDel (RFC 8289) with a hard limit of `packets`, target and interval in ms
    /// (defaults 5 ms and 100 ms). `ecn = true`: where CoDel would drop an ECN-capable
    /// packet it marks it CE and delivers it (RFC 3168 §5); not-ECT packets are still
    /// dropped. Default false, as Linux's `codel` qdisc (its `fq_codel` marks by default).
    Codel {
        packets: u64,
        target_ms: Option<f64>,
        interval_ms: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn: Option<bool>,
    },
    /// DualPI2, the DualQ Coupled AQM (RFC 9332, Appendix A.1): ECT(1) and CE packets in
    /// an L queue marked from a sojourn-time ramp and the coupled probability k·p',
    /// the rest in a C queue dropped or marked with p'² by a PI2 controller.
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Config),
    /// PIE (RFC 8033): a PI controller of the drop probability toward a 15 ms target,
    /// dropping (or with `ecn`, marking) at random on arrival.
    Pie(PieConfig),
    /// FQ-CoDel (RFC 8290): per-flow queues by 5-tuple hash served by deficit round
    /// robin with new-flow priority, CoDel in each.
    FqCodel(FqCodelConfig),
    /// RED (Floyd & Jacobson): early random drops (or marks) from the average queue
    /// length.
    Red(RedConfig),
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::DropTail {
            packets: Some(1000),
            bytes: None,
        }
    }
}

/// What an AQM needs of a queued item: its ECN codepoint (DualPI2 classifies by it)
/// and a way to mark it instead of dropping it.
pub trait EcnMark {
    /// The IP header's ECN codepoint as the queue receives it.
    fn ecn(&self) -> Ecn;
    /// Sets CE if the item is ECN-capable (ECT(0), ECT(1) or already CE) and says so;
    /// false for a not-ECT item, which the AQM then drops (RFC 3168 §5).
    fn mark_ce(&mut self) -> bool;
}

/// What a flow-queuing AQM (FQ-CoDel) needs of a queued item: the identity of its
/// flow.
pub trait FlowKey {
    /// A hash of the item's 5-tuple (source and destination address and port,
    /// protocol): equal for the packets of one flow.
    fn flow_key(&self) -> u64;
}

/// The AQMs that keep their own sub-queues.
#[derive(Debug)]
enum Aqm<T> {
    DualPi2(DualPi2<T>),
    Pie(Pie<T>),
    FqCodel(FqCodel<T>),
    Red(Red<T>),
}

impl<T: EcnMark + FlowKey> Aqm<T> {
    fn new(config: &QueueConfig, rng: DetRng) -> Result<Option<Self>, String> {
        Ok(Some(match config {
            QueueConfig::DropTail { .. } | QueueConfig::Codel { .. } => return Ok(None),
            QueueConfig::DualPi2(c) => Aqm::DualPi2(DualPi2::new(c)?),
            QueueConfig::Pie(c) => Aqm::Pie(Pie::new(c, rng)?),
            QueueConfig::FqCodel(c) => Aqm::FqCodel(FqCodel::new(c, rng)?),
            QueueConfig::Red(c) => Aqm::Red(Red::new(c, rng)?),
        }))
    }

    fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        match self {
            Aqm::DualPi2(d) => d.enqueue(now, size, item),
            Aqm::Pie(p) => p.enqueue(now, size, item),
            Aqm::FqCodel(f) => f.enqueue(now, size, item),
            Aqm::Red(r) => r.enqueue(now, size, item),
        }
    }

    fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        match self {
            Aqm::DualPi2(d) => d.dequeue(now, dropped),
            Aqm::Pie(p) => p.dequeue(now),
            Aqm::FqCodel(f) => f.dequeue(now, dropped),
            Aqm::Red(r) => r.dequeue(now),
        }
    }

    fn len_packets(&self) -> usize {
        match self {
            Aqm::DualPi2(d) => d.len_packets(),
            Aqm::Pie(p) => p.len_packets(),
            Aqm::FqCodel(f) => f.len_packets(),
            Aqm::Red(r) => r.len_packets(),
        }
    }

    fn len_bytes(&self) -> u64 {
        match self {
            Aqm::DualPi2(d) => d.len_bytes(),
            Aqm::Pie(p) => p.len_bytes(),
            Aqm::FqCodel(f) => f.len_bytes(),
            Aqm::Red(r) => r.len_bytes(),
        }
    }

    /// CE marks so far; `None` when the discipline does not mark (DualPI2 always
    /// marks its L queue).
    fn ecn_marks(&self) -> Option<u64> {
        match self {
            Aqm::DualPi2(d) => Some(d.marks()),
            Aqm::Pie(p) => p.marks_ecn().then_some(p.stats.marks),
            Aqm::FqCodel(f) => f.marks_ecn().then(|| f.marks()),
            Aqm::Red(r) => r.marks_ecn().then_some(r.stats.marks),
        }
    }
}

/// A queued item: its wire size and an opaque payload.
#[derive(Debug)]
pub struct Queued<T> {
    pub size: u64,
    pub enqueued_at: Instant,
    pub item: T,
}

/// A link's transmit queue. `T` is the simulator's packet type.
#[derive(Debug)]
pub struct Queue<T> {
    items: VecDeque<Queued<T>>,
    bytes: u64,
    /// Tail-drop limits (CoDel: `packets` is its hard limit, no byte limit).
    max_packets: Option<u64>,
    max_bytes: Option<u64>,
    codel: Option<Codel>,
    /// An AQM with its own sub-queues (then `items` stays empty).
    aqm: Option<Aqm<T>>,
    /// Sojourn times of the packets sent while recording.
    sojourn: SojournHistogram,
    recording: bool,
}

/// Milliseconds from a config into a duration, or an error naming the field.
fn ms_field(field: &str, ms: f64) -> Result<Duration, String> {
    if ms.is_finite() && ms > 0.0 && ms * 1e6 < u64::MAX as f64 {
        Ok(Duration::from_nanos((ms * 1e6).round() as u64))
    } else {
        Err(format!("queue.{field} must be finite and > 0"))
    }
}

impl<T: EcnMark + FlowKey> Queue<T> {
    /// Validates the config (a drop-tail needs a limit; CoDel's target < interval; an
    /// AQM's knobs in range); `rng` feeds the random decisions of the AQMs that make
    /// them (drop-tail and CoDel draw nothing).
    pub fn new(config: &QueueConfig, rng: DetRng) -> Result<Self, String> {
        let aqm = Aqm::new(config, rng)?;
        let (max_packets, max_bytes, codel) = match *config {
            QueueConfig::DropTail { packets, bytes } => {
                if packets.is_none() && bytes.is_none() {
                    return Err("queue: drop_tail needs packets or bytes".to_string());
                }
                if packets == Some(0) {
                    return Err("queue.packets must be at least 1".to_string());
                }
                if bytes == Some(0) {
                    return Err("queue.bytes must be at least 1".to_string());
                }
                (packets, bytes, None)
            }
            QueueConfig::Codel {
                packets,
                target_ms,
                interval_ms,
                ecn,
            } => {
                if packets == 0 {
                    return Err("queue.packets must be at least 1".to_string());
                }
                let target = match target_ms {
                    Some(ms) => ms_field("target_ms", ms)?,
                    None => DEFAULT_CODEL_TARGET,
                };
                let interval = match interval_ms {
                    Some(ms) => ms_field("interval_ms", ms)?,
                    None => DEFAULT_CODEL_INTERVAL,
                };
                if target >= interval {
                    return Err("queue.target_ms must be below queue.interval_ms".to_string());
                }
                let codel = Codel::new(
                    duration_nanos(target),
                    duration_nanos(interval),
                    ecn.unwrap_or(false),
                );
                (Some(packets), None, Some(codel))
            }
            _ => (None, None, None),
        };
        Ok(Queue {
            items: VecDeque::new(),
            bytes: 0,
            max_packets,
            max_bytes,
            codel,
            aqm,
            sojourn: SojournHistogram::default(),
            recording: true,
        })
    }

    /// Offers an arriving packet; `Err(item)` when it is dropped (tail drop).
    ///
    /// With both limits set, a packet must fit both. A packet larger than the byte
    /// limit is always dropped.
    pub fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        if let Some(aqm) = &mut self.aqm {
            return aqm.enqueue(now, size, item);
        }
        if self.tail_drops(size) {
            return Err(item);
        }
        if let Some(c) = &mut self.codel {
            c.on_enqueue(size);
        }
        self.bytes += size;
        self.items.push_back(Queued {
            size,
            enqueued_at: now,
            item,
        });
        Ok(())
    }

    /// Takes the next packet to transmit at `now`; CoDel may drop packets on the way,
    /// which are appended to `dropped`, or mark the returned one CE (see [`EcnMark`]).
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        let q = self.dequeue_inner(now, dropped)?;
        if self.recording {
            let waited = now.as_nanos().saturating_sub(q.enqueued_at.as_nanos());
            self.sojourn.record(waited);
        }
        Some(q)
    }

    /// Whether an arrival of `size` bytes at an idle link would pass straight through,
    /// enqueued and dequeued at the same instant with nothing else happening: true for
    /// a plain drop-tail queue (no CoDel, no AQM) that is empty and has room for it (the
    /// limits `enqueue` checks). The caller may then keep the packet out of the queue
    /// and call [`Self::record_passed`] where it would dequeue it: nothing else in the
    /// queue would change (`bytes` goes up by `size` and back down). Saves the packet's
    /// trip through the `VecDeque` on the first hop of most datagrams (issue 29).
    pub fn passes_through(&self, size: u64) -> bool {
        if self.aqm.is_some() || self.codel.is_some() || !self.items.is_empty() {
            return false;
        }
        !self.tail_drops(size)
    }

    /// Whether a plain queue (no AQM) drops an arrival of `size` bytes at its tail:
    /// with both limits set, a packet must fit both. `enqueue` and `passes_through`
    /// share it, so the pass-through admits exactly what the queue would.
    #[inline(always)]
    fn tail_drops(&self, size: u64) -> bool {
        let full_packets = self
            .max_packets
            .is_some_and(|m| self.items.len() as u64 >= m);
        let full_bytes = self
            .max_bytes
            .is_some_and(|m| self.bytes.saturating_add(size) > m);
        full_packets || full_bytes
    }

    /// What `dequeue` records for a packet that [`Self::passes_through`]: its sojourn,
    /// zero, if recording.
    pub fn record_passed(&mut self) {
        if self.recording {
            self.sojourn.record(0);
        }
    }

    /// Whether the sojourn times of packets sent from now on are recorded (on by
    /// default): the link turns it on inside the measurement window only, so the
    /// quantiles describe the window as its throughput does. Marks and drops are
    /// counted over the whole run, as the link's drops are.
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if let Some(Aqm::DualPi2(d)) = &mut self.aqm {
            d.recording = on;
        }
    }

    fn dequeue_inner(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        if let Some(aqm) = &mut self.aqm {
            return aqm.dequeue(now, dropped);
        }
        match &mut self.codel {
            None => self.pop(),
            Some(codel) => {
                // Split borrows: CoDel pops through this closure.
                let (items, bytes) = (&mut self.items, &mut self.bytes);
                let mut pop = || {
                    let q = items.pop_front()?;
                    *bytes -= q.size;
                    Some((q, *bytes))
                };
                codel.dequeue(now, &mut pop, dropped)
            }
        }
    }

    fn pop(&mut self) -> Option<Queued<T>> {
        let q = self.items.pop_front()?;
        self.bytes -= q.size;
        Some(q)
    }

    pub fn len_packets(&self) -> usize {
        self.aqm.as_ref().map_or(self.items.len(), Aqm::len_packets)
    }
    pub fn len_bytes(&self) -> u64 {
        self.aqm.as_ref().map_or(self.bytes, Aqm::len_bytes)
    }
    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// Packets CoDel has dropped so far (0 for drop-tail).
    pub fn codel_drops(&self) -> u64 {
        self.codel.as_ref().map_or(0, Codel::drops)
    }
    /// Packets the queue has marked CE so far, `None` when it does not mark.
    pub fn ecn_marks(&self) -> Option<u64> {
        match &self.aqm {
            Some(aqm) => aqm.ecn_marks(),
            None => self
                .codel
                .as_ref()
                .filter(|c| c.marks_ecn())
                .map(Codel::marks),
        }
    }

    /// Sojourn times of the packets the queue has sent while recording.
    pub fn sojourn(&self) -> &SojournHistogram {
        &self.sojourn
    }

    /// Each sub-queue's counters, for the disciplines that have several (DualPI2: `l`
    /// then `c`); empty otherwise.
    pub fn subqueues(&self) -> Vec<QueueReport> {
        match &self.aqm {
            Some(Aqm::DualPi2(d)) => d.reports(),
            _ => Vec::new(),
        }
    }

    /// DualPI2's time average of p' over the measurement window's PI updates; `None`
    /// for other disciplines.
    pub fn dualpi2_report(&self) -> Option<DualPi2Report> {
        match &self.aqm {
            Some(Aqm::DualPi2(d)) => Some(d.pi_report()),
            _ => None,
        }
    }

    /// DualPI2's (p', p_CL, p_C) now; `None` for other disciplines.
    pub fn dualpi2_probabilities(&self) -> Option<(f64, f64, f64)> {
        match &self.aqm {
            Some(Aqm::DualPi2(d)) => Some(d.probabilities()),
            _ => None,
        }
    }

    /// PIE's drop probability now; `None` for other disciplines.
    pub fn pie_probability(&self) -> Option<f64> {
        match &self.aqm {
            Some(Aqm::Pie(p)) => Some(p.drop_prob()),
            _ => None,
        }
    }

    /// RED's average queue length (packets) now; `None` for other disciplines.
    pub fn red_average(&self) -> Option<f64> {
        match &self.aqm {
            Some(Aqm::Red(r)) => Some(r.average()),
            _ => None,
        }
    }
}

/// A queue item that is never built: what [`QueueConfig::validate`] instantiates.
enum NoItem {}

impl EcnMark for NoItem {
    fn ecn(&self) -> Ecn {
        match *self {}
    }
    fn mark_ce(&mut self) -> bool {
        match *self {}
    }
}

impl FlowKey for NoItem {
    fn flow_key(&self) -> u64 {
        match *self {}
    }
}

impl QueueConfig {
    /// The errors [`Queue::new`] would give, naming the key (`queue.packets ...`).
    pub fn validate(&self) -> Result<(), String> {
        Queue::<NoItem>::new(self, DetRng::new(0)).map(|_| ())
    }
}

/// CoDel's default target (RFC 8289 §4: 5 ms).
pub const DEFAULT_CODEL_TARGET: Duration = Duration::from_millis(5);
/// CoDel's default interval (RFC 8289 §4: 100 ms).
pub const DEFAULT_CODEL_INTERVAL: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    /// Test items are not-ECT: never marked; all one flow.
    impl EcnMark for u32 {
        fn ecn(&self) -> Ecn {
            Ecn::NotEct
        }
        fn mark_ce(&mut self) -> bool {
            false
        }
    }
    impl FlowKey for u32 {
        fn flow_key(&self) -> u64 {
            0
        }
    }

    fn drop_tail(packets: Option<u64>, bytes: Option<u64>) -> Queue<u32> {
        Queue::new(&QueueConfig::DropTail { packets, bytes }, DetRng::new(1)).unwrap()
    }

    #[test]
    fn drop_tail_by_packets() {
        let mut q = drop_tail(Some(3), None);
        for i in 0..3 {
            q.enqueue(Instant::from_millis(i.into()), 1500, i).unwrap();
        }
        assert_eq!(q.enqueue(Instant::ZERO, 1, 9), Err(9));
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 4500));
        let mut dropped = Vec::new();
        let first = q.dequeue(Instant::from_millis(5), &mut dropped).unwrap();
        assert_eq!(
            (first.item, first.size, first.enqueued_at),
            (0, 1500, Instant::ZERO)
        );
        q.enqueue(Instant::ZERO, 1500, 3).unwrap();
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Instant::ZERO, &mut dropped))
            .map(|p| p.item)
            .collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert!(dropped.is_empty() && q.is_empty() && q.len_bytes() == 0);
    }

    #[test]
    fn drop_tail_by_bytes() {
        let mut q = drop_tail(None, Some(3000));
        q.enqueue(Instant::ZERO, 1200, 1).unwrap();
        q.enqueue(Instant::ZERO, 1200, 2).unwrap();
        assert_eq!(q.enqueue(Instant::ZERO, 1200, 3), Err(3));
        q.enqueue(Instant::ZERO, 600, 4).unwrap(); // exactly fills it
        assert_eq!(q.enqueue(Instant::ZERO, 1, 5), Err(5));
        assert_eq!(q.len_bytes(), 3000);
        // A packet bigger than the whole limit never fits.
        let mut q = drop_tail(None, Some(1000));
        assert_eq!(q.enqueue(Instant::ZERO, 1001, 1), Err(1));
    }

    #[test]
    fn drop_tail_both_limits() {
        let mut q = drop_tail(Some(2), Some(10_000));
        q.enqueue(Instant::ZERO, 100, 1).unwrap();
        q.enqueue(Instant::ZERO, 100, 2).unwrap();
        assert_eq!(q.enqueue(Instant::ZERO, 100, 3), Err(3)); // packets
        let mut q = drop_tail(Some(10), Some(1500));
        q.enqueue(Instant::ZERO, 1200, 1).unwrap();
        assert_eq!(q.enqueue(Instant::ZERO, 1200, 2), Err(2)); // bytes
    }

    #[test]
    fn validation() {
        let err = |c: QueueConfig| c.validate().unwrap_err();
        assert!(err(QueueConfig::DropTail {
            packets: None,
            bytes: None
        })
        .contains("packets or bytes"));
        assert!(err(QueueConfig::DropTail {
            packets: Some(0),
            bytes: None
        })
        .contains("queue.packets"));
        let codel = |t: Option<f64>, i: Option<f64>| QueueConfig::Codel {
            packets: 100,
            target_ms: t,
            interval_ms: i,
            ecn: None,
        };
        assert!(err(codel(Some(100.0), None)).contains("target_ms"));
        assert!(err(codel(Some(f64::NAN), None)).contains("queue.target_ms"));
        assert!(err(codel(None, Some(-1.0))).contains("queue.interval_ms"));
        assert!(codel(Some(1.0), Some(20.0)).validate().is_ok());
        assert!(QueueConfig::default().validate().is_ok());
    }

    #[test]
    fn toml_shape() {
        let c: QueueConfig =
            toml::from_str("discipline = \"codel\"\npackets = 500\ntarget_ms = 2.5").unwrap();
        assert!(c.validate().is_ok());
        assert!(Queue::<u32>::new(&c, DetRng::new(1))
            .unwrap()
            .ecn_marks()
            .is_none());
        let m: QueueConfig =
            toml::from_str("discipline = \"codel\"\npackets = 5\necn = true").unwrap();
        assert_eq!(
            Queue::<u32>::new(&m, DetRng::new(1)).unwrap().ecn_marks(),
            Some(0)
        );
        assert!(
            toml::from_str::<QueueConfig>("discipline = \"codel\"\npackets = 5\necn = 1").is_err()
        );
        assert!(toml::from_str::<QueueConfig>(
            "discipline = \"drop_tail\"\npackets = 5\necn = true"
        )
        .is_err());
        let d: QueueConfig = toml::from_str("discipline = \"drop_tail\"\nbytes = 150000").unwrap();
        assert_eq!(
            d,
            QueueConfig::DropTail {
                packets: None,
                bytes: Some(150_000)
            }
        );
    }
}
