//! Deterministic mutation fuzzing of the two decoders that take raw peer bytes: the
//! HTTP/3 frame decoder and the QPACK decoder (field sections and encoder-stream
//! instructions, plus the encoder's decoder-stream parser). A seeded RNG mutates a
//! corpus of valid, structured inputs (bit flips, interesting bytes, varint-boundary
//! values, inserts, deletes, splices, truncation) and feeds each mutant in random
//! pieces. A panic fails the run; invariants (bounded buffers, table within capacity,
//! blocked streams within the limit) are asserted on every execution.
//!
//! `cargo-fuzz` needs nightly; this runs on stable, in the test suite (short) and as
//! `cargo run --release -p quiclab-h3 --example fuzz -- N` (long).

use crate::frame::{self, ty, Decoded, Frame, FrameDecoder};
use crate::qpack::{Decoder, Encoder, Field};
use crate::settings::Settings;
use quiclab_proto::rng::DetRng;

/// Counts from a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuzzStats {
    pub executions: u64,
    /// Executions that ended in a protocol error (the expected outcome for most).
    pub errors: u64,
    /// Executions that decoded something without error.
    pub accepted: u64,
}

const INTERESTING: [u8; 12] = [
    0, 1, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xfe, 0xff, 0x20, 0x10,
];

/// Mutates `input` in place with 1–4 random edits, some borrowing from `other`.
fn mutate(rng: &mut DetRng, input: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..rng.range(1, 5) {
        let len = input.len() as u64;
        let pos = if len == 0 {
            0
        } else {
            rng.range(0, len) as usize
        };
        match rng.range(0, 9) {
            0 if len > 0 => input[pos] ^= 1 << rng.range(0, 8),
            1 if len > 0 => input[pos] = INTERESTING[rng.range(0, 12) as usize],
            2 => {
                let mut b = [0u8; 4];
                rng.fill(&mut b);
                let n = rng.range(1, 5) as usize;
                input.splice(pos..pos, b[..n].iter().copied());
            }
            3 if len > 0 => {
                let end = (pos + rng.range(1, 9) as usize).min(input.len());
                input.drain(pos..end);
            }
            4 if len > 0 => input.truncate(pos),
            5 if !other.is_empty() => {
                let a = rng.range(0, other.len() as u64) as usize;
                let b = (a + rng.range(1, 32) as usize).min(other.len());
                input.splice(pos..pos, other[a..b].iter().copied());
            }
            6 => {
                // A varint at a length boundary.
                let v = [
                    63u64,
                    64,
                    16383,
                    16384,
                    (1 << 30) - 1,
                    1 << 30,
                    (1 << 62) - 1,
                ][rng.range(0, 7) as usize];
                let mut b = vec![];
                quiclab_proto::wire::varint::write(&mut b, v);
                input.splice(pos..pos, b);
            }
            7 if len > 1 => {
                let end = (pos + rng.range(1, 16) as usize).min(input.len());
                let copy = input[pos..end].to_vec();
                input.splice(pos..pos, copy);
            }
            _ => {
                let mut b = [0u8; 1];
                rng.fill(&mut b);
                input.push(b[0]);
            }
        }
    }
}

/// Splits `len` bytes into random piece lengths.
fn pieces(rng: &mut DetRng, len: usize) -> Vec<usize> {
    let mut out = vec![];
    let mut left = len;
    while left > 0 {
        let n = if rng.range(0, 4) == 0 {
            left
        } else {
            (rng.range(1, 17) as usize).min(left)
        };
        out.push(n);
        left -= n;
    }
    out
}

/// Valid frame sequences to start from.
fn frame_corpus() -> Vec<Vec<u8>> {
    let mut c = vec![];
    let mut b = vec![];
    frame::encode(
        &mut b,
        &Frame::Settings(Settings {
            qpack_max_table_capacity: 4096,
            qpack_blocked_streams: 16,
            max_field_section_size: Some(65536),
            unknown: vec![(0x21, 1)],
        }),
    );
    frame::encode(&mut b, &Frame::GoAway(8));
    frame::encode(&mut b, &Frame::MaxPushId(3));
    c.push(b);
    let mut b = vec![];
    let hdrs = crate::message::get_request("example.com", "/index.html", &[]);
    frame::encode(&mut b, &Frame::Headers(Encoder::new(0).encode(0, &hdrs)));
    frame::encode_header(&mut b, ty::DATA, 5);
    b.extend_from_slice(b"hello");
    b.extend_from_slice(&[0x21, 2, 0, 0]);
    frame::encode(&mut b, &Frame::Headers(vec![0, 0]));
    c.push(b);
    let mut b = vec![];
    frame::encode(&mut b, &Frame::CancelPush(1));
    frame::encode(&mut b, &Frame::PushPromise(0));
    c.push(b);
    c
}

/// Decodes `input` in random pieces; checks the buffering bound.
fn run_frames(rng: &mut DetRng, input: &[u8]) -> Result<usize, crate::H3Error> {
    const MAX: u64 = 1024;
    let mut d = FrameDecoder::new(MAX);
    let mut at = 0;
    let mut frames = 0;
    for n in pieces(rng, input.len()) {
        let chunk = &input[at..at + n];
        at += n;
        let mut pos = 0;
        while pos < chunk.len() {
            let (used, out) = d.decode(&chunk[pos..])?;
            assert!(used > 0 || out.is_some(), "decoder made no progress");
            pos += used;
            match out {
                Some(Decoded::Frame(Frame::Headers(h))) => assert!(h.len() as u64 <= MAX),
                Some(Decoded::Frame(_)) => frames += 1,
                Some(Decoded::Data(b)) => assert!(!b.is_empty()),
                _ => {}
            }
        }
    }
    Ok(frames)
}

