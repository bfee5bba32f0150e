//! One link direction: impairments at the entry, a transmit queue, serialization at
//! the link rate, then propagation delay (plus jitter). Packets that overflow the
//! queue, exceed the MTU, meet an outage or an impairment are dropped and counted.

use crate::config::LinkChange;
use crate::impair::{Fate, Impairments};
use crate::pcap::PcapWriter;
use crate::queue::{DualPi2Report, EcnMark, FlowKey, Queue, QueueReport};
use crate::time::saturating_secs;
use crate::trace::LinkTrace;
use quiclab_proto::{Ecn, Instant};
use serde::Serialize;
use std::io::BufWriter;
use std::net::SocketAddrV4;
use std::time::Duration;

/// IPv4 (20) + UDP (8) header bytes added to every datagram on the wire.
pub const IP_UDP_OVERHEAD: u64 = 28;
/// IPv4 header bytes around a TCP segment.
pub const IP_OVERHEAD: u64 = 20;

/// A link rate in bit/s from Mbit/s, at least 1 (validation refuses lower rates; `as`
/// saturates above).
pub fn rate_bps(mbps: f64) -> u64 {
    ((mbps * 1e6).round() as u64).max(1)
}

/// A datagram in the network.
#[derive(Clone, Debug)]
pub struct Packet {
    pub src: SocketAddrV4,
    pub dst: SocketAddrV4,
    pub payload: Vec<u8>,
    /// Index of the route it follows and of the current hop on it.
    pub route: usize,
    pub hop: usize,
    /// UDP cross traffic (not QUIC): discarded by the receiving host.
    pub cross: bool,
    /// Extra delay decided by the current link's jitter.
    pub extra_delay: Duration,
    pub reorder: bool,
    /// The payload is a TCP segment (header included): only IPv4's 20 bytes are added.
    pub tcp: bool,
    /// The IP header's ECN codepoint, as sent and as queues mark it.
    pub ecn: Ecn,
}

impl EcnMark for Packet {
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    /// RFC 3168 §5: a queue may set CE on an ECN-capable packet instead of dropping it.
    fn mark_ce(&mut self) -> bool {
        if self.ecn.is_ect() {
            self.ecn = Ecn::Ce;
        }
        self.ecn.is_ect()
    }
}

impl FlowKey for Packet {
    /// FNV-1a over the 5-tuple: source address and port, destination address and
    /// port, protocol (TCP 6, UDP 17).
    fn flow_key(&self) -> u64 {
        let proto = if self.tcp { 6u8 } else { 17 };
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let bytes = self
            .src
            .ip()
            .octets()
            .into_iter()
            .chain(self.src.port().to_be_bytes())
            .chain(self.dst.ip().octets())
            .chain(self.dst.port().to_be_bytes())
            .chain([proto]);
        for b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }
}

impl Packet {
    /// A QUIC/UDP datagram entering a path at its first hop (route 0), as the
    /// emulator and its bench feed [`crate::duplex::Duplex`].
    pub fn datagram(src: SocketAddrV4, dst: SocketAddrV4, payload: Vec<u8>) -> Packet {
        Packet {
            src,
            dst,
            payload,
            route: 0,
            hop: 0,
            cross: false,
            extra_delay: Duration::ZERO,
            reorder: false,
            tcp: false,
            ecn: Ecn::NotEct,
        }
    }

    /// Bytes on the wire: UDP payload plus IPv4 and UDP headers (a TCP segment plus
    /// the IPv4 header).
    pub fn wire_size(&self) -> u64 {
        self.payload.len() as u64
            + if self.tcp {
                IP_OVERHEAD
            } else {
                IP_UDP_OVERHEAD
            }
    }
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Wire bytes that started transmission inside the measurement window.
    pub window_bytes: u64,
    /// UDP payload (QUIC-layer) bytes of those packets.
    pub window_payload_bytes: u64,
    pub queue_drops: u64,
    pub impairment_drops: u64,
    pub mtu_drops: u64,
    pub outage_drops: u64,
    pub max_queue_packets: u64,
    pub queue_series: Vec<(f64, u64)>,
}

