//! Transport parameters decode without panicking and re-encode to the same set
//! (`src/wire.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::wire::transport_params(data));
