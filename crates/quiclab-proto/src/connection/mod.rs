//! One QUIC connection: a sans-IO state machine (RFC 9000, 9001, 9002).
//!
//! [`Connection`]'s docs carry the call contract a driver follows.
//!
//! Layout: `Connection` (this file) holds parts, each a type with its own state,
//! rules and unit tests in its own file (`path.rs`, `timers.rs`, `lifecycle.rs`,
//! `outbox.rs`, `params.rs`, `key_update_state.rs`, ...); no part imports this file.
//! `impl Connection` lives only in glue files that tie parts together (`create.rs`,
//! `api.rs`, `timeout.rs`, `recv.rs`, `send.rs`, `loss.rs`, `key_update.rs`, ...);
//! this file names no item of a glue file. `scripts/check_module_cycles.py` checks it.

// Part files: types with their own state and rules; none imports this file.
mod ack_frequency_state;
mod cids;
mod crypto_stream;
mod datagram_queue;
mod ecn_state;
mod footprint;
mod freed_paths;
mod handshake_state;
mod key_update_state;
mod lifecycle;
mod migration_state;
mod multipath_copy_queues;
mod multipath_sched_state;
mod multipath_state;
mod outbox;
mod params;
mod parsed;
mod path;
mod path_cids;
mod path_spaces;
mod path_status_state;
mod path_validation;
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

// Glue files: `impl Connection`, tying parts together; this file names no item of
// theirs.
mod ack_frequency;
mod active_migration;
mod api;
mod close;
mod compatible;
mod create;
mod datagram_send;
mod ecn;
mod event_log;
#[cfg(feature = "fuzzing")]
mod fuzzing;
mod handshake;
mod inspect;
mod key_update;
mod key_update_paths;
mod loss;
mod migration;
#[cfg(any(test, feature = "testing"))]
mod misbehave;
mod multipath;
mod multipath_abandon;
mod multipath_abandon0;
mod multipath_ack;
mod multipath_ack_path;
mod multipath_carrier;
mod multipath_cids;
mod multipath_copies;
mod multipath_coupling;
mod multipath_datagram;
mod multipath_ecn;
mod multipath_failed;
mod multipath_free0;
mod multipath_limits;
mod multipath_log;
mod multipath_loss;
mod multipath_pto;
mod multipath_recv;
mod multipath_retire;
mod multipath_schedule;
mod multipath_send;
mod multipath_status;
mod new_token;
mod path_probe;
mod peer_buffers;
mod pmtud_probe;
mod preferred_address;
mod recv;
mod retry;
mod schedule_hints;
mod send;
mod timeout;
mod version;
mod zero_rtt;

pub use crypto_stream::MAX_CRYPTO_BUFFER;
pub use datagram_queue::DatagramError;
pub use ecn_state::EcnReport;
pub use footprint::Footprint;
pub use lifecycle::CloseReason;
pub use migration_state::{MigrateError, MigrationStats, MAX_OTHER_ADDRESSES};
pub use multipath_copy_queues::MAX_COPIES_PER_PATH;
pub use outbox::{ConnectionEvent, EndpointEvent, MAX_QUEUED_DATAGRAMS};
pub(crate) use parsed::Parsed;
/// PATH_RESPONSE frames a connection keeps owing at most (RFC 9000 §8.2.2 lets it
/// drop the rest).
#[cfg(feature = "fuzzing")]
pub use path::MAX_PENDING_PATH_RESPONSES as MAX_PATH_RESPONSES;
pub use path_spaces::{PathLossStats, PathSendError};
#[cfg(feature = "testing")]
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
use datagram_queue::DatagramQueue;
use ecn_state::EcnPath;
use handshake_state::HandshakeState;
use key_update_state::KeyUpdate;
use lifecycle::Lifecycle;
use migration_state::MigrationState;
use multipath_sched_state::StreamScheduling;
use multipath_state::MultipathState;
use outbox::Outbox;
use params::TransportParams;
use path::PathData;
use path_cids::PathCids;
use path_spaces::PathSpaces;
use scratch::Scratch;
use spaces::PacketSpace;
use std::sync::Arc;
use timers::TimerTable;
use tokens::TokenState;
use version_state::VersionState;
use zero_rtt_state::ZeroRtt;