/// One link direction's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkResult {
    pub name: String,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Wire throughput (IP packets) over the measurement window, bit/s.
    pub throughput_bps: f64,
    /// UDP payload (QUIC-layer) throughput over the measurement window, bit/s.
    pub payload_throughput_bps: f64,
    pub queue_drops: u64,
    pub impairment_drops: u64,
    /// Datagrams passed corrupted (`impairments.corrupt`); absent when none were, so
    /// results without corruption keep their shape.
    #[serde(skip_serializing_if = "is_zero")]
    pub corrupted_packets: u64,
    pub max_queue_packets: u64,
    /// Packets the queue marked CE instead of dropping; absent when it does not mark
    /// (so results without ECN marking keep their shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_marks: Option<u64>,
    /// Sojourn-time quantiles (ms) of the packets the queue sent inside the
    /// measurement window (`None`: none), from a bounded histogram (within 1.6 %).
    pub sojourn_p50_ms: Option<f64>,
    pub sojourn_p95_ms: Option<f64>,
    pub sojourn_p99_ms: Option<f64>,
    /// Per sub-queue counters of the disciplines that have several (DualPI2: `l`, `c`);
    /// absent for the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subqueues: Vec<QueueReport>,
    /// DualPI2's time average of p' and p'² over the window's PI updates; absent for
    /// other disciplines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dualpi2: Option<DualPi2Report>,
    /// (time s, queue length in packets) at each change, if traces are on.
    pub queue_series: Vec<(f64, u64)>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a link asks its driver (the simulator, a [`crate::duplex::Duplex`]) to schedule.
pub enum LinkAction {
    /// Transmission of `Packet` ends at `Instant`.
    TxDone(Instant, Packet),
    /// Call [`Link::start_next`] at `Instant`: the next delivery opportunity of a
    /// trace-driven link (never returned without a Mahimahi trace).
    Wake(Instant),
}

/// One direction of a link.
pub struct Link {
    pub name: String,
    /// Bits per second; `None` = unlimited.
    pub rate_bps: Option<u64>,
    pub delay: Duration,
    pub mtu: u64,
    queue: Queue<Packet>,
    pub impairments: Impairments,
    busy: bool,
    /// Sub-nanosecond remainder of serialization times, so rates are exact on average.
    carry: u128,
    last_delivery: Instant,
    pub down_until: Option<Instant>,
    pub stats: LinkStats,
    pub traces: bool,
    pub pcap: Option<PcapWriter<BufWriter<std::fs::File>>>,
    /// Measurement window for `window_bytes`.
    pub window: (Instant, Instant),
    /// Delivery, delay and loss traces (`None`: the constant link, on its fast path).
    trace: Option<Box<LinkTrace>>,
    /// Tests: every arrival through the queue (`arrive`'s pass-through off), to check
    /// that both ways agree.
    #[cfg(test)]
    no_pass_through: bool,
}

impl Link {
    pub fn new(
        name: String,
        rate_bps: Option<u64>,
        delay: Duration,
        mtu: u64,
        queue: Queue<Packet>,
        impairments: Impairments,
    ) -> Self {
        Link {
            name,
            rate_bps,
            delay,
            mtu,
            queue,
            impairments,
            busy: false,
            carry: 0,
            last_delivery: Instant::ZERO,
            down_until: None,
            stats: LinkStats::default(),
            traces: false,
            pcap: None,
            window: (Instant::ZERO, Instant::MAX),
            trace: None,
            #[cfg(test)]
            no_pass_through: false,
        }
    }

    /// The link driven by `trace` (delivery opportunities in place of the rate, delay
    /// and loss steps).
    pub fn with_trace(mut self, trace: LinkTrace) -> Link {
        self.trace = Some(Box::new(trace));
        self
    }

