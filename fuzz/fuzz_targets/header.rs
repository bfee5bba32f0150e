//! Packet headers from arbitrary datagrams (`src/wire.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::wire::header(data));
