//! The fuzz targets' logic, shared with the seed-corpus writer (`examples/seeds.rs`) and
//! replayed on stable by this crate's tests; each file in `fuzz_targets/` calls one
//! `run`. See `README.md`.

pub mod frames;
pub mod h3;
pub mod h3_frames;
pub mod initial;
pub mod input;
pub mod qpack;
pub mod quic;
pub mod tcp;
pub mod wire;