    /// A packet arrives at the link's input.
    pub fn arrive(&mut self, now: Instant, mut pkt: Packet) -> Option<LinkAction> {
        if self.down_until.is_some_and(|t| now < t) {
            self.stats.outage_drops += 1;
            return None;
        }
        if pkt.wire_size() > self.mtu {
            self.stats.mtu_drops += 1;
            return None;
        }
        // The loss trace draws first, whatever the impairments decide (trace/mod.rs).
        let trace_lost = match self.trace.as_deref_mut() {
            None => false,
            Some(t) => t.lose(now),
        };
        match self.impairments.on_datagram(now, &pkt.payload) {
            Fate::Drop(_) => {
                self.stats.impairment_drops += 1;
                return None;
            }
            Fate::Pass {
                extra_delay,
                reorder,
                duplicate,
                corrupt,
            } => {
                if trace_lost {
                    self.stats.impairment_drops += 1;
                    return None;
                }
                // UDP only (`impair/corrupt.rs`); a duplicate is a copy of the
                // corrupted datagram.
                if corrupt && !pkt.tcp {
                    self.impairments.corrupt(&mut pkt.payload);
                }
                pkt.extra_delay = extra_delay;
                pkt.reorder = reorder;
                pkt.ecn = self.impairments.remark(pkt.ecn);
                if duplicate {
                    self.enqueue(now, pkt.clone());
                } else if !self.busy && self.trace.is_none() {
                    return self.pass_through(now, pkt);
                }
            }
        }
        self.enqueue(now, pkt);
        if self.busy {
            None
        } else {
            self.start_next(now)
        }
    }

    // Inlined: a call moves the 72-byte `Packet` once more through the stack
    // (callgrind, issue 29).
    #[inline(always)]
    fn enqueue(&mut self, now: Instant, pkt: Packet) {
        let size = pkt.wire_size();
        if self.queue.enqueue(now, size, pkt).is_err() {
            self.stats.queue_drops += 1;
            return;
        }
        self.note_queue(now);
    }

    /// A packet at an idle link without a trace: `enqueue` then `start_next` (which
    /// would dequeue it at once), with the packet kept out of the queue where
    /// [`Queue::passes_through`] says the queue would only have held it for this
    /// instant. Everything else is done as those two calls (and `take_next`) do it, in
    /// their order: the queue length noted with the packet in (1), the recording flag
    /// set, the sojourn recorded, the length noted again (0), then the packet counted
    /// and sent.
    // Inlined into `arrive` for the same reason as `enqueue`.
    #[inline(always)]
    fn pass_through(&mut self, now: Instant, pkt: Packet) -> Option<LinkAction> {
        let size = pkt.wire_size();
        #[cfg(test)]
        let general = self.no_pass_through || !self.queue.passes_through(size);
        #[cfg(not(test))]
        let general = !self.queue.passes_through(size);
        if general {
            self.enqueue(now, pkt);
            return self.start_next(now);
        }
        self.note_len(now, 1);
        self.queue
            .set_recording(now >= self.window.0 && now < self.window.1);
        self.queue.record_passed();
        self.note_len(now, 0);
        self.busy = true;
        self.count_sent(now, &pkt);
        let tx = self.serialization(size);
        Some(LinkAction::TxDone(now + tx, pkt))
    }

    fn note_queue(&mut self, now: Instant) {
        self.note_len(now, self.queue.len_packets() as u64);
    }

    fn note_len(&mut self, now: Instant, len: u64) {
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(len);
        if self.traces {
            self.stats.queue_series.push((now.as_secs_f64(), len));
        }
    }

    /// Starts transmitting the next queued packet, if any.
    pub fn start_next(&mut self, now: Instant) -> Option<LinkAction> {
        if self.trace.is_some() {
            return self.start_next_traced(now);
        }
        let pkt = self.take_next(now)?;
        let tx = self.serialization(pkt.wire_size());
        Some(LinkAction::TxDone(now + tx, pkt))
    }

    /// [`Self::start_next`] with a trace: a Mahimahi trace's opportunities decide when
    /// the packet leaves (`trace/mahimahi.rs`); without one, the rate does.
    fn start_next_traced(&mut self, now: Instant) -> Option<LinkAction> {
        let trace = self.trace.as_deref_mut()?;
        if let Some(at) = trace.opportunities.as_mut().and_then(|o| o.ready(now)) {
            // Packets wait in the queue (where AQMs see them) until the opportunity.
            self.busy = true;
            return Some(LinkAction::Wake(at));
        }
        let pkt = self.take_next(now)?;
        let size = pkt.wire_size();
        let done = match self
            .trace
            .as_deref_mut()
            .and_then(|t| t.opportunities.as_mut())
        {
            Some(o) => o.send(now, size),
            None => now + self.serialization(size),
        };
        Some(LinkAction::TxDone(done, pkt))
    }

