//! Every transport knob as data: serde structs with documented defaults, so a TOML
//! scenario can set any of them and a result records exactly what produced it.
//! Unknown keys are errors (`deny_unknown_fields`); absent keys take the defaults below.

mod datagram;
mod multipath;
mod preferred;
mod security;

pub use datagram::DatagramSendConfig;
pub use multipath::{AckPath, CoupledCongestionControl, MultipathConfig, MultipathScheduler};
pub use preferred::PreferredAddressConfig;
pub use security::{
    compatible_versions, AdmissionConfig, KeyUpdateConfig, PacketProtection, QuicVersion,
    RetryMode, VersionConfig,
};

use crate::cc::{CarefulResumeConfig, CongestionControl, HystartConfig};
use crate::ecn::EcnMode;
use crate::error::TransportError;
use crate::reset_key::StatelessResetKey;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The RFC 9000 §14 minimum and quiclab's default maximum UDP payload.
pub const UDP_PAYLOAD_DEFAULT: u16 = 1200;
/// The SIGCOMM '17 QUIC paper's packet size.
pub const UDP_PAYLOAD_SIGCOMM: u16 = 1350;
/// An Ethernet path with a 1500-byte MTU under IPv4/UDP less PPPoE/tunnel headroom.
pub const UDP_PAYLOAD_1452: u16 = 1452;

/// Receive-side acknowledgement policy (RFC 9000 §13.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AckConfig {
    /// ACK after this many ack-eliciting packets (default 2, RFC 9000 §13.2.2).
    pub ack_eliciting_threshold: u64,
    /// Our max_ack_delay transport parameter, ms (default 25).
    pub max_ack_delay_ms: u64,
    /// Our ack_delay_exponent transport parameter (default 3).
    pub ack_delay_exponent: u8,
    /// Immediate ACK when a gap appears at least this far below the largest received
    /// (default 1: RFC 9000 §13.2.1; 0 disables immediate ACKs on reordering).
    pub reordering_threshold: u64,
    /// At most this many ACK ranges per ACK frame (default 32).
    pub max_ack_ranges: usize,
    /// Receiver-side ratio schedule (draft-fairhurst-quic-ack-scaling): ACK every
    /// `ack_eliciting_threshold` packets at first, every `schedule.threshold` later.
    /// `None` (default): no switch. An ACK_FREQUENCY frame from the peer overrides it.
    pub schedule: Option<AckSchedule>,
}

/// A one-step ACK ratio schedule: once `after_packets` ack-eliciting packets arrived in
/// the application data space, ACK every `threshold` ack-eliciting packets (packet
/// `after_packets + 1` is the first one counted under the new ratio). Lets a receiver
/// ACK often while the sender's window grows and rarely afterwards (1:2 then 1:10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckSchedule {
    pub after_packets: u64,
    /// ACK after this many ack-eliciting packets (>= 1), as `ack_eliciting_threshold`.
    pub threshold: u64,
}

impl Default for AckConfig {
    fn default() -> Self {
        AckConfig {
            ack_eliciting_threshold: 2,
            max_ack_delay_ms: 25,
            ack_delay_exponent: 3,
            reordering_threshold: 1,
            max_ack_ranges: 32,
            schedule: None,
        }
    }
}

/// What a data sender asks of its peer with ACK_FREQUENCY (draft-ietf-quic-ack-frequency
/// §4). Each kind may set `max_ack_delay_ms` (the Requested Max Ack Delay, ms, float);
/// see [`AckFrequencyPolicy::requested_max_ack_delay_ms`] for the default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AckFrequencyPolicy {
    /// Never send ACK_FREQUENCY (default).
    #[default]
    Off,
    /// Once the handshake is confirmed, request one ACK per `ratio` ack-eliciting
    /// packets (wire Ack-Eliciting Threshold = ratio - 1).
    Fixed {
        ratio: u64,
        max_ack_delay_ms: Option<f64>,
    },
    /// The peer's default ACKing until our congestion controller first leaves slow
    /// start, then one ACK per `ratio` (1:2 while cwnd grows, 1:ratio afterwards).
    /// A controller without slow start (`algorithm = "none"`) requests at once.
    AfterSlowStart {
        ratio: u64,
        max_ack_delay_ms: Option<f64>,
    },
    /// ack-frequency §8.1: about `acks_per_window` ACKs per congestion window, i.e.
    /// ratio = clamp(cwnd_packets / acks_per_window, 2, max_ratio), never above the
    /// full-size packets that fit in cwnd; updated when the ratio changes, at most once
    /// per smoothed RTT. Requested Max Ack Delay: min(`max_ack_delay_ms` or the peer's
    /// max_ack_delay, smoothed RTT).
    Cwnd {
        acks_per_window: u64,
        max_ratio: u64,
        max_ack_delay_ms: Option<f64>,
    },
}

impl AckFrequencyPolicy {
    /// The configured Requested Max Ack Delay, ms. `None`: request the max_ack_delay
    /// the peer advertised (so only the threshold changes; `cwnd` still caps it at the
    /// smoothed RTT). Whatever is requested is raised to the peer's min_ack_delay.
    pub fn requested_max_ack_delay_ms(&self) -> Option<f64> {
        match self {
            AckFrequencyPolicy::Off => None,
            AckFrequencyPolicy::Fixed {
                max_ack_delay_ms, ..
            }
            | AckFrequencyPolicy::AfterSlowStart {
                max_ack_delay_ms, ..
            }
            | AckFrequencyPolicy::Cwnd {
                max_ack_delay_ms, ..
            } => *max_ack_delay_ms,
        }
    }
}

