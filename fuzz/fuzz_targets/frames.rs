//! Frame payloads: decoding never panics, and every decoded frame re-encodes to bytes
//! that decode to the same frames.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quiclab_proto::wire::{decode_frames, Frame};

fuzz_target!(|data: &[u8]| {
    let frames: Vec<Frame<'_>> = decode_frames(data).map_while(Result::ok).collect();
    let mut buf = Vec::new();
    for f in &frames {
        let before = buf.len();
        f.encode(&mut buf);
        assert_eq!(buf.len() - before, f.encoded_len(), "{f:?}");
    }
    let again: Vec<Frame<'_>> = decode_frames(&buf)
        .collect::<Result<_, _>>()
        .expect("re-encoded frames must decode");
    // Decoding merges adjacent PADDING runs; a decoded list never has two in a row.
    assert_eq!(again, frames);
});
