//! The send side's scoreboard: the bytes not yet acknowledged, every segment sent and
//! what the peer said about it (cumulatively acknowledged, SACKed, RFC 2018), which
//! segments are lost (RFC 6675 §4 IsLost and RACK, RFC 8985 §6.2), and the pipe
//! (RFC 6675 §4 SetPipe: bytes sent and neither SACKed nor lost, plus retransmissions).
//!
//! Offsets are absolute stream offsets (0 = first data byte); a segment keeps its
//! boundaries across retransmissions. The FIN is the byte after the last segment's
//! data (`fin`), acknowledged by an ACK past it.

use quiclab_proto::range_set::RangeSet;
use quiclab_proto::{DeliverySnapshot, Instant};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// RFC 6675 §2 DupThresh.
pub const DUP_THRESH: u64 = 3;

/// One segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Debug)]
pub struct Segment {
    pub end: u64,
    pub fin: bool,
    /// Time of the latest (re)transmission.
    pub sent: Instant,
    /// Transmission counter of the latest (re)transmission (rate sampling order).
    pub tx: u64,
    pub retransmitted: bool,
    pub sacked: bool,
    pub lost: bool,
    /// Counted in the pipe.
    pub in_flight: bool,
    pub snapshot: DeliverySnapshot,
}

impl Segment {
    pub fn len(&self, start: u64) -> u64 {
        self.end - start
    }
}

/// A segment the peer newly acknowledged or SACKed.
#[derive(Clone, Debug)]
pub struct Delivered {
    pub start: u64,
    pub seg: Segment,
}

/// The scoreboard and the unacknowledged bytes.
#[derive(Debug, Default)]
pub struct Scoreboard {
    /// Bytes from `una` on: sent but unacknowledged, then unsent.
    buf: VecDeque<u8>,
    /// SND.UNA as a stream offset.
    pub una: u64,
    /// SND.NXT for new data.
    pub nxt: u64,
    /// The application asked to close: FIN after the last byte.
    pub fin_queued: bool,
    pub fin_sent: bool,
    pub fin_acked: bool,
    pub segs: BTreeMap<u64, Segment>,
    /// RFC 6675 pipe, bytes.
    pub pipe: u64,
    /// Highest offset SACKed or acknowledged (RFC 6675 HighACK / SACK's highest).
    pub high_sacked: u64,
    /// RACK (RFC 8985 §6.1): the newest delivered segment's send time and end.
    pub rack_xmit: Option<(Instant, u64)>,
    pub rack_rtt: Duration,
    /// Reordering was observed (RFC 8985 §6.2 step 3).
    pub reordering_seen: bool,
    /// Segments currently SACKed.
    sacked_count: u64,
    /// The byte ranges of the SACKed segments, merged: the walks below visit only the
    /// holes between them (unSACKed segments), so an ACK costs O(log n) plus the
    /// segments it changes, not O(segments outstanding), however large the window.
    sacked: RangeSet,
    /// Segments lost and not yet retransmitted (so NextSeg need not scan when none).
    lost_count: u64,
}

impl Scoreboard {
    /// SACKed ranges held (fuzz targets bound them).
    #[cfg(feature = "fuzzing")]
    pub fn sacked_ranges(&self) -> usize {
        self.sacked.len()
    }

    /// Bytes the application has written and not had acknowledged.
    pub fn buffered(&self) -> u64 {
        self.buf.len() as u64
    }

    pub fn write(&mut self, data: &[u8]) {
        self.buf.extend(data);
    }

    /// Written bytes not sent yet.
    pub fn unsent(&self) -> u64 {
        (self.una + self.buf.len() as u64).saturating_sub(self.nxt)
    }

    /// Copies the bytes of [start, end) (unacknowledged) into `out`.
    pub fn copy(&self, start: u64, end: u64, out: &mut Vec<u8>) {
        let a = (start - self.una) as usize;
        let b = (end - self.una) as usize;
        let (x, y) = self.buf.as_slices();
        if b <= x.len() {
            out.extend_from_slice(&x[a..b]);
        } else if a >= x.len() {
            out.extend_from_slice(&y[a - x.len()..b - x.len()]);
        } else {
            out.extend_from_slice(&x[a..]);
            out.extend_from_slice(&y[..b - x.len()]);
        }
    }