/// Sender side of the ack-frequency extension. Active only when both sides offered it:
/// our `min_ack_delay_us` is set and the peer sent min_ack_delay; otherwise nothing is
/// sent (see `Connection::ack_frequency_active`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AckFrequencyConfig {
    /// When to send ACK_FREQUENCY (default `{ kind = "off" }`).
    pub policy: AckFrequencyPolicy,
    /// The INET paper's I-bit (seed 002 §V.D) as an IMMEDIATE_ACK frame: put one in the
    /// ack-eliciting 1-RTT packet that leaves bytes in flight at or above the congestion
    /// window (the last packet before the sender is cwnd-blocked), so the receiver does
    /// not sit on a partial ACK ratio for max_ack_delay. Default false.
    pub immediate_ack_when_blocked: bool,
    /// Reordering Threshold sent in ACK_FREQUENCY (default 1, RFC 9000 behaviour;
    /// ack-frequency §9 suggests the loss packet threshold, 3; 0 = never ACK early).
    pub reordering_threshold: u64,
}

impl Default for AckFrequencyConfig {
    fn default() -> Self {
        AckFrequencyConfig {
            policy: AckFrequencyPolicy::Off,
            immediate_ack_when_blocked: false,
            reordering_threshold: 1,
        }
    }
}

/// Loss detection constants (RFC 9002 §6.1, §7.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossConfig {
    /// Initial RTT before any sample, ms (RFC 9002 §6.2.2: 333).
    pub initial_rtt_ms: u64,
    /// kPacketThreshold (3).
    pub packet_threshold: u64,
    /// kTimeThreshold (9/8).
    pub time_threshold: f64,
    /// kPersistentCongestionThreshold (3).
    pub persistent_congestion_threshold: u32,
}

impl Default for LossConfig {
    fn default() -> Self {
        LossConfig {
            initial_rtt_ms: 333,
            packet_threshold: 3,
            time_threshold: 9.0 / 8.0,
            persistent_congestion_threshold: 3,
        }
    }
}

/// Flow control and stream limits (RFC 9000 §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowConfig {
    /// initial_max_data we advertise, bytes (default 1 MiB).
    pub initial_max_data: u64,
    /// initial_max_stream_data_* we advertise, bytes (default 512 KiB).
    pub initial_max_stream_data: u64,
    /// initial_max_streams_bidi (default 100).
    pub max_streams_bidi: u64,
    /// initial_max_streams_uni (default 100).
    pub max_streams_uni: u64,
    /// Grow receive windows when the peer consumes them within 2 RTTs (default on).
    pub autotune: bool,
    /// Auto-tuning caps, bytes (default 16 MiB connection, 8 MiB per stream).
    pub max_receive_window: u64,
    pub max_stream_receive_window: u64,
    /// Unacknowledged bytes a stream buffers before writes push back (default 4 MiB).
    pub send_buffer: u64,
    /// Bytes written but not yet sent that a stream takes before writes push back, like
    /// TCP_NOTSENT_LOWAT; `None` (default) or 0: only `send_buffer` limits (0 says so
    /// explicitly, so that the CLI's default does not apply). A `Writable` event
    /// follows once sending brings a pushed-back stream under the limit. Keeps the
    /// data that is copied into packets recent (in cache) on a fast host.
    pub notsent_lowat: Option<u64>,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            initial_max_data: 1 << 20,
            initial_max_stream_data: 512 << 10,
            max_streams_bidi: 100,
            max_streams_uni: 100,
            autotune: true,
            max_receive_window: 16 << 20,
            max_stream_receive_window: 8 << 20,
            send_buffer: 4 << 20,
            notsent_lowat: None,
        }
    }
}

/// Server handshake options for the instant-ACK study (IMC '24, seed 000). Server side
/// only: a client ignores them. The defaults reproduce a server that answers the
/// ClientHello at once and acknowledges it together with its ServerHello.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HandshakeConfig {
    /// Instant ACK (IACK): acknowledge the client's first Initial at once in its own
    /// (ACK-only, unpadded) Initial packet, before the ServerHello is ready. Default
    /// false: wait for the certificate (WFC), the ACK coalesced with the ServerHello.
    pub instant_ack: bool,
    /// Certificate availability delay Δt, ms (default 0): after the ClientHello
    /// arrives, the server's TLS may produce its first flight only this much later
    /// (a certificate kept on a remote store, as in CDN deployments).
    pub certificate_delay_ms: f64,
    /// Time to sign CertificateVerify, ms (default 0), added to the certificate delay.
    pub signing_delay_ms: f64,
    /// With `instant_ack`: put a PING in the instant-ACK packet (default false). The
    /// PING makes the packet ack-eliciting (so it is padded to 1200 bytes, RFC 9000
    /// §14.1, and counts against the amplification limit), and the client acknowledges
    /// it at once: the *server* then gets an RTT sample ≈ 1 RTT before its first flight
    /// leaves. Without it an IACK server has no sample when its first flight goes out
    /// and uses the default PTO (1 s) if that flight is lost, where a WFC server would
    /// have one; the IMC '24 study recommends combining IACK with a PING.
    pub instant_ack_ping: bool,
}

impl Default for HandshakeConfig {
    fn default() -> Self {
        HandshakeConfig {
            instant_ack: false,
            certificate_delay_ms: 0.0,
            signing_delay_ms: 0.0,
            instant_ack_ping: false,
        }
    }
}

