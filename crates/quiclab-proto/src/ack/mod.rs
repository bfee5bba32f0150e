//! Receive-side acknowledgement: which packets arrived and when to send an ACK
//! (RFC 9000 §13.2, draft-ietf-quic-ack-frequency §6).

mod tracker;

pub use tracker::{AckPolicy, AckTracker};
