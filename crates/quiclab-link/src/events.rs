//! The event queue: time jumps from event to event (no fixed ticks); events
//! at the same time run in the order they were scheduled.
//!
//! Re-armable timers (one per key, e.g. per endpoint) live beside the heap: re-arming
//! replaces the entry instead of leaving a stale one behind. A receiver re-arms its idle
//! deadline (~30 s ahead) on every packet, so stale heap entries would otherwise pile up
//! by the hundred thousand and make every pop walk a deep heap. Timers and events share
//! one sequence counter, so the order at equal times is still the scheduling order.
//!
//! FIFO lanes (one per link in the simulator): events a caller schedules in nondecreasing
//! time per lane (a link's deliveries: constant propagation after serialization in
//! order) wait in the lane's queue, and only each lane's first event sits in the heap,
//! so the heap stays as small as the number of links plus the other events. An event
//! earlier than its lane's last goes to the heap instead, so the order is still exactly
//! (time, scheduling order).
//!
//! The timers themselves are an indexed binary heap with one entry per armed key
//! (`events/timers.rs`): the simulator re-arms a node's timer after nearly every datagram,
//! and moving the key's entry in place costs a few comparisons.

use quiclab_proto::Instant;
use std::cmp::Ordering;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};
use timers::Timers;

mod timers;

/// `Key::slot` with this bit set names a lane (the rest of the bits) whose first event
/// the key stands for.
const LANE: u32 = 1 << 31;

/// A heap entry: the ordering key and the slot of its event in `EventQueue::events`, or
/// a lane (`LANE`) (the heap sifts 24-byte keys; the payloads stay where they are).
#[derive(Clone, Copy)]
struct Key {
    at: Instant,
    seq: u64,
    slot: u32,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    /// Reversed, so the max-heap yields the earliest (then first-scheduled) entry.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// What [`EventQueue::pop`] yields.
#[derive(Debug, PartialEq, Eq)]
pub enum Next<E> {
    Event(E),
    /// The timer of this key expired (it is disarmed now).
    Timer(usize),
}

/// A priority queue of events and re-armable timers, in the caller's time (virtual in
/// the simulator; time since start on the wall clock in the emulator).
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    /// The events' payloads, by `Key::slot`; freed slots are reused (`free`).
    events: Vec<Option<E>>,
    free: Vec<u32>,
    /// FIFO lanes of (time, seq, event), each in (time, seq) order; a non-empty lane has
    /// one heap key, its first event's.
    lanes: Vec<VecDeque<(Instant, u64, E)>>,
    /// Events waiting in the lanes, and the lanes that have some (their keys are in
    /// the heap).
    in_lanes: usize,
    busy_lanes: usize,
    seq: u64,
    /// The armed timers (deadline, seq, key), earliest first.
    timers: Timers,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            events: Vec::new(),
            free: Vec::new(),
            lanes: Vec::new(),
            in_lanes: 0,
            busy_lanes: 0,
            seq: 0,
            timers: Timers::default(),
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `at`.
    pub fn push(&mut self, at: Instant, event: E) {
        self.seq += 1;
        self.push_heap(at, self.seq, event);
    }

    /// Schedules `event` at `at` in FIFO lane `lane`: the same order as [`push`](Self::push),
    /// cheaper when a lane's events come in nondecreasing time (an earlier one than
    /// the lane's last is scheduled as by `push`).
    pub fn push_lane(&mut self, lane: usize, at: Instant, event: E) {
        self.seq += 1;
        if self.lanes.len() <= lane {
            assert!(lane < LANE as usize, "under 2^31 lanes");
            self.lanes.resize_with(lane + 1, VecDeque::new);
        }
        let q = &mut self.lanes[lane];
        match q.back() {
            Some(&(last, _, _)) if at < last => return self.push_heap(at, self.seq, event),
            Some(_) => {}
            None => {
                self.busy_lanes += 1;
                self.heap.push(Key {
                    at,
                    seq: self.seq,
                    slot: LANE | lane as u32,
                });
            }
        }
        q.push_back((at, self.seq, event));
        self.in_lanes += 1;
    }

