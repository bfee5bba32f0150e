//! The receiving part of a stream (RFC 9000 §3.2): reassembly of STREAM frames in any
//! order, final size checks (§4.5) and per-stream flow control (§4.1).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::flow::RecvWindow;
use super::{ReadOutcome, StreamError};
use crate::error::TransportError;
use crate::range_set::RangeSet;
use crate::wire::varint;
use std::collections::VecDeque;

#[derive(Debug)]
pub(super) struct RecvStream {
    /// Bytes from offset `read` up to the highest received offset; gaps hold zeros until
    /// filled. Flow control bounds its length by the stream window.
    buf: VecDeque<u8>,
    /// The next offset the application reads.
    read: u64,
    /// Every offset received so far (from 0), to find contiguous data and completion.
    received: RangeSet,
    /// One past the highest offset received: the credit the peer consumed (§4.1).
    pub highest: u64,
    /// Known from a FIN or a RESET_STREAM (§4.5).
    pub final_size: Option<u64>,
    fin_read: bool,
    /// The peer's RESET_STREAM error code (§3.2 "Reset Recvd").
    pub reset: Option<u64>,
    reset_read: bool,
    /// Our STOP_SENDING error code: arriving data is discarded.
    pub stopped: Option<u64>,
    pub flow: RecvWindow,
    /// Bytes already returned to the connection window (read, or discarded).
    pub released: u64,
    /// A `Readable` event is outstanding since the last `read`.
    pub readable_signalled: bool,
}

/// Copies `data` into `dq` at index `at`; the caller made `dq` long enough (so no
/// index below saturates).
fn write_at(dq: &mut VecDeque<u8>, at: usize, data: &[u8]) {
    let (a, b) = dq.as_mut_slices();
    if at < a.len() {
        let k = data.len().min(a.len().saturating_sub(at));
        let (first, second) = data.split_at(k);
        a[at..at.saturating_add(k)].copy_from_slice(first);
        b[..second.len()].copy_from_slice(second);
    } else {
        let s = at.saturating_sub(a.len());
        b[s..s.saturating_add(data.len())].copy_from_slice(data);
    }
}

/// Where a STREAM frame's data ends. Peer input: offset + length may overflow, or
/// exceed 2^62-1 (§19.8).
fn data_end(offset: u64, data: &[u8]) -> Result<u64, TransportError> {
    offset
        .checked_add(data.len() as u64)
        .filter(|&e| e <= varint::MAX)
        .ok_or_else(|| TransportError::frame_encoding("stream offset overflow"))
}

impl RecvStream {
    pub fn new(flow: RecvWindow) -> Self {
        RecvStream {
            buf: VecDeque::new(),
            read: 0,
            received: RangeSet::new(),
            highest: 0,
            final_size: None,
            fin_read: false,
            reset: None,
            reset_read: false,
            stopped: None,
            flow,
            released: 0,
            readable_signalled: false,
        }
    }

    /// Checks a new highest offset / final size against §4.5 and the stream limit (§4.1);
    /// returns how much more credit the peer consumed.
    fn account(&mut self, end: u64, fin: bool) -> Result<u64, TransportError> {
        if let Some(fs) = self.final_size {
            if end > fs || (fin && end != fs) {
                return Err(TransportError::final_size("final size exceeded or changed"));
            }
        }
        if fin && end < self.highest {
            return Err(TransportError::final_size("final size below data received"));
        }
        if end > self.flow.max {
            return Err(TransportError::flow_control(
                "stream data beyond MAX_STREAM_DATA",
            ));
        }
        let grew = end.saturating_sub(self.highest);
        self.highest = self.highest.max(end);
        if fin {
            self.final_size = Some(end);
        }
        Ok(grew)
    }

    /// The connection credit the data of a STREAM frame at `offset` would newly
    /// consume (§4.1); FRAME_ENCODING_ERROR if its end is past 2^62-1.
    pub fn credit_for(&self, offset: u64, data: &[u8]) -> Result<u64, TransportError> {
        Ok(data_end(offset, data)?.saturating_sub(self.highest))
    }

    /// Handles a STREAM frame's payload; returns the newly consumed credit.
    pub fn on_data(&mut self, offset: u64, data: &[u8], fin: bool) -> Result<u64, TransportError> {
        let end = data_end(offset, data)?;
        let grew = self.account(end, fin)?;
        if offset < end {
            self.received.insert(offset..end);
        }
        if self.reset.is_some() || self.stopped.is_some() || end <= self.read {
            return Ok(grew);
        }
        // Only the part beyond what the application already read is stored.
        // `offset <= start < end` and `read <= start` here, so nothing saturates.
        let start = offset.max(self.read);
        let need = end.saturating_sub(self.read) as usize;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        write_at(
            &mut self.buf,
            start.saturating_sub(self.read) as usize,
            &data[start.saturating_sub(offset) as usize..],
        );
        Ok(grew)
    }

