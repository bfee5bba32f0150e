//! Arbitrary bytes on client streams into a server HTTP/3 connection; its maps and
//! buffers stay bounded (`src/h3.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| quiclab_fuzz::h3::run(data));
