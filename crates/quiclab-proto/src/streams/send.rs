//! The sending part of a stream (RFC 9000 §3.1): a buffer of written bytes that are not
//! yet acknowledged as a prefix, and which ranges are unsent, lost or acknowledged.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::send_buf::{SendBuf, SendData};
use crate::range_set::RangeSet;
use crate::wire::{stream_header_len, write_stream_header, StreamId};

/// A RESET_STREAM we decided to send (§3.1 "Reset Sent").
#[derive(Clone, Copy, Debug)]
pub(super) struct LocalReset {
    pub code: u64,
    /// §4.5: the highest offset sent, so both ends agree on the credit consumed.
    pub final_size: u64,
    pub acked: bool,
}

/// What one emitted STREAM frame carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Sent {
    pub offset: u64,
    pub len: u64,
    pub fin: bool,
}

/// What repeating a sent range gave ([`SendStream::emit_copy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CopyOutcome {
    /// One frame was written.
    Sent(Sent),
    /// Not even one byte of it fits in the room given.
    NoRoom,
    /// Nothing of it needs repeating: acknowledged (or the stream was reset).
    Done,
}

#[derive(Debug)]
pub(super) struct SendStream {
    /// Bytes from offset `base` to the end of what was written; the acknowledged prefix
    /// is dropped so a long transfer keeps only the unacknowledged window.
    buf: SendBuf,
    base: u64,
    /// The next never-sent offset: everything below was sent at least once.
    next: u64,
    /// Sent ranges declared lost and not acknowledged since, within [base, next).
    lost: RangeSet,
    /// Acknowledged ranges above `base` (the first one never touches `base`).
    acked: RangeSet,
    /// `finish` was called: the final size is `end()`.
    pub fin: bool,
    fin_sent: bool,
    fin_acked: bool,
    fin_lost: bool,
    /// The peer's MAX_STREAM_DATA (§4.1); it only increases.
    pub max: u64,
    /// The limit a STREAM_DATA_BLOCKED was last sent for: once per value (§4.1).
    pub blocked_sent: Option<u64>,
    pub reset: Option<LocalReset>,
    /// The peer's STOP_SENDING error code (§3.5).
    pub stopped: Option<u64>,
    /// `write` pushed back: report `Writable` when buffer space frees.
    pub want_writable: bool,
    pub finished_reported: bool,
}

/// The largest data length that fits in `room` bytes with its STREAM header, up to
/// `avail`; `None` when not even an empty frame fits.
fn fit(id: StreamId, offset: u64, avail: u64, room: usize) -> Option<usize> {
    let h0 = stream_header_len(id, offset, 0, true);
    if h0 > room {
        return None;
    }
    let avail = usize::try_from(avail).unwrap_or(usize::MAX);
    // A bound from the largest possible Length field, then one refinement (a shorter
    // length has a header no longer, so `m` fits whenever `n` does: nothing saturates).
    let n = avail.min(room.saturating_sub(stream_header_len(id, offset, room, true)));
    let m = avail.min(room.saturating_sub(stream_header_len(id, offset, n, true)));
    Some(
        if stream_header_len(id, offset, m, true).saturating_add(m) <= room {
            m
        } else {
            n
        },
    )
}

impl SendStream {
    pub fn new(max: u64) -> Self {
        SendStream {
            buf: SendBuf::default(),
            base: 0,
            next: 0,
            lost: RangeSet::new(),
            acked: RangeSet::new(),
            fin: false,
            fin_sent: false,
            fin_acked: false,
            fin_lost: false,
            max,
            blocked_sent: None,
            reset: None,
            stopped: None,
            want_writable: false,
            finished_reported: false,
        }
    }