    /// Handles RESET_STREAM (§3.2, §4.5); returns the newly consumed credit.
    pub fn on_reset(&mut self, code: u64, final_size: u64) -> Result<u64, TransportError> {
        if self.reset.is_some() && self.final_size == Some(final_size) {
            return Ok(0);
        }
        let grew = self.account(final_size, true)?;
        self.reset = Some(code);
        self.buf = VecDeque::new();
        Ok(grew)
    }

    /// Bytes held for reading: from the read offset to the highest offset received,
    /// gaps included (flow control bounds it by the stream window).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// One past the last byte readable without a gap.
    fn contiguous_end(&self) -> u64 {
        match self.received.first() {
            Some(r) if r.start <= self.read => r.end.max(self.read),
            _ => self.read,
        }
    }

    /// Whether `read` would return something (data, FIN or the reset).
    pub fn is_readable(&self) -> bool {
        if self.stopped.is_some() || self.fin_read || self.reset_read {
            return false;
        }
        self.reset.is_some()
            || self.contiguous_end() > self.read
            || self.final_size == Some(self.read)
    }

    /// All data up to the final size arrived.
    fn all_received(&self) -> bool {
        match self.final_size {
            Some(0) => true,
            Some(fs) => self.received.first() == Some(0..fs),
            None => false,
        }
    }

    /// Whether STOP_SENDING or MAX_STREAM_DATA could still matter to the peer.
    pub fn peer_may_send(&self) -> bool {
        self.reset.is_none() && !self.all_received()
    }

    /// Whether more MAX_STREAM_DATA credit is useful: the size is not yet known (§3.2).
    pub fn wants_credit(&self) -> bool {
        self.reset.is_none() && self.stopped.is_none() && self.final_size.is_none()
    }

    /// Reads in-order bytes into `out`, copying straight out of the reassembly buffer.
    pub fn read(&mut self, out: &mut [u8]) -> Result<ReadOutcome, StreamError> {
        self.readable_signalled = false;
        if let Some(code) = self.reset {
            self.reset_read = true;
            return Err(StreamError::Reset(code));
        }
        if self.stopped.is_some() || self.fin_read {
            return Err(StreamError::Closed);
        }
        // What was read is contiguous: `read <= contiguous_end`.
        let ready = self.contiguous_end().saturating_sub(self.read);
        if ready == 0 && self.final_size != Some(self.read) {
            // Nothing to read (the application's read after the one that emptied the
            // buffer, issue 29): what follows would copy and drain nothing, leave `read`
            // as it is and end in this same `Blocked`; only its store is kept.
            self.flow.consumed = self.read;
            return Err(StreamError::Blocked);
        }
        let n = out.len().min(ready as usize);
        let (a, b) = self.buf.as_slices();
        let k = n.min(a.len());
        out[..k].copy_from_slice(&a[..k]);
        out[k..n].copy_from_slice(&b[..n.saturating_sub(k)]);
        self.buf.drain(..n);
        self.read = self.read.saturating_add(n as u64);
        self.flow.consumed = self.read;
        let fin = self.final_size == Some(self.read);
        if n == 0 && !fin {
            return Err(StreamError::Blocked);
        }
        self.fin_read = fin;
        Ok(ReadOutcome { bytes: n, fin })
    }

    /// Stops delivery (STOP_SENDING from the application): buffered data is dropped.
    pub fn stop(&mut self, code: u64) {
        self.stopped = Some(code);
        self.buf = VecDeque::new();
    }

    /// Credit the connection window regains: what was read, or everything received
    /// once the data will never be read (§4.5: the final size counts in full).
    pub fn take_release(&mut self) -> u64 {
        let target = if self.reset.is_some() || self.stopped.is_some() {
            self.highest
        } else {
            self.read
        };
        let n = target.saturating_sub(self.released);
        self.released = self.released.max(target);
        n
    }