impl HandshakeConfig {
    /// How long the server holds the ClientHello before TLS sees it (Δt + signing).
    pub fn hold(&self) -> Duration {
        Duration::from_secs_f64((self.certificate_delay_ms + self.signing_delay_ms) / 1e3)
    }
}

/// Everything that shapes one connection's transport behaviour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransportConfig {
    /// Largest UDP payload we send and accept (default 1200; 1350 and 1452 are presets);
    /// with `pmtud_max_udp_payload_size`, the size PMTU discovery starts from.
    pub max_udp_payload_size: u16,
    /// Idle timeout we advertise, ms (default 30000; 0 = none).
    pub idle_timeout_ms: u64,
    /// A connection whose handshake has not completed this long after it began is
    /// dropped silently, whatever the idle timeout and however often the peer sends,
    /// so Initials alone cannot hold a server's handshake slot (and its buffers) or
    /// keep a client waiting on a dead server (default 10000 ms; 0 = none).
    #[serde(skip_serializing_if = "is_default_handshake_timeout")]
    pub handshake_timeout_ms: u64,
    /// Length of the connection IDs we issue (default 8).
    pub connection_id_length: u8,
    /// active_connection_id_limit we advertise (default 4).
    pub active_connection_id_limit: u64,
    /// Server anti-amplification factor before address validation (RFC 9000 §8.1: 3).
    pub amplification_factor: u64,
    /// Pace sending over the RTT (RFC 9002 §7.7: 1.25 * cwnd / smoothed_rtt, bursts of
    /// 10 packets) instead of sending each window at once (default on).
    pub pacing: bool,
    /// Pacing bursts bounded in time instead of packets: the bucket holds what the
    /// pacing rate earns in this many µs, between 10 datagrams and the larger of 64
    /// datagrams and two 64 KB GSO sends (RFC 9002 §7.7 allows bursts above the
    /// initial window on a path known to absorb them), and
    /// releases it in batches of half that (at least one datagram). For real hosts,
    /// whose timers cannot wake once per packet at Gbit/s rates (Linux TCP sizes its
    /// bursts to ~1 ms of the pacing rate). `None` (default): fixed 10-datagram
    /// bursts released datagram by datagram, what the simulator's exact timers use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing_burst_us: Option<u64>,
    /// PMTU discovery (DPLPMTUD, RFC 9000 §14.3): once the handshake is confirmed the
    /// sender probes for datagrams up to this size, starting from
    /// `max_udp_payload_size`, and advertises it as the largest it accepts. `None`
    /// (default) or 0: every datagram is `max_udp_payload_size`, as in the simulator;
    /// 0 says so explicitly, so that the CLI's default (1452) does not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmtud_max_udp_payload_size: Option<u16>,
    /// max_datagram_frame_size we advertise (RFC 9221); `None` = DATAGRAM not offered.
    pub max_datagram_frame_size: Option<u64>,
    /// Bounds of the queue of DATAGRAM payloads waiting to be sent.
    #[serde(skip_serializing_if = "DatagramSendConfig::is_default")]
    pub datagram_send: DatagramSendConfig,
    /// min_ack_delay we advertise, µs (ack-frequency draft); `None` = not offered.
    pub min_ack_delay_us: Option<u64>,
    /// The multipath extension (draft-ietf-quic-multipath), default off.
    #[serde(skip_serializing_if = "MultipathConfig::is_default")]
    pub multipath: MultipathConfig,
    pub ack: AckConfig,
    /// What we ask of the peer's ACKs (ACK_FREQUENCY, IMMEDIATE_ACK).
    pub ack_frequency: AckFrequencyConfig,
    pub loss: LossConfig,
    pub flow: FlowConfig,
    pub congestion_control: CongestionControl,
    /// Careful Resume (draft-ietf-tsvwg-careful-resume) over the window-based
    /// controller: resume from saved path parameters (default off).
    #[serde(skip_serializing_if = "CarefulResumeConfig::is_default")]
    pub careful_resume: CarefulResumeConfig,
    /// Server handshake options (instant ACK, certificate and signing delays).
    pub handshake: HandshakeConfig,
    /// QUIC versions used and accepted (default v1 only).
    pub versions: VersionConfig,
    /// 1-RTT key updates and AEAD limits (default: answer only, RFC limits).
    pub key_update: KeyUpdateConfig,
    /// Server admission limits against Initial floods.
    pub admission: AdmissionConfig,
    /// 0-RTT (RFC 9001 §4.6, RFC 9000 §7.4.1), default off. Client: send application
    /// data in 0-RTT packets when resuming a ticket that allows it. Server: accept
    /// 0-RTT. The driver builds the TLS config to match
    /// (`crypto::session::{resuming_client_config, ticketing_server_config}`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zero_rtt: bool,
    /// ECN (RFC 9000 §13.4): `"off"` (default), `"ect0"` or `"ect1"`, the codepoint
    /// sent on every packet while ECN validation has not failed.
    #[serde(skip_serializing_if = "EcnMode::is_off")]
    pub ecn: EcnMode,
    /// The static key stateless reset tokens derive from (RFC 9000 §10.3.2), and with
    /// it the endpoint answers short-header packets for unknown connection IDs with a
    /// Stateless Reset (§10.3). `None` (default): random tokens from the seeded
    /// generator and no resets sent. A secret set by a driver: never serialized or
    /// read from a config file.
    #[serde(skip)]
    pub stateless_reset_key: Option<StatelessResetKey>,
    /// Server: the preferred address(es) announced in the transport parameters (RFC
    /// 9000 §9.6, §18.2), with a connection ID of sequence number 1 (§5.1.1); the
    /// driver must deliver datagrams sent to them. `None` (default): none announced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_address: Option<PreferredAddressConfig>,
    /// Client: stay on the handshake's server address even when the server announces
    /// a preferred address (default false: validate it and move there once the
    /// handshake is confirmed, RFC 9000 §9.6.1's SHOULD).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ignore_preferred_address: bool,
    /// Send the disable_active_migration transport parameter (RFC 9000 §18.2): the
    /// peer must not move to another local address of its own (default false). A
    /// client that moves anyway is still followed after path validation, as §9 allows
    /// (dropping its packets is the other option).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disable_active_migration: bool,
    /// Packet protection of the Handshake, 0-RTT and 1-RTT packets (default
    /// `Aead`). Set by the simulator only (its scenario's `packet_protection`): never
    /// serialized or read from a config file, so no real-UDP endpoint offers it.
    #[serde(skip)]
    pub packet_protection: PacketProtection,
}

