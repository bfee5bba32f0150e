//! quiclab-h3's integration tests, one module per former test file, in ONE test binary
//! (each binary links the stack again; docs/PERFORMANCE.md, "CI time"). Run one file's
//! tests with `cargo test --release -p quiclab-h3 --test h3 pair::`. A new test file goes
//! here as a module.

#[path = "../common/mod.rs"]
mod common;
#[path = "../raw_peer/mod.rs"]
mod raw_peer;

mod errors;
mod misbehave_h3_frames;
mod misbehave_qpack;
mod pair;
mod uni_streams;
