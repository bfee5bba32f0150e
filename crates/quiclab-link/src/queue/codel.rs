//! CoDel's drop state machine (RFC 8289 §5), written from the RFC's description.
//!
//! CoDel decides at dequeue time: when the sojourn time (dequeue time minus enqueue
//! time) of the packets leaving the queue has stayed above `target` for at least one
//! `interval`, it enters the dropping state and drops one packet, then the next ones at
//! `interval / sqrt(count)` spacing (the control law, §5.5/§5.6) until the sojourn time
//! falls below `target` again. With ECN marking on, a packet CoDel would drop is marked
//! CE and sent instead when it is ECN-capable (RFC 8289 §5, RFC 3168 §5), as Linux's
//! `codel_dequeue` does: the mark counts as the drop for the control law. Times are integer nanoseconds; the square root is an
//! integer square root, so every decision is exact and platform independent.

use super::{EcnMark, Queued};
use quiclab_proto::Instant;

/// The per-queue state of RFC 8289 §5.2.
#[derive(Debug)]
pub(super) struct Codel {
    target_ns: u64,
    interval_ns: u64,
    /// When the sojourn time will have been above target for an interval (0: it is not
    /// above target).
    first_above_time: Instant,
    /// When the next drop is due while dropping.
    drop_next: Instant,
    /// Drops in the current dropping state.
    count: u64,
    /// `count` when the previous dropping state ended (§5.5: resume near it).
    lastcount: u64,
    dropping: bool,
    /// The largest packet seen: with at most one such packet queued there is no standing
    /// queue to drain (§5.5, the "maxpacket" check).
    maxpacket: u64,
    drops: u64,
    /// Mark ECN-capable packets instead of dropping them.
    ecn: bool,
    marks: u64,
}

impl Codel {
    pub(super) fn new(target_ns: u64, interval_ns: u64, ecn: bool) -> Self {
        Codel {
            target_ns,
            interval_ns,
            first_above_time: Instant::ZERO,
            drop_next: Instant::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            maxpacket: 0,
            drops: 0,
            ecn,
            marks: 0,
        }
    }

    pub(super) fn drops(&self) -> u64 {
        self.drops
    }
    pub(super) fn marks(&self) -> u64 {
        self.marks
    }
    pub(super) fn marks_ecn(&self) -> bool {
        self.ecn
    }

    /// Marks `item` CE instead of dropping it, if marking is on and it is ECN-capable.
    fn try_mark<T: EcnMark>(&mut self, item: &mut T) -> bool {
        let marked = self.ecn && item.mark_ce();
        if marked {
            self.marks += 1;
        }
        marked
    }

    /// §5.4: the enqueue side only tracks the largest packet.
    pub(super) fn on_enqueue(&mut self, size: u64) {
        self.maxpacket = self.maxpacket.max(size);
    }

    /// §5.6 control law: `t + interval / sqrt(count)`, computed as
    /// `interval * 2^16 / isqrt(count * 2^32)` in integers (16 fractional bits of the
    /// root; the error is far below a nanosecond for realistic intervals).
    fn control_law(&self, t: Instant, count: u64) -> Instant {
        let root = (u128::from(count.max(1)) << 32).isqrt();
        let step = (u128::from(self.interval_ns) << 16) / root;
        t.saturating_add(std::time::Duration::from_nanos(
            u64::try_from(step).unwrap_or(u64::MAX),
        ))
    }

    /// §5.5 `dodequeue`: pops one packet and says whether the sojourn time has been
    /// above target for an interval. `pop` returns the packet and the bytes still queued.
    fn dodequeue<T>(
        &mut self,
        now: Instant,
        pop: &mut impl FnMut() -> Option<(Queued<T>, u64)>,
    ) -> (Option<Queued<T>>, bool) {
        let Some((q, bytes_left)) = pop() else {
            // An empty queue resets the above-target timer.
            self.first_above_time = Instant::ZERO;
            return (None, false);
        };
        let sojourn_ns = now.as_nanos().saturating_sub(q.enqueued_at.as_nanos());
        let mut ok_to_drop = false;
        if sojourn_ns < self.target_ns || bytes_left <= self.maxpacket {
            // Below target, or less than a packet left: not a standing queue.
            self.first_above_time = Instant::ZERO;
        } else if self.first_above_time == Instant::ZERO {
            // Just went above target: give it one interval to drain.
            self.first_above_time = now.saturating_add(interval(self.interval_ns));
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(q), ok_to_drop)
    }

