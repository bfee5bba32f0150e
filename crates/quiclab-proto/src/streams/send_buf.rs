//! The bytes a sending stream holds until they are acknowledged, as a queue of pieces:
//! each piece is either copied from the application or a `'static` slice kept by
//! reference. The second is zero-copy, like `sendfile`: a simulation's thousand bulk
//! senders share one static chunk instead of each holding megabytes of copies, so the
//! bytes copied into packets come from cache instead of memory.

use std::collections::VecDeque;

/// Bytes handed to a stream's `write`.
#[derive(Clone, Copy, Debug)]
pub enum SendData<'a> {
    /// Copied into the stream's buffer at once.
    Copied(&'a [u8]),
    /// Kept by reference until acknowledged: no copy, no buffer memory.
    Static(&'static [u8]),
}

impl<'a> SendData<'a> {
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_slice(self) -> &'a [u8] {
        match self {
            SendData::Copied(b) => b,
            SendData::Static(b) => b,
        }
    }

    /// The first `n` bytes (`n` at most `len()`).
    pub fn prefix(self, n: usize) -> Self {
        match self {
            SendData::Copied(b) => SendData::Copied(&b[..n]),
            SendData::Static(b) => SendData::Static(&b[..n]),
        }
    }
}

/// Most bytes one copied piece holds: large enough that a packet rarely spans two,
/// small enough that acknowledged data is freed soon.
const PIECE: usize = 16 * 1024;

#[derive(Debug)]
enum Bytes {
    Owned(Vec<u8>),
    Static(&'static [u8]),
}

#[derive(Debug)]
struct Piece {
    /// Position of the piece's first byte in the buffer's running count.
    start: u64,
    bytes: Bytes,
}

impl Piece {
    fn slice(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Owned(v) => v,
            Bytes::Static(s) => s,
        }
    }

    fn end(&self) -> u64 {
        self.start + self.slice().len() as u64
    }
}

/// A byte queue: append at the back, read anywhere, drop from the front. Positions
/// given to it are relative to its front. No piece is ever empty.
#[derive(Debug, Default)]
pub(super) struct SendBuf {
    pieces: VecDeque<Piece>,
    /// Running position of the first held byte (all bytes dropped so far).
    head: u64,
    /// Running position one past the last held byte.
    tail: u64,
}

impl SendBuf {
    pub fn len(&self) -> usize {
        (self.tail - self.head) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }

    /// Appends `data`: copied bytes fill the last copied piece first.
    pub fn push(&mut self, data: SendData) {
        let mut rest = match data {
            SendData::Static(s) => {
                if !s.is_empty() {
                    self.push_piece(Bytes::Static(s));
                }
                return;
            }
            SendData::Copied(b) => b,
        };
        while !rest.is_empty() {
            if let Some(Bytes::Owned(v)) = self.pieces.back_mut().map(|p| &mut p.bytes) {
                if v.len() < PIECE {
                    let k = (PIECE - v.len()).min(rest.len());
                    v.extend_from_slice(&rest[..k]);
                    self.tail += k as u64;
                    rest = &rest[k..];
                    continue;
                }
            }
            let k = rest.len().min(PIECE);
            self.push_piece(Bytes::Owned(rest[..k].to_vec()));
            rest = &rest[k..];
        }
    }

    fn push_piece(&mut self, bytes: Bytes) {
        let piece = Piece {
            start: self.tail,
            bytes,
        };
        self.tail = piece.end();
        self.pieces.push_back(piece);
    }

    /// Appends `len` bytes from position `from` to `out`; the caller checked that they
    /// are held.
    pub fn copy_out(&self, from: usize, len: usize, out: &mut Vec<u8>) {
        let mut at = self.head + from as u64;
        let mut left = len;
        let mut i = self.pieces.partition_point(|p| p.end() <= at);
        while left > 0 {
            let p = &self.pieces[i];
            let s = &p.slice()[(at - p.start) as usize..];
            let k = left.min(s.len());
            out.extend_from_slice(&s[..k]);
            at += k as u64;
            left -= k;
            i += 1;
        }
    }

    /// Drops the first `n` bytes (at most `len()`), freeing pieces wholly dropped.
    pub fn drop_front(&mut self, n: usize) {
        self.head += n as u64;
        while self.pieces.front().is_some_and(|p| p.end() <= self.head) {
            self.pieces.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static PATTERN: [u8; 100] = {
        let mut a = [0u8; 100];
        let mut i = 0;
        while i < 100 {
            a[i] = i as u8;
            i += 1;
        }
        a
    };

    fn read(b: &SendBuf, from: usize, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        b.copy_out(from, len, &mut out);
        out
    }

    #[test]
    fn mixed_pieces_read_back_in_order_across_boundaries() {
        let mut b = SendBuf::default();
        let copied: Vec<u8> = (0..PIECE + 10).map(|i| (i % 251) as u8).collect();
        b.push(SendData::Copied(&copied[..5]));
        b.push(SendData::Static(&PATTERN[..]));
        b.push(SendData::Copied(&copied[5..]));
        b.push(SendData::Static(&[]));
        let mut want = copied[..5].to_vec();
        want.extend_from_slice(&PATTERN);
        want.extend_from_slice(&copied[5..]);
        assert_eq!(b.len(), want.len());
        assert_eq!(read(&b, 0, want.len()), want);
        // Spanning the static piece and both copied pieces after it.
        assert_eq!(read(&b, 90, PIECE + 20), want[90..90 + PIECE + 20]);
        assert_eq!(
            b.pieces.len(),
            4,
            "the last copy fills its piece, then starts one"
        );
    }

    #[test]
    fn dropping_the_front_frees_whole_pieces_and_keeps_positions_relative() {
        let mut b = SendBuf::default();
        b.push(SendData::Static(&PATTERN[..40]));
        b.push(SendData::Static(&PATTERN[40..]));
        b.drop_front(30);
        assert_eq!(b.pieces.len(), 2);
        assert_eq!(read(&b, 0, 20), PATTERN[30..50]);
        b.drop_front(10);
        assert_eq!(
            b.pieces.len(),
            1,
            "the first piece is gone once wholly dropped"
        );
        assert_eq!(read(&b, 5, 10), PATTERN[45..55]);
        b.drop_front(60);
        assert!(b.is_empty() && b.pieces.is_empty());
        b.push(SendData::Copied(&[7, 8]));
        assert_eq!(read(&b, 1, 1), [8]);
    }

    #[test]
    fn copies_are_bounded_per_piece() {
        let mut b = SendBuf::default();
        let big = vec![1u8; 3 * PIECE + 1];
        b.push(SendData::Copied(&big));
        assert_eq!(b.pieces.len(), 4);
        assert!(b.pieces.iter().all(|p| p.slice().len() <= PIECE));
    }
}
