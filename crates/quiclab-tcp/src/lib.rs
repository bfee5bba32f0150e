//! quiclab-tcp: a sans-IO TCP (RFC 9293) driven in virtual time like
//! `quiclab_proto::Connection`: three-way handshake, FIN close, RTO (RFC 6298),
//! SACK (RFC 2018) with RFC 6675 loss recovery, RACK-TLP (RFC 8985), delayed ACKs
//! (every second full segment or 40 ms, as Linux), window scaling and timestamps
//! (RFC 7323), receive-window flow control. Congestion control is
//! `quiclab_proto::cc`'s controllers, the same code QUIC runs.
//!
//! TCP Fast Open (RFC 7413: cookie request and issue, data in the SYN, fallback when
//! the server refuses it) is `connection/fast_open.rs`.
//!
//! ECN (`ecn.rs`, `accecn.rs`, `connection/ecn.rs`): classic ECN (RFC 3168 §6.1) and
//! Accurate ECN feedback (RFC 9768: the ACE counter and the AccECN option), off by
//! default (`ecn`, `ecn_codepoint`); the controller hears CE marks through
//! `AckSummary::ce_event` and `newly_ce_marked`.
//!
//! Linux's behaviours that RFCs leave open are knobs, off by default (the guide's
//! "TCP flows" page lists the Linux values): pacing at QUIC's rate (`pacing`,
//! `pacing_burst`) or Linux's (`pacing_ratio`, `pacing_ratio.rs`), Linux's RTO (`rto`, `linux_rto.rs`), quick-ACK at connection
//! start (`quick_ack`), PRR (`recovery`, `prr.rs`, RFC 9937) and F-RTO (`frto`,
//! `connection/frto.rs`, RFC 5682).
//!
//! Not implemented (yet): PAWS (RFC 7323 §5), zero-window probing
//! (the simulated applications always read), TIME-WAIT, urgent data.

pub mod accecn;
pub mod config;
pub mod connection;
pub mod ecn;
pub mod linux_rto;
pub mod pacing_ratio;
pub mod prr;
pub mod recv;
pub mod scoreboard;
pub mod wire;

pub use config::{ConfigError, TcpConfig};
#[cfg(feature = "fuzzing")]
pub use connection::TcpFootprint;
pub use connection::{CloseReason, Event, SegmentError, State, TcpConnection, TcpStats, Transmit};
pub use linux_rto::RtoAlgorithm;
pub use pacing_ratio::PacingRatio;
pub use prr::Recovery;
