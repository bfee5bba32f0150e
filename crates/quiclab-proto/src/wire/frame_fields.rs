//! Field codecs shared by the frame codecs (`frame_decode.rs`, `frame_encode.rs` and
//! the multipath frames' `frame_mp_codec.rs`): field reads that report truncation as
//! FRAME_ENCODING_ERROR, the ACK body (RFC 9000 §19.3) and the NEW_CONNECTION_ID body
//! (§19.15), both carried again by PATH_ACK and PATH_NEW_CONNECTION_ID.

use super::frame_parts::{AckFrame, EcnCounts, NewConnectionIdFrame};
use super::ids::ConnectionId;
use super::varint::{self, Reader, UnexpectedEnd};
use crate::error::TransportError;
use std::ops::RangeInclusive;

/// Truncation inside a frame of type `ty` (RFC 9000 §12.4: FRAME_ENCODING_ERROR).
pub(super) fn truncated(ty: u64) -> impl Fn(UnexpectedEnd) -> TransportError {
    move |_| TransportError::frame_encoding("frame truncated").with_frame(ty)
}

pub(super) fn bad(ty: u64, reason: &'static str) -> TransportError {
    TransportError::frame_encoding(reason).with_frame(ty)
}

/// Field reads that report truncation as FRAME_ENCODING_ERROR for frame type `ty`.
pub(super) struct Fields<'r, 'a> {
    pub(super) r: &'r mut Reader<'a>,
    pub(super) ty: u64,
}

impl<'a> Fields<'_, 'a> {
    #[inline]
    pub(super) fn varint(&mut self) -> Result<u64, TransportError> {
        self.r.varint().map_err(truncated(self.ty))
    }
    #[inline]
    pub(super) fn bytes(&mut self, n: u64) -> Result<&'a [u8], TransportError> {
        let n = usize::try_from(n).map_err(|_| bad(self.ty, "length too large"))?;
        self.r.bytes(n).map_err(truncated(self.ty))
    }
    /// A varint length followed by that many bytes.
    #[inline]
    pub(super) fn len_prefixed(&mut self) -> Result<&'a [u8], TransportError> {
        let n = self.varint()?;
        self.bytes(n)
    }
    pub(super) fn array<const N: usize>(&mut self) -> Result<[u8; N], TransportError> {
        self.r.array::<N>().map_err(truncated(self.ty))
    }
}

/// RFC 9000 §19.3: ranges are given downwards from Largest Acknowledged; any gap or
/// length that would go below zero is FRAME_ENCODING_ERROR (§19.3.1). `with_ecn`: the
/// ECN Counts follow (ACK_ECN, PATH_ACK_ECN). The ranges go into `ranges` (cleared
/// first; a reused buffer saves the allocation).
pub(super) fn decode_ack(
    f: &mut Fields<'_, '_>,
    with_ecn: bool,
    mut ranges: Vec<RangeInclusive<u64>>,
) -> Result<AckFrame, TransportError> {
    let ty = f.ty;
    let largest = f.varint()?;
    let ack_delay = f.varint()?;
    let count = f.varint()?;
    let first_len = f.varint()?;
    let mut smallest = largest
        .checked_sub(first_len)
        .ok_or_else(|| bad(ty, "first ACK range below zero"))?;
    // Each further range takes at least two bytes: bound the allocation by the input.
    let cap = (count.min(f.r.remaining() as u64 / 2) as usize).saturating_add(1);
    ranges.clear();
    ranges.reserve(cap);
    ranges.push(smallest..=largest);
    for _ in 0..count {
        let gap = f.varint()?;
        let len = f.varint()?;
        let hi = smallest
            .checked_sub(gap)
            .and_then(|v| v.checked_sub(2))
            .ok_or_else(|| bad(ty, "ACK gap below zero"))?;
        let lo = hi
            .checked_sub(len)
            .ok_or_else(|| bad(ty, "ACK range below zero"))?;
        ranges.push(lo..=hi);
        smallest = lo;
    }
    let ecn = if with_ecn {
        Some(EcnCounts {
            ect0: f.varint()?,
            ect1: f.varint()?,
            ce: f.varint()?,
        })
    } else {
        None
    };
    Ok(AckFrame {
        ack_delay,
        ranges,
        ecn,
    })
}