    /// §5.5 dequeue: returns the packet to send; drops go to `dropped`.
    pub(super) fn dequeue<T: EcnMark>(
        &mut self,
        now: Instant,
        pop: &mut impl FnMut() -> Option<(Queued<T>, u64)>,
        dropped: &mut Vec<T>,
    ) -> Option<Queued<T>> {
        let (mut p, mut ok_to_drop) = self.dodequeue(now, pop);
        let Some(mut q) = p.take() else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time went below target: leave the dropping state.
                self.dropping = false;
            }
            // Drop as many packets as the control law says are due by now.
            while self.dropping && now >= self.drop_next {
                if self.try_mark(&mut q.item) {
                    // Marked, not dropped: it counts as this drop and goes out.
                    self.count += 1;
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    return Some(q);
                }
                dropped.push(q.item);
                self.drops += 1;
                self.count += 1;
                (p, ok_to_drop) = self.dodequeue(now, pop);
                let Some(next) = p.take() else {
                    // Drained: an empty queue is never ok to drop (`dodequeue`).
                    self.dropping = false;
                    return None;
                };
                q = next;
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // Enter the dropping state: drop (or mark) this packet and schedule the next.
            if self.try_mark(&mut q.item) {
                p = Some(q);
            } else {
                dropped.push(q.item);
                self.drops += 1;
                (p, _) = self.dodequeue(now, pop);
            }
            self.dropping = true;
            // If we were dropping recently, resume near the previous drop rate instead
            // of starting over at count 1 (§5.5, the 16-interval hysteresis).
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = 1;
            let since_drop_next = now.as_nanos().saturating_sub(self.drop_next.as_nanos());
            if delta > 1 && since_drop_next < self.interval_ns.saturating_mul(16) {
                self.count = delta;
            }
            self.drop_next = self.control_law(now, self.count);
            self.lastcount = self.count;
            return p;
        }
        Some(q)
    }
}