    /// One past the last written byte.
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.buf.len() as u64)
    }

    /// Takes as much of `data` as keeps at most `limit` unacknowledged bytes buffered
    /// and, when `lowat` is not 0, at most `lowat` bytes not yet sent.
    pub fn write(&mut self, data: SendData, limit: u64, lowat: u64) -> usize {
        let room = self.room(limit, lowat);
        let n = data.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        self.buf.push(data.prefix(n));
        n
    }

    /// How many bytes `write` takes now under those two limits.
    pub fn room(&self, limit: u64, lowat: u64) -> u64 {
        let room = limit.saturating_sub(self.buf.len() as u64);
        if lowat == 0 {
            return room;
        }
        // Like TCP_NOTSENT_LOWAT: the application's data waits in the application, so
        // what is copied into packets was written moments before (still in cache).
        room.min(lowat.saturating_sub(self.end().saturating_sub(self.next)))
    }

    /// Whether something lost (data or FIN) awaits retransmission.
    pub fn has_lost(&self) -> bool {
        self.reset.is_none() && (!self.lost.is_empty() || self.fin_lost)
    }

    /// Whether new data within the stream's credit, or a FIN alone, awaits sending.
    pub fn has_fresh(&self) -> bool {
        self.reset.is_none()
            && ((self.next < self.end() && self.next < self.max) || self.fin_only())
    }

    /// The FIN is due and no data precedes it.
    pub fn fin_only(&self) -> bool {
        self.fin && !self.fin_sent && self.next == self.end()
    }

    /// New data is waiting on the peer's MAX_STREAM_DATA.
    pub fn is_blocked(&self) -> bool {
        self.reset.is_none() && self.next < self.end() && self.next >= self.max
    }

    /// Everything written, FIN included, was acknowledged (§3.1 "Data Recvd").
    pub fn all_acked(&self) -> bool {
        self.fin_acked && self.buf.is_empty()
    }

    /// No further frames will ever be needed for this part (§3.1 terminal states).
    pub fn is_done(&self) -> bool {
        match self.reset {
            Some(r) => r.acked,
            None => self.all_acked(),
        }
    }

    /// Abandons the data (§3.1 "Reset Sent"): nothing is retransmitted any more.
    pub fn reset(&mut self, code: u64) {
        self.reset = Some(LocalReset {
            code,
            final_size: self.next,
            acked: false,
        });
        self.buf = SendBuf::default();
        self.base = self.next;
        self.lost = RangeSet::new();
        self.acked = RangeSet::new();
        self.fin_lost = false;
    }

    /// Appends `len` bytes at `offset` from the buffer; the caller checked the bounds.
    fn copy_out(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        self.buf
            .copy_out(offset.saturating_sub(self.base) as usize, len, out);
    }

    fn emit(&self, id: StreamId, offset: u64, len: usize, fin: bool, out: &mut Vec<u8>) {
        write_stream_header(out, id, offset, len, fin, true);
        self.copy_out(offset, len, out);
    }

    /// Writes one STREAM frame retransmitting the lowest lost range (or a lost FIN).
    pub fn emit_lost(&mut self, id: StreamId, room: usize, out: &mut Vec<u8>) -> Option<Sent> {
        if self.reset.is_some() {
            return None;
        }
        let end = self.end();
        let (offset, avail) = match self.lost.first() {
            Some(r) => (r.start, r.end.saturating_sub(r.start)),
            None if self.fin_lost => (end, 0),
            None => return None,
        };
        let n = fit(id, offset, avail, room)?;
        if n == 0 && avail > 0 {
            return None;
        }
        let stop = offset.saturating_add(n as u64);
        // The FIN rides along whenever a retransmission reaches the final size.
        let fin = self.fin_sent && !self.fin_acked && stop == end;
        self.emit(id, offset, n, fin, out);
        self.lost.remove(offset..stop);
        if fin {
            self.fin_lost = false;
        }
        Some(Sent {
            offset,
            len: n as u64,
            fin,
        })
    }

    /// Writes one STREAM frame of new data within the stream's credit and `conn_avail`
    /// bytes of connection credit (§4.1), or the FIN alone.
    pub fn emit_fresh(
        &mut self,
        id: StreamId,
        room: usize,
        conn_avail: u64,
        out: &mut Vec<u8>,
    ) -> Option<Sent> {
        if self.reset.is_some() {
            return None;
        }
        let end = self.end();
        let avail = (end.min(self.max).saturating_sub(self.next)).min(conn_avail);
        if avail == 0 && !self.fin_only() {
            return None;
        }
        let n = fit(id, self.next, avail, room)?;
        if n == 0 && !self.fin_only() {
            return None;
        }
        let offset = self.next;
        let fin = self.fin && offset.saturating_add(n as u64) == end;
        self.emit(id, offset, n, fin, out);
        self.next = self.next.saturating_add(n as u64);
        if fin {
            self.fin_sent = true;
        }
        Some(Sent {
            offset,
            len: n as u64,
            fin,
        })
    }

    /// Writes one STREAM frame repeating the lowest part of `offset..offset + len` that
    /// was sent and is not acknowledged (a copy on another path, the redundant
    /// scheduler); with `fin` (the range ends at the final size) the FIN rides along
    /// with the part that reaches it, or alone, until acknowledged. Nothing is marked:
    /// the copy is neither new data (no credit is taken) nor a retransmission (the lost
    /// ranges are untouched). The caller continues the range after the frame's end.
    pub fn emit_copy(
        &mut self,
        id: StreamId,
        (offset, len, fin): (u64, u64, bool),
        room: usize,
        out: &mut Vec<u8>,
    ) -> CopyOutcome {
        if self.reset.is_some() {
            return CopyOutcome::Done;
        }
        let stop = offset.saturating_add(len).min(self.next);
        let start = offset.max(self.base);
        let gap = (start < stop)
            .then(|| self.acked.gaps(start..stop).next())
            .flatten();
        let end = self.end();
        let fin_due = fin && self.fin_sent && !self.fin_acked;
        let (at, avail) = match gap {
            Some(g) => (g.start, g.end.saturating_sub(g.start)),
            None if fin_due => (end, 0),
            None => return CopyOutcome::Done,
        };
        let Some(n) = fit(id, at, avail, room) else {
            return CopyOutcome::NoRoom;
        };
        if n == 0 && avail > 0 {
            return CopyOutcome::NoRoom;
        }
        let fin = fin_due && at.saturating_add(n as u64) == end;
        self.emit(id, at, n, fin, out);
        CopyOutcome::Sent(Sent {
            offset: at,
            len: n as u64,
            fin,
        })
    }

    /// Marks a frame acknowledged; returns the number of buffer bytes freed.
    pub fn on_acked(&mut self, offset: u64, len: u64, fin: bool) -> u64 {
        if self.reset.is_some() {
            return 0;
        }
        let base_before = self.base;
        let stop = offset.saturating_add(len).min(self.next);
        let start = offset.max(self.base);
        if start < stop {
            if !self.lost.is_empty() {
                self.lost.remove(start..stop);
            }
            if start == self.base {
                // In-order acknowledgement, the common case: the prefix is dropped at
                // once (O(1) per byte amortised, no copying), bypassing the range set.
                self.buf.drop_front(stop.saturating_sub(start) as usize);
                self.base = stop;
            } else {
                self.acked.insert(start..stop);
            }
        }
        if fin {
            self.fin_acked = true;
            self.fin_lost = false;
        }
        // Ranges acknowledged earlier that the base has now reached (merged ranges never
        // touch, so at most one extends past it; older ones may lie wholly below).
        while let Some(r) = self.acked.first().filter(|r| r.start <= self.base) {
            self.acked.pop_first();
            if r.end > self.base {
                self.buf
                    .drop_front(r.end.saturating_sub(self.base) as usize);
                self.base = r.end;
            }
        }
        self.base.saturating_sub(base_before)
    }

    /// Marks a frame lost: its still unacknowledged parts are queued for retransmission.
    pub fn on_lost(&mut self, offset: u64, len: u64, fin: bool) {
        if self.reset.is_some() {
            return;
        }
        let stop = offset.saturating_add(len).min(self.next);
        let start = offset.max(self.base);
        if start < stop {
            self.lost.insert(start..stop);
            for r in self.acked.iter().take_while(|r| r.start < stop) {
                if r.end > start {
                    self.lost.remove(r);
                }
            }
        }
        if fin && !self.fin_acked {
            self.fin_lost = true;
        }
    }

    #[cfg(test)]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;

    fn frame(s: &mut SendStream, room: usize, lost: bool, conn: u64) -> Option<Sent> {
        let mut out = Vec::new();
        let id = StreamId(0);
        let r = if lost {
            s.emit_lost(id, room, &mut out)
        } else {
            s.emit_fresh(id, room, conn, &mut out)
        };
        if let Some(r) = r {
            assert_eq!(
                out.len(),
                stream_header_len(id, r.offset, r.len as usize, true) + r.len as usize
            );
            assert!(out.len() <= room);
        }
        r
    }

    #[test]
    fn fit_respects_room() {
        let id = StreamId(4);
        for room in 0..200 {
            for off in [0u64, 5, 70_000] {
                if let Some(n) = fit(id, off, 1000, room) {
                    assert!(stream_header_len(id, off, n, true) + n <= room);
                    assert!(n + 8 >= room.saturating_sub(stream_header_len(id, off, 0, true)));
                } else {
                    assert!(stream_header_len(id, off, 0, true) > room);
                }
            }
        }
    }

    #[test]
    fn lost_parts_not_acked_are_resent_and_prefix_dropped() {
        let mut s = SendStream::new(1000);
        assert_eq!(s.write(SendData::Copied(&[7u8; 300]), 250, 0), 250);
        let a = frame(&mut s, 1000, false, 100).unwrap();
        let b = frame(&mut s, 1000, false, 100).unwrap();
        let c = frame(&mut s, 1000, false, 100).unwrap();
        assert_eq!((a.offset, a.len, b.offset, c.offset), (0, 100, 100, 200));
        assert_eq!(c.len, 50);
        s.on_acked(120, 30, false); // part of b acked
        s.on_lost(b.offset, b.len, false);
        assert_eq!(s.lost.iter().collect::<Vec<_>>(), vec![100..120, 150..200]);
        let r = frame(&mut s, 200, true, 0).unwrap();
        assert_eq!((r.offset, r.len), (100, 20));
        assert_eq!(s.on_acked(0, 100, false), 100);
        assert_eq!(s.buffered(), 150);
        s.on_acked(100, 20, false);
        assert_eq!(s.base, 150);
        assert!(!s.all_acked());
    }

    #[test]
    fn a_copy_repeats_only_what_is_unacknowledged_and_marks_nothing() {
        let mut s = SendStream::new(1000);
        assert_eq!(s.write(SendData::Copied(&[3u8; 300]), 1000, 0), 300);
        s.fin = true;
        let a = frame(&mut s, 1000, false, 1000).unwrap();
        assert_eq!((a.offset, a.len, a.fin), (0, 300, true));
        s.on_acked(0, 50, false);
        s.on_acked(100, 50, false);
        let mut out = Vec::new();
        let mut copy = |s: &mut SendStream, range, room| {
            out.clear();
            s.emit_copy(StreamId(0), range, room, &mut out)
        };
        let sent = |offset, len, fin| CopyOutcome::Sent(Sent { offset, len, fin });
        // The acknowledged prefix and range are skipped; the FIN rides with the end.
        assert_eq!(copy(&mut s, (0, 300, true), 1000), sent(50, 50, false));
        assert_eq!(copy(&mut s, (100, 200, true), 1000), sent(150, 150, true));
        assert_eq!(copy(&mut s, (100, 200, true), 3), CopyOutcome::NoRoom);
        // Nothing was marked: no credit taken, nothing queued as lost.
        assert!(!s.has_lost() && !s.has_fresh());
        s.on_acked(150, 150, true);
        assert_eq!(copy(&mut s, (100, 200, true), 1000), CopyOutcome::Done);
        s.on_acked(50, 50, false);
        assert_eq!(copy(&mut s, (0, 300, true), 1000), CopyOutcome::Done);
        assert!(s.all_acked());
    }

    #[test]
    fn an_in_order_ack_swallows_ranges_acked_before() {
        let mut s = SendStream::new(1000);
        assert_eq!(s.write(SendData::Copied(&[1u8; 400]), 1000, 0), 400);
        for _ in 0..4 {
            frame(&mut s, 1000, false, 100).unwrap();
        }
        assert_eq!(s.on_acked(150, 50, false), 0); // out of order: kept as a range
        assert_eq!(s.on_acked(250, 50, false), 0);
        // A retransmission's ACK covering 0..220 passes the first range and reaches
        // into nothing else; the base stops at the gap before 250.
        assert_eq!(s.on_acked(0, 220, false), 220);
        assert_eq!((s.base, s.buffered()), (220, 180));
        assert_eq!(s.on_acked(220, 30, false), 80); // joins 250..300
        assert_eq!(s.base, 300);
        assert!(s.acked.is_empty());
    }

    #[test]
    fn the_notsent_limit_bounds_unsent_bytes_only() {
        let mut s = SendStream::new(10_000);
        // 1000 buffered at most, 300 of them unsent.
        assert_eq!(s.write(SendData::Copied(&[1u8; 500]), 1000, 300), 300);
        assert_eq!(s.room(1000, 300), 0);
        frame(&mut s, 10_000, false, 200).unwrap();
        assert_eq!(s.room(1000, 300), 200);
        assert_eq!(s.write(SendData::Copied(&[1u8; 500]), 1000, 300), 200);
        frame(&mut s, 10_000, false, 300).unwrap();
        // 500 sent, unacknowledged: now the buffer limit binds.
        assert_eq!(s.room(1000, 300), 300);
        assert_eq!(s.room(600, 300), 100);
        assert_eq!(s.room(1000, 0), 500);
    }
}
