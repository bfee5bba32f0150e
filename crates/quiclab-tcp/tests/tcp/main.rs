//! quiclab-tcp's integration tests, one module per former test file, in ONE test
//! binary (each binary links the crate again; docs/PERFORMANCE.md, "CI time"). Run one
//! file's tests with `cargo test --release -p quiclab-tcp --test tcp ecn::`. A new test
//! file goes here as a module.

mod ecn;
mod harness;