fn interval(ns: u64) -> std::time::Duration {
    std::time::Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use crate::queue::{EcnMark, FlowKey, Queue, QueueConfig};
    use quiclab_proto::{DetRng, Ecn, Instant};

    /// Plain test items are not-ECT.
    impl EcnMark for u64 {
        fn ecn(&self) -> Ecn {
            Ecn::NotEct
        }
        fn mark_ce(&mut self) -> bool {
            false
        }
    }
    impl FlowKey for u64 {
        fn flow_key(&self) -> u64 {
            0
        }
    }

    /// An ECN-capable test item: (sequence number, marked CE).
    #[derive(Debug, PartialEq)]
    struct Ect(u64, bool);
    impl FlowKey for Ect {
        fn flow_key(&self) -> u64 {
            0
        }
    }
    impl EcnMark for Ect {
        fn ecn(&self) -> Ecn {
            if self.1 {
                Ecn::Ce
            } else {
                Ecn::Ect0
            }
        }
        fn mark_ce(&mut self) -> bool {
            self.1 = true;
            true
        }
    }

    fn config(packets: u64, ecn: Option<bool>) -> QueueConfig {
        QueueConfig::Codel {
            packets,
            target_ms: None,
            interval_ms: None,
            ecn,
        }
    }

    fn codel(packets: u64) -> Queue<u64> {
        Queue::new(&config(packets, None), DetRng::new(1)).unwrap()
    }

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    /// Serves one packet per ms from t = 0 to `end_ms`, calling `arrive(t, queue)` first
    /// each ms. Returns (drop times in ms, sojourn times of sent packets in ms).
    fn serve(
        q: &mut Queue<u64>,
        end_ms: u64,
        mut arrive: impl FnMut(u64, &mut Queue<u64>),
    ) -> (Vec<u64>, Vec<(u64, u64)>) {
        let (mut drops, mut sojourns) = (Vec::new(), Vec::new());
        for t in 0..end_ms {
            arrive(t, q);
            let mut dropped = Vec::new();
            if let Some(p) = q.dequeue(ms(t), &mut dropped) {
                sojourns.push((t, (ms(t) - p.enqueued_at).as_millis() as u64));
            }
            drops.extend(dropped.iter().map(|_| t));
        }
        (drops, sojourns)
    }

    #[test]
    fn standing_queue_is_drained_to_target() {
        // Bufferbloat: a 50-packet backlog, then arrivals at exactly the service rate,
        // so without AQM the sojourn time would stay at ~50 ms forever.
        let mut q = codel(1000);
        let mut seq = 0;
        let (drops, sojourns) = serve(&mut q, 3000, |t, q| {
            let n = if t == 0 { 50 } else { 1 };
            for _ in 0..n {
                q.enqueue(ms(t), 1200, seq).unwrap();
                seq += 1;
            }
        });
        // Above target from t = 5 ms; one interval later the first drop.
        assert_eq!(drops[0], 105);
        assert!((40..=50).contains(&drops.len()), "{} drops", drops.len());
        assert_eq!(q.codel_drops(), drops.len() as u64);
        let (_, last) = *sojourns.last().unwrap();
        assert!(last < 5, "sojourn {last} ms");
        assert!(*drops.last().unwrap() < 2500);
    }

    #[test]
    fn control_law_spacing() {
        // A backlog that never drains: drops come interval / sqrt(count) apart.
        let mut q = codel(10_000);
        for i in 0..5000 {
            q.enqueue(ms(0), 1200, i).unwrap();
        }
        let (drops, _) = serve(&mut q, 600, |_, _| {});
        let gaps: Vec<u64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        // 100/sqrt(1), 100/sqrt(2), 100/sqrt(3), 100/sqrt(4), rounded up to the 1 ms
        // service grid.
        assert_eq!(&gaps[..4], &[100, 71, 58, 50]);
    }

    #[test]
    fn short_bursts_are_not_dropped() {
        // 60-packet bursts every 300 ms: above target for ~55 ms at a time, < interval.
        let mut q = codel(1000);
        let mut seq = 0;
        let (drops, sojourns) = serve(&mut q, 3000, |t, q| {
            if t % 300 == 0 {
                for _ in 0..60 {
                    q.enqueue(ms(t), 1200, seq).unwrap();
                    seq += 1;
                }
            }
        });
        assert!(drops.is_empty());
        assert!(sojourns.iter().any(|&(_, s)| s > 50));
        assert_eq!(sojourns.len(), 600);
    }

    #[test]
    fn hard_limit_and_empty_dequeue() {
        let mut q = codel(2);
        let mut dropped = Vec::new();
        assert!(q.dequeue(ms(0), &mut dropped).is_none());
        q.enqueue(ms(0), 100, 1).unwrap();
        q.enqueue(ms(0), 100, 2).unwrap();
        assert_eq!(q.enqueue(ms(0), 100, 3), Err(3));
        assert_eq!(q.len_bytes(), 200);
        assert_eq!(q.dequeue(ms(1), &mut dropped).unwrap().item, 1);
        assert!(dropped.is_empty());
    }

    /// The bufferbloat case of `standing_queue_is_drained_to_target` with ECN-capable
    /// packets: with marking on, CoDel marks where it dropped, at the same first time,
    /// and delivers every packet; with marking off it drops them.
    #[test]
    fn marks_ect_packets_instead_of_dropping() {
        let run = |ecn: Option<bool>| {
            let mut q: Queue<Ect> = Queue::new(&config(1000, ecn), DetRng::new(1)).unwrap();
            let (mut seq, mut sent, mut marked_at, mut drops) = (0, 0, Vec::new(), 0);
            for t in 0..3000 {
                let n = if t == 0 { 50 } else { 1 };
                for _ in 0..n {
                    q.enqueue(ms(t), 1200, Ect(seq, false)).unwrap();
                    seq += 1;
                }
                let mut dropped = Vec::new();
                if let Some(p) = q.dequeue(ms(t), &mut dropped) {
                    sent += 1;
                    if p.item.1 {
                        marked_at.push(t);
                    }
                }
                drops += dropped.len();
            }
            (q, sent, marked_at, drops)
        };
        let (q, sent, marked_at, drops) = run(Some(true));
        assert_eq!((drops, sent), (0, 3000));
        assert_eq!(marked_at[0], 105);
        assert_eq!(q.ecn_marks(), Some(marked_at.len() as u64));
        assert_eq!(q.codel_drops(), 0);
        // Marks do not drain the queue, so the standing queue stays: CoDel keeps marking.
        assert!(marked_at.len() > 40, "{} marks", marked_at.len());
        let (q, _, marked_at, drops) = run(Some(false));
        assert!(marked_at.is_empty() && drops > 0);
        assert_eq!(q.ecn_marks(), None);
    }

    /// Marking on changes nothing for not-ECT packets: the same drops at the same times.
    #[test]
    fn marking_leaves_not_ect_alone() {
        let arrive = |t: u64, q: &mut Queue<u64>| {
            for _ in 0..(if t == 0 { 50 } else { 1 }) {
                q.enqueue(ms(t), 1200, t).unwrap();
            }
        };
        let mut plain = codel(1000);
        let mut marking = Queue::new(&config(1000, Some(true)), DetRng::new(1)).unwrap();
        let a = serve(&mut plain, 3000, arrive);
        let b = serve(&mut marking, 3000, arrive);
        assert!(!a.0.is_empty());
        assert_eq!(a, b);
        assert_eq!(marking.ecn_marks(), Some(0));
    }

    /// A full queue drops an arrival whatever its codepoint.
    #[test]
    fn hard_limit_drops_ect() {
        let mut q: Queue<Ect> = Queue::new(&config(2, Some(true)), DetRng::new(1)).unwrap();
        q.enqueue(ms(0), 100, Ect(1, false)).unwrap();
        q.enqueue(ms(0), 100, Ect(2, false)).unwrap();
        assert_eq!(q.enqueue(ms(0), 100, Ect(3, false)), Err(Ect(3, false)));
    }
}
