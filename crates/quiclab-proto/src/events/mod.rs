//! Typed events: what a connection reports about itself. Observability is an output,
//! not a print: sinks (the qlog writer, metric collectors) receive each event with the
//! driver's time. A connection without a sink builds no events.

use crate::ecn::{Ecn, EcnState};
use crate::error::TransportErrorCode;
use crate::time::Instant;
use crate::wire::{ConnectionId, PacketType, Side, TransportParameters};
use std::net::SocketAddr;
use std::time::Duration;

mod careful_resume;
mod collect;
mod frames;
mod names;
pub use careful_resume::{
    Phase as CarefulResumePhase, PhaseUpdate as CarefulResumeUpdate,
    Trigger as CarefulResumeTrigger,
};
pub use collect::{SharedSink, VecSink};
pub use frames::{FrameDetail, FrameKind, FrameSummary};
pub use names::{frame_type_name, packet_type_name};

/// Receives a connection's events in order.
pub trait EventSink: Send {
    fn event(&mut self, now: Instant, event: &Event);

    /// How much of each packet's frames this sink reads in `PacketSent` /
    /// `PacketReceived`; asked for every packet, so it must be cheap. The default,
    /// [`FrameDetail::Full`], is always correct; a sink that only counts frames says
    /// [`FrameDetail::Counts`] and the connection skips the allocations for fields it
    /// does not read.
    fn frame_detail(&self) -> FrameDetail {
        FrameDetail::Full
    }
}

/// Who did something: us or the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Local,
    Remote,
}

/// Connection life-cycle states (qlog `connection_state_updated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    Attempted,
    HandshakeStarted,
    HandshakeComplete,
    HandshakeConfirmed,
    Closing,
    Draining,
    Closed,
}

/// Congestion controller states (qlog `congestion_state_updated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionState {
    SlowStart,
    CongestionAvoidance,
    Recovery,
    ApplicationLimited,
    /// BBR's states (draft-ietf-ccwg-bbr §5.1).
    BbrStartup,
    BbrDrain,
    BbrProbeBwDown,
    BbrProbeBwCruise,
    BbrProbeBwRefill,
    BbrProbeBwUp,
    BbrProbeRtt,
}

/// Why a packet was declared lost (qlog `packet_lost` trigger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTrigger {
    ReorderingThreshold,
    TimeThreshold,
    /// Lost because its keys were discarded or the PTO fired.
    PtoExpired,
}

/// Why a received packet was dropped (qlog `packet_dropped` trigger).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    HeaderParseError,
    UnsupportedVersion,
    KeyUnavailable,
    DecryptionFailure,
    Duplicate,
    UnknownConnectionId,
    InvalidInitial,
    /// A long header whose Source Connection ID is not the one the peer's handshake
    /// fixed (RFC 9000 §7.2).
    UnexpectedSourceCid,
    Draining,
    Other,
}

/// Packet number space / key type names used by key events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    Initial,
    Handshake,
    OneRtt,
}

/// A packet's header as logged.
/// What a handshake resumed (see `Event::ParametersSet`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlsResumption {
    pub resumed: bool,
    pub early_data: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketHeaderInfo {
    pub ty: PacketType,
    pub pn: Option<u64>,
    pub dcid: ConnectionId,
    pub scid: Option<ConnectionId>,
    /// The path whose packet number space `pn` belongs to (draft-ietf-quic-multipath
    /// §2.3): `Some` for 1-RTT packets of a connection that negotiated multipath (path
    /// 0 too), `None` otherwise, so single-path traces keep their bytes.
    pub path_id: Option<u32>,
}

