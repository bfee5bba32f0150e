//! Arbitrary frame sequences sealed with the 1-RTT keys into an established connection;
//! its buffers stay bounded and violations close with a transport error code
//! (`src/frames.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::frames::run(data));