/// `handshake_timeout_ms`'s default: 10 s, a third of the default idle timeout.
const HANDSHAKE_TIMEOUT_DEFAULT_MS: u64 = 10_000;

/// Left out when serialized at its default, so configs written before the key existed
/// (and the results that record them) keep their bytes.
fn is_default_handshake_timeout(ms: &u64) -> bool {
    *ms == HANDSHAKE_TIMEOUT_DEFAULT_MS
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            max_udp_payload_size: UDP_PAYLOAD_DEFAULT,
            idle_timeout_ms: 30_000,
            handshake_timeout_ms: HANDSHAKE_TIMEOUT_DEFAULT_MS,
            connection_id_length: 8,
            active_connection_id_limit: 4,
            amplification_factor: 3,
            pacing: true,
            pacing_burst_us: None,
            pmtud_max_udp_payload_size: None,
            max_datagram_frame_size: None,
            datagram_send: DatagramSendConfig::default(),
            min_ack_delay_us: None,
            multipath: MultipathConfig::default(),
            ack: AckConfig::default(),
            ack_frequency: AckFrequencyConfig::default(),
            loss: LossConfig::default(),
            flow: FlowConfig::default(),
            congestion_control: CongestionControl::default(),
            careful_resume: CarefulResumeConfig::default(),
            handshake: HandshakeConfig::default(),
            versions: VersionConfig::default(),
            key_update: KeyUpdateConfig::default(),
            admission: AdmissionConfig::default(),
            zero_rtt: false,
            ecn: EcnMode::Off,
            stateless_reset_key: None,
            preferred_address: None,
            ignore_preferred_address: false,
            disable_active_migration: false,
            packet_protection: PacketProtection::Aead,
        }
    }
}

/// A configuration value that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid transport config: {key}: {why}")]
pub struct ConfigError {
    /// Dotted path of the offending key, e.g. `ack.ack_delay_exponent`.
    pub key: &'static str,
    pub why: String,
}