    fn push_heap(&mut self, at: Instant, seq: u64, event: E) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.events[slot as usize] = Some(event);
                slot
            }
            None => {
                let slot = u32::try_from(self.events.len()).expect("under 2^32 pending events");
                self.events.push(Some(event));
                slot
            }
        };
        self.heap.push(Key { at, seq, slot });
    }

    /// The deadline of `key`'s timer, if armed.
    pub fn timer(&self, key: usize) -> Option<Instant> {
        self.timers.get(key).map(|(at, _)| at)
    }

    /// Arms `key`'s timer at `at` (replacing its previous deadline), or disarms it.
    pub fn set_timer(&mut self, key: usize, at: Option<Instant>) {
        let entry = at.map(|at| {
            self.seq += 1;
            (at, self.seq)
        });
        self.timers.set(key, entry);
    }

    /// Whether the next item is a timer (else an event, or nothing).
    #[inline]
    fn timer_first(&self) -> bool {
        match (self.heap.peek(), self.timers.peek()) {
            (Some(e), Some(&(at, seq, _))) => (at, seq) < (e.at, e.seq),
            (None, t) => t.is_some(),
            (Some(_), None) => false,
        }
    }

    /// The time of the next event or timer.
    pub fn peek_time(&self) -> Option<Instant> {
        if self.timer_first() {
            self.timers.peek().map(|t| t.0)
        } else {
            self.heap.peek().map(|e| e.at)
        }
    }

    /// Removes the next event or expired timer.
    pub fn pop(&mut self) -> Option<(Instant, Next<E>)> {
        if self.timer_first() {
            self.pop_timer()
        } else {
            self.pop_event()
        }
    }

    /// [`pop`](Self::pop) if the next item is due at `now` or earlier, else `None`: the
    /// simulator's loop in one call instead of [`peek_time`](Self::peek_time) then `pop`
    /// (which would decide twice whether a timer or an event comes first).
    ///
    /// Inlined, with the pops out of line: most calls find nothing due (the loop then
    /// settles nodes or advances time), and that answer is a few comparisons.
    #[inline]
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, Next<E>)> {
        if self.timer_first() {
            if self.timers.peek()?.0 > now {
                return None;
            }
            self.pop_timer()
        } else {
            if self.heap.peek()?.at > now {
                return None;
            }
            self.pop_event()
        }
    }

    #[inline(never)]
    fn pop_timer(&mut self) -> Option<(Instant, Next<E>)> {
        let (at, _, key) = self.timers.pop()?;
        Some((at, Next::Timer(key)))
    }

    #[inline(never)]
    fn pop_event(&mut self) -> Option<(Instant, Next<E>)> {
        let mut top = self.heap.peek_mut()?;
        if top.slot & LANE != 0 {
            let q = &mut self.lanes[(top.slot & !LANE) as usize];
            let (at, _, event) = q.pop_front().expect("a lane's key has an event");
            self.in_lanes -= 1;
            match q.front() {
                // The lane's next event takes the key (sifted down when `top` drops).
                Some(&(next, seq, _)) => (top.at, top.seq) = (next, seq),
                None => {
                    PeekMut::pop(top);
                    self.busy_lanes -= 1;
                }
            }
            return Some((at, Next::Event(event)));
        }
        let key = PeekMut::pop(top);
        self.free.push(key.slot);
        let event = self.events[key.slot as usize]
            .take()
            .expect("live event slot");
        Some((key.at, Next::Event(event)))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.busy_lanes + self.in_lanes + self.timers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Storage for values referenced by events (packets on a link), so the event heap
/// holds small indices instead of moving whole packets on every sift. Freed slots are
/// reused, so steady state allocates nothing.
pub struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value`; returns its key.
    pub fn insert(&mut self, value: T) -> usize {
        match self.free.pop() {
            Some(k) => {
                self.slots[k] = Some(value);
                k
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        }
    }

    /// The value stored under `key` (panics if it was removed: a simulator bug).
    pub fn get(&self, key: usize) -> &T {
        self.slots[key].as_ref().expect("live slab key")
    }

    /// Removes and returns the value under `key`.
    pub fn remove(&mut self, key: usize) -> T {
        let v = self.slots[key].take().expect("live slab key");
        self.free.push(key);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Instant::from_millis(5), "c");
        q.push(Instant::from_millis(1), "a");
        q.push(Instant::from_millis(5), "d");
        q.push(Instant::from_millis(1), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let ev = Next::Event;
        assert_eq!(order, [ev("a"), ev("b"), ev("c"), ev("d")]);
    }

    #[test]
    fn timers_interleave_in_scheduling_order_and_rearm() {
        let mut q = EventQueue::new();
        q.set_timer(1, Some(Instant::from_millis(1)));
        q.push(Instant::from_millis(1), "a");
        q.set_timer(0, Some(Instant::from_millis(9)));
        q.set_timer(0, Some(Instant::from_millis(2))); // replaces 9 ms
        q.set_timer(2, Some(Instant::from_millis(3)));
        q.set_timer(2, None);
        q.push(Instant::from_millis(2), "b");
        assert_eq!(q.timer(0), Some(Instant::from_millis(2)));
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        use Next::{Event, Timer};
        assert_eq!(order, [Timer(1), Event("a"), Timer(0), Event("b")]);
        assert_eq!(q.timer(0), None);
    }

    /// Many re-arms, disarms and pops against a plain model: the armed timers, fired in
    /// (deadline, arming order), with few keys (a shallow heap) and many (entries moved
    /// up and down several levels).
    #[test]
    fn timers_match_a_model_under_many_rearms() {
        for keys in [7, 61] {
            timers_against_model(keys);
        }
    }

    fn timers_against_model(keys: usize) {
        let mut q: EventQueue<()> = EventQueue::new();
        let mut model: Vec<Option<(u64, u64)>> = vec![None; keys];
        let mut seq = 0;
        let mut x: u64 = 1;
        for round in 0..6000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (x >> 33) as usize % keys;
            let at = round + (x >> 40) % 50;
            let disarm = (x >> 20).is_multiple_of(9);
            seq += 1;
            model[key] = (!disarm).then_some((at, seq));
            q.set_timer(key, (!disarm).then(|| Instant::from_millis(at)));
            assert_eq!(q.len(), model.iter().flatten().count());
            assert_eq!(
                q.timer(key),
                model[key].map(|(a, _)| Instant::from_millis(a))
            );
            if round % 5 == 0 {
                let next = (0..keys)
                    .filter_map(|k| model[k].map(|(a, s)| (a, s, k)))
                    .min();
                let got = q.pop();
                match next {
                    Some((a, _, k)) => {
                        model[k] = None;
                        assert_eq!(got, Some((Instant::from_millis(a), Next::Timer(k))));
                    }
                    None => assert_eq!(got, None),
                }
            }
        }
    }

    /// Lanes and the heap against a plain model: whatever the lanes and times (in
    /// order within a lane or not), events come out in (time, scheduling order).
    #[test]
    fn lanes_keep_time_then_scheduling_order() {
        let mut q: EventQueue<u64> = EventQueue::new();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 7;
        for n in 0..4000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly increasing times per lane, sometimes an earlier one (jitter).
            let at = n / 3 + (x >> 58) % 3 + if (x >> 20).is_multiple_of(17) { 0 } else { 20 };
            match (x >> 33) % 4 {
                3 => q.push(Instant::from_millis(at), n),
                lane => q.push_lane(lane as usize, Instant::from_millis(at), n),
            }
            model.push((at, n));
            assert_eq!(q.len(), model.len());
            if n % 3 == 0 {
                let i = (0..model.len()).min_by_key(|&i| model[i]).unwrap();
                let (at, e) = model.remove(i);
                assert_eq!(q.pop(), Some((Instant::from_millis(at), Next::Event(e))));
            }
        }
        model.sort();
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = model
            .into_iter()
            .map(|(at, e)| (Instant::from_millis(at), Next::Event(e)))
            .collect();
        assert_eq!(rest, want);
        assert!(q.is_empty());
    }

    /// `pop_due(now)` is `peek_time` then `pop` when due: two queues fed the same
    /// events, lanes and timers, drained at the same steps, yield the same items.
    #[test]
    fn pop_due_matches_peek_then_pop() {
        let (mut a, mut b) = (EventQueue::new(), EventQueue::new());
        let mut x: u64 = 11;
        for n in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = Instant::from_millis(n / 4 + (x >> 59));
            for q in [&mut a, &mut b] {
                match (x >> 33) % 5 {
                    0 => q.push(at, n),
                    1 => q.set_timer((x >> 40) as usize % 6, Some(at)),
                    2 if (x >> 45).is_multiple_of(4) => q.set_timer((x >> 40) as usize % 6, None),
                    lane => q.push_lane(lane as usize, at, n),
                }
            }
            let now = Instant::from_millis(n / 4);
            loop {
                let want = match a.peek_time() {
                    Some(t) if t <= now => a.pop(),
                    _ => None,
                };
                let got = b.pop_due(now);
                assert_eq!(got, want);
                if got.is_none() {
                    break;
                }
            }
            assert_eq!(a.len(), b.len());
        }
    }

    #[test]
    fn slab_reuses_slots() {
        let mut s = Slab::default();
        let a = s.insert("a");
        let b = s.insert("b");
        assert_eq!(s.remove(a), "a");
        let c = s.insert("c");
        assert_eq!((c, *s.get(b), *s.get(c)), (a, "b", "c"));
    }
}
