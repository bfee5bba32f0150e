//! Endpoints as hosts (issue 37): what a real host adds to a QUIC or TCP endpoint's
//! behaviour (CPU cost per packet, a bounded receive queue, socket buffers, GSO
//! batches, timer granularity and wake-up latency, an application delay), set per
//! endpoint with a `host = { ... }` table or a profile file (`scenarios/hosts/`).
//! Off by default: an endpoint without a host table runs exactly as before.

pub mod config;
pub mod model;
pub mod stats;

pub use config::{HostConfig, Latency};
pub use model::HostModel;
pub use stats::HostStats;
