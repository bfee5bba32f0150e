//! One QUIC connection: a sans-IO state machine (RFC 9000, 9001, 9002).
//!
//! # Call contract
//!
//! The driver owns time and I/O. After creating a connection (through
//! [`crate::endpoint::Endpoint`] or [`Connection::new_client`]/[`Connection::new_server`]):
//!
//! 1. feed every datagram for it with [`Connection::handle_datagram`], and call
//!    [`Connection::handle_timeout`] whenever the time from [`Connection::poll_timeout`]
//!    has come (calling it early is harmless);
//! 2. then drain [`Connection::poll_transmit`] until it returns `None`, sending each
//!    datagram, calling [`Connection::prepare_transmit`] before each call: it starts a
//!    1-RTT key update when the policy or the AEAD confidentiality limit asks for one
//!    and closes with AEAD_LIMIT_REACHED when none is possible (RFC 9001 §6, §6.6), so
//!    a driver that skips it never updates keys (an [`crate::endpoint::Endpoint`] calls
//!    it for its connections); drain [`Connection::poll_event`] and
//!    [`Connection::poll_endpoint_event`];
//! 3. ask [`Connection::poll_timeout`] for the next deadline and sleep until it or the
//!    next datagram. Application calls (stream reads and writes, `close`) may happen
//!    at any time; follow them with step 2.
//!
//! `now` must never go backwards. Every entry point takes it; nothing reads a clock.

// Part files: types with their own state and rules; none imports this file. Glue
// files: `impl Connection`, tying parts together; this file names no item of theirs.
mod ack_frequency_state;
mod cids;
mod crypto_stream;
mod footprint;
mod handshake_state;
mod key_update_state;
mod lifecycle;
mod outbox;
mod params;
mod parsed;
mod path;
mod pmtud;
mod scratch;
mod server_hold;
mod spaces;
mod stats;
#[cfg(any(test, feature = "testing"))]
mod tamper;
mod timers;
mod tokens;
mod transmit;
mod version_state;
mod zero_rtt_state;

mod ack_frequency;
mod api;
mod close;
mod compatible;
mod create;
mod event_log;
#[cfg(feature = "fuzzing")]
mod fuzzing;
mod handshake;
mod inspect;
mod key_update;
mod loss;
#[cfg(any(test, feature = "testing"))]
mod misbehave;
mod new_token;
mod peer_buffers;
mod pmtud_probe;
mod recv;
mod retry;
mod schedule_hints;
mod send;
mod timeout;
mod version;
mod zero_rtt;

pub use crypto_stream::MAX_CRYPTO_BUFFER;
pub use footprint::Footprint;
pub use lifecycle::CloseReason;
pub use outbox::{ConnectionEvent, EndpointEvent, MAX_QUEUED_DATAGRAMS};
pub(crate) use parsed::Parsed;
#[cfg(feature = "fuzzing")]
pub use path::MAX_PENDING_PATH_RESPONSES as MAX_PATH_RESPONSES;
pub use spaces::SpaceId;
pub use stats::ConnectionStats;
#[cfg(any(test, feature = "testing"))]
pub use tamper::with_tampered_transport_parameters;
pub use tokens::ServerValidation;
pub use transmit::{Transmit, MIN_INITIAL_DATAGRAM};
pub use zero_rtt_state::ZeroRttStatus;

use crate::config::TransportConfig;
use crate::crypto::tls::TlsSession;
use crate::rng::DetRng;
use crate::streams::Streams;
use crate::wire::Side;
use ack_frequency_state::AckFrequencyState;
use cids::CidState;
use handshake_state::HandshakeState;
use key_update_state::KeyUpdate;
use lifecycle::Lifecycle;
use outbox::Outbox;
use params::TransportParams;
use path::PathData;
use scratch::Scratch;
use spaces::PacketSpace;
use std::sync::Arc;
use timers::TimerTable;
use tokens::TokenState;
use version_state::VersionState;
use zero_rtt_state::ZeroRtt;

/// A QUIC connection. See the module docs for the call contract.
pub struct Connection {
    side: Side,
    config: Arc<TransportConfig>,
    /// The version in use; Version Negotiation seen and its outcome (client); the
    /// client's original version after a compatible upgrade (server).
    versions: VersionState,
    /// The path's address, RTT, congestion controller, pacer, PTO backoff and
    /// amplification budget.
    path: PathData,
    tls: TlsSession,
    spaces: [PacketSpace; 3],
    cids: CidState,
    /// Our transport parameters, the peer's, the original DCID.
    params: TransportParams,
    /// Handshake progress, the server's ClientHello hold, early packets.
    handshake: HandshakeState,
    /// Every deadline (the spaces' ACK deadlines copied in) and the idle rule.
    timers: TimerTable,
    streams: Streams,
    /// Handshake, established, closing, draining; why it ended; the CONNECTION_CLOSE.
    lifecycle: Lifecycle,
    /// Events for the application and the endpoint, received DATAGRAM payloads, the
    /// event log.
    outbox: Outbox,
    rng: DetRng,
    stats: ConnectionStats,
    key_update: KeyUpdate,
    /// The ack-frequency extension, receiver and sender (ACK policy, requests).
    ack_frequency: AckFrequencyState,
    /// 0-RTT keys, status and (server) packets waiting for their keys.
    zero_rtt: ZeroRtt,
    /// Retry and NEW_TOKEN tokens (RFC 9000 §8.1).
    tokens: TokenState,
    /// Buffers reused across calls.
    scratch: Scratch,
}
