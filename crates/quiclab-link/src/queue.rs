//! Link queues: drop-tail with a packet or byte limit, and CoDel (RFC 8289), which can
//! mark ECN-capable packets CE instead of dropping them (RFC 3168 §5, RFC 8289 §5).
//! A full queue always drops, whatever the codepoint.
//!
//! All time arithmetic is in integer nanoseconds ([`Instant`]), so a queue's decisions
//! are the same on every platform.

mod codel;

use codel::Codel;
use quiclab_proto::{duration_nanos, Instant};
use serde::{Deserialize, Serialize};
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
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::DropTail {
            packets: Some(1000),
            bytes: None,
        }
    }
}

/// What an AQM needs of a queued item to mark it instead of dropping it.
pub trait EcnMark {
    /// Sets CE if the item is ECN-capable (ECT(0), ECT(1) or already CE) and says so;
    /// false for a not-ECT item, which the AQM then drops (RFC 3168 §5).
    fn mark_ce(&mut self) -> bool;
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
}

/// Milliseconds from a config into a duration, or an error naming the field.
fn ms_field(field: &str, ms: f64) -> Result<Duration, String> {
    if ms.is_finite() && ms > 0.0 && ms * 1e6 < u64::MAX as f64 {
        Ok(Duration::from_nanos((ms * 1e6).round() as u64))
    } else {
        Err(format!("queue.{field} must be finite and > 0"))
    }
}

impl<T> Queue<T> {
    /// Validates the config (a drop-tail needs a limit; CoDel's target < interval).
    pub fn new(config: &QueueConfig) -> Result<Self, String> {
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
        };
        Ok(Queue {
            items: VecDeque::new(),
            bytes: 0,
            max_packets,
            max_bytes,
            codel,
        })
    }

    /// Offers an arriving packet; `Err(item)` when it is dropped (tail drop).
    ///
    /// With both limits set, a packet must fit both. A packet larger than the byte
    /// limit is always dropped.
    pub fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        let full_packets = self
            .max_packets
            .is_some_and(|m| self.items.len() as u64 >= m);
        let full_bytes = self
            .max_bytes
            .is_some_and(|m| self.bytes.saturating_add(size) > m);
        if full_packets || full_bytes {
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
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>>
    where
        T: EcnMark,
    {
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
        self.items.len()
    }
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// Packets CoDel has dropped so far (0 for drop-tail).
    pub fn codel_drops(&self) -> u64 {
        self.codel.as_ref().map_or(0, Codel::drops)
    }
    /// Packets CoDel has marked CE so far, `None` when the queue does not mark.
    pub fn ecn_marks(&self) -> Option<u64> {
        self.codel
            .as_ref()
            .filter(|c| c.marks_ecn())
            .map(Codel::marks)
    }
}

/// CoDel's default target (RFC 8289 §4: 5 ms).
pub const DEFAULT_CODEL_TARGET: Duration = Duration::from_millis(5);
/// CoDel's default interval (RFC 8289 §4: 100 ms).
pub const DEFAULT_CODEL_INTERVAL: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    /// Test items are not-ECT: never marked.
    impl EcnMark for u32 {
        fn mark_ce(&mut self) -> bool {
            false
        }
    }

    fn drop_tail(packets: Option<u64>, bytes: Option<u64>) -> Queue<u32> {
        Queue::new(&QueueConfig::DropTail { packets, bytes }).unwrap()
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
        let err = |c: QueueConfig| Queue::<u8>::new(&c).unwrap_err();
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
        assert!(Queue::<u8>::new(&codel(Some(1.0), Some(20.0))).is_ok());
        assert!(Queue::<u8>::new(&QueueConfig::default()).is_ok());
    }

    #[test]
    fn toml_shape() {
        let c: QueueConfig =
            toml::from_str("discipline = \"codel\"\npackets = 500\ntarget_ms = 2.5").unwrap();
        assert!(Queue::<u8>::new(&c).is_ok());
        assert!(Queue::<u8>::new(&c).unwrap().ecn_marks().is_none());
        let m: QueueConfig =
            toml::from_str("discipline = \"codel\"\npackets = 5\necn = true").unwrap();
        assert_eq!(Queue::<u8>::new(&m).unwrap().ecn_marks(), Some(0));
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
