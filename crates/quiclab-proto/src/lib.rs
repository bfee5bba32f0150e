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
//! takes `now` ([`Instant`]), and randomness comes from a seed in the config.
//!
//! # Public API
//!
//! The modules are private; what a driver needs is re-exported here. An [`Endpoint`]
//! routes datagrams to its [`Connection`]s and hands back [`Transmit`]s; a
//! [`TransportConfig`] holds every knob; [`events`] is the structured event vocabulary
//! (an [`events::EventSink`] receives it, [`QlogWriter`] writes it as qlog); [`cc`] is
//! where researchers plug in congestion controllers; [`tls`] builds rustls configs with
//! deterministic randomness. [`coalesced_packets`] and [`read_client_initial`] read
//! packets as an on-path observer does (captures, link models).
//!
//! Cargo features, both off by default: `testing` adds `testing` (the in-memory
//! two-endpoint harness) and `raw` (packet and frame codecs, packet protection, for
//! tests that play a misbehaving peer); `fuzzing` adds the connection's fuzzing hooks
//! for the cargo-fuzz targets in `fuzz/`, and implies `testing`.

mod ack;
pub mod cc;
mod config;
mod connection;
mod crypto;
mod ecn;
mod endpoint;
mod error;
pub mod events;
mod inspect;
mod multipath_sched;
mod path_recovery;
mod qlog;
pub mod range_set;
#[cfg(feature = "testing")]
pub mod raw;
mod recovery;
mod reset_key;
mod rng;
mod streams;
/// The in-memory two-endpoint harness for tests and benchmarks (cargo feature `testing`).
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod time;
pub mod tls;
mod wire;

// Driving an endpoint and its connections.
pub use connection::{
    CloseReason, Connection, ConnectionEvent, ConnectionStats, DatagramError, EcnReport,
    EndpointEvent, Footprint, MigrateError, MigrationStats, PathLossStats, PathSendError,
    ServerValidation, Transmit, ZeroRttStatus, MAX_COPIES_PER_PATH, MAX_CRYPTO_BUFFER,
    MAX_OTHER_ADDRESSES, MAX_QUEUED_DATAGRAMS,
};
pub use ecn::{Ecn, EcnFailure, EcnMode, EcnState};
pub use endpoint::{Burst, ConfigFactory, ConnectionHandle, Endpoint, SinkFactory, Unrouted};
pub use time::{duration_nanos, Instant};

// Configuration: every knob as data.
pub use config::{
    validate_controller, AckConfig, AckFrequencyConfig, AckFrequencyPolicy, AckPath, AckSchedule,
    AdmissionConfig, ConfigError, CoupledCongestionControl, DatagramSendConfig, FlowConfig,
    HandshakeConfig, KeyUpdateConfig, LossConfig, MultipathConfig, MultipathScheduler,
    PacketProtection, PreferredAddressConfig, QuicVersion, RetryMode, TransportConfig,
    VersionConfig, UDP_PAYLOAD_1452, UDP_PAYLOAD_DEFAULT, UDP_PAYLOAD_SIGCOMM,
};

// Streams and identifiers.
pub use streams::{ReadOutcome, SendData, StreamError, StreamEvent};
/// QUIC's variable-length integers (RFC 9000 §16), which HTTP/3 frames reuse.
pub use wire::varint;
/// The preferred_address transport parameter (RFC 9000 §18.2).
pub use wire::PreferredAddress;
pub use wire::{ConnectionId, Dir, EcnCounts, PacketType, Side, StreamId, TransportParameters};
pub use wire::{VERSION_1, VERSION_2};

// Errors.
pub use error::{TransportError, TransportErrorCode};

// Logging.
pub use qlog::QlogWriter;

// Shared with other transports (quiclab-tcp runs the same estimators and pacer).
pub use recovery::pacer::{DEFAULT_BURST_PACKETS, MAX_BURST_PACKETS};
pub use recovery::{DeliveryRateEstimator, DeliverySnapshot, Pacer, PacingRate, RttEstimator};
pub use recovery::{LostPacket, RateSample, GRANULARITY};
pub use reset_key::{StatelessResetKey, STATELESS_RESET_KEY_LEN};
pub use rng::DetRng;

// Reading packets from outside a connection (captures, link models).
pub use inspect::{coalesced_packets, read_client_initial, CoalescedPackets};
pub use wire::ProtectedHeader;
