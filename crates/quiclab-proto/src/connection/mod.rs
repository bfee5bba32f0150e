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

mod ack_frequency;
mod cids;
mod close;
mod compatible;
mod crypto_stream;
mod event_log;
mod footprint;
#[cfg(feature = "fuzzing")]
mod fuzzing;
mod handshake;
mod handshake_state;
mod key_update;
mod loss;
#[cfg(any(test, feature = "testing"))]
mod misbehave;
mod new_token;
mod path;
mod peer_buffers;
mod pmtud;
mod recv;
mod retry;
mod schedule_hints;
mod send;
mod server_hold;
mod spaces;
mod stats;
mod timers;
mod version;
mod zero_rtt;

pub use crypto_stream::MAX_CRYPTO_BUFFER;
pub use footprint::Footprint;
#[cfg(feature = "fuzzing")]
pub use fuzzing::MAX_PATH_RESPONSES;
#[cfg(any(test, feature = "testing"))]
pub use misbehave::with_tampered_transport_parameters;
pub(crate) use recv::Parsed;
pub use retry::ServerValidation;
pub use send::MIN_INITIAL_DATAGRAM;
#[cfg(feature = "testing")]
pub use spaces::SpaceId;
pub use stats::ConnectionStats;
pub use zero_rtt::ZeroRttStatus;

use crate::ack::AckPolicy;
use crate::cc::CongestionController;
use crate::config::TransportConfig;
use crate::crypto::tls::TlsSession;
use crate::error::TransportError;
use crate::events::{ConnectionState, Event, EventSink, Owner};
use crate::recovery::RttEstimator;
use crate::rng::DetRng;
use crate::streams::{ReadOutcome, SendData, StreamError, StreamEvent, StreamParams, Streams};
use crate::time::Instant;
use crate::wire::{ConnectionId, Dir, Side, StreamId, TransportParameters};
use ack_frequency::AckFrequencyState;
use cids::CidState;
use close::CloseState;
use handshake_state::HandshakeState;
use key_update::KeyUpdate;
use path::PathData;
use spaces::PacketSpace;
use spaces::SpaceId as Space;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use timers::{IdleTimeout, Timer, TimerTable};

/// DATAGRAM frame payloads kept for the application before the oldest is dropped
/// (RFC 9221 §5: a receiver may drop what it cannot process). At the largest frame
/// size this bounds the queue to about 64 MB per connection; `recv_datagram` drains it.
pub const MAX_QUEUED_DATAGRAMS: usize = 1024;

/// What the application learns from a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// The TLS handshake completed (RFC 9001 §4.1.1); streams can be used.
    HandshakeCompleted,
    /// The handshake is confirmed (RFC 9001 §4.1.2).
    HandshakeConfirmed,
    Stream(StreamEvent),
    /// The connection closed (by either side, or idle timeout); no more data flows.
    Closed(CloseReason),
}

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// A transport error (ours or the peer's, per `owner`).
    Transport {
        owner: Owner,
        error: TransportError,
    },
    /// An application close (CONNECTION_CLOSE 0x1d).
    Application {
        owner: Owner,
        code: u64,
        reason: String,
    },
    IdleTimeout,
    /// The handshake did not complete within `handshake_timeout_ms`.
    HandshakeTimeout,
    /// Client: the network said nothing listens at the server's address and port (an
    /// ICMP port unreachable, [`Connection::handle_port_unreachable`]) before anything
    /// arrived from it.
    PortUnreachable,
}

/// What the endpoint must learn from a connection: connection IDs to route or forget,
/// and when the connection's state can be dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointEvent {
    NewConnectionId(ConnectionId),
    RetireConnectionId(ConnectionId),
    /// The connection is closed and drained: remove it.
    Drained,
    /// Client: the server sent a NEW_TOKEN token for a later connection (RFC 9000
    /// §8.1.3).
    NewToken(Vec<u8>),
}

