//! `h3_frames`: the HTTP/3 frame decoder (RFC 9114 §7) on arbitrary stream bytes, fed in
//! pieces whose sizes the input picks. Asserts: each call makes progress, buffered
//! payloads stay within the decoder's bound, DATA chunks are never empty, and the
//! outcome (frames, DATA bytes, error or not) does not depend on how the bytes were cut.

use quiclab_h3::frame::{Decoded, Frame, FrameDecoder};

/// The decoder's bound on buffered (non-DATA) payloads.
const MAX_PAYLOAD: u64 = 1024;

/// What a stream decoded to: frames, DATA payload bytes, and whether it failed.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    frames: Vec<Frame>,
    data: Vec<u8>,
    data_headers: Vec<u64>,
    failed: bool,
}

/// Decodes `stream` fed in pieces of the given sizes (the last piece takes the rest).
fn decode(stream: &[u8], mut pieces: impl Iterator<Item = usize>) -> Outcome {
    let mut d = FrameDecoder::new(MAX_PAYLOAD);
    let mut out = Outcome::default();
    let mut at = 0;
    while at < stream.len() {
        let n = pieces
            .next()
            .unwrap_or(stream.len())
            .clamp(1, stream.len() - at);
        let chunk = &stream[at..at + n];
        at += n;
        let mut pos = 0;
        while pos < chunk.len() {
            match d.decode(&chunk[pos..]) {
                Err(_) => {
                    out.failed = true;
                    return out;
                }
                Ok((used, got)) => {
                    assert!(used > 0 || got.is_some(), "the decoder made no progress");
                    pos += used;
                    match got {
                        Some(Decoded::Frame(Frame::Headers(h))) => {
                            assert!(
                                h.len() as u64 <= MAX_PAYLOAD,
                                "HEADERS of {} bytes",
                                h.len()
                            );
                            out.frames.push(Frame::Headers(h));
                        }
                        Some(Decoded::Frame(f)) => out.frames.push(f),
                        Some(Decoded::Data(b)) => {
                            assert!(!b.is_empty(), "an empty DATA chunk");
                            out.data.extend_from_slice(b);
                        }
                        Some(Decoded::DataHeader(len)) => out.data_headers.push(len),
                        None => {}
                    }
                }
            }
        }
    }
    out
}

/// Runs one input: its first byte seeds the piece sizes, the rest is the stream.
pub fn run(data: &[u8]) {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    // Piece sizes 1..=16 from a small LCG seeded by the first byte.
    let mut x = u32::from(seed) | 1;
    let pieces = std::iter::from_fn(move || {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        Some(((x >> 16) % 16) as usize + 1)
    });
    let cut = decode(stream, pieces);
    let whole = decode(stream, std::iter::empty());
    assert_eq!(cut, whole, "the outcome depends on how the stream was cut");
}