/// Recovery state snapshot (qlog `metrics_updated`); unchanged fields are `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryMetrics {
    pub min_rtt: Option<Duration>,
    pub smoothed_rtt: Option<Duration>,
    pub latest_rtt: Option<Duration>,
    pub rtt_variance: Option<Duration>,
    pub pto_count: Option<u32>,
    pub congestion_window: Option<u64>,
    pub bytes_in_flight: Option<u64>,
    pub ssthresh: Option<u64>,
    /// Bytes per second (qlog logs bits per second); only for controllers that set it.
    pub pacing_rate: Option<u64>,
    /// A model-based controller's bandwidth estimate, bytes per second (BBR.bw).
    pub model_bandwidth: Option<u64>,
    /// A model-based controller's min_rtt estimate (BBR.min_rtt).
    pub model_min_rtt: Option<Duration>,
    /// A scalable controller's alpha, the EWMA of the CE fraction (Prague), in
    /// millionths.
    pub ecn_alpha_ppm: Option<u32>,
    /// The CE fraction of its last completed round, in millionths.
    pub ce_fraction_ppm: Option<u32>,
}

/// Everything a connection reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    ConnectionStarted {
        side: Side,
        version: u32,
        local_cid: ConnectionId,
        remote_cid: ConnectionId,
    },
    ConnectionStateUpdated {
        new: ConnectionState,
    },
    /// Versions each side offered and the one chosen (RFC 9000 §6, RFC 9368), when a
    /// client acts on Version Negotiation or learns the server's version_information.
    VersionInformation {
        server_versions: Vec<u32>,
        client_versions: Vec<u32>,
        chosen: Option<u32>,
    },
    ParametersSet {
        owner: Owner,
        params: Box<TransportParameters>,
        alpn: Option<String>,
        /// The negotiated TLS cipher suite (with the peer's parameters), e.g.
        /// `TLS13_CHACHA20_POLY1305_SHA256`.
        tls_cipher: Option<String>,
        /// With the peer's parameters: the handshake resumed a session (a valid ticket,
        /// RFC 9001 §4.5) and whether 0-RTT was accepted (RFC 9001 §4.6.2). qlog's
        /// `resumption_allowed` / `early_data_enabled`, written only when true.
        resumption: TlsResumption,
    },
    /// `size`: the packet's bytes on the wire (header, payload, tag).
    PacketSent {
        header: PacketHeaderInfo,
        size: usize,
        frames: Vec<FrameSummary>,
    },
    PacketReceived {
        header: PacketHeaderInfo,
        size: usize,
        frames: Vec<FrameSummary>,
    },
    PacketDropped {
        ty: Option<PacketType>,
        size: usize,
        reason: DropReason,
    },
    PacketLost {
        ty: PacketType,
        pn: u64,
        trigger: LossTrigger,
        /// As [`PacketHeaderInfo::path_id`].
        path_id: Option<u32>,
    },
    MetricsUpdated(RecoveryMetrics),
    CongestionStateUpdated {
        new: CongestionState,
    },
    KeyUpdated {
        key: KeyType,
        owner: Owner,
    },
    KeyDiscarded {
        key: KeyType,
    },
    /// A Careful Resume phase change (draft-ietf-tsvwg-careful-resume-qlog §3).
    CarefulResumePhaseUpdated(Box<CarefulResumeUpdate>),
    /// PMTU discovery confirmed a larger datagram size, or ended its search
    /// (qlog `quic:mtu_updated`; sizes are UDP payloads).
    MtuUpdated {
        old: u16,
        new: u16,
        done: bool,
    },
    /// The active path's peer address changed (qlog `quic:tuple_assigned`, RFC 9000
    /// §9): tuple `tuple_id` ("" is the handshake's, then "1", "2", ...) now sends to
    /// `remote`, from `local` when the connection knows it (a client that migrated).
    TupleAssigned {
        tuple_id: u64,
        remote: SocketAddr,
        local: Option<SocketAddr>,
    },
    /// A step of a migration or a path probe (qlog `quic:migration_state_updated`):
    /// `remote` is the peer address of the path concerned.
    MigrationStateUpdated {
        new: MigrationPhase,
        remote: SocketAddr,
    },
    /// The path's ECN validation state changed (qlog `quic:ecn_state_updated`, RFC
    /// 9000 Appendix A.4); `old` is `None` for the first state.
    EcnStateUpdated {
        old: Option<EcnState>,
        new: EcnState,
    },
    /// A UDP datagram arrived with this ECN codepoint (qlog
    /// `quic:udp_datagrams_received`); logged only when ECN is in play.
    DatagramReceived {
        size: usize,
        ecn: Ecn,
    },
    /// The probe timeout fired (`pto_count` after the increment).
    PtoExpired {
        pto_count: u32,
    },
    ConnectionClosed {
        owner: Owner,
        code: TransportErrorCode,
        application: bool,
        reason: String,
    },
    /// What a real-UDP driver saw of its socket (quiclab's own event,
    /// `quiclab:kernel_drops`); never emitted by the connection itself, only through
    /// [`Connection::log_kernel_drops`](crate::Connection::log_kernel_drops).
    KernelDrops(KernelDrops),
    /// A DATAGRAM payload the application queued was dropped unsent (quiclab's own
    /// event, `quiclab:datagram_frame_dropped`; the qlog draft has none for it).
    DatagramDropped {
        length: usize,
        reason: DatagramDropReason,
    },
}