/// A datagram to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddr,
    /// Bytes appended to the caller's buffer.
    pub size: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Handshake,
    Established,
    /// We sent CONNECTION_CLOSE; we answer packets with it until [`Timer::Close`].
    Closing,
    /// The peer closed; we send nothing until [`Timer::Close`].
    Draining,
    Drained,
}

/// Buffers reused across calls, so the hot paths do not allocate.
#[derive(Default)]
struct Scratch {
    /// CRYPTO data handed to TLS.
    bytes: Vec<u8>,
    /// Stream frames written into one packet.
    stream_records: Vec<crate::streams::StreamFrameRecord>,
    /// The frame list of packet events (`event_log`).
    frames: Vec<crate::events::FrameSummary>,
    /// A received packet's decoded frames while a sink is attached (`recv`); empty
    /// between packets, kept for its buffer.
    decoded: Vec<Result<crate::wire::Frame<'static>, TransportError>>,
}

/// A QUIC connection. See the module docs for the call contract.
pub struct Connection {
    side: Side,
    config: Arc<TransportConfig>,
    /// The version in use; Version Negotiation seen and its outcome (client).
    versions: version::VersionState,
    state: State,
    /// The path's address, RTT, congestion controller, pacer, PTO backoff and
    /// amplification budget.
    path: PathData,
    tls: TlsSession,
    spaces: [PacketSpace; 3],
    cids: CidState,
    /// Client: the DCID of its first Initial. Server: the client's original DCID.
    original_dcid: ConnectionId,
    local_params: TransportParameters,
    peer_params: Option<Box<TransportParameters>>,
    /// Handshake progress, the server's ClientHello hold, early packets.
    handshake: HandshakeState,
    /// Every deadline but the ACK ones (which the spaces keep).
    timers: TimerTable,
    idle: IdleTimeout,
    streams: Streams,
    /// The CONNECTION_CLOSE to send and why the connection ended.
    close: CloseState,
    events: VecDeque<ConnectionEvent>,
    endpoint_events: VecDeque<EndpointEvent>,
    sink: Option<Box<dyn EventSink>>,
    rng: DetRng,
    stats: ConnectionStats,
    key_update: KeyUpdate,
    /// The ack-frequency extension, receiver and sender (ACK policy, requests).
    ack_frequency: AckFrequencyState,
    /// DATAGRAM frame payloads received (RFC 9221), oldest first.
    received_datagrams: VecDeque<Vec<u8>>,
    /// 0-RTT keys, status and (server) packets waiting for their keys.
    zero_rtt: zero_rtt::ZeroRtt,
    /// Retry and NEW_TOKEN tokens (RFC 9000 §8.1).
    tokens: retry::TokenState,
    /// Server: the client's version after compatible version negotiation (RFC 9368).
    original_version: compatible::OriginalVersion,
    /// Buffers reused across calls.
    scratch: Scratch,
}

impl Connection {
    /// A client connection to `remote` for `server_name`. Sends its first Initial on
    /// the first `poll_transmit`. `seed` determines every random choice it makes.
    pub fn new_client(
        now: Instant,
        config: Arc<TransportConfig>,
        tls: Arc<rustls::ClientConfig>,
        server_name: &str,
        remote: SocketAddr,
        seed: u64,
    ) -> Result<Self, TransportError> {
        config.validate()?;
        let mut rng = DetRng::new(seed);
        let mut dcid_bytes = [0u8; 8];
        rng.fill(&mut dcid_bytes);
        let original_dcid = ConnectionId::new(&dcid_bytes).expect("8 bytes");
        let cids = CidState::new(
            &mut rng,
            config.connection_id_length as usize,
            original_dcid,
        );
        let version = config.versions.initial.wire();
        let mut local_params = Self::local_params(&config, version);
        local_params.version_information = version::client_information(&config, version);
        local_params.initial_source_connection_id = Some(cids.local_cid());
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
        #[cfg(any(test, feature = "testing"))]
        misbehave::tamper_transport_parameters(Side::Client, &mut tp);
        let tls_rng = rng.fork("tls");
        // RFC 9368 §2.3: offering other versions, it may have to follow an upgrade.
        let follow =
            (local_params.version_information.as_ref()).is_some_and(|v| v.available.len() > 1);
        let tls = TlsSession::client(tls, server_name, tp, version, follow, tls_rng, now)?;
        let mut conn = Self::new_common(
            now,
            Side::Client,
            config,
            remote,
            tls,
            cids,
            original_dcid,
            local_params,
            rng,
        );
        conn.install_initial_keys(original_dcid);
        conn.start_zero_rtt()?;
        conn.drive_tls(now)?;
        Ok(conn)
    }