    /// No further frame or read concerns this part (§3.2 terminal states).
    pub fn is_done(&self) -> bool {
        self.fin_read
            || (self.reset.is_some() && (self.reset_read || self.stopped.is_some()))
            || (self.stopped.is_some() && self.all_received())
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;
    use crate::error::TransportErrorCode as C;
    use proptest::prelude::*;

    fn rs(window: u64) -> RecvStream {
        RecvStream::new(RecvWindow::new(window, window, false))
    }

    fn read_all(r: &mut RecvStream) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut b = [0u8; 7];
        loop {
            match r.read(&mut b) {
                Ok(o) => {
                    out.extend_from_slice(&b[..o.bytes]);
                    if o.fin {
                        return (out, true);
                    }
                }
                Err(StreamError::Blocked) => return (out, false),
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn reassembles_out_of_order_with_overlaps() {
        let data: Vec<u8> = (0..100u8).collect();
        let mut r = rs(1000);
        r.on_data(10, &data[10..30], false).unwrap();
        assert!(!r.is_readable());
        assert_eq!(read_all(&mut r), (vec![], false));
        r.on_data(0, &data[0..15], false).unwrap();
        assert_eq!(read_all(&mut r).0, data[..30].to_vec());
        r.on_data(25, &data[25..40], false).unwrap(); // overlaps what was read
        r.on_data(50, &data[50..100], true).unwrap();
        r.on_data(35, &data[35..60], false).unwrap();
        r.on_data(35, &data[35..60], false).unwrap(); // duplicate
        assert_eq!(read_all(&mut r), (data[30..].to_vec(), true));
        assert!(r.is_done());
    }

    #[test]
    fn final_size_rules() {
        let mut r = rs(1000);
        r.on_data(0, &[1; 10], true).unwrap();
        let e = r.on_data(5, &[1; 10], false).unwrap_err();
        assert_eq!(e.code, C::FINAL_SIZE_ERROR);
        let e = r.on_data(0, &[1; 8], true).unwrap_err();
        assert_eq!(e.code, C::FINAL_SIZE_ERROR);
        r.on_data(0, &[1; 10], true).unwrap(); // same final size: fine
        assert_eq!(r.on_reset(3, 11).unwrap_err().code, C::FINAL_SIZE_ERROR);

        let mut r = rs(1000);
        r.on_data(0, &[1; 20], false).unwrap();
        assert_eq!(
            r.on_data(0, &[1; 5], true).unwrap_err().code,
            C::FINAL_SIZE_ERROR
        );
        assert_eq!(r.on_reset(3, 19).unwrap_err().code, C::FINAL_SIZE_ERROR);
        assert_eq!(r.on_reset(3, 30).unwrap(), 10);
        assert_eq!(r.read(&mut [0; 4]), Err(StreamError::Reset(3)));
        assert!(r.is_done());
    }

    #[test]
    fn limits_and_overflow() {
        let mut r = rs(100);
        assert_eq!(
            r.on_data(90, &[0; 11], false).unwrap_err().code,
            C::FLOW_CONTROL_ERROR
        );
        let e = r.on_data(u64::MAX - 2, &[0; 5], false).unwrap_err();
        assert_eq!(e.code, C::FRAME_ENCODING_ERROR);
        assert_eq!(r.on_reset(0, 101).unwrap_err().code, C::FLOW_CONTROL_ERROR);
    }

    proptest! {
        #[test]
        fn any_chunking_order_and_duplication_delivers_exactly(
            data in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(0usize..600, 0..20),
            extra in proptest::collection::vec((0usize..600, 0usize..80), 0..10),
            seed in any::<u64>(),
        ) {
            let n = data.len();
            let mut pts: Vec<usize> = cuts.into_iter().filter(|&c| c < n).collect();
            pts.push(0);
            pts.push(n);
            pts.sort_unstable();
            pts.dedup();
            let mut chunks: Vec<(usize, usize)> = pts.windows(2).map(|w| (w[0], w[1])).collect();
            for (s, l) in extra {
                if s < n { chunks.push((s, (s + l).min(n))); }
            }
            // A deterministic shuffle from the seed.
            let mut x = seed | 1;
            for i in (1..chunks.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                chunks.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut r = rs(1000);
            let mut got = Vec::new();
            let mut fin = false;
            if n == 0 {
                r.on_data(0, &[], true).unwrap();
                fin = read_all(&mut r).1;
            }
            for (s, e) in chunks {
                r.on_data(s as u64, &data[s..e], e == n).unwrap();
                if !fin {
                    let (part, f) = read_all(&mut r);
                    got.extend(part);
                    fin = f;
                }
            }
            prop_assert!(fin);
            prop_assert_eq!(got, data);
        }
    }
}