    /// Dequeues the next packet at `now` and counts it (window bytes, pcap); `None`
    /// leaves the link idle.
    // Inlined into `start_next` for the same reason as `enqueue`: the returned packet
    // is built in place of the `LinkAction` rather than moved twice.
    #[inline(always)]
    fn take_next(&mut self, now: Instant) -> Option<Packet> {
        let mut dropped = Vec::new();
        self.queue
            .set_recording(now >= self.window.0 && now < self.window.1);
        let next = self.queue.dequeue(now, &mut dropped);
        self.stats.queue_drops += dropped.len() as u64;
        let Some(q) = next else {
            self.busy = false;
            return None;
        };
        self.note_queue(now);
        self.busy = true;
        let pkt = q.item;
        self.count_sent(now, &pkt);
        Some(pkt)
    }

    /// A packet starts transmission at `now`: window bytes, pcap.
    #[inline(always)]
    fn count_sent(&mut self, now: Instant, pkt: &Packet) {
        let size = pkt.wire_size();
        if now >= self.window.0 && now < self.window.1 {
            self.stats.window_bytes += size;
            self.stats.window_payload_bytes += pkt.payload.len() as u64;
        }
        if let Some(p) = self.pcap.as_mut() {
            // A failed pcap write loses the capture, not the run.
            let written = if pkt.tcp {
                p.write_tcp(now, pkt.src, pkt.dst, pkt.ecn, &pkt.payload)
            } else {
                p.write_udp(now, pkt.src, pkt.dst, pkt.ecn, &pkt.payload)
            };
            if written.is_err() {
                self.pcap = None;
            }
        }
    }

    /// Serialization time of `size` bytes at the link rate (zero when unlimited).
    fn serialization(&mut self, size: u64) -> Duration {
        match self.rate_bps {
            None => Duration::ZERO,
            Some(rate) => {
                // A zero rate is refused by scenario validation; 1 bit/s is the floor here.
                let rate = u128::from(rate.max(1));
                let total = u128::from(size) * 8 * 1_000_000_000 + self.carry;
                self.carry = total % rate;
                Duration::from_nanos(u64::try_from(total / rate).unwrap_or(u64::MAX))
            }
        }
    }

    /// The packet finished serializing at `now`; returns when it reaches the far end.
    pub fn delivery_time(&mut self, now: Instant, pkt: &Packet) -> Instant {
        let (delay, fifo) = match self.trace.as_deref() {
            None => (self.delay, !pkt.reorder),
            Some(t) => t.delivery_rule(now, self.delay, pkt.reorder),
        };
        let mut at = now + delay + pkt.extra_delay;
        if fifo {
            at = at.max(self.last_delivery);
        }
        self.last_delivery = self.last_delivery.max(at);
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += pkt.wire_size();
        at
    }

    /// Applies a scheduled change (`[[schedule]]`) at `now`: the new rate and delay
    /// take effect for packets that start transmission (rate) or finish it (delay) from
    /// now on; a new loss model replaces the old one; an outage drops every arrival until
    /// `now + outage_s`. The simulator and the real-time emulator both call this.
    pub fn apply_change(&mut self, now: Instant, c: &LinkChange) {
        if let Some(r) = c.rate_mbps {
            self.rate_bps = Some(rate_bps(r));
        }
        if let Some(d) = c.delay_ms {
            self.delay = saturating_secs(d / 1000.0);
        }
        if let Some(loss) = &c.loss {
            self.impairments.set_loss(loss.clone());
        }
        if let Some(o) = c.outage_s {
            self.down_until = Some(now + saturating_secs(o));
        }
    }