impl TransportConfig {
    /// Rejects values the RFCs forbid or that could never work.
    /// Values that go on the wire as variable-length integers (RFC 9000 §16: below
    /// 2^62), as transport parameters (§18.2) or in MAX_DATA / MAX_STREAM_DATA frames
    /// (the receive windows): larger ones could not be encoded.
    fn validate_wire_limits(&self) -> Result<(), ConfigError> {
        const VARINT_MAX: u64 = (1 << 62) - 1;
        let f = &self.flow;
        let values = [
            ("idle_timeout_ms", Some(self.idle_timeout_ms)),
            (
                "active_connection_id_limit",
                Some(self.active_connection_id_limit),
            ),
            ("max_datagram_frame_size", self.max_datagram_frame_size),
            ("min_ack_delay_us", self.min_ack_delay_us),
            ("flow.initial_max_data", Some(f.initial_max_data)),
            (
                "flow.initial_max_stream_data",
                Some(f.initial_max_stream_data),
            ),
            ("flow.max_receive_window", Some(f.max_receive_window)),
            (
                "flow.max_stream_receive_window",
                Some(f.max_stream_receive_window),
            ),
            (
                "ack.reordering_threshold",
                Some(self.ack.reordering_threshold),
            ),
            (
                "ack_frequency.reordering_threshold",
                Some(self.ack_frequency.reordering_threshold),
            ),
        ];
        match values
            .into_iter()
            .find(|(_, v)| v.is_some_and(|v| v > VARINT_MAX))
        {
            Some((key, _)) => Err(ConfigError {
                key,
                why: "must be below 2^62 (RFC 9000 §16)".into(),
            }),
            None => Ok(()),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |key, why: &str| {
            Err(ConfigError {
                key,
                why: why.to_string(),
            })
        };
        if self.max_udp_payload_size < 1200 {
            return err(
                "max_udp_payload_size",
                "must be at least 1200 (RFC 9000 §14)",
            );
        }
        if self.multipath.max_path_id > MultipathConfig::MAX_PATH_ID_LIMIT {
            return err(
                "multipath.max_path_id",
                "must be at most 255 (per-path state is bounded by it)",
            );
        }
        let least = MultipathConfig::MIN_ABANDON_AFTER_PTOS;
        if self.multipath.abandon_after_ptos.is_some_and(|n| n < least) {
            return err(
                "multipath.abandon_after_ptos",
                "must be at least 2 (the PTO count at which a path counts as failed)",
            );
        }
        if let Some(m) = self.pmtud_max_udp_payload_size.filter(|&m| m > 0) {
            if m < self.max_udp_payload_size || m > 65_527 {
                return err(
                    "pmtud_max_udp_payload_size",
                    "must be 0 (off) or from max_udp_payload_size to 65527 (RFC 9000 §18.2)",
                );
            }
        }
        if self.connection_id_length < 4 || self.connection_id_length > 20 {
            return err(
                "connection_id_length",
                "must be 4 to 20 (quiclab routes by CID; RFC 9000 allows at most 20)",
            );
        }
        if self.datagram_send.queue_datagrams == 0 {
            return err(
                "datagram_send.queue_datagrams",
                "must be at least 1 (a queue of 0 would drop every datagram)",
            );
        }
        if self.active_connection_id_limit < 2 {
            return err(
                "active_connection_id_limit",
                "must be at least 2 (RFC 9000 §18.2)",
            );
        }
        if self.amplification_factor == 0 {
            return err("amplification_factor", "must be at least 1");
        }
        if self
            .pacing_burst_us
            .is_some_and(|us| us == 0 || us > 1_000_000)
        {
            return err("pacing_burst_us", "must be 1 to 1,000,000 µs");
        }
        if self.ack.ack_delay_exponent > 20 {
            return err(
                "ack.ack_delay_exponent",
                "must be at most 20 (RFC 9000 §18.2)",
            );
        }
        if self.ack.max_ack_delay_ms >= 1 << 14 {
            return err(
                "ack.max_ack_delay_ms",
                "must be below 16384 (RFC 9000 §18.2)",
            );
        }
        if self.ack.max_ack_ranges == 0 {
            return err("ack.max_ack_ranges", "must be at least 1");
        }
        if self.ack.ack_eliciting_threshold == 0 {
            return err(
                "ack.ack_eliciting_threshold",
                "must be at least 1 (1 = ACK every packet)",
            );
        }
        if self.ack.schedule.is_some_and(|s| s.threshold == 0) {
            return err(
                "ack.schedule.threshold",
                "must be at least 1 (1 = ACK every packet)",
            );
        }
        self.validate_ack_frequency()?;
        self.validate_wire_limits()?;
        self.versions.validate()?;
        self.key_update.validate()?;
        self.admission.validate()?;
        if let Some(m) = self.min_ack_delay_us {
            if m > self.ack.max_ack_delay_ms * 1000 {
                return err(
                    "min_ack_delay_us",
                    "must not exceed max_ack_delay (ack-frequency draft §3)",
                );
            }
        }
        if self.loss.initial_rtt_ms == 0 {
            return err("loss.initial_rtt_ms", "must be positive");
        }
        if self.loss.packet_threshold < 1 {
            return err("loss.packet_threshold", "must be at least 1");
        }
        if !(self.loss.time_threshold >= 1.0 && self.loss.time_threshold.is_finite()) {
            return err(
                "loss.time_threshold",
                "must be a finite number of at least 1",
            );
        }
        if self.flow.max_streams_bidi > 1 << 60 || self.flow.max_streams_uni > 1 << 60 {
            return err("flow.max_streams_*", "must be at most 2^60 (RFC 9000 §4.6)");
        }
        for (key, v) in [
            (
                "handshake.certificate_delay_ms",
                self.handshake.certificate_delay_ms,
            ),
            (
                "handshake.signing_delay_ms",
                self.handshake.signing_delay_ms,
            ),
        ] {
            // Below ~300 years so the Duration conversion cannot overflow.
            if !(v.is_finite() && (0.0..1e13).contains(&v)) {
                return err(key, "must be a finite, non-negative number of ms");
            }
        }
        if let Some(p) = &self.preferred_address {
            p.validate()?;
        }
        self.validate_congestion_control()?;
        self.validate_careful_resume()
    }

    /// `[careful_resume]`: its knobs, and a window-based controller underneath.
    fn validate_careful_resume(&self) -> Result<(), ConfigError> {
        let cr = &self.careful_resume;
        if let Err(e) = cr.validate() {
            return Err(ConfigError {
                key: careful_resume_key(e.key),
                why: e.why.to_string(),
            });
        }
        let window_based = matches!(
            self.congestion_control,
            CongestionControl::NewReno(_) | CongestionControl::Cubic(_)
        );
        if cr.enabled && !window_based {
            return Err(ConfigError {
                key: "careful_resume.enabled",
                why: "needs a window-based congestion_control (new_reno or cubic)".into(),
            });
        }
        Ok(())
    }

    /// The controller's knobs (`[congestion_control]`), and what Prague needs of the
    /// connection.
    fn validate_congestion_control(&self) -> Result<(), ConfigError> {
        validate_controller(&self.congestion_control)?;
        // RFC 9331 §4: a scalable controller identifies its packets with ECT(1), and
        // Prague's response needs the peer's CE counts.
        if matches!(self.congestion_control, CongestionControl::Prague(_))
            && self.ecn != EcnMode::Ect1
        {
            return Err(ConfigError {
                key: "ecn",
                why: "congestion_control prague needs ecn = \"ect1\" (the L4S identifier, RFC 9331 §4)".into(),
            });
        }
        Ok(())
    }

    fn validate_ack_frequency(&self) -> Result<(), ConfigError> {
        let err = |key, why: &str| {
            Err(ConfigError {
                key,
                why: why.to_string(),
            })
        };
        match self.ack_frequency.policy {
            AckFrequencyPolicy::Fixed { ratio: 0, .. }
            | AckFrequencyPolicy::AfterSlowStart { ratio: 0, .. } => {
                return err("ack_frequency.policy.ratio", "must be at least 1");
            }
            AckFrequencyPolicy::Cwnd {
                acks_per_window,
                max_ratio,
                ..
            } => {
                if acks_per_window == 0 {
                    return err("ack_frequency.policy.acks_per_window", "must be at least 1");
                }
                if max_ratio < 2 {
                    return err(
                        "ack_frequency.policy.max_ratio",
                        "must be at least 2 (the lower clamp)",
                    );
                }
            }
            _ => {}
        }
        if let Some(d) = self.ack_frequency.policy.requested_max_ack_delay_ms() {
            // ack-frequency §4: values of 2^14 ms or more are invalid.
            if !(d.is_finite() && (0.0..16384.0).contains(&d)) {
                return err(
                    "ack_frequency.policy.max_ack_delay_ms",
                    "must be a finite number of ms in [0, 16384)",
                );
            }
        }
        Ok(())
    }

    pub fn max_ack_delay(&self) -> Duration {
        Duration::from_millis(self.ack.max_ack_delay_ms)
    }
    pub fn initial_rtt(&self) -> Duration {
        Duration::from_millis(self.loss.initial_rtt_ms)
    }

    /// The controller each path runs: the configured one, except under multipath with
    /// `coupled = "lia"` or `"olia"` (both couple Reno's increase), NewReno (the
    /// configured NewReno's knobs, else NewReno's defaults).
    pub fn path_congestion_control(&self) -> std::borrow::Cow<'_, CongestionControl> {
        let lia = self.multipath.enabled && self.multipath.coupled.is_coupled();
        match &self.congestion_control {
            CongestionControl::NewReno(_) => std::borrow::Cow::Borrowed(&self.congestion_control),
            _ if lia => std::borrow::Cow::Owned(CongestionControl::default()),
            cc => std::borrow::Cow::Borrowed(cc),
        }
    }
}

