//! Creating a connection: the client's and the server's constructors and the transport
//! parameters we send (RFC 9000 §7.4, §18).

use super::ack_frequency_state::AckFrequencyState;
use super::cids::CidState;
use super::ecn_state::EcnPath;
use super::handshake_state::HandshakeState;
use super::key_update_state::KeyUpdate;
use super::lifecycle::Lifecycle;
use super::migration_state::MigrationState;
use super::multipath_sched_state::StreamScheduling;
use super::multipath_state::MultipathState;
use super::outbox::Outbox;
use super::params::TransportParams;
use super::path::PathData;
use super::path_cids::PathCids;
use super::scratch::Scratch;
use super::spaces::PacketSpace;
use super::stats::ConnectionStats;
use super::timers::{Timer, TimerTable};
use super::tokens::NewTokenSend;
use super::tokens::{ServerValidation, TokenState};
use super::version_state::VersionState;
use super::version_state::{client_information, local_information};
use super::zero_rtt_state::ZeroRtt;
use super::Connection;
use crate::ack::AckPolicy;
use crate::config::TransportConfig;
use crate::crypto::tls::TlsSession;
use crate::error::TransportError;
use crate::rng::DetRng;
use crate::streams::StreamParams;
use crate::streams::Streams;
use crate::time::Instant;
use crate::wire::{ConnectionId, Side, TransportParameters};
use std::net::SocketAddr;
use std::sync::Arc;
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
        )
        .with_reset_key(config.stateless_reset_key.clone());
        let version = config.versions.initial.wire();
        let mut local_params = Self::local_params(&config, version);
        local_params.version_information = client_information(&config, version);
        local_params.initial_source_connection_id = Some(cids.local_cid());
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
        #[cfg(any(test, feature = "testing"))]
        super::tamper::tamper_transport_parameters(Side::Client, &mut tp);
        let tls_rng = rng.fork("tls");
        // RFC 9368 §2.3: offering other versions, it may have to follow an upgrade.
        let follow =
            (local_params.version_information.as_ref()).is_some_and(|v| v.available.len() > 1);
        let tls = TlsSession::client(tls, server_name, tp, version, follow, tls_rng, now)?
            .with_packet_protection(config.packet_protection);
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
        let mut cids = CidState::new(&mut rng, config.connection_id_length as usize, client_scid)
            .with_reset_key(config.stateless_reset_key.clone());
        cids.fix_peer_scid(client_scid); // RFC 9000 §7.2
        let mut local_params = Self::local_params(&config, version);
        local_params.initial_source_connection_id = Some(cids.local_cid());
        // RFC 9000 §7.3: the client's first DCID, and our Retry's SCID if we sent one.
        let original_dcid = validation.original_dcid;
        local_params.original_destination_connection_id = Some(original_dcid);
        local_params.retry_source_connection_id = validation.retry_scid;
        local_params.stateless_reset_token = Some(cids.local_reset_token());
        // RFC 9000 §9.6, §18.2: the preferred address and its ID of sequence 1.
        local_params.preferred_address = (config.preferred_address.as_ref())
            .map(|pa| super::preferred_address::announce(pa, &mut cids, &mut rng));
        let mut tp = Vec::new();
        local_params.encode(&mut tp);
        #[cfg(any(test, feature = "testing"))]
        super::tamper::tamper_transport_parameters(Side::Server, &mut tp);
        let tls_rng = rng.fork("tls");
        let tls = TlsSession::server(tls, tp, version, tls_rng)?
            .with_packet_protection(config.packet_protection);
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
        conn.tokens.new_token = NewTokenSend::new(validation.new_token);
        if let Some(p) = &conn.params.local.preferred_address {
            // The endpoint routes packets carrying it (to the preferred address).
            let cid = p.connection_id;
            conn.outbox
                .push_endpoint_event(super::outbox::EndpointEvent::NewConnectionId(cid));
        }
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
            .path_congestion_control()
            .build_seeded(u64::from(config.max_udp_payload_size), cc_seed);
        let cc = crate::cc::with_careful_resume(
            cc,
            &config.careful_resume,
            u64::from(config.max_udp_payload_size),
        );
        let mut timers = TimerTable::new(now, config.idle_timeout_ms);
        if config.handshake_timeout_ms > 0 {
            let limit = std::time::Duration::from_millis(config.handshake_timeout_ms);
            timers.set(Timer::Handshake, now + limit);
        }
        Connection {
            side,
            versions: VersionState::new(version),
            path: PathData::new(&config, side, remote, cc),
            migration: MigrationState::default(),
            tls,
            spaces: [PacketSpace::new(), PacketSpace::new(), PacketSpace::new()],
            cids,
            params: TransportParams::new(original_dcid, local_params),
            handshake: HandshakeState::new(side == Side::Server, &config.handshake),
            timers,
            streams,
            lifecycle: Lifecycle::default(),
            rng,
            stats: ConnectionStats::default(),
            scratch: Scratch::default(),
            key_update: KeyUpdate::default(),
            ack_frequency: AckFrequencyState::new(AckPolicy {
                ack_eliciting_threshold: config.ack.ack_eliciting_threshold,
                max_ack_delay: config.max_ack_delay(),
                reordering_threshold: config.ack.reordering_threshold,
            }),
            outbox: Outbox::default(),
            datagram_queue: Default::default(),
            zero_rtt: ZeroRtt::default(),
            tokens: TokenState::default(),
            ecn: EcnPath::new(config.ecn),
            multipath: MultipathState::default(),
            path_cids: PathCids::default(),
            path_spaces: Default::default(),
            sched: StreamScheduling::new(config.multipath.scheduler),
            config,
        }
    }

    fn local_params(config: &TransportConfig, version: u32) -> TransportParameters {
        let f = &config.flow;
        TransportParameters {
            version_information: local_information(config, version),
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
            // draft-ietf-quic-multipath §2.1.
            initial_max_path_id: config.multipath.initial_max_path_id(),
            // RFC 9000 §18.2.
            disable_active_migration: config.disable_active_migration,
            ..TransportParameters::default()
        }
    }
}
