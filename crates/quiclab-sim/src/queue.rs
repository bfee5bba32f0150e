//! Link queues: drop-tail with a packet or byte limit, and CoDel (RFC 8289).

use quiclab_proto::time::Instant;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Queue discipline and size of a link's transmit queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "discipline", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueConfig {
    /// Drop arrivals when the queue holds `packets` packets (or `bytes` bytes, if set).
    DropTail {
        packets: Option<u64>,
        bytes: Option<u64>,
    },
    /// CoDel (RFC 8289) with a hard limit of `packets`, target and interval in ms
    /// (defaults 5 ms and 100 ms).
    Codel {
        packets: u64,
        target_ms: Option<f64>,
        interval_ms: Option<f64>,
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
    _p: Vec<T>,
}

impl<T> Queue<T> {
    /// Validates the config (a drop-tail needs a limit; CoDel's target < interval).
    pub fn new(config: &QueueConfig) -> Result<Self, String> {
        let _ = config;
        todo!("S-A")
    }
    /// Offers an arriving packet; `Err(item)` when it is dropped (tail drop).
    pub fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        let _ = (now, size, item);
        todo!("S-A")
    }
    /// Takes the next packet to transmit at `now`; CoDel may drop packets on the way,
    /// which are appended to `dropped`.
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        let _ = (now, dropped);
        todo!("S-A")
    }
    pub fn len_packets(&self) -> usize {
        todo!("S-A")
    }
    pub fn len_bytes(&self) -> u64 {
        todo!("S-A")
    }
    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// Sojourn-time based helpers CoDel needs, exposed for tests.
pub const DEFAULT_CODEL_TARGET: Duration = Duration::from_millis(5);
pub const DEFAULT_CODEL_INTERVAL: Duration = Duration::from_millis(100);
