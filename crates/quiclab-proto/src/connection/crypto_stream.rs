//! The CRYPTO stream of one packet number space (RFC 9000 §19.6, RFC 9001 §4.1.3): an
//! offset-addressed send buffer with retransmission, and a reassembly buffer whose
//! contiguous prefix is fed to TLS.

use crate::error::TransportError;
use crate::range_set::RangeSet;
use crate::wire::{crypto_header_len, write_crypto_header};

/// How much CRYPTO data a connection buffers for reassembly, over all its spaces, and
/// packets it keeps until it can read them, before giving up (RFC 9000 §7.5: at least
/// 4096 bytes; beyond the limit CRYPTO_BUFFER_EXCEEDED). See
/// `Connection::handshake_buffered_bytes`.
pub const MAX_CRYPTO_BUFFER: u64 = 1 << 16;

/// Disjoint pieces of CRYPTO data one space keeps apart at most: a ClientHello split
/// and reordered on purpose (chaos protection) or a flight with losses makes a few
/// dozen; this bounds the bookkeeping of one split into single bytes.
const MAX_CRYPTO_RANGES: usize = 256;

/// Outgoing CRYPTO data of one space. Data is kept until acknowledged; once every
/// byte queued so far is acknowledged and nothing waits to be (re)sent, the buffer is
/// freed (an idle connection keeps none of its handshake or session tickets).
#[derive(Debug, Default)]
pub struct CryptoSend {
    /// The offset of `data[0]`: everything below was acknowledged and freed.
    base: u64,
    /// Bytes queued from `base` on; `data[i]` is at offset `base + i`.
    data: Vec<u8>,
    /// Offsets queued for (re)transmission and not yet sent since.
    pending: RangeSet,
    acked: RangeSet,
}

impl CryptoSend {
    pub fn push(&mut self, bytes: &[u8]) {
        let start = self.end();
        self.data.extend_from_slice(bytes);
        self.pending.insert(start..self.end());
    }

    /// The offset after the last byte queued.
    fn end(&self) -> u64 {
        self.base + self.data.len() as u64
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Appends one CRYPTO frame of pending data fitting in `space` bytes; returns
    /// `(offset, len)` of what it wrote.
    pub fn write_frame(&mut self, buf: &mut Vec<u8>, space: usize) -> Option<(u64, u64)> {
        let r = self.pending.first()?;
        let header = crypto_header_len(r.start, (r.end - r.start) as usize);
        if space <= header {
            return None;
        }
        let len = ((r.end - r.start) as usize).min(space - header);
        write_crypto_header(buf, r.start, len);
        // Pending offsets are never below `base`: the buffer is freed only when
        // nothing is pending, and later data is queued above it.
        let start = (r.start - self.base) as usize;
        buf.extend_from_slice(&self.data[start..start + len]);
        self.pending.remove(r.start..r.start + len as u64);
        Some((r.start, len as u64))
    }

    pub fn on_acked(&mut self, offset: u64, len: u64) {
        self.acked.insert(offset..offset + len);
        if !self.data.is_empty() && self.pending.is_empty() && !self.has_unacked() {
            self.base = self.end();
            self.data = Vec::new();
        }
    }

    /// Re-queues the unacknowledged part of a lost range.
    pub fn on_lost(&mut self, offset: u64, len: u64) {
        let mut r = RangeSet::new();
        r.insert(offset..offset + len);
        for a in self.acked.iter() {
            r.remove(a);
        }
        for gap in r.iter() {
            self.pending.insert(gap);
        }
    }

    /// Whether some sent data is not acknowledged yet.
    pub fn has_unacked(&self) -> bool {
        let mut r = RangeSet::new();
        r.insert(self.base..self.end());
        for a in self.acked.iter() {
            r.remove(a);
        }
        !r.is_empty()
    }

    /// PTO probe: re-queue everything sent but not acknowledged (RFC 9002 §6.2.4).
    pub fn requeue_unacked(&mut self) {
        let (base, end) = (self.base, self.end());
        self.on_lost(base, end - base);
    }
}

/// Incoming CRYPTO data of one space, reassembled.
///
/// The bytes from the read offset up to the highest one received sit in one buffer,
/// gaps zero-filled; a byte that arrives again is not stored again. The buffer is at
/// most the `limit` each insert is given (the connection's budget,
/// [`MAX_CRYPTO_BUFFER`]), whatever the peer sends: overlapping or shifted copies of
/// the same data cost nothing (RFC 9000 §7.5).
#[derive(Debug, Default)]
pub struct CryptoRecv {
    /// Next offset TLS expects.
    read_offset: u64,
    /// `buf[i]` is the byte at `read_offset + i`; its capacity is what is counted.
    buf: Vec<u8>,
    /// Offsets at or past `read_offset` received so far.
    received: RangeSet,
}

impl CryptoRecv {
    /// Stores a CRYPTO frame's data, keeping the buffer (from the read offset to the
    /// frame's end) within `limit` bytes; returns `false` when it was all received
    /// before (a duplicate: RFC 9002 §6.2.3 lets the receiver infer that the peer
    /// misses some of our CRYPTO data or acknowledgments). `offset + data.len()` must
    /// not overflow (the frame decoder checks it against 2^62, RFC 9000 §19.6).
    pub fn insert(&mut self, offset: u64, data: &[u8], limit: u64) -> Result<bool, TransportError> {
        let end = offset + data.len() as u64;
        if end <= self.read_offset {
            return Ok(false); // duplicate
        }
        // RFC 9000 §7.5: past the buffer we allow, CRYPTO_BUFFER_EXCEEDED.
        let need = end - self.read_offset;
        if need > limit {
            return Err(exceeded("too much out-of-order CRYPTO data"));
        }
        let start = offset.max(self.read_offset);
        let mut new = false;
        for gap in self.received.gaps(start..end) {
            if !new && (self.buf.len() as u64) < need {
                // Exactly: the capacity is what the budget counts.
                self.buf.reserve_exact(need as usize - self.buf.len());
                self.buf.resize(need as usize, 0);
            }
            new = true;
            let at = (gap.start - self.read_offset) as usize;
            let from = (gap.start - offset) as usize..(gap.end - offset) as usize;
            self.buf[at..at + from.len()].copy_from_slice(&data[from]);
        }
        if !new {
            return Ok(false);
        }
        self.received.insert(start..end);
        if self.received.len() > MAX_CRYPTO_RANGES {
            return Err(exceeded("CRYPTO data in too many pieces"));
        }
        Ok(true)
    }

