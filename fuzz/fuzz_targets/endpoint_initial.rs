//! Arbitrary frames in correctly protected Initial packets to a server endpoint; CRYPTO
//! buffering stays bounded per connection and per endpoint (`src/initial.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::initial::run(data));