    /// A server connection answering a client whose first Initial, of QUIC `version`
    /// (one the config supports), had destination `original_dcid` and source
    /// `client_scid`. The endpoint then feeds it that Initial.
    #[allow(clippy::too_many_arguments)]
    pub fn new_server(
        now: Instant,
        config: Arc<TransportConfig>,
        tls: Arc<rustls::ServerConfig>,
        remote: SocketAddr,
        original_dcid: ConnectionId,
        client_scid: ConnectionId,
        version: u32,
        seed: u64,
    ) -> Result<Self, TransportError> {
        let validation = ServerValidation::unvalidated(original_dcid);
        Self::new_server_validated(
            now,
            config,
            tls,
            remote,
            original_dcid,
            client_scid,
            version,
            seed,
            validation,
        )
    }

    /// [`Connection::new_server`] for an Initial sent to `client_dcid` (our Retry's
    /// SCID after a Retry), admitted as `validation` says (RFC 9000 §8.1).
    #[allow(clippy::too_many_arguments)]
    pub fn new_server_validated(
        now: Instant,
        config: Arc<TransportConfig>,
        tls: Arc<rustls::ServerConfig>,
        remote: SocketAddr,
        client_dcid: ConnectionId,
        client_scid: ConnectionId,
        version: u32,
        seed: u64,
        validation: ServerValidation,
    ) -> Result<Self, TransportError> {
        config.validate()?;
        if !config.versions.accepts(version) {
            return Err(TransportError::internal(format!(
                "version {version:#x} is not supported"
            )));
        }
        let mut rng = DetRng::new(seed);
        let mut cids = CidState::new(&mut rng, config.connection_id_length as usize, client_scid);
        cids.fix_peer_scid(client_scid); // RFC 9000 §7.2
        let mut local_params = Self::local_params(&config, version);
        local_params.initial_source_connection_id = Some(cids.local_cid());
        // RFC 9000 §7.3: the client's first DCID, and our Retry's SCID if we sent one.
        let original_dcid = validation.original_dcid;
        local_params.original_destination_connection_id = Some(original_dcid);
        local_params.retry_source_connection_id = validation.retry_scid;
        local_params.stateless_reset_token = Some(cids.local_reset_token());
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
        #[cfg(any(test, feature = "testing"))]
        misbehave::tamper_transport_parameters(Side::Server, &mut tp);
        let tls_rng = rng.fork("tls");
        let tls = TlsSession::server(tls, tp, version, tls_rng)?;
        let mut conn = Self::new_common(
            now,
            Side::Server,
            config,
            remote,
            tls,
            cids,
            original_dcid,
            local_params,
            rng,
        );
        // RFC 9001 §5.2: Initial keys come from the DCID the client uses now.
        conn.install_initial_keys(client_dcid);
        conn.path.validated = validation.validated;
        conn.tokens.retry_scid = validation.retry_scid;
        conn.tokens.new_token = new_token::NewTokenSend::new(validation.new_token);
        Ok(conn)
    }

