//! QPACK primitives (RFC 9204 §4.1): prefixed integers (RFC 7541 §5.1) and string
//! literals with an optional Huffman flag. Decoding is bounds-checked: truncated input
//! is `Incomplete` (wait for more), oversized values are errors.

use super::huffman;

/// Decoding a primitive failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrimError {
    /// The input ends inside the primitive; more bytes may complete it.
    Incomplete,
    /// An integer over 2^62 (RFC 9204 §4.1.1: implementations may limit to 62 bits).
    Overflow,
    /// A string longer than the caller's limit.
    TooLong,
    /// Invalid Huffman coding.
    Huffman,
}

/// Appends `value` with an `n`-bit prefix; `first` holds the bits above the prefix.
pub fn encode_int(out: &mut Vec<u8>, first: u8, n: u8, value: u64) {
    let max = (1u64 << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A cursor over peer input.
pub struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The next byte, not consumed.
    pub fn peek(&self) -> Result<u8, PrimError> {
        self.buf.get(self.pos).copied().ok_or(PrimError::Incomplete)
    }

    /// An `n`-bit-prefix integer starting at the current byte (RFC 7541 §5.1).
    pub fn int(&mut self, n: u8) -> Result<u64, PrimError> {
        let max = (1u64 << n) - 1;
        let mut value = u64::from(self.peek()?) & max;
        self.pos += 1;
        if value < max {
            return Ok(value);
        }
        let mut shift = 0u32;
        loop {
            let b = self.peek()?;
            self.pos += 1;
            if shift > 56 {
                return Err(PrimError::Overflow);
            }
            let add = u64::from(b & 0x7f) << shift;
            value = value.checked_add(add).ok_or(PrimError::Overflow)?;
            if value > (1 << 62) {
                return Err(PrimError::Overflow);
            }
            if b & 0x80 == 0 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    /// A string literal whose Huffman flag is bit `n` of the first byte and whose
    /// length has an `n`-bit prefix (RFC 9204 §4.1.2).
    pub fn string(&mut self, n: u8, max: usize) -> Result<Vec<u8>, PrimError> {
        let huff = self.peek()? & (1 << n) != 0;
        let len = self.int(n)?;
        let len = usize::try_from(len).map_err(|_| PrimError::TooLong)?;
        if len > self.buf.len() - self.pos {
            // Longer than anything buffered: if it is over the limit too, it never fits.
            return Err(if len > max.saturating_mul(2) + 8 {
                PrimError::TooLong
            } else {
                PrimError::Incomplete
            });
        }
        let raw = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        if huff {
            let mut out = Vec::with_capacity(len.min(max));
            huffman::decode(raw, &mut out, max).map_err(|e| match e {
                huffman::DecodeError::TooLong => PrimError::TooLong,
                huffman::DecodeError::Huffman(_) => PrimError::Huffman,
            })?;
            Ok(out)
        } else if len > max {
            Err(PrimError::TooLong)
        } else {
            Ok(raw.to_vec())
        }
    }
}

/// Appends a string literal: Huffman flag at bit `n`, length with an `n`-bit prefix,
/// `first` holding the bits above the flag. Huffman is used when it is shorter.
pub fn encode_string(out: &mut Vec<u8>, first: u8, n: u8, s: &[u8]) {
    let hlen = huffman::encoded_len(s);
    if hlen < s.len() {
        encode_int(out, first | (1 << n), n, hlen as u64);
        huffman::encode(s, out);
    } else {
        encode_int(out, first, n, s.len() as u64);
        out.extend_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7541_integer_examples() {
        // C.1.1: 10 with a 5-bit prefix; C.1.2: 1337 with 5 bits; C.1.3: 42 with 8.
        let mut out = Vec::new();
        encode_int(&mut out, 0, 5, 10);
        assert_eq!(out, [0x0a]);
        out.clear();
        encode_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
        assert_eq!(Cursor::new(&out).int(5), Ok(1337));
        out.clear();
        encode_int(&mut out, 0, 8, 42);
        assert_eq!(out, [42]);
        assert_eq!(
            Cursor::new(&[0x1f, 0x9a]).int(5),
            Err(PrimError::Incomplete)
        );
        let huge = [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ];
        assert_eq!(Cursor::new(&huge).int(8), Err(PrimError::Overflow));
        for v in [0, 1, 30, 31, 127, 128, 255, 256, 1 << 20, (1 << 62) - 1] {
            for n in 1..=8 {
                let mut out = vec![];
                encode_int(&mut out, 0, n, v);
                assert_eq!(Cursor::new(&out).int(n), Ok(v), "{v} n={n}");
            }
        }
    }

    #[test]
    fn strings_round_trip() {
        for s in [&b""[..], b"a", b"www.example.com", &[0u8, 255, 10][..]] {
            let mut out = vec![];
            encode_string(&mut out, 0x40, 3, s);
            let mut c = Cursor::new(&out);
            assert_eq!(c.string(3, 100).unwrap(), s);
            assert!(c.is_empty());
        }
        let mut out = vec![];
        encode_string(&mut out, 0, 7, &[b'x'; 50]);
        assert_eq!(Cursor::new(&out).string(7, 10), Err(PrimError::TooLong));
    }
}
