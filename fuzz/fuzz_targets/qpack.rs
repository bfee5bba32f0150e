//! See `src/qpack.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::qpack::run(data));