    #[allow(clippy::too_many_arguments)]
    fn new_common(
        now: Instant,
        side: Side,
        config: Arc<TransportConfig>,
        remote: SocketAddr,
        tls: TlsSession,
        cids: CidState,
        original_dcid: ConnectionId,
        local_params: TransportParameters,
        rng: DetRng,
    ) -> Self {
        let version = tls.version();
        let f = &config.flow;
        let streams = Streams::new(
            side,
            StreamParams {
                max_streams_bidi: f.max_streams_bidi,
                max_streams_uni: f.max_streams_uni,
                stream_receive_window: f.initial_max_stream_data,
                receive_window: f.initial_max_data,
                autotune: f.autotune,
                max_stream_receive_window: f.max_stream_receive_window,
                max_receive_window: f.max_receive_window,
                send_buffer: f.send_buffer,
                notsent_lowat: f.notsent_lowat.unwrap_or(0),
            },
        );
        // Cloned, so that the other consumers' streams do not shift (results of
        // controllers without randomness stay as they were).
        let cc_seed = rng.clone().fork("congestion_control").next_u64();
        let cc = config
            .congestion_control
            .build_seeded(u64::from(config.max_udp_payload_size), cc_seed);
        let cc = crate::cc::with_careful_resume(
            cc,
            &config.careful_resume,
            u64::from(config.max_udp_payload_size),
        );
        let mut timers = TimerTable::default();
        let idle = IdleTimeout::new(now, config.idle_timeout_ms, &mut timers);
        if config.handshake_timeout_ms > 0 {
            let limit = std::time::Duration::from_millis(config.handshake_timeout_ms);
            timers.set(Timer::Handshake, now + limit);
        }
        Connection {
            side,
            versions: version::VersionState::new(version),
            state: State::Handshake,
            path: PathData::new(&config, side, remote, cc),
            tls,
            spaces: [PacketSpace::new(), PacketSpace::new(), PacketSpace::new()],
            cids,
            original_dcid,
            local_params,
            peer_params: None,
            handshake: HandshakeState::new(side == Side::Server, &config.handshake),
            timers,
            idle,
            streams,
            close: CloseState::default(),
            events: VecDeque::new(),
            endpoint_events: VecDeque::new(),
            sink: None,
            rng,
            stats: ConnectionStats::default(),
            scratch: Scratch::default(),
            key_update: KeyUpdate::default(),
            ack_frequency: AckFrequencyState::new(AckPolicy {
                ack_eliciting_threshold: config.ack.ack_eliciting_threshold,
                max_ack_delay: config.max_ack_delay(),
                reordering_threshold: config.ack.reordering_threshold,
            }),
            received_datagrams: VecDeque::new(),
            zero_rtt: zero_rtt::ZeroRtt::default(),
            tokens: retry::TokenState::default(),
            original_version: compatible::OriginalVersion::default(),
            config,
        }
    }

    fn local_params(config: &TransportConfig, version: u32) -> TransportParameters {
        let f = &config.flow;
        TransportParameters {
            version_information: version::local_information(config, version),
            max_idle_timeout: config.idle_timeout_ms,
            max_udp_payload_size: u64::from(
                config
                    .pmtud_max_udp_payload_size
                    .filter(|&m| m > 0)
                    .unwrap_or(config.max_udp_payload_size),
            ),
            initial_max_data: f.initial_max_data,
            initial_max_stream_data_bidi_local: f.initial_max_stream_data,
            initial_max_stream_data_bidi_remote: f.initial_max_stream_data,
            initial_max_stream_data_uni: f.initial_max_stream_data,
            initial_max_streams_bidi: f.max_streams_bidi,
            initial_max_streams_uni: f.max_streams_uni,
            ack_delay_exponent: u64::from(config.ack.ack_delay_exponent),
            max_ack_delay: config.ack.max_ack_delay_ms,
            active_connection_id_limit: config.active_connection_id_limit,
            max_datagram_frame_size: config.max_datagram_frame_size,
            min_ack_delay: config.min_ack_delay_us,
            ..TransportParameters::default()
        }
    }

    /// Attaches an event sink (qlog writer, metric collector). Events before this call
    /// are not replayed, so attach it right after creation.
    pub fn set_event_sink(&mut self, now: Instant, sink: Box<dyn EventSink>) {
        self.sink = Some(sink);
        let ev = Event::ConnectionStarted {
            side: self.side,
            version: self.versions.current,
            local_cid: self.cids.local_cid(),
            remote_cid: self.cids.remote_cid(),
        };
        self.emit(now, ev);
        let params = Box::new(self.local_params.clone());
        self.emit(
            now,
            Event::ParametersSet {
                owner: Owner::Local,
                params,
                alpn: None,
                tls_cipher: None,
                resumption: Default::default(),
            },
        );
    }