    /// Records a new segment [start, end) (and FIN) sent at `now`.
    pub fn on_sent(&mut self, start: u64, seg: Segment) {
        self.pipe += seg.len(start);
        self.nxt = self.nxt.max(seg.end);
        if seg.fin {
            self.fin_sent = true;
        }
        self.segs.insert(start, seg);
    }

    /// A lost segment was retransmitted at `now`.
    pub fn on_retransmitted(&mut self, start: u64, now: Instant, tx: u64, snap: DeliverySnapshot) {
        if let Some(s) = self.segs.get_mut(&start) {
            if !s.in_flight {
                self.pipe += s.end - start;
            }
            s.in_flight = true;
            if s.lost {
                self.lost_count -= 1;
            }
            s.lost = false;
            s.retransmitted = true;
            s.sent = now;
            s.tx = tx;
            s.snapshot = snap;
        }
    }

    /// Applies a cumulative ACK (`ack` = stream offset acknowledged up to, FIN
    /// included as one more) and SACK blocks. Returns the newly delivered segments.
    pub fn on_ack(&mut self, ack: u64, sack: &[(u64, u64)]) -> Vec<Delivered> {
        let mut out = Vec::new();
        // Cumulative part.
        while let Some(entry) = self.segs.first_entry() {
            let start = *entry.key();
            let s = entry.get();
            let covered = s.end + u64::from(s.fin);
            if covered > ack {
                break;
            }
            let seg = entry.remove();
            if seg.in_flight {
                self.pipe -= seg.end - start;
            }
            if seg.sacked {
                self.sacked_count -= 1;
            }
            if seg.lost {
                self.lost_count -= 1;
            }
            if seg.fin {
                self.fin_acked = true;
            }
            if !seg.sacked {
                out.push(Delivered { start, seg });
            }
        }
        self.sacked
            .remove_below(self.segs.keys().next().copied().unwrap_or(u64::MAX));
        let data_ack = ack.min(self.nxt);
        if data_ack > self.una {
            let n = (data_ack - self.una).min(self.buf.len() as u64) as usize;
            self.buf.drain(..n);
            self.una = data_ack;
        }
        // An ACK inside a segment (the peer trimmed it to its window): the rest of
        // the segment is kept under its new start.
        if let Some(entry) = self.segs.first_entry() {
            let start = *entry.key();
            if start < self.una {
                let mut seg = entry.remove();
                if seg.in_flight {
                    self.pipe -= self.una - start;
                }
                if seg.sacked {
                    self.sacked_count -= 1;
                    self.sacked.remove(start..seg.end);
                }
                seg.sacked = false;
                self.segs.insert(self.una, seg);
            }
        }
        self.high_sacked = self.high_sacked.max(self.una);
        // SACK blocks: a segment counts when a block covers it whole. Only the holes
        // of the SACKed ranges inside a block can hold segments not yet SACKed.
        for &(l, r) in sack {
            if r <= self.una || l >= r {
                continue;
            }
            // Collected: marking a segment SACKed inserts into `sacked`.
            let gaps: Vec<_> = self.sacked.gaps(l..r).collect();
            for gap in gaps {
                let starts: Vec<u64> = self
                    .segs
                    .range(gap)
                    .filter(|(_, s)| !s.sacked && s.end <= r)
                    .map(|(&k, _)| k)
                    .collect();
                for start in starts {
                    self.mark_sacked(start, &mut out);
                }
            }
        }
        out
    }

    fn mark_sacked(&mut self, start: u64, out: &mut Vec<Delivered>) {
        let Some(s) = self.segs.get_mut(&start) else {
            return;
        };
        s.sacked = true;
        self.sacked_count += 1;
        self.sacked.insert(start..s.end);
        if s.lost {
            self.lost_count -= 1;
        }
        s.lost = false;
        if s.in_flight {
            self.pipe -= s.end - start;
            s.in_flight = false;
        }
        self.high_sacked = self.high_sacked.max(s.end);
        out.push(Delivered {
            start,
            seg: s.clone(),
        });
    }

    /// RFC 8985 §6.2 step 2-3: advance RACK.xmit_ts/end_seq with each delivered
    /// segment, and note reordering (a segment delivered below one already delivered
    /// that was never retransmitted).
    pub fn rack_update(&mut self, now: Instant, delivered: &[Delivered], min_rtt: Duration) {
        for d in delivered {
            let s = &d.seg;
            let rtt = now.saturating_duration_since(s.sent);
            // Step 2: a retransmitted segment acknowledged sooner than min_rtt
            // acknowledges the original: ambiguous, skipped.
            if s.retransmitted && rtt < min_rtt {
                continue;
            }
            if let Some((_, end)) = self.rack_xmit {
                if s.end < end && !s.retransmitted {
                    self.reordering_seen = true;
                }
            }
            let newer = self
                .rack_xmit
                .is_none_or(|(t, e)| s.sent > t || (s.sent == t && s.end > e));
            if newer {
                self.rack_xmit = Some((s.sent, s.end));
                self.rack_rtt = rtt;
            }
        }
    }