    /// This direction's results over a measurement window `span_s` seconds long (the
    /// throughputs are window bytes over the span; 0 for an empty span).
    pub fn result(&self, span_s: f64) -> LinkResult {
        let rate = |bytes: u64| {
            if span_s > 0.0 {
                bytes as f64 * 8.0 / span_s
            } else {
                0.0
            }
        };
        LinkResult {
            name: self.name.clone(),
            delivered_packets: self.stats.delivered_packets,
            delivered_bytes: self.stats.delivered_bytes,
            throughput_bps: rate(self.stats.window_bytes),
            payload_throughput_bps: rate(self.stats.window_payload_bytes),
            queue_drops: self.stats.queue_drops,
            impairment_drops: self.stats.impairment_drops
                + self.stats.outage_drops
                + self.stats.mtu_drops,
            corrupted_packets: self.impairments.stats().corrupted,
            max_queue_packets: self.stats.max_queue_packets,
            ecn_marks: self.queue.ecn_marks(),
            sojourn_p50_ms: self.queue.sojourn().quantile_ms(0.5),
            sojourn_p95_ms: self.queue.sojourn().quantile_ms(0.95),
            sojourn_p99_ms: self.queue.sojourn().quantile_ms(0.99),
            subqueues: self.queue.subqueues(),
            dualpi2: self.queue.dualpi2_report(),
            queue_series: self.stats.queue_series.clone(),
        }
    }

    /// The transmit queue (its counters, DualPI2's probabilities).
    pub fn queue(&self) -> &Queue<Packet> {
        &self.queue
    }

    /// Packets waiting in the transmit queue now (the one being serialized excluded).
    pub fn queued_packets(&self) -> usize {
        self.queue.len_packets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{EcnImpairment, ImpairmentConfig};
    use crate::queue::QueueConfig;
    use quiclab_proto::DetRng;
    use std::net::Ipv4Addr;

    fn link(queue: QueueConfig, ecn: Option<EcnImpairment>) -> Link {
        let impairments = ImpairmentConfig {
            ecn,
            ..Default::default()
        };
        Link::new(
            "l".to_string(),
            Some(rate_bps(1.0)),
            Duration::from_millis(10),
            1500,
            Queue::new(&queue, DetRng::new(3)).unwrap(),
            Impairments::new(&impairments, DetRng::new(7)).unwrap(),
        )
    }

    fn packet(ecn: Ecn) -> Packet {
        let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1);
        Packet {
            ecn,
            ..Packet::datagram(a, a, vec![0; 1172])
        }
    }

    /// The codepoint of the packet that starts transmission for `ecn` sent.
    fn sent_as(l: &mut Link, ecn: Ecn) -> Ecn {
        match l.arrive(Instant::ZERO, packet(ecn)) {
            Some(LinkAction::TxDone(_, p)) => p.ecn,
            _ => panic!("the link was idle"),
        }
    }

    /// A corrupted UDP datagram leaves with exactly `bytes` bytes changed; a TCP
    /// segment passes unchanged.
    #[test]
    fn corruption_changes_udp_payloads_only() {
        let impairments = ImpairmentConfig {
            corrupt: Some(crate::impair::Corrupt {
                p: 1.0,
                bytes: 3,
                within_bytes: None,
            }),
            ..Default::default()
        };
        let mut l = Link::new(
            "l".to_string(),
            None,
            Duration::ZERO,
            1500,
            Queue::new(&QueueConfig::default(), DetRng::new(3)).unwrap(),
            Impairments::new(&impairments, DetRng::new(7)).unwrap(),
        );
        let sent = packet(Ecn::NotEct);
        let Some(LinkAction::TxDone(_, p)) = l.arrive(Instant::ZERO, sent.clone()) else {
            panic!("the link was idle");
        };
        let changed = (sent.payload.iter().zip(&p.payload))
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(changed, 3);
        let tcp = Packet {
            tcp: true,
            ..sent.clone()
        };
        let Some(LinkAction::TxDone(_, p)) = l
            .start_next(Instant::ZERO)
            .or_else(|| l.arrive(Instant::ZERO, tcp))
        else {
            panic!("the link was idle");
        };
        assert_eq!(p.payload, sent.payload);
    }

