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
//!    datagram; drain [`Connection::poll_event`] and [`Connection::poll_endpoint_event`];
//! 3. ask [`Connection::poll_timeout`] for the next deadline and sleep until it or the
//!    next datagram. Application calls (stream reads and writes, `close`) may happen
//!    at any time; follow them with step 2.
//!
//! `now` must never go backwards. Every entry point takes it; nothing reads a clock.

mod ack_frequency;
mod cids;
mod crypto_stream;
mod handshake;
mod key_update;
mod loss;
mod recv;
mod send;
mod spaces;
mod stats;
mod version;

pub(crate) use recv::Parsed;
pub use send::MIN_INITIAL_DATAGRAM;
pub use spaces::SpaceId;
pub use stats::ConnectionStats;

use crate::ack::AckPolicy;
use crate::cc::CongestionController;
use crate::config::TransportConfig;
use crate::crypto::tls::TlsSession;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{ConnectionState, Event, EventSink, Owner};
use crate::recovery::{DeliveryRateEstimator, Pacer, RttEstimator, SpuriousLossDetector};
use crate::rng::DetRng;
use crate::streams::{ReadOutcome, StreamError, StreamEvent, StreamParams, Streams};
use crate::time::Instant;
use crate::wire::{ConnectionId, Dir, Side, StreamId, TransportParameters};
use cids::CidState;
use key_update::KeyUpdate;
use spaces::PacketSpace;
use spaces::SpaceId as Space;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// DATAGRAM frame payloads kept for the application before the oldest is dropped
/// (RFC 9221 §5: a receiver may drop what it cannot process). At the largest frame
/// size this bounds the queue to about 64 MB per connection; `recv_datagram` drains it.
pub const MAX_QUEUED_DATAGRAMS: usize = 1024;
/// PATH_CHALLENGE data waiting to be echoed; a peer flooding challenges gets answers
/// to the newest ones only (RFC 9000 §8.2.2: it sends more challenges as needed).
pub(crate) const MAX_PENDING_PATH_RESPONSES: usize = 16;

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
}

/// What the endpoint must learn from a connection: connection IDs to route or forget,
/// and when the connection's state can be dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointEvent {
    NewConnectionId(ConnectionId),
    RetireConnectionId(ConnectionId),
    /// The connection is closed and drained: remove it.
    Drained,
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
    /// We sent CONNECTION_CLOSE; we answer packets with it until the deadline.
    Closing {
        until: Instant,
    },
    /// The peer closed; we send nothing until the deadline.
    Draining {
        until: Instant,
    },
    Drained,
}