/// RFC 9000 §19.15: length 1..=20 and Retire Prior To <= Sequence Number.
pub(super) fn decode_new_cid(
    f: &mut Fields<'_, '_>,
) -> Result<NewConnectionIdFrame, TransportError> {
    let ty = f.ty;
    let sequence = f.varint()?;
    let retire_prior_to = f.varint()?;
    let len = f.r.u8().map_err(truncated(ty))?;
    if len == 0 || usize::from(len) > ConnectionId::MAX_LEN {
        return Err(bad(ty, "bad connection ID length"));
    }
    let id = ConnectionId::new(f.bytes(u64::from(len))?)
        .ok_or_else(|| bad(ty, "bad connection ID length"))?;
    let reset_token = f.array()?;
    if retire_prior_to > sequence {
        return Err(bad(ty, "retire_prior_to exceeds sequence number"));
    }
    Ok(NewConnectionIdFrame {
        sequence,
        retire_prior_to,
        id,
        reset_token,
    })
}

/// The size of a frame from the sizes of its parts. Frames are built from our own state
/// and bounded by a packet, so the sum saturates rather than wraps (an impossible
/// overflow then reads as "does not fit").
pub(super) fn size(parts: &[usize]) -> usize {
    parts.iter().fold(0, |n, &p| n.saturating_add(p))
}

/// The Gap and ACK Range Length of range `r` below range `prev` (RFC 9000 §19.3.1:
/// Gap = previous smallest - this largest - 2; Range Length = size - 1). The ranges
/// descend without touching (our tracker's, or a decoded frame's, whose decoding
/// checked that), so the differences cannot go below zero; they saturate all the same.
fn gap_and_len(prev: &RangeInclusive<u64>, r: &RangeInclusive<u64>) -> (u64, u64) {
    (
        prev.start().saturating_sub(*r.end()).saturating_sub(2),
        r.end().saturating_sub(*r.start()),
    )
}

/// Largest Acknowledged, ACK Delay, ACK Range Count and First ACK Range (RFC 9000 §19.3).
fn ack_head(a: &AckFrame) -> [u64; 4] {
    let first = &a.ranges[0];
    [
        *first.end(),
        a.ack_delay,
        (a.ranges.len() as u64).saturating_sub(1),
        first.end().saturating_sub(*first.start()),
    ]
}

/// The bytes of an ACK frame after its type (PATH_ACK adds its Path Identifier).
pub(super) fn ack_body_len(a: &AckFrame) -> usize {
    let mut n = ack_head(a)
        .iter()
        .fold(0, |n: usize, &v| n.saturating_add(varint::len(v)));
    for w in a.ranges.windows(2) {
        let (gap, len) = gap_and_len(&w[0], &w[1]);
        n = n
            .saturating_add(varint::len(gap))
            .saturating_add(varint::len(len));
    }
    if let Some(e) = a.ecn {
        n = n.saturating_add(size(&[
            varint::len(e.ect0),
            varint::len(e.ect1),
            varint::len(e.ce),
        ]));
    }
    n
}

/// An ACK frame's fields after its type (RFC 9000 §19.3), shared with PATH_ACK.
pub(super) fn write_ack_body(buf: &mut Vec<u8>, a: &AckFrame) {
    for v in ack_head(a) {
        varint::write(buf, v);
    }
    for w in a.ranges.windows(2) {
        let (gap, len) = gap_and_len(&w[0], &w[1]);
        varint::write(buf, gap);
        varint::write(buf, len);
    }
    if let Some(e) = a.ecn {
        varint::write(buf, e.ect0);
        varint::write(buf, e.ect1);
        varint::write(buf, e.ce);
    }
}
