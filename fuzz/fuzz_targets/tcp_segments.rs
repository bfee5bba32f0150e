//! Arbitrary segments into an established quiclab-tcp connection; the reassembly queue
//! and the scoreboard stay bounded (`src/tcp.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::tcp::run(data));