/// A QUIC connection. See the module docs for the call contract.
pub struct Connection {
    side: Side,
    config: Arc<TransportConfig>,
    /// The QUIC version of our long headers (RFC 9000 §15, RFC 9369).
    version: u32,
    /// Version Negotiation seen and its outcome (client).
    versions: version::VersionState,
    state: State,
    remote: SocketAddr,
    tls: TlsSession,
    spaces: [PacketSpace; 3],
    cids: CidState,
    /// Client: the DCID of its first Initial. Server: the client's original DCID.
    original_dcid: ConnectionId,
    local_params: TransportParameters,
    peer_params: Option<TransportParameters>,
    handshake_complete: bool,
    handshake_confirmed: bool,
    handshake_done_pending: bool,
    /// Client: a packet from the server was processed (its SCID is now our DCID).
    received_server_packet: bool,
    /// Server: the client's address is validated (RFC 9000 §8.1).
    address_validated: bool,
    /// Client: the server acknowledged a Handshake packet (RFC 9002 A.8).
    peer_validated_address: bool,
    /// Bytes received/sent before address validation, for the 3x limit.
    amplification_received: u64,
    amplification_sent: u64,
    rtt: RttEstimator,
    cc: Box<dyn CongestionController>,
    pto_count: u32,
    /// RFC 9002 §6.2.3: early CRYPTO retransmissions done, and when the last one was.
    early_crypto_retransmits: u32,
    last_early_crypto_retransmit: Option<Instant>,
    loss_timer: Option<Instant>,
    first_rtt_sample_time: Option<Instant>,
    /// The sender ran out of data with room left in the window (RFC 9002 §7.8).
    app_limited: bool,
    /// Delivery-rate sampling for the controller (draft-ietf-ccwg-bbr §4.1).
    delivery: DeliveryRateEstimator,
    /// Lost 1-RTT packets acknowledged later (RFC 9438 §4.9.2), for controllers' undo.
    spurious: SpuriousLossDetector,
    pacer: Pacer,
    /// Data is waiting for the pacer until this time.
    pacing_deadline: Option<Instant>,
    idle_timeout: Option<Duration>,
    idle_deadline: Option<Instant>,
    /// Restart the idle timer on the next ack-eliciting send (RFC 9000 §10.1).
    idle_restart_on_send: bool,
    streams: Streams,
    /// A CONNECTION_CLOSE to send (set when we close; re-armed while closing).
    close_frame: Option<CloseReason>,
    close_pending: bool,
    closed_reason: Option<CloseReason>,
    events: VecDeque<ConnectionEvent>,
    endpoint_events: VecDeque<EndpointEvent>,
    sink: Option<Box<dyn EventSink>>,
    rng: DetRng,
    stats: ConnectionStats,
    /// The space TLS currently writes handshake data in.
    tls_write_space: Space,
    key_update: KeyUpdate,
    /// ACK policy for the application data space (RFC 9000 §13.2, ACK_FREQUENCY).
    ack_policy: AckPolicy,
    /// Sequence number of the last ACK_FREQUENCY frame applied.
    ack_frequency_seq: Option<u64>,
    /// Ack-eliciting 1-RTT packets received (for the `ack.schedule` switch).
    data_eliciting_received: u64,
    /// Our ACK_FREQUENCY requests (config `ack_frequency`).
    ack_freq: ack_frequency::AckFrequencySender,
    /// Server: the ClientHello is held from TLS until then (certificate and signing
    /// delays, `config.handshake`).
    hold_until: Option<Instant>,
    /// Server: the hold decision was taken (on the first Initial CRYPTO frame).
    hold_started: bool,
    /// Server: a PING goes with the instant ACK.
    iack_ping_pending: bool,
    /// Server: the instant ACK was sent (the hold ends only after it).
    iack_sent: bool,
    /// Server: 1-RTT packets that arrived before the handshake completed.
    early_one_rtt: Vec<(recv::Parsed, Vec<u8>)>,
    /// PATH_CHALLENGE data to echo.
    path_responses: Vec<[u8; 8]>,
    /// DATAGRAM frame payloads received (RFC 9221), oldest first.
    received_datagrams: VecDeque<Vec<u8>>,
    /// Scratch buffers reused across calls.
    scratch: Vec<u8>,
    stream_records: Vec<crate::streams::StreamFrameRecord>,
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
        local_params.initial_source_connection_id = Some(cids.local_cid());
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
        let tls_rng = rng.fork("tls");
        let tls = TlsSession::client(tls, server_name, tp, version, tls_rng)?;
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
        config.validate()?;
        if !config.versions.accepts(version) {
            return Err(TransportError::internal(format!(
                "version {version:#x} is not supported"
            )));
        }
        let mut rng = DetRng::new(seed);
        let cids = CidState::new(&mut rng, config.connection_id_length as usize, client_scid);
        let mut local_params = Self::local_params(&config, version);
        local_params.initial_source_connection_id = Some(cids.local_cid());
        local_params.original_destination_connection_id = Some(original_dcid);
        local_params.stateless_reset_token = Some(cids.local_reset_token());
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
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
        conn.install_initial_keys(original_dcid);
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
        let idle_timeout =
            (config.idle_timeout_ms > 0).then(|| Duration::from_millis(config.idle_timeout_ms));
        Connection {
            side,
            version,
            versions: version::VersionState::default(),
            state: State::Handshake,
            remote,
            tls,
            spaces: [PacketSpace::new(), PacketSpace::new(), PacketSpace::new()],
            cids,
            original_dcid,
            local_params,
            peer_params: None,
            handshake_complete: false,
            handshake_confirmed: false,
            handshake_done_pending: false,
            received_server_packet: false,
            address_validated: side == Side::Client,
            peer_validated_address: side == Side::Server,
            amplification_received: 0,
            amplification_sent: 0,
            rtt: RttEstimator::new(config.initial_rtt()),
            cc,
            pto_count: 0,
            early_crypto_retransmits: 0,
            last_early_crypto_retransmit: None,
            loss_timer: None,
            first_rtt_sample_time: None,
            app_limited: false,
            delivery: DeliveryRateEstimator::new(),
            spurious: SpuriousLossDetector::new(),
            pacer: Pacer::new(u64::from(config.max_udp_payload_size)),
            pacing_deadline: None,
            idle_timeout,
            idle_deadline: idle_timeout.map(|d| now + d),
            idle_restart_on_send: false,
            streams,
            close_frame: None,
            close_pending: false,
            closed_reason: None,
            events: VecDeque::new(),
            endpoint_events: VecDeque::new(),
            sink: None,
            rng,
            stats: ConnectionStats::default(),
            scratch: Vec::new(),
            stream_records: Vec::new(),
            tls_write_space: Space::Initial,
            key_update: KeyUpdate::default(),
            ack_policy: AckPolicy {
                ack_eliciting_threshold: config.ack.ack_eliciting_threshold,
                max_ack_delay: config.max_ack_delay(),
                reordering_threshold: config.ack.reordering_threshold,
            },
            ack_frequency_seq: None,
            data_eliciting_received: 0,
            ack_freq: ack_frequency::AckFrequencySender::default(),
            path_responses: Vec::new(),
            early_one_rtt: Vec::new(),
            hold_until: None,
            hold_started: false,
            iack_ping_pending: false,
            iack_sent: false,
            received_datagrams: VecDeque::new(),
            config,
        }
    }

    fn local_params(config: &TransportConfig, version: u32) -> TransportParameters {
        let f = &config.flow;
        TransportParameters {
            version_information: version::local_information(config, version),
            max_idle_timeout: config.idle_timeout_ms,
            max_udp_payload_size: u64::from(config.max_udp_payload_size),
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
            version: self.version,
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
        self.remote
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
        self.handshake_complete
    }
    pub fn is_handshake_confirmed(&self) -> bool {
        self.handshake_confirmed
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
        self.closed_reason.as_ref()
    }
    pub fn stats(&self) -> &ConnectionStats {
        &self.stats
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn congestion_window(&self) -> u64 {
        self.cc.window()
    }
    pub fn congestion_controller(&self) -> &dyn CongestionController {
        &*self.cc
    }
    /// Bytes in flight over all packet number spaces.
    pub fn bytes_in_flight(&self) -> u64 {
        self.spaces.iter().map(|s| s.sent.bytes_in_flight()).sum()
    }
    /// The peer's transport parameters, once received.
    pub fn peer_params(&self) -> Option<&TransportParameters> {
        self.peer_params.as_ref()
    }
    /// The QUIC version in use (after any Version Negotiation).
    pub fn version(&self) -> u32 {
        self.version
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
        if !self.handshake_complete && self.side == Side::Server {
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
        if self.is_closed() {
            return Err(StreamError::Closed);
        }
        self.streams.write(id, data)
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
            State::Closing { until } | State::Draining { until } => return Some(until),
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
        [
            self.hold_until,
            self.loss_timer,
            self.idle_deadline,
            ack,
            self.pacing_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires every timer whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.state {
            State::Closing { until } | State::Draining { until } => {
                if now >= until {
                    self.state = State::Drained;
                    self.set_state_event(now, ConnectionState::Closed);
                    self.endpoint_events.push_back(EndpointEvent::Drained);
                }
                return;
            }
            State::Drained => return,
            _ => {}
        }
        if self.idle_deadline.is_some_and(|t| now >= t) {
            self.stats.idle_timeout = true;
            self.closed_reason = Some(CloseReason::IdleTimeout);
            self.events
                .push_back(ConnectionEvent::Closed(CloseReason::IdleTimeout));
            self.state = State::Drained;
            self.set_state_event(now, ConnectionState::Closed);
            self.endpoint_events.push_back(EndpointEvent::Drained);
            return;
        }
        if let Err(e) = self.release_handshake_hold(now) {
            self.fail(now, e);
            return;
        }
        if self.loss_timer.is_some_and(|t| now >= t) {
            self.on_loss_detection_timeout(now);
        }
        if self.pacing_deadline.is_some_and(|t| now >= t) {
            // The pacer lets data go again; poll_transmit decides what.
            self.pacing_deadline = None;
        }
        // ACK deadlines are served by poll_transmit.
    }

    // ----- closing -----

    /// Enters the closing state (RFC 9000 §10.2.1) and queues CONNECTION_CLOSE.
    fn start_closing(&mut self, now: Instant, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let (code, application, text) = close_fields(&reason);
        self.emit_closed(now, Owner::Local, code, application, text);
        self.closed_reason = Some(reason.clone());
        self.events
            .push_back(ConnectionEvent::Closed(reason.clone()));
        self.close_frame = Some(reason);
        self.close_pending = true;
        self.state = State::Closing {
            until: now + self.close_period(),
        };
        self.set_state_event(now, ConnectionState::Closing);
    }

    /// The peer closed: enter draining (RFC 9000 §10.2.2).
    fn start_draining(&mut self, now: Instant, reason: CloseReason) {
        if matches!(self.state, State::Draining { .. } | State::Drained) {
            return;
        }
        if !self.is_closed() {
            let (code, application, text) = close_fields(&reason);
            self.emit_closed(now, Owner::Remote, code, application, text);
            self.closed_reason = Some(reason.clone());
            self.events.push_back(ConnectionEvent::Closed(reason));
        }
        self.close_pending = false;
        self.state = State::Draining {
            until: now + self.close_period(),
        };
        self.set_state_event(now, ConnectionState::Draining);
    }

    fn emit_closed(
        &mut self,
        now: Instant,
        owner: Owner,
        code: u64,
        application: bool,
        reason: String,
    ) {
        if self.logging() {
            let code = TransportErrorCode(code);
            self.emit(
                now,
                Event::ConnectionClosed {
                    owner,
                    code,
                    application,
                    reason,
                },
            );
        }
    }

    /// Three times the current PTO (RFC 9000 §10.2).
    fn close_period(&self) -> Duration {
        3 * (self.rtt.pto_base() + self.config.max_ack_delay())
    }

    /// A peer violation: close with its error code.
    fn fail(&mut self, now: Instant, error: TransportError) {
        self.stats.local_error = Some(error.code);
        self.start_closing(
            now,
            CloseReason::Transport {
                owner: Owner::Local,
                error,
            },
        );
    }
}

/// (code, is_application, reason) of a close reason, for logs.
fn close_fields(r: &CloseReason) -> (u64, bool, String) {
    match r {
        CloseReason::Transport { error, .. } => (error.code.0, false, error.reason.clone()),
        CloseReason::Application { code, reason, .. } => (*code, true, reason.clone()),
        CloseReason::IdleTimeout => (0, false, "idle timeout".to_string()),
    }
}
