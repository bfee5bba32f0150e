//! quiclab-lab's integration tests, one module per former test file, in ONE test binary
//! (each binary links and optimises the stack again; docs/PERFORMANCE.md, "CI time"). Run
//! one file's tests with `cargo test --release -p quiclab-lab --test lab sweep::`.
//! endpoints.rs (sets environment variables) and schema.rs (run by name to regenerate the
//! schema) stay their own binaries. A new test file goes here as a module.

mod hostile_input;
mod index;
mod plot;
mod reproduce;
mod reproduce_instant_ack;
mod statements;
mod store;
mod sweep;
mod trace_plans;
