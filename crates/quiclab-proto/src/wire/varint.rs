//! Variable-length integers (RFC 9000 §16) and a bounds-checked reader.

/// The largest value a varint can carry: 2^62 - 1.
pub const MAX: u64 = (1 << 62) - 1;

/// Input ended before a field did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("input ended in the middle of a field")]
pub struct UnexpectedEnd;

/// Encoded length of `v` (1, 2, 4 or 8 bytes). `v` must be at most [`MAX`].
pub const fn len(v: u64) -> usize {
    if v < 1 << 6 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 30 {
        4
    } else {
        8
    }
}

/// Appends `v` in its shortest encoding.
///
/// The same bytes as `write_with_len(buf, v, len(v))`, branching on the magnitude once
/// and inlined: this runs several times per packet (ACK fields, STREAM headers), and the
/// out-of-line call that measured the length, then checked it against itself and matched
/// on it was ~40 instructions a value (issue 29).
///
/// # Panics
/// If `v > MAX`: values come from our own state, so this is a bug, not peer input.
#[inline]
pub fn write(buf: &mut Vec<u8>, v: u64) {
    if v < 1 << 6 {
        buf.push(v as u8);
    } else if v < 1 << 14 {
        buf.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        buf.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes());
    } else {
        assert!(v <= MAX, "varint {v} does not fit in 8 bytes");
        buf.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// Appends `v` in exactly `n` bytes (1, 2, 4 or 8), e.g. a Length field patched later.
///
/// # Panics
/// If `v` does not fit in `n` bytes or `n` is not a varint length.
pub fn write_with_len(buf: &mut Vec<u8>, v: u64, n: usize) {
    assert!(
        v <= MAX && len(v) <= n,
        "varint {v} does not fit in {n} bytes"
    );
    match n {
        1 => buf.push(v as u8),
        2 => buf.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => buf.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        8 => buf.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
        _ => panic!("invalid varint length {n}"),
    }
}

/// Overwrites a 2-byte varint at `buf[at..at + 2]` (a long header's Length field).
///
/// # Panics
/// If `v >= 2^14`.
pub fn patch_u14(buf: &mut [u8], at: usize, v: u64) {
    assert!(v < 1 << 14, "length {v} does not fit in 2 bytes");
    buf[at..at.saturating_add(2)].copy_from_slice(&(v as u16 | 0x4000).to_be_bytes());
}

/// A cursor over peer input; every read is bounds-checked.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        // `pos <= buf.len()`: `bytes` advances only over what is there.
        self.buf.len().saturating_sub(self.pos)
    }
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }
    /// The next byte, without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }
    pub fn u8(&mut self) -> Result<u8, UnexpectedEnd> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, UnexpectedEnd> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, UnexpectedEnd> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A fixed-size array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], UnexpectedEnd> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }
    pub fn varint(&mut self) -> Result<u64, UnexpectedEnd> {
        let first = self.peek_u8().ok_or(UnexpectedEnd)?;
        // RFC 9000 §16: the two high bits give the length (1, 2, 4 or 8 bytes), the
        // rest of the field is the value, big-endian: at most 62 bits are shifted in, so
        // no shift drops one.
        let b = self.bytes(1usize.wrapping_shl(u32::from(first >> 6)))?;
        let mut v = u64::from(b[0] & 0x3f);
        for &x in &b[1..] {
            v = v.wrapping_shl(8) | u64::from(x);
        }
        Ok(v)
    }
    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], UnexpectedEnd> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or(UnexpectedEnd)?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 9000 §A.1 examples.
    #[test]
    fn rfc_examples() {
        let cases: [(&[u8], u64); 4] = [
            (
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
                151_288_809_941_952_652,
            ),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
        ];
        for (bytes, v) in cases {
            assert_eq!(Reader::new(bytes).varint().unwrap(), v);
            let mut out = Vec::new();
            write(&mut out, v);
            assert_eq!(out, bytes);
        }
        // A non-minimal encoding decodes too.
        assert_eq!(Reader::new(&[0x40, 0x25]).varint().unwrap(), 37);
        assert_eq!(Reader::new(&[0x40]).varint(), Err(UnexpectedEnd));
    }

    /// `write` (the inlined shortest encoding) writes what `write_with_len` writes with
    /// the shortest length, at and around every length boundary.
    #[test]
    fn write_matches_write_with_len() {
        let mut values = vec![0, MAX];
        for bits in [6u32, 14, 30] {
            let edge = 1u64 << bits;
            values.extend([edge - 2, edge - 1, edge, edge + 1]);
        }
        for v in values {
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            write(&mut fast, v);
            write_with_len(&mut general, v, len(v));
            assert_eq!(fast, general, "value {v}");
            assert_eq!(fast.len(), len(v), "value {v}");
            assert_eq!(Reader::new(&fast).varint(), Ok(v));
        }
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn write_rejects_values_above_max() {
        write(&mut Vec::new(), MAX + 1);
    }
}