/// qlog's MigrationState (quic-events §migration_state_updated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationPhase {
    /// PATH_CHALLENGE sent on a path the connection does not use (RFC 9000 §9.3.3).
    ProbingStarted,
    /// That path's validation failed.
    ProbingAbandoned,
    /// That path answered.
    ProbingSuccessful,
    /// Non-probing packets go to a new, not yet validated path (§9.2, §9.3).
    MigrationStarted,
    /// The new path failed validation: back to the last validated one (§9.3.2).
    MigrationAbandoned,
    /// The new path is validated.
    MigrationComplete,
}

impl MigrationPhase {
    /// The qlog value.
    pub fn name(self) -> &'static str {
        match self {
            MigrationPhase::ProbingStarted => "probing_started",
            MigrationPhase::ProbingAbandoned => "probing_abandoned",
            MigrationPhase::ProbingSuccessful => "probing_successful",
            MigrationPhase::MigrationStarted => "migration_started",
            MigrationPhase::MigrationAbandoned => "migration_abandoned",
            MigrationPhase::MigrationComplete => "migration_complete",
        }
    }
}

/// Why a queued DATAGRAM payload was dropped before it was sent (RFC 9221 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatagramDropReason {
    /// The send queue reached a bound (`TransportConfig::datagram_send`): the oldest
    /// payload went.
    QueueFull,
    /// It no longer fits one packet (the path's size shrank after it was queued).
    TooLarge,
}

impl DatagramDropReason {
    /// The qlog `trigger` value.
    pub fn name(self) -> &'static str {
        match self {
            DatagramDropReason::QueueFull => "queue_full",
            DatagramDropReason::TooLarge => "too_large",
        }
    }
}

/// A driver's reading of its UDP socket: receive drops counted by the kernel before
/// QUIC saw the datagrams, and the buffer sizes the kernel granted. One socket may
/// serve many connections: the figures are the socket's, logged into each
/// connection's trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDrops {
    /// Datagrams dropped on the socket since it was opened (receive buffer full).
    pub drops: u64,
    /// Receive and send buffer sizes as the kernel reports them (getsockopt), bytes.
    pub recv_buffer: u64,
    pub send_buffer: u64,
    pub trigger: KernelDropsTrigger,
}

/// Why a [`KernelDrops`] record was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelDropsTrigger {
    /// The count grew since the last record (sampled).
    Increased,
    /// The driver resized the socket buffers.
    BuffersResized,
    /// The connection's log ends (the connection is removed or the driver stops).
    Final,
}

impl KernelDropsTrigger {
    /// The qlog `trigger` value.
    pub fn name(self) -> &'static str {
        match self {
            KernelDropsTrigger::Increased => "increased",
            KernelDropsTrigger::BuffersResized => "buffers_resized",
            KernelDropsTrigger::Final => "final",
        }
    }
}