/// Fuzzes the HTTP/3 frame decoder for `executions` runs.
pub fn fuzz_frames(seed: u64, executions: u64) -> FuzzStats {
    let mut rng = DetRng::new(seed);
    let corpus = frame_corpus();
    let mut stats = FuzzStats::default();
    for _ in 0..executions {
        let i = rng.range(0, corpus.len() as u64) as usize;
        let j = rng.range(0, corpus.len() as u64) as usize;
        let mut input = corpus[i].clone();
        mutate(&mut rng, &mut input, &corpus[j]);
        match run_frames(&mut rng, &input) {
            Ok(_) => stats.accepted += 1,
            Err(_) => stats.errors += 1,
        }
        stats.executions += 1;
    }
    stats
}

/// An encoder stream and the field sections (stream, bytes) that depend on it.
type QpackCase = (Vec<u8>, Vec<(u64, Vec<u8>)>);

/// (encoder stream, [(stream, field section)]) built by our encoder, plus RFC 9204
/// Appendix B.
fn qpack_corpus() -> Vec<QpackCase> {
    let mut c = vec![];
    let mut e = Encoder::new(4096);
    e.on_peer_settings(4096, 4);
    let mut sections = vec![];
    for i in 0..4u64 {
        let fields = [
            Field::new(":method", "GET"),
            Field::new(":path", format!("/item/{i}")),
            Field::new("user-agent", "fuzz agent with a long enough value"),
            Field::new("x-custom", format!("value {}", i % 2)),
        ];
        sections.push((i * 4, e.encode(i * 4, &fields)));
    }
    c.push((e.take_instructions(), sections));
    let hex = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
            .collect()
    };
    c.push((
        hex(
            "3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6dc1 0c2f 7361 6d70 6c65 2f70 6174 68
             4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565 02",
        ),
        vec![
            (4, hex("0381 10 11")),
            (8, hex("0500 80 c1 81")),
            (0, hex("0000 510b 2f69 6e64 6578 2e68 746d 6c")),
        ],
    ));
    c
}

/// One QPACK execution: encoder-stream pieces interleaved with section decodes.
fn run_qpack(rng: &mut DetRng, enc: &[u8], sections: &[(u64, Vec<u8>)]) -> (bool, bool) {
    const CAP: u64 = 4096;
    const BLOCKED: u64 = 2;
    let mut d = Decoder::new(CAP, BLOCKED, 8 * 1024);
    let mut ok = true;
    let mut decoded = false;
    let mut at = 0;
    let ps = pieces(rng, enc.len());
    let mut next_section = 0;
    for n in ps {
        if d.on_encoder_stream(&enc[at..at + n]).is_err() {
            ok = false;
            break;
        }
        at += n;
        if next_section < sections.len() && rng.range(0, 2) == 0 {
            let (s, b) = &sections[next_section];
            next_section += 1;
            match d.decode(*s, b) {
                Ok(crate::qpack::Decoded::Fields(f)) => {
                    decoded = true;
                    assert!(f.iter().map(Field::size).sum::<usize>() <= 8 * 1024);
                }
                Ok(_) => {}
                Err(_) => ok = false,
            }
        }
        assert!(d.table_size() as u64 <= CAP);
        assert!(d.blocked_streams() as u64 <= BLOCKED);
    }
    for (s, b) in &sections[next_section..] {
        if d.decode(*s, b).is_err() {
            ok = false;
        }
        assert!(d.blocked_streams() as u64 <= BLOCKED);
    }
    // The decoder stream it produced, fed to an encoder, must not panic either.
    let mut e = Encoder::new(CAP);
    e.on_peer_settings(CAP, BLOCKED);
    let _ = e.on_decoder_stream(&d.take_instructions());
    (ok, decoded)
}

/// Fuzzes the QPACK decoder (and the encoder's decoder-stream parser).
pub fn fuzz_qpack(seed: u64, executions: u64) -> FuzzStats {
    let mut rng = DetRng::new(seed);
    let corpus = qpack_corpus();
    let mut stats = FuzzStats::default();
    for _ in 0..executions {
        let (enc, sections) = &corpus[rng.range(0, corpus.len() as u64) as usize];
        let mut enc = enc.clone();
        let mut sections = sections.clone();
        match rng.range(0, 3) {
            0 => mutate(&mut rng, &mut enc, &sections[0].1),
            1 => {
                let k = rng.range(0, sections.len() as u64) as usize;
                let other = enc.clone();
                mutate(&mut rng, &mut sections[k].1, &other);
            }
            _ => {
                mutate(&mut rng, &mut enc, &[]);
                let k = rng.range(0, sections.len() as u64) as usize;
                mutate(&mut rng, &mut sections[k].1, &[]);
            }
        }
        // Random decoder-stream bytes at the encoder too.
        let mut junk = vec![0u8; rng.range(0, 12) as usize];
        rng.fill(&mut junk);
        let mut e = Encoder::new(4096);
        e.on_peer_settings(4096, 2);
        let _ = e.on_decoder_stream(&junk);
        let (ok, _) = run_qpack(&mut rng, &enc, &sections);
        if ok {
            stats.accepted += 1;
        } else {
            stats.errors += 1;
        }
        stats.executions += 1;
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short variant for the test suite; the example runs the long one.
    #[test]
    fn frame_decoder_survives_mutations() {
        let s = fuzz_frames(1, 30_000);
        assert_eq!(s.executions, 30_000);
        // Both outcomes occur: the mutations are neither all fatal nor all harmless.
        assert!(s.errors > 1000 && s.accepted > 1000, "{s:?}");
    }

    #[test]
    fn qpack_decoder_survives_mutations() {
        let s = fuzz_qpack(2, 20_000);
        assert!(s.errors > 500 && s.accepted > 500, "{s:?}");
    }
}
