//! ACK generation for one packet number space.

use crate::range_set::RangeSet;
use crate::time::Instant;
use crate::wire::{AckFrame, EcnCounts};
use std::ops::RangeInclusive;
use std::time::Duration;

/// When the receiver sends ACKs in the application data space. Initial and Handshake
/// packets are always acknowledged at once (RFC 9000 §13.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPolicy {
    /// Send an ACK once this many ack-eliciting packets arrived unacknowledged
    /// (RFC 9000 §13.2.2 recommends 2; the ack-frequency draft lets the peer set it).
    pub ack_eliciting_threshold: u64,
    /// Delay limit for an ACK of an ack-eliciting packet.
    pub max_ack_delay: Duration,
    /// Out-of-order arrivals trigger an immediate ACK when a gap is at least this far
    /// below the largest received (1 = RFC 9000 §13.2.1 behaviour; 0 = never).
    pub reordering_threshold: u64,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy {
            ack_eliciting_threshold: 2,
            max_ack_delay: Duration::from_millis(25),
            reordering_threshold: 1,
        }
    }
}

/// At most this many received ranges are remembered; beyond it the lowest are dropped
/// (and later arrivals below them count as duplicates), bounding memory and the cost of
/// the reordering check against a peer that never acknowledges our ACKs.
pub const MAX_TRACKED_RANGES: usize = 1024;

/// Received packet numbers of one space and the ACK timer.
#[derive(Clone, Debug, Default)]
pub struct AckTracker {
    /// Packet numbers received and not yet pruned.
    received: RangeSet,
    /// Everything below is treated as received: pruned after the peer acknowledged our
    /// ACK (RFC 9000 §13.2.4) or dropped by `MAX_TRACKED_RANGES`.
    floor: u64,
    /// Lowest packet number ever received: gaps below it are not reordering.
    lowest: Option<u64>,
    /// Largest packet number received and its arrival time (for ACK Delay).
    largest: Option<(u64, Instant)>,
    /// Ack-frequency draft §6.2 "Largest Unacked": largest ack-eliciting pn received.
    largest_ack_eliciting: Option<u64>,
    /// Ack-frequency draft §6.2 "Largest Acked": Largest Acknowledged of the last ACK sent.
    largest_reported: Option<u64>,
    /// Ack-eliciting packets received since the last ACK sent (RFC 9000 §13.2.2).
    eliciting_since_ack: u64,
    /// Arrival of the first ack-eliciting packet not yet acknowledged (§13.2.1).
    first_unacked_eliciting: Option<Instant>,
    deadline: Option<Instant>,
    new_since_ack: bool,
    /// The storage of the last ACK frame sent, handed back by the send path
    /// ([`AckTracker::recycle_ranges`]) for the next one: an ACK frame allocates no
    /// range list (issue 29). Empty; its capacity at most `MAX_KEPT_RANGES`.
    spare_ranges: Vec<RangeInclusive<u64>>,
}

/// Range-list capacity up to which [`AckTracker::recycle_ranges`] keeps a list (memory
/// per space stays small whatever `max_ack_ranges` is).
const MAX_KEPT_RANGES: usize = 32;