    /// Takes the event sink back (for example to flush a qlog file).
    pub fn take_event_sink(&mut self) -> Option<Box<dyn EventSink>> {
        self.sink.take()
    }

    fn emit(&mut self, now: Instant, event: Event) {
        if let Some(s) = self.sink.as_mut() {
            s.event(now, &event);
        }
    }

    /// Whether an event sink is attached (so callers can skip building events).
    fn logging(&self) -> bool {
        self.sink.is_some()
    }

    fn set_state_event(&mut self, now: Instant, new: ConnectionState) {
        if self.logging() {
            self.emit(now, Event::ConnectionStateUpdated { new });
        }
    }

    pub fn side(&self) -> Side {
        self.side
    }
    pub fn remote_address(&self) -> SocketAddr {
        self.path.remote
    }
    /// The client's original Destination Connection ID (for logs and qlog group IDs).
    pub fn original_dcid(&self) -> ConnectionId {
        self.original_dcid
    }
    /// The connection ID we currently put in packets we send.
    pub fn local_cid(&self) -> ConnectionId {
        self.cids.local_cid()
    }
    pub fn is_handshake_complete(&self) -> bool {
        self.handshake.complete
    }
    pub fn is_handshake_confirmed(&self) -> bool {
        self.handshake.confirmed
    }
    /// True once CONNECTION_CLOSE was sent or received (or the idle timer fired).
    pub fn is_closed(&self) -> bool {
        !matches!(self.state, State::Handshake | State::Established)
    }
    /// True when the connection's state can be dropped.
    pub fn is_drained(&self) -> bool {
        self.state == State::Drained
    }
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.close.reason.as_ref()
    }
    pub fn stats(&self) -> &ConnectionStats {
        &self.stats
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.path.recovery.rtt
    }
    pub fn congestion_window(&self) -> u64 {
        self.path.recovery.cc.window()
    }
    pub fn congestion_controller(&self) -> &dyn CongestionController {
        &*self.path.recovery.cc
    }
    /// Bytes in flight over all packet number spaces.
    pub fn bytes_in_flight(&self) -> u64 {
        self.path.recovery.bytes_in_flight()
    }
    /// The peer's transport parameters, once received.
    pub fn peer_params(&self) -> Option<&TransportParameters> {
        self.peer_params.as_deref()
    }
    /// The QUIC version in use (after any Version Negotiation or compatible upgrade).
    pub fn version(&self) -> u32 {
        self.versions.current
    }
    /// The negotiated TLS cipher suite, once chosen.
    pub fn cipher_suite(&self) -> Option<rustls::CipherSuite> {
        self.tls.cipher_suite().map(|s| s.suite())
    }
    /// The negotiated ALPN protocol.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.tls.alpn()
    }

    // ----- application API -----

    /// Opens a stream; `None` when the peer's stream limit is reached.
    pub fn open_stream(&mut self, dir: Dir) -> Option<StreamId> {
        if !self.handshake.complete && self.side == Side::Server {
            return None;
        }
        self.streams.open(dir)
    }
    /// The next stream the peer opened.
    pub fn accept_stream(&mut self, dir: Dir) -> Option<StreamId> {
        self.streams.accept(dir)
    }
    /// Buffers data for a stream; returns how much was taken.
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, StreamError> {
        self.write_from(id, SendData::Copied(data))
    }
    /// [`Self::write`] without a copy: the stream keeps a reference to `data` until it
    /// is acknowledged (for generated bodies; the simulator's bulk senders).
    pub fn write_static(
        &mut self,
        id: StreamId,
        data: &'static [u8],
    ) -> Result<usize, StreamError> {
        self.write_from(id, SendData::Static(data))
    }
    /// [`Self::write`] of data copied or kept by reference, as `data` says.
    pub fn write_from(&mut self, id: StreamId, data: SendData) -> Result<usize, StreamError> {
        if self.is_closed() {
            return Err(StreamError::Closed);
        }
        self.streams.write_from(id, data)
    }
    pub fn finish(&mut self, id: StreamId) -> Result<(), StreamError> {
        self.streams.finish(id)
    }
    pub fn reset_stream(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        self.streams.reset(id, error_code)
    }
    pub fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        self.streams.stop_sending(id, error_code)
    }
    pub fn read(&mut self, id: StreamId, buf: &mut [u8]) -> Result<ReadOutcome, StreamError> {
        self.streams.read(id, buf)
    }

    /// Closes the connection with an application error code (CONNECTION_CLOSE 0x1d).
    pub fn close(&mut self, now: Instant, code: u64, reason: &str) {
        let reason = CloseReason::Application {
            owner: Owner::Local,
            code,
            reason: reason.to_string(),
        };
        self.start_closing(now, reason);
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ConnectionEvent> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        self.streams.poll_event().map(ConnectionEvent::Stream)
    }

    /// The next DATAGRAM frame payload received (RFC 9221).
    pub fn recv_datagram(&mut self) -> Option<Vec<u8>> {
        self.received_datagrams.pop_front()
    }

    /// The next event for the endpoint.
    pub fn poll_endpoint_event(&mut self) -> Option<EndpointEvent> {
        self.endpoint_events.pop_front()
    }

    // ----- time -----

    /// The earliest time [`Connection::handle_timeout`] must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.state {
            State::Closing | State::Draining => return self.timers.get(Timer::Close),
            State::Drained => return None,
            _ => {}
        }
        let ack = self
            .spaces
            .iter()
            .zip(Space::ALL)
            .filter(|(s, id)| s.can_send() && !self.initial_ack_held(*id))
            .filter_map(|(s, _)| s.acks.ack_deadline())
            .min();
        [self.timers.next_timeout(), ack]
            .into_iter()
            .flatten()
            .min()
    }

    /// The driver read an ICMP port unreachable for a datagram sent to this
    /// connection's peer. A client that has received nothing from the peer yet ends at
    /// once ([`CloseReason::PortUnreachable`]) instead of retrying until a timeout.
    /// Otherwise the message is ignored: ICMP is unauthenticated and can be forged
    /// (RFC 9000 §21.2: an established connection accepts almost nothing
    /// unauthenticated), and a server does not act on it. Returns whether it ended.
    pub fn handle_port_unreachable(&mut self, now: Instant) -> bool {
        let untouched = self.side == Side::Client
            && self.state == State::Handshake
            && self.stats.datagrams_received.packets == 0;
        if untouched {
            self.end_silently(now, CloseReason::PortUnreachable);
        }
        untouched
    }

    /// Fires every timer whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.state {
            State::Closing | State::Draining => {
                if self.timers.is_expired(Timer::Close, now) {
                    self.state = State::Drained;
                    self.set_state_event(now, ConnectionState::Closed);
                    self.endpoint_events.push_back(EndpointEvent::Drained);
                }
                return;
            }
            State::Drained => return,
            _ => {}
        }
        if self.timers.is_expired(Timer::Idle, now) {
            self.stats.idle_timeout = true;
            self.end_silently(now, CloseReason::IdleTimeout);
            return;
        }
        if self.timers.is_expired(Timer::Handshake, now) {
            self.end_silently(now, CloseReason::HandshakeTimeout);
            return;
        }
        if let Err(e) = self.release_handshake_hold(now) {
            self.fail(now, e);
            return;
        }
        if self.timers.is_expired(Timer::LossDetection, now) {
            self.on_loss_detection_timeout(now);
        }
        if self.timers.is_expired(Timer::Pacing, now) {
            // The pacer lets data go again; poll_transmit decides what.
            self.timers.stop(Timer::Pacing);
        }
        // ACK deadlines are served by poll_transmit.
    }
}
