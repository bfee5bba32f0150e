//! FQ-CoDel (RFC 8290), written from the RFC's description.
//!
//! Packets are hashed by their 5-tuple ([`FlowKey`], perturbed by a seeded value as
//! Linux perturbs its hash) into `flows` queues (§4.1.1). A deficit round robin serves
//! them a `quantum` of bytes at a time, queues that just became active first: a queue
//! that gets a packet while inactive joins the *new* list, which is served before the
//! *old* list (§4.2, "new-flow priority"), so a sparse flow's packets leave almost at
//! once. Each queue runs its own CoDel (RFC 8289, `codel.rs`) at dequeue (§4.2). When
//! the whole queue holds `packets` packets, an arrival makes the queue with the largest
//! byte backlog lose its head packet (§4.1).

use super::codel::Codel;
use super::fifo::Fifo;
use super::{ms_field, EcnMark, FlowKey, Queued, DEFAULT_CODEL_INTERVAL, DEFAULT_CODEL_TARGET};
use quiclab_proto::{duration_nanos, DetRng, Instant};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// FQ-CoDel's scenario keys; absent keys take RFC 8290's (Linux's) defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Limit of all queues together, packets (default 10240).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    /// Number of flow queues (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    /// DRR quantum, bytes (default 1514: one Ethernet MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u64>,
    /// CoDel target, ms (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ms: Option<f64>,
    /// CoDel interval, ms (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<f64>,
    /// Mark ECN-capable packets CE instead of dropping them (default true, as Linux's
    /// `fq_codel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
}

/// RFC 8290 §4 / Linux defaults.
pub const DEFAULT_PACKETS: u64 = 10_240;
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_QUANTUM: u64 = 1514;

/// One flow queue: its packets, its CoDel, its DRR deficit and which list it is on.
#[derive(Debug)]
struct Flow<T> {
    q: Fifo<T>,
    codel: Codel,
    deficit: i64,
    listed: bool,
}

/// The FQ-CoDel state.
#[derive(Debug)]
pub(super) struct FqCodel<T> {
    flows: Vec<Flow<T>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    limit: u64,
    quantum: i64,
    perturbation: u64,
    packets: usize,
    bytes: u64,
    ecn: bool,
    pub(super) drops: u64,
}

impl<T: EcnMark + FlowKey> FqCodel<T> {
    pub(super) fn new(c: &FqCodelConfig, mut rng: DetRng) -> Result<Self, String> {
        let limit = c.packets.unwrap_or(DEFAULT_PACKETS);
        let flows = c.flows.unwrap_or(DEFAULT_FLOWS);
        let quantum = c.quantum.unwrap_or(DEFAULT_QUANTUM);
        if limit == 0 {
            return Err("queue.packets must be at least 1".to_string());
        }
        if !(1..=65536).contains(&flows) {
            return Err("queue.flows must be in 1..=65536".to_string());
        }
        if !(1..=1 << 20).contains(&quantum) {
            return Err("queue.quantum must be in 1..=1048576".to_string());
        }
        let target = match c.target_ms {
            Some(ms) => ms_field("target_ms", ms)?,
            None => DEFAULT_CODEL_TARGET,
        };
        let interval = match c.interval_ms {
            Some(ms) => ms_field("interval_ms", ms)?,
            None => DEFAULT_CODEL_INTERVAL,
        };
        if target >= interval {
            return Err("queue.target_ms must be below queue.interval_ms".to_string());
        }
        let ecn = c.ecn.unwrap_or(true);
        let (target, interval) = (duration_nanos(target), duration_nanos(interval));
        Ok(FqCodel {
            flows: (0..flows)
                .map(|_| Flow {
                    q: Fifo::default(),
                    codel: Codel::new(target, interval, ecn),
                    deficit: 0,
                    listed: false,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            limit,
            quantum: quantum as i64,
            perturbation: rng.next_u64(),
            packets: 0,
            bytes: 0,
            ecn,
            drops: 0,
        })
    }

    pub(super) fn len_packets(&self) -> usize {
        self.packets
    }
    pub(super) fn len_bytes(&self) -> u64 {
        self.bytes
    }
    pub(super) fn marks_ecn(&self) -> bool {
        self.ecn
    }
    /// CE marks of all flow queues' CoDels.
    pub(super) fn marks(&self) -> u64 {
        self.flows.iter().map(|f| f.codel.marks()).sum()
    }

    /// The queue a packet hashes to (§4.1.1).
    fn index(&self, item: &T) -> usize {
        let mut h = item.flow_key() ^ self.perturbation;
        // A final mix so the low bits depend on every input bit.
        h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        (h % self.flows.len() as u64) as usize
    }

    /// §4.1: classify, queue, and activate an idle queue on the new list. At the limit
    /// the fattest queue loses its head packet, returned as `Err`.
    pub(super) fn enqueue(&mut self, now: Instant, size: u64, item: T) -> Result<(), T> {
        let i = self.index(&item);
        let f = &mut self.flows[i];
        f.codel.on_enqueue(size);
        f.q.push(now, size, item);
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new_flows.push_back(i);
        }
        self.packets += 1;
        self.bytes = self.bytes.saturating_add(size);
        if self.packets as u64 > self.limit {
            if let Some(lost) = self.drop_from_fattest() {
                return Err(lost);
            }
        }
        Ok(())
    }

    /// The head packet of the queue with the most bytes (the lowest index on a tie).
    fn drop_from_fattest(&mut self) -> Option<T> {
        let fattest = (0..self.flows.len())
            .max_by_key(|&i| (self.flows[i].q.bytes(), std::cmp::Reverse(i)))?;
        let q = self.flows[fattest].q.pop()?;
        self.packets -= 1;
        self.bytes = self.bytes.saturating_sub(q.size);
        self.drops += 1;
        Some(q.item)
    }

    /// §4.2: deficit round robin over the new list, then the old list, each queue's
    /// CoDel deciding at its head.
    pub(super) fn dequeue(&mut self, now: Instant, dropped: &mut Vec<T>) -> Option<Queued<T>> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i, true),
                None => (*self.old_flows.front()?, false),
            };
            if self.flows[i].deficit <= 0 {
                // Out of credit: a new quantum, and to the end of the old list.
                self.flows[i].deficit += self.quantum;
                self.pop_list(from_new);
                self.old_flows.push_back(i);
                continue;
            }
            let f = &mut self.flows[i];
            let (len_before, bytes_before) = (f.q.len(), f.q.bytes());
            let drops_before = dropped.len();
            let (fq, codel) = (&mut f.q, &mut f.codel);
            let mut pop = || {
                let q = fq.pop()?;
                let left = fq.bytes();
                Some((q, left))
            };
            let got = codel.dequeue(now, &mut pop, dropped);
            self.drops += (dropped.len() - drops_before) as u64;
            self.packets -= len_before - f.q.len();
            self.bytes -= bytes_before - f.q.bytes();
            match got {
                Some(q) => {
                    f.deficit -= i64::try_from(q.size).unwrap_or(i64::MAX);
                    return Some(q);
                }
                None => {
                    // Empty: from the new list to the end of the old one (so it cannot
                    // come back as new at once); from the old list, inactive.
                    self.pop_list(from_new);
                    if from_new {
                        self.old_flows.push_back(i);
                    } else {
                        self.flows[i].listed = false;
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}
