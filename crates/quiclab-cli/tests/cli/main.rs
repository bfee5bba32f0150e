//! The CLI's integration tests that use no real time, one module per former test file, in
//! ONE test binary (fewer binaries to link; docs/PERFORMANCE.md, "CI time"). Run one
//! file's tests with `cargo test --release -p quiclab-cli --test cli sim_set::`. Tests on
//! real sockets or timers (emulate, probe, shell, calibrate, closed_port, the reproductions through the emulator, ...) stay their own
//! binaries, so CPU-heavy tests beside them cannot slow them; cli_reference is run by name.
//! A new test file with no real time goes here as a module.

#[path = "../common/mod.rs"]
mod common;

mod closed_stdout;
mod hostile_input;
mod reproduce_exit;
mod sim_set;
