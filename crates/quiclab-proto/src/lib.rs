//! quiclab-proto: a sans-IO QUIC v1 implementation (RFC 9000, 9001, 9002) for transport
//! research, driven in virtual time.
//!
//! Layers, each knowing only those before it:
//!
//! ```text
//! wire -> crypto -> connection (ack, recovery, cc, streams) -> endpoint
//! ```
//!
//! The core never reads a clock, a socket or a global random source: every entry point
//! takes `now` ([`time::Instant`]), and randomness comes from a seed in the config.

pub mod ack;
pub mod cc;
pub mod config;
pub mod connection;
pub mod crypto;
pub mod endpoint;
pub mod error;
pub mod events;
mod path_recovery;
pub mod qlog;
pub mod range_set;
pub mod recovery;
pub mod rng;
pub mod streams;
/// The in-memory two-endpoint harness for tests and benchmarks (cargo feature `testing`).
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time;
pub mod wire;

pub use config::TransportConfig;
pub use connection::{Connection, ConnectionEvent, Transmit};
pub use endpoint::{Burst, ConnectionHandle, Endpoint};
pub use error::{TransportError, TransportErrorCode};
pub use time::Instant;