/// A controller's own knobs, whichever transport runs it (quiclab-tcp's `[flows.tcp]`
/// checks its controller with this too). Keys are `congestion_control.*`.
pub fn validate_controller(cc: &CongestionControl) -> Result<(), ConfigError> {
    let err = |key, why: &str| {
        Err(ConfigError {
            key,
            why: why.to_string(),
        })
    };
    match cc {
        CongestionControl::NewReno(c) => {
            if !(c.loss_reduction_factor > 0.0 && c.loss_reduction_factor <= 1.0) {
                return err(
                    "congestion_control.loss_reduction_factor",
                    "must be in (0, 1]",
                );
            }
            if c.minimum_window_packets == 0 {
                return err(
                    "congestion_control.minimum_window_packets",
                    "must be at least 1",
                );
            }
            validate_hystart(&c.hystart)?;
        }
        CongestionControl::Cubic(c) => {
            // RFC 9438 §4.6 / §5.1: β in (0, 1) and C > 0.
            if !(c.beta > 0.0 && c.beta < 1.0) {
                return err("congestion_control.beta", "must be in (0, 1)");
            }
            if !(c.c > 0.0 && c.c.is_finite()) {
                return err("congestion_control.c", "must be a finite number above 0");
            }
            // mulTCP: at least one flow; 64 bounds β_N below 1 by a useful margin.
            if !(1..=64).contains(&c.emulated_flows) {
                return err("congestion_control.emulated_flows", "must be in 1..=64");
            }
            if c.minimum_window_packets == 0 {
                return err(
                    "congestion_control.minimum_window_packets",
                    "must be at least 1",
                );
            }
            validate_hystart(&c.hystart)?;
        }
        CongestionControl::Bbr(c) => {
            if let Err(e) = c.validate() {
                return Err(ConfigError {
                    key: bbr_key(e.key),
                    why: e.why.to_string(),
                });
            }
        }
        CongestionControl::None => {}
        CongestionControl::Fixed(c) => {
            if let Err((key, why)) = c.validate() {
                return err(key, why);
            }
        }
        CongestionControl::Prague(c) => {
            if let Err((key, why)) = c.validate() {
                return err(key, why);
            }
        }
    }
    Ok(())
}

/// The dotted config path of a BBR knob.
fn bbr_key(knob: &str) -> &'static str {
    const KEYS: [&str; 12] = [
        "congestion_control.startup_pacing_gain",
        "congestion_control.cwnd_gain",
        "congestion_control.drain_pacing_gain",
        "congestion_control.loss_thresh",
        "congestion_control.beta",
        "congestion_control.headroom",
        "congestion_control.pacing_margin_percent",
        "congestion_control.probe_rtt_duration_ms",
        "congestion_control.probe_rtt_interval_ms",
        "congestion_control.min_rtt_filter_len_ms",
        "congestion_control.extra_acked_filter_rounds",
        "congestion_control.startup_full_loss_count",
    ];
    KEYS.iter()
        .find(|k| k.strip_prefix("congestion_control.") == Some(knob))
        .copied()
        .unwrap_or("congestion_control.initial_window_packets")
}