    /// RFC 8985 §6.2 step 5 (RACK_detect_loss) and RFC 6675 §4 IsLost: marks lost
    /// segments; returns them (start, segment) and the RACK reorder timer's deadline
    /// for segments not yet past their reordering window.
    pub fn detect_losses(
        &mut self,
        now: Instant,
        reo_wnd: Duration,
        smss: u64,
        use_dupthresh: bool,
    ) -> (Vec<(u64, Segment)>, Option<Instant>) {
        let mut lost = Vec::new();
        let mut timer: Option<Instant> = None;
        // RFC 6675 IsLost: more than (DupThresh - 1) * SMSS bytes SACKed above, or
        // DupThresh SACKed segments above. The SACKed bytes above only grow downwards,
        // so every segment below the highest one that qualifies qualifies too.
        let dup_limit = if use_dupthresh {
            self.dup_limit(smss)
        } else {
            None
        };
        let rack = self.rack_xmit;
        // Segments at or past the newest delivered one's end were sent after it
        // (retransmissions are below it), so RACK need not look at them.
        let upper = rack.map_or(0, |r| r.1).max(dup_limit.map_or(0, |d| d + 1));
        let first = self.segs.keys().next().copied().unwrap_or(upper);
        for gap in self.sacked.gaps(first..upper) {
            for (&start, s) in self.segs.range_mut(gap) {
                // (A zero-length FIN segment can be SACKed yet not in `sacked`.)
                if s.sacked || s.lost {
                    continue;
                }
                let mut is_lost = dup_limit.is_some_and(|d| start <= d) && !s.retransmitted;
                if let Some((xmit, end)) = rack {
                    let older = s.sent < xmit || (s.sent == xmit && s.end < end);
                    if older && !is_lost {
                        let deadline = s.sent + self.rack_rtt + reo_wnd;
                        if deadline <= now {
                            is_lost = true;
                        } else {
                            timer = Some(timer.map_or(deadline, |t| t.min(deadline)));
                        }
                    }
                }
                if is_lost {
                    s.lost = true;
                    self.lost_count += 1;
                    if s.in_flight {
                        self.pipe -= s.end - start;
                        s.in_flight = false;
                    }
                    lost.push((start, s.clone()));
                }
            }
        }
        (lost, timer)
    }

    /// RFC 6675 §4 IsLost's DupThresh part: the highest segment (start) with more than
    /// (DupThresh - 1) * SMSS bytes or DupThresh segments SACKed above it. The SACKed
    /// bytes above only grow downwards, so every segment below it qualifies too; the
    /// walk visits the SACKed ranges from the top, not the segments.
    fn dup_limit(&self, smss: u64) -> Option<u64> {
        let (mut bytes, mut n) = (0u64, 0u64);
        for sacked in self.sacked.iter().rev() {
            let (rs, re) = (sacked.start, sacked.end);
            bytes += re - rs;
            n += self.segs.range(rs..re).take(DUP_THRESH as usize).count() as u64;
            if n >= DUP_THRESH || bytes > (DUP_THRESH - 1) * smss {
                // The segment just below a SACKed range is not SACKed (ranges merge).
                return self.segs.range(..rs).next_back().map(|(&k, _)| k);
            }
        }
        None
    }

    /// RTO without SACK (RFC 6298 §5, RFC 6675 §5.1): every segment not SACKed is
    /// lost. The first segment is lost even if SACKed: the cumulative ACK never
    /// covered it, so the receiver reneged (RFC 2018 §8), and without this the
    /// retransmission timer would have nothing to resend.
    pub fn mark_all_lost(&mut self) -> Vec<(u64, Segment)> {
        self.mark_lost_on_timeout(None::<fn(&Segment) -> bool>)
    }