    /// Takes the contiguous data available at the read offset.
    pub fn take_contiguous(&mut self, out: &mut Vec<u8>) {
        let Some(first) = self.received.first() else {
            return;
        };
        if first.start > self.read_offset {
            return;
        }
        let n = (first.end - self.read_offset) as usize;
        out.extend_from_slice(&self.buf[..n]);
        self.received.pop_first();
        self.read_offset = first.end;
        if n == self.buf.len() {
            self.buf = Vec::new(); // nothing waits: free it
        } else {
            self.buf.drain(..n);
        }
    }

    /// Bytes this space holds for reassembly (the buffer's capacity).
    pub fn buffered(&self) -> u64 {
        self.buf.capacity() as u64
    }
}

fn exceeded(why: &'static str) -> TransportError {
    TransportError::new(
        crate::error::TransportErrorCode::CRYPTO_BUFFER_EXCEEDED,
        why,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: u64 = MAX_CRYPTO_BUFFER;

    fn is_exceeded(r: Result<bool, TransportError>) -> bool {
        r.is_err_and(|e| e.code == crate::error::TransportErrorCode::CRYPTO_BUFFER_EXCEEDED)
    }

    #[test]
    fn reassembles_out_of_order_with_overlap() {
        let mut r = CryptoRecv::default();
        assert!(r.insert(5, b"fghij", LIMIT).unwrap());
        assert!(!r.insert(5, b"fgh", LIMIT).unwrap(), "already buffered");
        let mut out = Vec::new();
        r.take_contiguous(&mut out);
        assert!(out.is_empty());
        r.insert(0, b"abcdefg", LIMIT).unwrap();
        r.take_contiguous(&mut out);
        assert_eq!(out, b"abcdefghij");
        assert_eq!(r.buffered(), 0, "freed once read");
        assert!(
            !r.insert(3, b"def", LIMIT).unwrap(),
            "below the read offset"
        );
        out.clear();
        r.take_contiguous(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn only_gaps_are_filled_first_copy_wins() {
        let mut r = CryptoRecv::default();
        r.insert(5, b"fghij", LIMIT).unwrap();
        assert!(r.insert(0, b"ABCDEFGHIJKL", LIMIT).unwrap());
        let mut out = Vec::new();
        r.take_contiguous(&mut out);
        assert_eq!(out, b"ABCDEfghijKL");
    }

    /// The flood of issue 40: offset 0 left empty, then segments at 1, 2, 3, ...; each
    /// shifted copy used to be stored whole (their sum: 72 MB here).
    #[test]
    fn shifted_copies_are_stored_once() {
        let mut r = CryptoRecv::default();
        let data: Vec<u8> = (0..1200u32).map(|i| i as u8).collect();
        let last = LIMIT - 1200;
        for k in 1..=last {
            let b = k as u8;
            let seg: Vec<u8> = data.iter().map(|d| d.wrapping_add(b)).collect();
            r.insert(k, &seg, LIMIT).unwrap();
            assert!(r.buffered() <= LIMIT);
        }
        assert_eq!(r.buffered(), LIMIT);
        assert!(is_exceeded(r.insert(last + 1, &data, LIMIT)));
        let mut out = Vec::new();
        r.insert(0, &[7], LIMIT).unwrap();
        r.take_contiguous(&mut out);
        assert_eq!(out.len() as u64, LIMIT);
        // Byte k came first in the segment at offset k (value k + 0).
        assert_eq!(out[1000], 1000u64 as u8);
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn past_the_limit_is_crypto_buffer_exceeded() {
        let mut r = CryptoRecv::default();
        assert!(r.insert(90, &[0; 10], 100).unwrap());
        assert!(is_exceeded(r.insert(91, &[0; 10], 100)));
        assert!(is_exceeded(r.insert(95, &[0; 10], 100)));
        assert!(r.insert(0, &[0; 10], 100).unwrap(), "within what it holds");
        // In-order data that is read at once never piles up.
        let mut r = CryptoRecv::default();
        let mut out = Vec::new();
        for k in 0..1000u64 {
            r.insert(k * 100, &[1; 100], 100).unwrap();
            r.take_contiguous(&mut out);
        }
        assert_eq!(out.len(), 100_000);
    }

    #[test]
    fn too_many_pieces_is_crypto_buffer_exceeded() {
        let mut r = CryptoRecv::default();
        for k in 0..MAX_CRYPTO_RANGES as u64 {
            r.insert(2 * k + 1, &[1], LIMIT).unwrap();
        }
        assert!(is_exceeded(r.insert(
            2 * MAX_CRYPTO_RANGES as u64 + 1,
            &[1],
            LIMIT
        )));
        // Filling a gap merges pieces: that is always allowed.
        let mut r = CryptoRecv::default();
        for k in 0..MAX_CRYPTO_RANGES as u64 {
            r.insert(2 * k + 1, &[1], LIMIT).unwrap();
        }
        assert!(r.insert(2, &[1], LIMIT).unwrap());
    }

    #[test]
    fn send_retransmits_only_unacked() {
        let mut s = CryptoSend::default();
        s.push(&[7u8; 100]);
        let mut buf = Vec::new();
        // 4 header bytes (type, offset 0, 2-byte length) leave 46 data bytes.
        assert_eq!(s.write_frame(&mut buf, 50), Some((0, 46)));
        assert!(buf.len() <= 50);
        assert_eq!(s.write_frame(&mut buf, 1000), Some((46, 54)));
        assert!(!s.has_pending());
        s.on_acked(0, 46);
        s.requeue_unacked();
        buf.clear();
        assert_eq!(s.write_frame(&mut buf, 1000), Some((46, 54)));
        s.on_acked(46, 54);
        s.requeue_unacked();
        assert!(!s.has_pending());
    }

    #[test]
    fn acknowledged_data_is_freed_and_offsets_continue() {
        let mut s = CryptoSend::default();
        s.push(&[1u8; 100]);
        let mut buf = Vec::new();
        assert_eq!(s.write_frame(&mut buf, 1000), Some((0, 100)));
        s.on_lost(0, 100);
        s.on_acked(0, 100);
        assert_eq!(s.data.len(), 100, "kept: a retransmission is pending");
        buf.clear();
        assert_eq!(s.write_frame(&mut buf, 1000), Some((0, 100)));
        s.on_acked(0, 100);
        assert_eq!(s.data.capacity(), 0, "freed once all acknowledged");
        assert!(!s.has_unacked());
        s.requeue_unacked();
        assert!(!s.has_pending());
        // A session ticket queued later continues the offsets.
        s.push(&[2u8; 10]);
        buf.clear();
        assert_eq!(s.write_frame(&mut buf, 1000), Some((100, 10)));
        assert_eq!(&buf[buf.len() - 10..], &[2u8; 10]);
        s.on_lost(100, 10);
        buf.clear();
        assert_eq!(s.write_frame(&mut buf, 1000), Some((100, 10)));
        assert!(s.has_unacked());
    }
}
