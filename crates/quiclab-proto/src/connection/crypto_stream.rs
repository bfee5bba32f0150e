//! The CRYPTO stream of one packet number space (RFC 9000 §19.6, RFC 9001 §4.1.3): an
//! offset-addressed send buffer with retransmission, and a reassembly buffer whose
//! contiguous prefix is fed to TLS.

use crate::error::TransportError;
use crate::range_set::RangeSet;
use crate::wire::{crypto_header_len, write_crypto_header};
use std::collections::BTreeMap;

/// How much out-of-order CRYPTO data we buffer per space before giving up
/// (RFC 9000 §7.5: at least 4096 bytes; beyond the limit CRYPTO_BUFFER_EXCEEDED).
const MAX_CRYPTO_BUFFER: u64 = 1 << 16;

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
#[derive(Debug, Default)]
pub struct CryptoRecv {
    /// Next offset TLS expects.
    read_offset: u64,
    /// Out-of-order segments keyed by offset.
    segments: BTreeMap<u64, Vec<u8>>,
}

impl CryptoRecv {
    /// Stores a CRYPTO frame's data; returns `false` when it was all received before
    /// (a duplicate: RFC 9002 §6.2.3 lets the receiver infer that the peer misses some of
    /// our CRYPTO data or acknowledgments).
    pub fn insert(&mut self, offset: u64, data: &[u8]) -> Result<bool, TransportError> {
        let end = offset + data.len() as u64;
        if end <= self.read_offset {
            return Ok(false); // duplicate
        }
        if end - self.read_offset > MAX_CRYPTO_BUFFER {
            return Err(TransportError::new(
                crate::error::TransportErrorCode::CRYPTO_BUFFER_EXCEEDED,
                "too much out-of-order CRYPTO data",
            ));
        }
        let skip = self.read_offset.saturating_sub(offset) as usize;
        let start = offset.max(self.read_offset);
        let seg = &data[skip..];
        match self.segments.get(&start) {
            Some(existing) if existing.len() >= seg.len() => Ok(false),
            _ => {
                self.segments.insert(start, seg.to_vec());
                Ok(true)
            }
        }
    }

    /// Takes the contiguous data available at the read offset.
    pub fn take_contiguous(&mut self, out: &mut Vec<u8>) {
        while let Some((&off, _)) = self.segments.first_key_value() {
            if off > self.read_offset {
                break;
            }
            let (off, seg) = self.segments.pop_first().expect("checked non-empty");
            let end = off + seg.len() as u64;
            if end > self.read_offset {
                out.extend_from_slice(&seg[(self.read_offset - off) as usize..]);
                self.read_offset = end;
            }
        }
    }
}

#[cfg(feature = "fuzzing")]
impl CryptoRecv {
    /// Out-of-order bytes held for reassembly (what a peer can make us buffer).
    pub fn buffered(&self) -> usize {
        self.segments.values().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembles_out_of_order_with_overlap() {
        let mut r = CryptoRecv::default();
        assert!(r.insert(5, b"fghij").unwrap());
        assert!(!r.insert(5, b"fgh").unwrap(), "already buffered");
        let mut out = Vec::new();
        r.take_contiguous(&mut out);
        assert!(out.is_empty());
        r.insert(0, b"abcdefg").unwrap();
        r.take_contiguous(&mut out);
        assert_eq!(out, b"abcdefghij");
        assert!(!r.insert(3, b"def").unwrap(), "below the read offset");
        out.clear();
        r.take_contiguous(&mut out);
        assert!(out.is_empty());
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