    /// The pass-through of an arrival at an idle link agrees with the way through the
    /// queue: two links, one with it off, get the same arrivals (sizes up to past a
    /// byte limit, bursts and gaps, so the link is idle or busy, the queue empty or
    /// full, the window opening and closing) and must send the same packets at the
    /// same times and report the same results (drops, maximum length, the queue length
    /// series, sojourn quantiles, window bytes). Drop-tail by packets and by bytes,
    /// unlimited rate (the access links), and CoDel (never passed through).
    #[test]
    fn pass_through_agrees_with_the_queue() {
        let queues = [
            (QueueConfig::default(), Some(rate_bps(1.0))),
            (
                QueueConfig::DropTail {
                    packets: Some(3),
                    bytes: Some(1_000),
                },
                Some(rate_bps(2.0)),
            ),
            (QueueConfig::default(), None),
            (
                QueueConfig::Codel {
                    packets: 5,
                    target_ms: None,
                    interval_ms: None,
                    ecn: Some(true),
                },
                Some(rate_bps(1.0)),
            ),
        ];
        let mut passed = 0;
        for (queue, rate) in queues {
            let mut pair = [true, false].map(|general| {
                let mut l = link(queue.clone(), None);
                l.rate_bps = rate;
                l.traces = true;
                l.window = (Instant::from_millis(300), Instant::from_millis(1_500));
                l.no_pass_through = general;
                l
            });
            let mut rng = DetRng::new(11);
            let mut now = Instant::ZERO;
            // Each link's transmission in progress (done at, packet).
            let mut tx: [Option<(Instant, Packet)>; 2] = [None, None];
            for _ in 0..3_000 {
                now += Duration::from_micros(rng.range(0, 20_000));
                for (l, t) in pair.iter_mut().zip(tx.iter_mut()) {
                    while let Some((at, _)) = t.as_ref().filter(|(at, _)| *at <= now) {
                        let at = *at;
                        *t = l.start_next(at).map(|a| match a {
                            LinkAction::TxDone(at, p) => (at, p),
                            LinkAction::Wake(_) => unreachable!("no trace"),
                        });
                    }
                }
                let size = rng.range(20, 2_100) as usize;
                let ecn = [Ecn::NotEct, Ecn::Ect0][rng.range(0, 2) as usize];
                let mut sent = [None, None];
                for ((l, t), s) in pair.iter_mut().zip(tx.iter_mut()).zip(&mut sent) {
                    let idle = t.is_none();
                    let p = Packet {
                        ecn,
                        ..packet(Ecn::NotEct)
                    };
                    let p = Packet {
                        payload: vec![1; size.min(1472)],
                        ..p
                    };
                    if let Some(LinkAction::TxDone(at, p)) = l.arrive(now, p) {
                        assert!(idle, "only an idle link starts a transmission");
                        *s = Some((at, p.ecn, p.payload.len()));
                        *t = Some((at, p));
                    }
                }
                assert_eq!(sent[0], sent[1]);
                passed += usize::from(sent[0].is_some());
                let [x, y] = tx
                    .each_ref()
                    .map(|t| t.as_ref().map(|(at, p)| (*at, p.ecn)));
                assert_eq!(x, y);
            }
            let [a, b] = &pair;
            assert_eq!(a.result(1.2), b.result(1.2));
            assert_eq!(a.queued_packets(), b.queued_packets());
        }
        assert!(passed > 1_000, "{passed} arrivals at an idle link");
    }

    #[test]
    fn impairment_rewrites_the_codepoint() {
        let mut l = link(QueueConfig::default(), Some(EcnImpairment::RemarkEct1));
        assert_eq!(sent_as(&mut l, Ecn::Ect0), Ecn::Ect1);
        let mut l = link(QueueConfig::default(), None);
        assert_eq!(sent_as(&mut l, Ecn::Ect0), Ecn::Ect0);
        assert_eq!(l.result(1.0).ecn_marks, None);
    }

    /// A standing queue behind CoDel with marking: ECT packets are marked CE and
    /// delivered, counted in the results; none is dropped.
    #[test]
    fn codel_marks_are_counted() {
        let codel = QueueConfig::Codel {
            packets: 1000,
            target_ms: None,
            interval_ms: None,
            ecn: Some(true),
        };
        let mut l = link(codel, None);
        // 1 Mbit/s, 1200-byte packets: 9.6 ms each; 100 queued = ~1 s of backlog.
        let mut now = Instant::ZERO;
        let mut action = None;
        for _ in 0..100 {
            action = action.or(l.arrive(now, packet(Ecn::Ect0)));
        }
        let mut ce = 0;
        while let Some(LinkAction::TxDone(at, p)) = action.take() {
            ce += u64::from(p.ecn == Ecn::Ce);
            now = at;
            action = l.start_next(now);
        }
        let r = l.result(1.0);
        assert!(ce > 0);
        assert_eq!(r.ecn_marks, Some(ce));
        assert_eq!(r.queue_drops, 0);
    }
}
