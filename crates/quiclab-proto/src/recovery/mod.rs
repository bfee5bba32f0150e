//! Loss detection and RTT estimation (RFC 9002 §5-6), independent of what packets carry.

pub mod pacer;
pub mod rtt;
pub mod sent;

pub use pacer::Pacer;
pub use rtt::{RttEstimator, GRANULARITY};
pub use sent::{SentPacket, SentPackets};