impl AckTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `pn` was already received (duplicates are dropped, RFC 9000 §12.3).
    /// Numbers below the pruned floor count as received.
    pub fn is_duplicate(&self, pn: u64) -> bool {
        pn < self.floor || self.received.contains(pn)
    }

    /// Records a packet that was processed. `immediate`: acknowledge without delay
    /// (Initial/Handshake space, or the packet carried IMMEDIATE_ACK).
    ///
    /// A duplicate changes nothing.
    pub fn on_packet_received(
        &mut self,
        now: Instant,
        pn: u64,
        ack_eliciting: bool,
        immediate: bool,
        policy: &AckPolicy,
    ) {
        if self.is_duplicate(pn) {
            return;
        }
        self.received.insert_one(pn);
        while self.received.len() > MAX_TRACKED_RANGES {
            if let Some(r) = self.received.pop_first() {
                self.floor = self.floor.max(r.end);
            }
        }
        self.lowest = Some(self.lowest.map_or(pn, |l| l.min(pn)));
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
        self.new_since_ack = true;
        // RFC 9000 §13.2.1: only ack-eliciting packets oblige an ACK (and start a timer).
        if !ack_eliciting {
            return;
        }
        self.largest_ack_eliciting = Some(self.largest_ack_eliciting.map_or(pn, |l| l.max(pn)));
        self.eliciting_since_ack += 1;
        let first = *self.first_unacked_eliciting.get_or_insert(now);
        let at_once = immediate
            // RFC 9000 §13.2.2 / ack-frequency §6: enough ack-eliciting packets.
            || self.eliciting_since_ack >= policy.ack_eliciting_threshold
            || self.out_of_order(pn, policy.reordering_threshold);
        let due = if at_once {
            now
        } else {
            // RFC 9000 §13.2.1: within max_ack_delay of the first unacknowledged one.
            first.saturating_add(policy.max_ack_delay)
        };
        self.deadline = Some(self.deadline.map_or(due, |d| d.min(due)));
    }

    /// Ack-frequency draft §6.2: an ack-eliciting packet `pn` just arrived; is an
    /// immediate ACK due under reordering threshold `threshold` (0 = never)? With 1 this
    /// is RFC 9000 §13.2.1: a packet below the largest reported, or one leaving a gap.
    fn out_of_order(&self, pn: u64, threshold: u64) -> bool {
        let Some(largest_unacked) = self.largest_ack_eliciting else {
            return false;
        };
        if threshold == 0 {
            return false;
        }
        // Second condition: the sender may already have declared `pn` lost.
        if let Some(la) = self.largest_reported {
            if la >= threshold && pn <= la - threshold {
                return true;
            }
        }
        // First condition: Largest Reported Missing = Largest Acked - threshold; the
        // smallest Unreported Missing is the first gap above it (and above what we
        // ever saw or pruned).
        let mut start = match self.largest_reported {
            Some(la) if la >= threshold => la - threshold + 1,
            _ => 0,
        };
        start = start.max(self.floor).max(self.lowest.unwrap_or(0));
        // Smallest number >= start not received: the end of the range holding `start`,
        // found from the top (only ranges above `start` are visited).
        let mut missing = start;
        for r in self.received.iter().rev() {
            if r.end <= start {
                break;
            }
            if r.start <= start {
                missing = r.end;
                break;
            }
        }
        missing < largest_unacked && largest_unacked - missing >= threshold
    }

    /// When an ACK must be sent: `Some(t <= now)` means now; `None` means no ACK is owed.
    pub fn ack_deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether packets arrived since the last ACK sent (an ACK may ride along, even if
    /// none is owed yet).
    pub fn has_new(&self) -> bool {
        self.new_since_ack
    }

    /// Builds an ACK frame of at most `max_ranges` ranges (the highest ones), with the
    /// ACK Delay measured from the arrival of the largest packet, scaled by
    /// 2^`ack_delay_exponent` µs (RFC 9000 §19.3), and marks it sent. `None` when nothing
    /// was ever received (or everything received was pruned).
    pub fn build_ack(
        &mut self,
        now: Instant,
        ack_delay_exponent: u8,
        max_ranges: usize,
        ecn: Option<EcnCounts>,
    ) -> Option<AckFrame> {
        let (largest, arrival) = self.largest?;
        let mut ranges = std::mem::take(&mut self.spare_ranges);
        ranges.clear();
        let highest = self.received.iter().rev().take(max_ranges.max(1));
        ranges.extend(highest.map(|r| r.start..=r.end - 1));
        if ranges.is_empty() {
            self.spare_ranges = ranges;
            return None;
        }
        // Pruning only removes numbers at or below an acknowledged Largest Acknowledged,
        // so the top range still ends at the largest received.
        debug_assert_eq!(*ranges[0].end(), largest);
        // RFC 9000 §13.2.5 / §19.3: delay since the largest arrived, in 2^exp µs units.
        let micros = u64::try_from((now - arrival).as_micros()).unwrap_or(u64::MAX);
        let ack_delay = micros
            .checked_shr(u32::from(ack_delay_exponent))
            .unwrap_or(0);
        self.largest_reported = Some(*ranges[0].end());
        self.eliciting_since_ack = 0;
        self.first_unacked_eliciting = None;
        self.deadline = None;
        self.new_since_ack = false;
        Some(AckFrame {
            ack_delay,
            ranges,
            ecn,
        })
    }

    /// Hands back the `ranges` of an ACK frame [`AckTracker::build_ack`] made, once
    /// it is written, for the next frame to reuse; a list over `MAX_KEPT_RANGES` is
    /// dropped instead.
    pub fn recycle_ranges(&mut self, ranges: Vec<RangeInclusive<u64>>) {
        if ranges.capacity() <= MAX_KEPT_RANGES {
            self.spare_ranges = ranges;
            self.spare_ranges.clear();
        }
    }

    /// The space was discarded (RFC 9001 §4.9): no ACK frame is built here again, so
    /// the kept range list goes (it stayed allocated for the connection's lifetime in
    /// the Initial and Handshake spaces).
    pub fn on_space_discarded(&mut self) {
        self.spare_ranges = Vec::new();
    }

    /// Capacity of the range list kept for the next ACK frame (0: none kept).
    #[cfg(test)]
    pub fn kept_ranges_capacity(&self) -> usize {
        self.spare_ranges.capacity()
    }

    /// The peer acknowledged one of our ACKs whose Largest Acknowledged was `largest`:
    /// ranges at or below it need not be reported again (RFC 9000 §13.2.4). Later
    /// arrivals at or below it are treated as duplicates.
    pub fn on_ack_acked(&mut self, largest: u64) {
        // Packet numbers stay below 2^62, so saturating at u64::MAX loses nothing.
        let end = largest.saturating_add(1);
        self.received.remove(0..end);
        self.floor = self.floor.max(end);
    }

    /// Ranges of received packet numbers held (at most `MAX_TRACKED_RANGES`).
    pub fn ranges_held(&self) -> usize {
        self.received.len()
    }

    /// The largest packet number received, if any.
    pub fn largest(&self) -> Option<u64> {
        self.largest.map(|(pn, _)| pn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    fn policy(threshold: u64, reorder: u64) -> AckPolicy {
        AckPolicy {
            ack_eliciting_threshold: threshold,
            max_ack_delay: Duration::from_millis(25),
            reordering_threshold: reorder,
        }
    }

    fn ranges(f: &AckFrame) -> Vec<RangeInclusive<u64>> {
        f.ranges.clone()
    }

    /// A recycled list's old contents never leak into the next frame.
    #[test]
    fn recycled_ranges_are_rebuilt() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        for pn in [0, 1, 2, 5, 6, 9] {
            t.on_packet_received(ms(1), pn, true, false, &p);
        }
        let first = t.build_ack(ms(1), 3, 32, None).unwrap();
        assert_eq!(ranges(&first), vec![9..=9, 5..=6, 0..=2]);
        t.recycle_ranges(vec![100..=200, 300..=400, 500..=600]);
        t.on_packet_received(ms(2), 7, true, false, &p);
        let second = t.build_ack(ms(2), 3, 2, None).unwrap();
        assert_eq!(ranges(&second), vec![9..=9, 5..=7]);
        // Storage over the cap is not kept.
        t.recycle_ranges(Vec::with_capacity(MAX_KEPT_RANGES + 1));
        assert_eq!(t.kept_ranges_capacity(), 0);
    }

    /// A discarded space keeps no range list (RFC 9001 §4.9).
    #[test]
    fn a_discarded_space_keeps_no_range_list() {
        let mut t = AckTracker::new();
        t.on_packet_received(ms(1), 0, true, true, &AckPolicy::default());
        let f = t.build_ack(ms(1), 3, 32, None).unwrap();
        t.recycle_ranges(f.ranges);
        assert!(t.kept_ranges_capacity() > 0);
        t.on_space_discarded();
        assert_eq!(t.kept_ranges_capacity(), 0);
    }

    #[test]
    fn threshold_two_by_default() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        assert_eq!(t.ack_deadline(), None);
        assert!(t.build_ack(ms(0), 3, 32, None).is_none());
        t.on_packet_received(ms(10), 0, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(35)));
        assert!(t.has_new());
        t.on_packet_received(ms(12), 1, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(12)));
        let f = t.build_ack(ms(12), 3, 32, None).unwrap();
        assert_eq!(ranges(&f), vec![0..=1]);
        assert_eq!((t.ack_deadline(), t.has_new()), (None, false));
        // The counter restarted: one more packet only arms the delayed timer.
        t.on_packet_received(ms(20), 2, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(45)));
        // The timer runs from the first unacknowledged ack-eliciting packet.
        let p3 = policy(3, 1);
        t.on_packet_received(ms(30), 3, true, false, &p3);
        assert_eq!(t.ack_deadline(), Some(ms(45)));
    }

    #[test]
    fn non_ack_eliciting_never_sets_a_deadline() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        for pn in [0, 1, 2, 5, 3] {
            t.on_packet_received(ms(pn), pn, false, true, &p);
        }
        assert_eq!(t.ack_deadline(), None);
        assert!(t.has_new());
        let f = t.build_ack(ms(10), 0, 32, None).unwrap();
        assert_eq!(ranges(&f), vec![5..=5, 0..=3]);
    }

    #[test]
    fn immediate_flag() {
        let mut t = AckTracker::new();
        t.on_packet_received(ms(7), 0, true, true, &AckPolicy::default());
        assert_eq!(t.ack_deadline(), Some(ms(7)));
    }

    #[test]
    fn duplicates() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        t.on_packet_received(ms(0), 4, true, false, &p);
        assert!(t.is_duplicate(4) && !t.is_duplicate(3));
        let f = t.build_ack(ms(1), 3, 32, None).unwrap();
        // A duplicate neither counts nor re-arms anything.
        t.on_packet_received(ms(2), 4, true, false, &p);
        assert_eq!((t.ack_deadline(), t.has_new()), (None, false));
        t.on_ack_acked(f.largest());
        assert!(t.is_duplicate(3) && t.is_duplicate(4) && !t.is_duplicate(5));
    }

    #[test]
    fn reorder_threshold_one_is_rfc9000() {
        let p = policy(10, 1);
        let mut t = AckTracker::new();
        t.on_packet_received(ms(0), 0, true, false, &p);
        t.on_packet_received(ms(1), 1, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(25)));
        // Above the largest, leaving a gap: at once.
        t.on_packet_received(ms(2), 3, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(2)));
        t.build_ack(ms(2), 3, 32, None).unwrap();
        // In order after the ACK: delayed.
        t.on_packet_received(ms(3), 4, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(28)));
        t.build_ack(ms(4), 3, 32, None).unwrap();
        // Below the largest (filling the gap): at once.
        t.on_packet_received(ms(5), 2, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(5)));
    }

    #[test]
    fn reorder_threshold_zero_never() {
        let p = policy(10, 0);
        let mut t = AckTracker::new();
        for pn in [0, 5, 2] {
            t.on_packet_received(ms(pn), pn, true, false, &p);
        }
        assert_eq!(t.ack_deadline(), Some(ms(25)));
    }

    /// Replays the draft's tables (§6.2.1): `(pn, ack now?)`, ACKs sent when due.
    fn replay(reorder: u64, steps: &[(u64, bool)]) {
        let p = policy(100, reorder);
        let mut t = AckTracker::new();
        for (i, &(pn, expect)) in steps.iter().enumerate() {
            let now = ms(i as u64);
            t.on_packet_received(now, pn, true, false, &p);
            let due = t.ack_deadline().is_some_and(|d| d <= now);
            assert_eq!(due, expect, "threshold {reorder}, packet {pn}");
            if due {
                t.build_ack(now, 3, 32, None).unwrap();
            }
        }
    }

    #[test]
    fn reorder_threshold_draft_examples() {
        let three = [(0, false), (1, false), (3, false), (4, false), (5, true)];
        let three_after = [(8, false), (9, true), (10, true)];
        replay(3, &[&three[..], &three_after[..]].concat());
        let five = [
            (0, false),
            (1, false),
            (3, false),
            (5, false),
            (6, false),
            (7, true),
        ];
        replay(5, &[&five[..], &[(8, false), (9, true)][..]].concat());
    }

    #[test]
    fn late_packet_below_reported_window() {
        let p = policy(100, 3);
        let mut t = AckTracker::new();
        for pn in [0, 1, 2, 3, 4, 6, 7, 8, 9] {
            t.on_packet_received(ms(0), pn, true, false, &p);
        }
        t.build_ack(ms(1), 3, 32, None).unwrap(); // Largest Acked 9.
                                                  // 5 <= 9 - 3: the sender may have declared it lost; tell it at once.
        t.on_packet_received(ms(2), 5, true, false, &p);
        assert_eq!(t.ack_deadline(), Some(ms(2)));
    }

    #[test]
    fn delay_encoding_with_exponent_three() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        t.on_packet_received(Instant::from_micros(1_000), 0, true, false, &p);
        t.on_packet_received(Instant::from_micros(2_000), 2, false, false, &p);
        // 10_500 - 2_000 = 8_500 µs; 8_500 >> 3 = 1062.
        let f = t
            .build_ack(Instant::from_micros(10_500), 3, 32, None)
            .unwrap();
        assert_eq!(f.ack_delay, 1062);
        assert_eq!(f.largest(), 2);
        let ecn = Some(EcnCounts {
            ect0: 1,
            ect1: 0,
            ce: 0,
        });
        let f = t
            .build_ack(Instant::from_micros(2_000), 0, 32, ecn)
            .unwrap();
        assert_eq!((f.ack_delay, f.ecn), (0, ecn));
    }

    #[test]
    fn max_ranges_keeps_the_highest() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        for pn in [0, 2, 4, 6, 8] {
            t.on_packet_received(ms(0), pn, true, false, &p);
        }
        let f = t.build_ack(ms(0), 3, 3, None).unwrap();
        assert_eq!(ranges(&f), vec![8..=8, 6..=6, 4..=4]);
        // Truncated ranges are still reported by a later, larger ACK.
        let f = t.build_ack(ms(0), 3, 10, None).unwrap();
        assert_eq!(f.ranges.len(), 5);
    }

    #[test]
    fn pruning_after_ack_of_ack() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        for pn in [0, 1, 2, 4, 5, 7] {
            t.on_packet_received(ms(0), pn, true, false, &p);
        }
        let f = t.build_ack(ms(1), 3, 32, None).unwrap();
        assert_eq!(ranges(&f), vec![7..=7, 4..=5, 0..=2]);
        t.on_packet_received(ms(2), 9, true, false, &p);
        t.on_ack_acked(4);
        let f = t.build_ack(ms(3), 3, 32, None).unwrap();
        assert_eq!(ranges(&f), vec![9..=9, 7..=7, 5..=5]);
        // The gap at 3 is below the floor now: a late 3 is a duplicate.
        assert!(t.is_duplicate(3) && !t.is_duplicate(6) && !t.is_duplicate(8));
        t.on_ack_acked(9);
        assert!(t.build_ack(ms(4), 3, 32, None).is_none());
        assert_eq!(t.largest(), Some(9));
        t.on_packet_received(ms(5), 10, true, false, &p);
        assert_eq!(
            ranges(&t.build_ack(ms(5), 3, 32, None).unwrap()),
            vec![10..=10]
        );
        t.on_ack_acked(u64::MAX);
        assert!(t.is_duplicate(10) && t.build_ack(ms(6), 3, 32, None).is_none());
    }

    #[test]
    fn tracked_ranges_are_bounded() {
        let p = AckPolicy::default();
        let mut t = AckTracker::new();
        for i in 0..(MAX_TRACKED_RANGES as u64 + 10) {
            t.on_packet_received(ms(0), 2 * i, true, false, &p);
        }
        // The ten lowest ranges (0, 2, .., 18) were dropped: the floor is 19.
        assert!(t.is_duplicate(1) && t.is_duplicate(18) && t.is_duplicate(20));
        assert!(!t.is_duplicate(19) && !t.is_duplicate(21));
        let f = t.build_ack(ms(0), 3, usize::MAX, None).unwrap();
        assert_eq!(f.ranges.len(), MAX_TRACKED_RANGES);
    }
}
