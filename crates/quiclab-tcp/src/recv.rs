//! The receive side: in-order delivery, a reassembly queue bounded by the receive
//! window, the SACK blocks to report (RFC 2018 §4) and when to acknowledge (delayed
//! ACKs, RFC 9293 §3.8.6.3 and Linux's quick-ACK rules for out-of-order data).
//!
//! Sequence numbers here are absolute 64-bit stream offsets (0 = the first data byte);
//! the connection maps them to and from the wire.

use quiclab_proto::range_set::RangeSet;
use quiclab_proto::Instant;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Receive state of one connection.
#[derive(Debug)]
pub struct Receiver {
    /// RCV.NXT as a stream offset.
    pub next: u64,
    /// Bytes delivered in order, not yet read by the application.
    readable: VecDeque<u8>,
    /// Out-of-order data: start -> bytes, non-overlapping, all in
    /// (next, next + window); bounded by the window.
    ooo: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: u64,
    /// The same bytes as an interval map of contiguous blocks (start -> end, merged,
    /// disjoint and not touching), so finding a segment's block and listing the
    /// lowest blocks take O(log n) however many segments the queue holds.
    blocks: RangeSet,
    /// A byte of each of the most recently received out-of-order segments, newest
    /// first (RFC 2018 §4: the first SACK block reports the newest segment's block).
    recent: VecDeque<u64>,
    buffer: u64,
    /// The right edge last advertised: never moved left (RFC 9293 §3.8.6.2.2).
    right_edge: u64,
    /// Where the peer's FIN sits, once seen.
    pub fin_at: Option<u64>,
    pub fin_delivered: bool,
    // Acknowledgement state.
    full_segments_unacked: u32,
    ack_now: bool,
    ack_deadline: Option<Instant>,
    ack_every: u32,
    delay: Duration,
    mss: u64,
    /// Data segments still to be acknowledged at once (Linux's quick-ACK mode at
    /// connection start, `quick_ack`).
    quick_acks: u32,
}

/// What a segment did to the receive side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// New bytes accepted (in order or buffered).
    pub accepted: u64,
    /// Bytes that arrived outside the window and were dropped.
    pub dropped: u64,
}

impl Receiver {
    pub fn new(buffer: u64, ack_every: u32, delay: Duration, mss: u64) -> Self {
        Receiver {
            next: 0,
            readable: VecDeque::new(),
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            blocks: RangeSet::default(),
            recent: VecDeque::new(),
            buffer,
            right_edge: buffer,
            fin_at: None,
            fin_delivered: false,
            full_segments_unacked: 0,
            ack_now: false,
            ack_deadline: None,
            ack_every,
            delay,
            mss,
            quick_acks: 0,
        }
    }

    /// Out-of-order bytes, entries and blocks held (fuzz targets bound them).
    #[cfg(feature = "fuzzing")]
    pub fn ooo_footprint(&self) -> (u64, usize, usize) {
        (self.ooo_bytes, self.ooo.len(), self.blocks.len())
    }

    /// Acknowledges each of the next `n` data segments at once, as Linux's quick-ACK
    /// mode does at connection start (tcp_incr_quickack: up to TCP_MAX_QUICKACKS = 16,
    /// so the sender's slow start is not held back by delayed ACKs).
    pub fn set_quick_acks(&mut self, n: u32) {
        self.quick_acks = n;
    }