/// The dotted key of a Careful Resume knob (`ConfigError::key` is static).
fn careful_resume_key(knob: &str) -> &'static str {
    const KEYS: [&str; 11] = [
        "careful_resume.enabled",
        "careful_resume.saved_cwnd_bytes",
        "careful_resume.saved_rtt_ms",
        "careful_resume.max_jump_bytes",
        "careful_resume.jump_fraction",
        "careful_resume.rtt_min_fraction",
        "careful_resume.rtt_max_factor",
        "careful_resume.retreat_fraction",
        "careful_resume.beta",
        "careful_resume.unvalidated_rtts",
        "careful_resume.unvalidated_pacing",
    ];
    KEYS.iter()
        .find(|k| k.strip_prefix("careful_resume.") == Some(knob))
        .copied()
        .unwrap_or("careful_resume")
}

/// HyStart++'s knobs (`[congestion_control.hystart]`, RFC 9406 §4.3), checked whether or
/// not it is enabled, so that a bad value never waits for the switch to be flipped.
fn validate_hystart(h: &HystartConfig) -> Result<(), ConfigError> {
    let err = |key, why: &str| {
        Err(ConfigError {
            key,
            why: why.to_string(),
        })
    };
    if h.min_rtt_thresh_ms > h.max_rtt_thresh_ms {
        return err(
            "congestion_control.hystart.min_rtt_thresh_ms",
            "must not exceed max_rtt_thresh_ms",
        );
    }
    // Below ~300 years, so the Duration arithmetic cannot overflow.
    if h.max_rtt_thresh_ms >= 10_000_000_000_000 {
        return err(
            "congestion_control.hystart.max_rtt_thresh_ms",
            "must be below 1e13 ms",
        );
    }
    if h.min_rtt_divisor == 0 {
        return err("congestion_control.hystart.min_rtt_divisor", "must be >= 1");
    }
    if h.n_rtt_sample == 0 {
        return err("congestion_control.hystart.n_rtt_sample", "must be >= 1");
    }
    if h.css_growth_divisor == 0 {
        return err(
            "congestion_control.hystart.css_growth_divisor",
            "must be >= 1",
        );
    }
    if h.css_rounds == 0 {
        return err("congestion_control.hystart.css_rounds", "must be >= 1");
    }
    if h.ack_growth_limit_segments == Some(0) {
        return err(
            "congestion_control.hystart.ack_growth_limit_segments",
            "must be >= 1 (omit it for no cap)",
        );
    }
    Ok(())
}

