//! See `src/h3_frames.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::h3_frames::run(data));
