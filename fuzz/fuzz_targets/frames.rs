//! Frame payloads decode without panicking and re-encode to the same frames
//! (`src/wire.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::wire::frames(data));
