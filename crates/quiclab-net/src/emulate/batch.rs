//! Deliveries that are due together leave in one `sendmsg`: a UDP GSO batch
//! (UDP_SEGMENT, Linux 4.18+) of datagrams to the same destination with the same ECN
//! codepoint, all of one size but the last (the kernel's rule for a GSO send).
//!
//! Why: at 1 Gbit/s deliveries of 1200-byte datagrams are due every ~10 µs, and one
//! `sendmsg` per datagram cost ~4.7 µs of the relay's CPU on the 2-core VM of
//! docs/performance-history.md (2026-11-29: routing, skb allocation and the loopback
//! receive path once per datagram). A GSO batch pays for them once. The timing is each
//! delivery's own: only deliveries already due when the relay gets to them are grouped
//! (a relay that is on time sends them one by one, as before); a batch never waits for
//! a delivery that is not due yet.
//!
//! # Call contract
//! [`Batch::fits`] before [`Batch::push`]; when it does not fit, [`Batch::take`] the
//! batch, send it, then push. `take` leaves an empty batch that keeps its buffer.

use quiclab_link::config::LinkSide;
use quiclab_proto::Ecn;

/// The most payload bytes in one GSO send: the IPv4/IPv6 payload limit less the UDP
/// header, rounded down.
const MAX_BYTES: usize = 65_000;

/// Deliveries grouped for one send: same direction, same codepoint, one segment size.
pub struct Batch {
    /// The direction of every delivery in the batch (`None`: empty).
    side: Option<LinkSide>,
    ecn: Ecn,
    /// The size of the first datagram: every one but the last has exactly this size.
    segment: usize,
    /// Datagrams in the batch, and how many of them are CE-marked.
    pub count: usize,
    pub ce: usize,
    /// The payloads back to back.
    contents: Vec<u8>,
}

/// What [`Batch::take`] hands out: one send's worth.
pub struct Taken<'a> {
    pub side: LinkSide,
    pub ecn: Ecn,
    pub segment: usize,
    pub count: usize,
    pub ce: usize,
    pub contents: &'a [u8],
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            side: None,
            ecn: Ecn::NotEct,
            segment: 0,
            count: 0,
            ce: 0,
            contents: Vec::with_capacity(MAX_BYTES),
        }
    }
}

impl Batch {
    /// Whether a datagram of `len` bytes on `side` with `ecn` can join: the batch is
    /// empty, or it goes the same way with the same codepoint, every datagram so far
    /// has the segment size, `len` is no larger, and `max_segments` (the socket's GSO
    /// limit; 1 without GSO) and the size limit allow one more.
    pub fn fits(&self, side: LinkSide, ecn: Ecn, len: usize, max_segments: usize) -> bool {
        let Some(s) = self.side else {
            return true;
        };
        s == side
            && self.ecn == ecn
            && self.contents.len() == self.count * self.segment
            && len <= self.segment
            && self.count < max_segments
            && self.contents.len() + len <= MAX_BYTES
    }

    /// Adds a datagram (its payload copied in); [`Batch::fits`] must have said yes.
    pub fn push(&mut self, side: LinkSide, ecn: Ecn, payload: &[u8]) {
        if self.side.is_none() {
            self.side = Some(side);
            self.ecn = ecn;
            self.segment = payload.len();
        }
        self.contents.extend_from_slice(payload);
        self.count += 1;
        self.ce += usize::from(ecn == Ecn::Ce);
    }

    /// The batch to send, if any; the batch is empty again after the returned view is
    /// dropped (call [`Batch::clear`]).
    pub fn take(&self) -> Option<Taken<'_>> {
        Some(Taken {
            side: self.side?,
            ecn: self.ecn,
            segment: self.segment,
            count: self.count,
            ce: self.ce,
            contents: &self.contents,
        })
    }

    /// Empties the batch, keeping its buffer.
    pub fn clear(&mut self) {
        self.side = None;
        self.count = 0;
        self.ce = 0;
        self.contents.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: LinkSide = LinkSide::Forward;

    #[test]
    fn groups_equal_sizes_and_a_shorter_last() {
        let mut b = Batch::default();
        assert!(b.take().is_none());
        b.push(F, Ecn::Ect0, &[1; 1200]);
        assert!(b.fits(F, Ecn::Ect0, 1200, 64));
        b.push(F, Ecn::Ect0, &[2; 1200]);
        assert!(b.fits(F, Ecn::Ect0, 500, 64));
        b.push(F, Ecn::Ect0, &[3; 500]);
        // After a short one nothing more joins (it must be the last segment).
        assert!(!b.fits(F, Ecn::Ect0, 500, 64));
        let t = b.take().unwrap();
        assert_eq!((t.count, t.segment, t.contents.len()), (3, 1200, 2900));
        b.clear();
        assert!(b.take().is_none());
        assert!(b.fits(LinkSide::Return, Ecn::Ce, 1500, 1));
    }

    #[test]
    fn splits_on_direction_codepoint_size_and_limits() {
        let mut b = Batch::default();
        b.push(F, Ecn::NotEct, &[0; 1000]);
        assert!(!b.fits(LinkSide::Return, Ecn::NotEct, 1000, 64));
        assert!(!b.fits(F, Ecn::Ce, 1000, 64));
        assert!(!b.fits(F, Ecn::NotEct, 1001, 64));
        // Without GSO (one segment per send) every datagram is its own batch.
        assert!(!b.fits(F, Ecn::NotEct, 1000, 1));
        for _ in 1..65 {
            b.push(F, Ecn::NotEct, &[0; 1000]);
        }
        // 65,000 bytes: the size limit.
        assert!(!b.fits(F, Ecn::NotEct, 1000, 128));
        b.clear();
        b.push(F, Ecn::Ce, &[0; 10]);
        assert_eq!(b.take().unwrap().ce, 1);
    }
}