    /// Sets the MSS the peer sends with, for counting full-sized segments.
    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
    }

    /// The window to advertise in bytes (before scaling): free buffer space, with the
    /// right edge kept where it was advertised.
    pub fn window(&mut self) -> u64 {
        let free = self.buffer.saturating_sub(self.readable.len() as u64);
        self.right_edge = self.right_edge.max(self.next + free);
        self.right_edge - self.next
    }

    /// Takes a segment's data at stream offset `start`; `fin`: the FIN follows it.
    pub fn on_data(&mut self, now: Instant, start: u64, data: &[u8], fin: bool) -> Received {
        let mut r = Received::default();
        let edge = self.right_edge.max(self.next);
        let end = start + data.len() as u64;
        if fin && end <= edge {
            self.fin_at.get_or_insert(end);
        }
        // Trim to [next, edge): old bytes are duplicates, bytes past the edge dropped.
        let lo = start.max(self.next);
        let hi = end.min(edge);
        r.dropped = end.saturating_sub(edge.max(start));
        if lo < hi {
            let bytes = &data[(lo - start) as usize..(hi - start) as usize];
            if lo == self.next {
                r.accepted += self.deliver(bytes);
                if !self.ooo.is_empty() || self.fin_at.is_some() {
                    // RFC 9293 §3.10.7.4 / Linux: a segment filling a hole is ACKed at once.
                    self.ack_now = true;
                }
            } else {
                r.accepted += self.buffer_ooo(lo, bytes);
                self.ack_now = true; // RFC 5681 §4.2: out-of-order data is ACKed at once.
            }
        } else if !data.is_empty() || end < self.next {
            // A duplicate: the ACK must go out (the peer may have lost ours).
            self.ack_now = true;
        }
        self.try_fin();
        if data.len() as u64 >= self.mss {
            self.full_segments_unacked += 1;
        }
        if self.full_segments_unacked >= self.ack_every {
            self.ack_now = true;
        }
        if !data.is_empty() && self.quick_acks > 0 {
            self.quick_acks -= 1;
            self.ack_now = true;
        }
        if !data.is_empty() && self.ack_deadline.is_none() {
            self.ack_deadline = Some(now + self.delay);
        }
        r
    }

    fn deliver(&mut self, bytes: &[u8]) -> u64 {
        self.readable.extend(bytes);
        self.next += bytes.len() as u64;
        let n = bytes.len() as u64;
        // Pull in what the reassembly queue now continues.
        while let Some(entry) = self.ooo.first_entry() {
            let s = *entry.key();
            if s > self.next {
                break;
            }
            let chunk = entry.remove();
            self.ooo_bytes -= chunk.len() as u64;
            let end = s + chunk.len() as u64;
            if end > self.next {
                let tail = &chunk[(self.next - s) as usize..];
                self.readable.extend(tail);
                self.next = end;
            }
        }
        let next = self.next;
        self.blocks.remove_below(next);
        self.recent.retain(|&s| s >= next);
        n
    }

    /// Stores `bytes` at `lo` (> next) in the gaps of the reassembly queue.
    fn buffer_ooo(&mut self, lo: u64, bytes: &[u8]) -> u64 {
        let hi = lo + bytes.len() as u64;
        let mut pieces = Vec::new();
        let mut at = lo;
        let overlapping: Vec<(u64, u64)> = self
            .ooo
            .range(..hi)
            .rev()
            .take_while(|(&s, c)| s + c.len() as u64 > lo)
            .map(|(&s, c)| (s, s + c.len() as u64))
            .collect();
        for (s, e) in overlapping.into_iter().rev() {
            if s > at {
                pieces.push((at, s));
            }
            at = at.max(e);
        }
        if at < hi {
            pieces.push((at, hi));
        }
        let mut added = 0;
        for (s, e) in pieces {
            let chunk = bytes[(s - lo) as usize..(e - lo) as usize].to_vec();
            added += chunk.len() as u64;
            self.ooo.insert(s, chunk);
        }
        self.ooo_bytes += added;
        self.blocks.insert(lo..hi);
        // Keep one entry per block: the newest segment's byte represents it.
        let block = self.blocks.containing(lo);
        self.recent
            .retain(|&s| block.as_ref().is_none_or(|b| !b.contains(&s)));
        self.recent.push_front(lo);
        self.recent.truncate(8);
        added
    }

    fn try_fin(&mut self) {
        if self.fin_at == Some(self.next) && !self.fin_delivered {
            self.fin_delivered = true;
            self.ack_now = true;
        }
    }

    /// Up to `max` SACK blocks (RFC 2018 §4): the block of the newest segment first,
    /// then those of the other recently received segments, then the lowest blocks in
    /// order. O(max log n).
    pub fn sack_blocks(&self, max: usize) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(max);
        let recent = self
            .recent
            .iter()
            .filter_map(|&s| self.blocks.containing(s));
        for b in recent.chain(self.blocks.iter()).map(|r| (r.start, r.end)) {
            if out.len() >= max {
                break;
            }
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
    }

    /// Copies readable bytes into `buf`; returns how many.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.readable.len());
        for (d, s) in buf.iter_mut().zip(self.readable.drain(..n)) {
            *d = s;
        }
        n
    }

    pub fn readable(&self) -> usize {
        self.readable.len()
    }

    /// Memory held for the peer: in-order unread plus reassembly bytes.
    pub fn buffered(&self) -> u64 {
        self.readable.len() as u64 + self.ooo_bytes
    }

    /// Whether an ACK should go out now.
    pub fn ack_due(&self, now: Instant) -> bool {
        self.ack_now || self.ack_deadline.is_some_and(|t| now >= t)
    }

    /// An ACK that is owed but may wait: its deadline.
    pub fn ack_deadline(&self) -> Option<Instant> {
        if self.ack_now {
            return None;
        }
        self.ack_deadline
    }

    /// Forces an immediate ACK (e.g. a SYN or a window update).
    pub fn request_ack(&mut self) {
        self.ack_now = true;
    }

    /// An ACK (pure or piggybacked) covering everything received was sent.
    pub fn on_ack_sent(&mut self) {
        self.ack_now = false;
        self.ack_deadline = None;
        self.full_segments_unacked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx() -> Receiver {
        Receiver::new(10_000, 2, Duration::from_millis(40), 100)
    }

    #[test]
    fn reassembles_and_reports_newest_block_first() {
        let mut r = rx();
        let t = Instant::ZERO;
        r.on_data(t, 200, &[2; 100], false);
        r.on_data(t, 500, &[5; 100], false);
        assert_eq!(r.sack_blocks(4), vec![(500, 600), (200, 300)]);
        r.on_data(t, 300, &[3; 100], false);
        assert_eq!(r.sack_blocks(4), vec![(200, 400), (500, 600)]);
        r.on_data(t, 0, &[0; 200], false);
        assert_eq!(r.next, 400);
        assert_eq!(r.sack_blocks(4), vec![(500, 600)]);
        let mut buf = [9u8; 400];
        assert_eq!(r.read(&mut buf), 400);
        assert_eq!((buf[0], buf[250], buf[399]), (0, 2, 3));
    }

    #[test]
    fn overlapping_duplicates_are_stored_once() {
        let mut r = rx();
        let t = Instant::ZERO;
        r.on_data(t, 100, &[1; 100], false);
        let got = r.on_data(t, 50, &[1; 200], false);
        assert_eq!(got.accepted, 100); // 50..100 and 200..250
        assert_eq!(r.buffered(), 200);
        assert_eq!(r.sack_blocks(4), vec![(50, 250)]);
    }

    #[test]
    fn memory_is_bounded_by_the_window() {
        let mut r = rx();
        let got = r.on_data(Instant::ZERO, 9_950, &[0; 1000], false);
        assert_eq!((got.accepted, got.dropped), (50, 950));
        let got = r.on_data(Instant::ZERO, 1 << 40, &[0; 10], false);
        assert_eq!(got.accepted, 0);
        assert!(r.buffered() <= 10_000);
    }

    #[test]
    fn delayed_ack_every_second_full_segment_or_timer() {
        let mut r = rx();
        let t = Instant::from_millis(1);
        r.on_data(t, 0, &[0; 100], false);
        assert!(!r.ack_due(t));
        assert_eq!(r.ack_deadline(), Some(t + Duration::from_millis(40)));
        assert!(r.ack_due(t + Duration::from_millis(40)));
        r.on_data(t, 100, &[0; 100], false);
        assert!(r.ack_due(t));
        r.on_ack_sent();
        assert!(!r.ack_due(t));
        // Out-of-order data is acknowledged at once.
        r.on_data(t, 500, &[0; 10], false);
        assert!(r.ack_due(t));
    }

    #[test]
    fn window_right_edge_never_shrinks() {
        let mut r = rx();
        assert_eq!(r.window(), 10_000);
        r.on_data(Instant::ZERO, 0, &[0; 1000], false);
        // Unread data: the edge stays at 10 000.
        assert_eq!(r.window(), 9_000);
        let mut buf = [0; 1000];
        r.read(&mut buf);
        assert_eq!(r.window(), 10_000);
    }
}