    /// RTO with RACK (RFC 8985 §6.3, RACK_mark_losses_on_RTO): the first segment is
    /// lost (sent an RTO ago; SACKed or not, as above); any other unSACKed segment
    /// only once RACK.rtt + RACK.reo_wnd passed since it was sent. Segments sent
    /// more recently stay in flight (Linux's tcp_timeout_mark_lost: "Don't mark
    /// recently sent ones lost yet"), so a timeout in the middle of a recovery does
    /// not send again what the previous round trip just sent.
    pub fn mark_lost_on_rto(&mut self, now: Instant, reo_wnd: Duration) -> Vec<(u64, Segment)> {
        let rack_rtt = self.rack_rtt;
        self.mark_lost_on_timeout(Some(move |s: &Segment| s.sent + rack_rtt + reo_wnd <= now))
    }

    /// The timeout's marking: the first segment, then every unSACKed one that
    /// `expired` accepts (all of them without a test).
    fn mark_lost_on_timeout(
        &mut self,
        expired: Option<impl Fn(&Segment) -> bool>,
    ) -> Vec<(u64, Segment)> {
        let mut lost = Vec::new();
        if let Some((&start, first)) = self.segs.iter_mut().next() {
            if first.sacked {
                first.sacked = false;
                self.sacked_count -= 1;
                self.sacked.remove(start..first.end);
            }
        }
        let head = self.segs.keys().next().copied();
        for (&start, s) in self.segs.iter_mut() {
            if s.sacked || s.lost {
                continue;
            }
            if Some(start) != head && expired.as_ref().is_some_and(|f| !f(s)) {
                continue;
            }
            s.lost = true;
            self.lost_count += 1;
            if s.in_flight {
                self.pipe -= s.end - start;
                s.in_flight = false;
            }
            lost.push((start, s.clone()));
        }
        lost
    }

    /// A timeout was spurious (F-RTO, RFC 5682 §3): the segments it declared lost that
    /// were not retransmitted since are in flight again. O(segments), once per undo.
    pub fn undo_lost(&mut self) {
        if self.lost_count == 0 {
            return;
        }
        for (&start, s) in self.segs.iter_mut() {
            if s.lost && !s.in_flight {
                s.lost = false;
                s.in_flight = true;
                self.pipe += s.end - start;
                self.lost_count -= 1;
            }
        }
    }

    /// RFC 6675 §4 NextSeg rule 1: the lowest lost segment not yet retransmitted.
    pub fn next_lost(&self) -> Option<(u64, &Segment)> {
        if self.lost_count == 0 {
            return None;
        }
        // Lost segments are never SACKed: only the holes need a look.
        let first = *self.segs.keys().next()?;
        self.sacked
            .gaps(first..u64::MAX)
            .find_map(|gap| self.segs.range(gap).find(|(_, s)| s.lost && !s.in_flight))
            .map(|(&k, s)| (k, s))
    }

    /// The highest segment sent (the TLP retransmits it, RFC 8985 §7.3).
    pub fn last_segment(&self) -> Option<(u64, &Segment)> {
        self.segs.iter().next_back().map(|(&k, s)| (k, s))
    }

    pub fn sacked_segments(&self) -> u64 {
        self.sacked_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(end: u64, sent_ms: u64, tx: u64) -> Segment {
        Segment {
            end,
            fin: false,
            sent: Instant::from_millis(sent_ms),
            tx,
            retransmitted: false,
            sacked: false,
            lost: false,
            in_flight: true,
            snapshot: DeliverySnapshot::default(),
        }
    }

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        b.write(&vec![7u8; (n * 100) as usize]);
        for i in 0..n {
            b.on_sent(i * 100, seg(i * 100 + 100, i, i));
        }
        b
    }

    #[test]
    fn cumulative_and_sack_update_the_pipe() {
        let mut b = board(10);
        assert_eq!(b.pipe, 1000);
        let d = b.on_ack(200, &[(400, 600)]);
        assert_eq!(d.len(), 4);
        assert_eq!((b.una, b.pipe, b.buffered()), (200, 600, 800));
        // A block covering part of a segment does not SACK it.
        let d = b.on_ack(200, &[(650, 720)]);
        assert!(d.is_empty());
    }