impl From<ConfigError> for TransportError {
    fn from(e: ConfigError) -> Self {
        TransportError::internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_round_trip_through_toml() {
        let c = TransportConfig::default();
        c.validate().unwrap();
        let s = toml::to_string(&c).unwrap();
        let back: TransportConfig = toml::from_str(&s).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn emulated_flows_is_checked_and_skipped_at_one() {
        let parse = |n: &str| {
            toml::from_str::<TransportConfig>(&format!(
                "[congestion_control]\nalgorithm = \"cubic\"\nemulated_flows = {n}"
            ))
            .unwrap()
        };
        assert_eq!(
            parse("0").validate().unwrap_err().key,
            "congestion_control.emulated_flows"
        );
        assert_eq!(
            parse("65").validate().unwrap_err().key,
            "congestion_control.emulated_flows"
        );
        parse("2").validate().unwrap();
        assert!(toml::to_string(&parse("2"))
            .unwrap()
            .contains("emulated_flows = 2"));
        assert!(!toml::to_string(&parse("1"))
            .unwrap()
            .contains("emulated_flows"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        assert!(toml::from_str::<TransportConfig>("max_udp_payload = 1350").is_err());
        let c: TransportConfig = toml::from_str("max_udp_payload_size = 1000").unwrap();
        assert_eq!(c.validate().unwrap_err().key, "max_udp_payload_size");
        let c: TransportConfig =
            toml::from_str("[congestion_control]\nalgorithm = \"new_reno\"\ngrowth = \"exact\"")
                .unwrap();
        c.validate().unwrap();
    }

    #[test]
    fn hystart_is_a_switch_or_a_table() {
        let hystart = |text: &str| -> Result<HystartConfig, toml::de::Error> {
            let c: TransportConfig = toml::from_str(text)?;
            match c.congestion_control {
                CongestionControl::Cubic(c) => Ok(c.hystart),
                CongestionControl::NewReno(c) => Ok(c.hystart),
                other => panic!("{other:?}"),
            }
        };
        let cc = |algorithm: &str, hystart: &str| {
            format!("[congestion_control]\nalgorithm = \"{algorithm}\"\nhystart = {hystart}")
        };
        // `true`: RFC 9406's defaults, switched on; `false`: off.
        assert_eq!(
            hystart(&cc("new_reno", "true")).unwrap(),
            HystartConfig::enabled()
        );
        assert_eq!(
            hystart(&cc("cubic", "false")).unwrap(),
            HystartConfig::default()
        );
        let table = hystart(&cc("cubic", "{ enabled = true, css_rounds = 3 }")).unwrap();
        assert_eq!((table.enabled, table.css_rounds), (true, 3));
        // The table keeps its checks; other values name what is expected.
        let typo = hystart(&cc("cubic", "{ css_round = 3 }")).unwrap_err();
        assert!(
            typo.to_string().contains("unknown field `css_round`"),
            "{typo}"
        );
        let number = hystart(&cc("cubic", "1")).unwrap_err();
        assert!(
            number.to_string().contains("true, false or a table"),
            "{number}"
        );
    }

    #[test]
    fn pacing_burst_parses_validates_and_stays_out_of_default_output() {
        let c: TransportConfig = toml::from_str("pacing_burst_us = 1000").unwrap();
        c.validate().unwrap();
        assert_eq!(c.pacing_burst_us, Some(1000));
        for bad in ["pacing_burst_us = 0", "pacing_burst_us = 1000001"] {
            let c: TransportConfig = toml::from_str(bad).unwrap();
            assert_eq!(c.validate().unwrap_err().key, "pacing_burst_us", "{bad}");
        }
        // Unset, the key is not serialized: resolved configs written before it existed
        // keep their bytes.
        let s = toml::to_string(&TransportConfig::default()).unwrap();
        assert!(!s.contains("pacing_burst_us"), "{s}");
    }

    #[test]
    fn handshake_options_parse_and_validate() {
        let c: TransportConfig =
            toml::from_str("handshake = { instant_ack = true, certificate_delay_ms = 50 }")
                .unwrap();
        c.validate().unwrap();
        assert!(c.handshake.instant_ack);
        assert_eq!(c.handshake.hold(), Duration::from_millis(50));
        assert!(toml::from_str::<TransportConfig>("handshake = { iack = true }").is_err());
        let c: TransportConfig = toml::from_str("handshake = { signing_delay_ms = -1.0 }").unwrap();
        assert_eq!(c.validate().unwrap_err().key, "handshake.signing_delay_ms");
        let c: TransportConfig =
            toml::from_str("handshake = { certificate_delay_ms = nan }").unwrap();
        assert_eq!(
            c.validate().unwrap_err().key,
            "handshake.certificate_delay_ms"
        );
    }

    #[test]
    fn ack_schedule_and_ack_frequency_parse_and_validate() {
        let c: TransportConfig = toml::from_str(
            "ack = { ack_eliciting_threshold = 2, schedule = { after_packets = 100, threshold = 10 } }",
        )
        .unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.ack.schedule,
            Some(AckSchedule {
                after_packets: 100,
                threshold: 10
            })
        );
        let c: TransportConfig =
            toml::from_str("ack = { schedule = { after_packets = 1, threshold = 0 } }").unwrap();
        assert_eq!(c.validate().unwrap_err().key, "ack.schedule.threshold");
        assert!(toml::from_str::<TransportConfig>("ack = { schedule = { after = 1 } }").is_err());

        let cases = [
            ("{ kind = \"off\" }", AckFrequencyPolicy::Off),
            (
                "{ kind = \"fixed\", ratio = 10 }",
                AckFrequencyPolicy::Fixed {
                    ratio: 10,
                    max_ack_delay_ms: None,
                },
            ),
            (
                "{ kind = \"after_slow_start\", ratio = 10, max_ack_delay_ms = 5 }",
                AckFrequencyPolicy::AfterSlowStart {
                    ratio: 10,
                    max_ack_delay_ms: Some(5.0),
                },
            ),
            (
                "{ kind = \"cwnd\", acks_per_window = 4, max_ratio = 10, max_ack_delay_ms = 2.5 }",
                AckFrequencyPolicy::Cwnd {
                    acks_per_window: 4,
                    max_ratio: 10,
                    max_ack_delay_ms: Some(2.5),
                },
            ),
        ];
        for (policy, want) in cases {
            let text = format!(
                "min_ack_delay_us = 1000\n[ack_frequency]\npolicy = {policy}\nimmediate_ack_when_blocked = true"
            );
            let c: TransportConfig = toml::from_str(&text).unwrap();
            c.validate().unwrap();
            assert_eq!(c.ack_frequency.policy, want);
            assert!(c.ack_frequency.immediate_ack_when_blocked);
            assert_eq!(c.ack_frequency.reordering_threshold, 1);
            let back: TransportConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
        for (policy, key) in [
            (
                "{ kind = \"fixed\", ratio = 0 }",
                "ack_frequency.policy.ratio",
            ),
            (
                "{ kind = \"cwnd\", acks_per_window = 0, max_ratio = 10 }",
                "ack_frequency.policy.acks_per_window",
            ),
            (
                "{ kind = \"cwnd\", acks_per_window = 4, max_ratio = 1 }",
                "ack_frequency.policy.max_ratio",
            ),
            (
                "{ kind = \"fixed\", ratio = 2, max_ack_delay_ms = 16384 }",
                "ack_frequency.policy.max_ack_delay_ms",
            ),
        ] {
            let c: TransportConfig =
                toml::from_str(&format!("ack_frequency = {{ policy = {policy} }}")).unwrap();
            assert_eq!(c.validate().unwrap_err().key, key, "{policy}");
        }
        for bad in [
            "ack_frequency = { policy = { kind = \"sometimes\" } }",
            "ack_frequency = { policy = { kind = \"fixed\", ratio = 2, extra = 1 } }",
            "ack_frequency = { policy = { kind = \"fixed\" } }",
            "ack_frequency = { immediate_ack = true }",
        ] {
            assert!(toml::from_str::<TransportConfig>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn min_ack_delay_must_not_exceed_max_ack_delay() {
        let c: TransportConfig =
            toml::from_str("min_ack_delay_us = 25000\nack = { max_ack_delay_ms = 25 }").unwrap();
        c.validate().unwrap();
        let c: TransportConfig =
            toml::from_str("min_ack_delay_us = 25001\nack = { max_ack_delay_ms = 25 }").unwrap();
        assert_eq!(c.validate().unwrap_err().key, "min_ack_delay_us");
    }

    #[test]
    fn values_beyond_a_varint_are_refused() {
        let mut c = TransportConfig::default();
        c.flow.initial_max_data = 1 << 62;
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "flow.initial_max_data");
        c.flow.initial_max_data = (1 << 62) - 1;
        assert!(c.validate().is_ok());
    }
}