/// A QUIC connection: a sans-IO state machine (RFC 9000, 9001, 9002).
///
/// # Call contract
///
/// The driver owns time and I/O. After creating a connection (through
/// [`crate::endpoint::Endpoint`], which follows this contract for its connections, or
/// [`Connection::new_client`]/[`Connection::new_server`]), and attaching an event sink
/// if any ([`Connection::set_event_sink`], right after creation):
///
/// 1. feed every datagram for it with [`Connection::handle_datagram`], and call
///    [`Connection::handle_timeout`] whenever the time from [`Connection::poll_timeout`]
///    has come (calling it early is harmless);
/// 2. then call [`Connection::prepare_transmit`] and [`Connection::poll_transmit`] in
///    turn until `poll_transmit` returns `None`, sending each datagram.
///    `prepare_transmit` starts a 1-RTT key update when the policy or the AEAD
///    confidentiality limit asks for one, closes with AEAD_LIMIT_REACHED when none is
///    possible (RFC 9001 §6, §6.6); a driver that skips it never updates keys;
/// 3. drain [`Connection::poll_event`], [`Connection::recv_datagram`] (DATAGRAM
///    payloads: unread ones beyond [`MAX_QUEUED_DATAGRAMS`] are dropped) and
///    [`Connection::poll_endpoint_event`] (connection IDs to route, a NEW_TOKEN token,
///    `Drained`);
/// 4. ask [`Connection::poll_timeout`] for the next deadline (every timer, the ACK
///    deadlines included) and sleep until it or the next datagram; drop the connection
///    once [`Connection::is_drained`].
///
/// Application calls (stream reads and writes, `close`) may happen at any time; follow
/// them with step 2. Optional: [`Connection::handle_port_unreachable`] for an ICMP
/// port unreachable, and [`Connection::send_settled`] / [`Connection::has_events`] to
/// skip polling idle connections.
///
/// `now` must never go backwards. Every entry point takes it; nothing reads a clock.
pub struct Connection {
    side: Side,
    config: Arc<TransportConfig>,
    /// The version in use; Version Negotiation seen and its outcome (client); the
    /// client's original version after a compatible upgrade (server).
    versions: VersionState,
    /// The path's address, RTT, congestion controller, pacer, PTO backoff and
    /// amplification budget.
    path: PathData,
    /// The paths besides the active one: the last validated (to return to), the
    /// previously active one's check, other peer addresses; validations in progress
    /// (RFC 9000 §8.2, §9).
    migration: MigrationState,
    /// The TLS handshake and the keys it yields (RFC 9001 §4).
    tls: TlsSession,
    /// Initial, Handshake, application data: keys, packet numbers, ACKs, CRYPTO.
    spaces: [PacketSpace; 3],
    /// Our connection IDs and the peer's (RFC 9000 §5.1).
    cids: CidState,
    /// Our transport parameters, the peer's, the original DCID.
    params: TransportParams,
    /// Handshake progress, the server's ClientHello hold, early packets.
    handshake: HandshakeState,
    /// Every deadline (the spaces' ACK deadlines copied in) and the idle rule.
    timers: TimerTable,
    /// Streams and flow control (RFC 9000 §2-4).
    streams: Streams,
    /// Handshake, established, closing, draining; why it ended; the CONNECTION_CLOSE.
    lifecycle: Lifecycle,
    /// Events for the application and the endpoint, received DATAGRAM payloads, the
    /// event log.
    outbox: Outbox,
    /// DATAGRAM payloads waiting to be sent (RFC 9221).
    datagram_queue: DatagramQueue,
    /// Every random choice, from the connection's seed.
    rng: DetRng,
    stats: ConnectionStats,
    /// The 1-RTT key phase and the AEAD limits' counts (RFC 9001 §6).
    key_update: KeyUpdate,
    /// The ack-frequency extension, receiver and sender (ACK policy, requests).
    ack_frequency: AckFrequencyState,
    /// 0-RTT keys, status and (server) packets waiting for their keys.
    zero_rtt: ZeroRtt,
    /// Retry and NEW_TOKEN tokens (RFC 9000 §8.1).
    tokens: TokenState,
    /// ECN: the codepoint we send, the counts we report, validation (RFC 9000 §13.4).
    ecn: EcnPath,
    /// The multipath extension: negotiated or not, path ID limits, path statuses both
    /// ways, the abandoned path IDs (path 0's abandonment among them).
    multipath: MultipathState,
    /// Connection IDs of path IDs above 0, ours and the peer's (multipath §3.5).
    path_cids: PathCids,
    /// Packet number spaces and recovery of path IDs above 0 (multipath §2.3, §5).
    path_spaces: PathSpaces,
    /// The multipath packet scheduler and its pick for new stream data (§5.5).
    sched: StreamScheduling,
    /// Buffers reused across calls.
    scratch: Scratch,
}