    #[test]
    fn rfc6675_three_sacked_segments_make_a_hole_lost() {
        let mut b = board(10);
        b.on_ack(100, &[(200, 400)]);
        let (lost, _) = b.detect_losses(Instant::from_millis(10), Duration::ZERO, 100, true);
        assert!(lost.is_empty(), "two SACKed segments are not enough");
        b.on_ack(100, &[(200, 500)]);
        let (lost, _) =
            b.detect_losses(Instant::from_millis(10), Duration::from_secs(9), 100, true);
        assert_eq!(lost.iter().map(|l| l.0).collect::<Vec<_>>(), vec![100]);
        assert_eq!(b.next_lost().map(|l| l.0), Some(100));
        assert_eq!(b.pipe, 1000 - 100 - 300 - 100);
    }

    #[test]
    fn rack_marks_older_segments_after_the_reordering_window() {
        let mut b = board(4);
        let now = Instant::from_millis(50);
        let d = b.on_ack(0, &[(300, 400)]);
        b.rack_update(now, &d, Duration::from_millis(10));
        assert_eq!(b.rack_rtt, Duration::from_millis(47));
        // Segments sent at 0, 1, 2 ms: lost at sent + 47 + 5 ms.
        let (lost, timer) = b.detect_losses(now, Duration::from_millis(5), 100, false);
        assert!(lost.is_empty());
        assert_eq!(timer, Some(Instant::from_millis(52)));
        let (lost, _) = b.detect_losses(
            Instant::from_millis(53),
            Duration::from_millis(5),
            100,
            false,
        );
        assert_eq!(lost.iter().map(|l| l.0).collect::<Vec<_>>(), vec![0, 100]);
        assert!(!b.reordering_seen);
        // The segment at 200 arrives after all: reordering.
        let d = b.on_ack(0, &[(200, 300)]);
        b.rack_update(Instant::from_millis(54), &d, Duration::from_millis(10));
        assert!(b.reordering_seen);
    }

    #[test]
    fn rto_marks_everything_unsacked_lost() {
        let mut b = board(3);
        b.on_ack(0, &[(100, 200)]);
        let lost = b.mark_all_lost();
        assert_eq!(lost.len(), 2);
        assert_eq!(b.pipe, 0);
        b.on_retransmitted(0, Instant::from_millis(9), 9, DeliverySnapshot::default());
        assert_eq!(b.pipe, 100);
        assert_eq!(b.next_lost().map(|l| l.0), Some(200));
    }

    #[test]
    fn rto_with_rack_keeps_recent_segments_in_flight() {
        // Segments sent at 0..4 ms; RACK.rtt 10 ms, no reordering window; the timer
        // fires at 12 ms: the first (always) and those sent at or before 2 ms are lost.
        let mut b = board(5);
        b.on_ack(0, &[(300, 400)]);
        b.rack_rtt = Duration::from_millis(10);
        let lost = b.mark_lost_on_rto(Instant::from_millis(12), Duration::ZERO);
        assert_eq!(
            lost.iter().map(|l| l.0).collect::<Vec<_>>(),
            vec![0, 100, 200]
        );
        // The segment sent at 4 ms is still in flight.
        assert_eq!(b.pipe, 100);
        // The first segment is lost however recently it was sent.
        let mut b = board(2);
        b.rack_rtt = Duration::from_millis(10);
        let lost = b.mark_lost_on_rto(Instant::from_millis(1), Duration::ZERO);
        assert_eq!(lost.iter().map(|l| l.0).collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn rto_after_reneging_resends_the_first_segment() {
        let mut b = board(2);
        b.on_ack(0, &[(0, 100)]);
        let lost = b.mark_all_lost();
        assert_eq!(lost.iter().map(|l| l.0).collect::<Vec<_>>(), vec![0, 100]);
        assert_eq!(b.next_lost().map(|l| l.0), Some(0));
    }

    #[test]
    fn an_ack_inside_a_segment_keeps_its_tail() {
        let mut b = board(2);
        b.on_ack(150, &[]);
        assert_eq!(b.segs.keys().copied().collect::<Vec<_>>(), vec![150]);
        assert_eq!((b.pipe, b.una), (50, 150));
        let mut out = Vec::new();
        b.copy(150, 200, &mut out);
        assert_eq!(out.len(), 50);
    }

    #[test]
    fn copy_spans_the_ring() {
        let mut b = Scoreboard::default();
        b.write(&(0..200u8).collect::<Vec<_>>());
        b.on_sent(0, seg(100, 0, 0));
        b.on_ack(100, &[]);
        b.write(&[1, 2, 3]);
        let mut out = Vec::new();
        b.copy(150, 203, &mut out);
        assert_eq!(out.len(), 53);
        assert_eq!((out[0], out[50]), (150, 1));
    }
}
