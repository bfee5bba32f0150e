//! The names events give packet and frame types: the draft's `$PacketType` and
//! `frame_type` strings (draft-ietf-quic-qlog-quic-events). They live with the events,
//! not in a sink, so every consumer (qlog, metrics, error messages) agrees on them.

use crate::wire::{Frame, MultipathFrame, PacketType};

/// The draft's `$PacketType` string for `t`.
pub fn packet_type_name(t: PacketType) -> &'static str {
    match t {
        PacketType::Initial => "initial",
        PacketType::Handshake => "handshake",
        PacketType::ZeroRtt => "0RTT",
        PacketType::OneRtt => "1RTT",
        PacketType::Retry => "retry",
        PacketType::VersionNegotiation => "version_negotiation",
    }
}

/// The draft's `frame_type` string for `f`.
pub fn frame_type_name(f: &Frame<'_>) -> &'static str {
    match f {
        Frame::Padding { .. } => "padding",
        Frame::Ping => "ping",
        Frame::Ack(_) => "ack",
        Frame::ResetStream { .. } => "reset_stream",
        Frame::StopSending { .. } => "stop_sending",
        Frame::Crypto { .. } => "crypto",
        Frame::NewToken { .. } => "new_token",
        Frame::Stream(_) => "stream",
        Frame::MaxData(_) => "max_data",
        Frame::MaxStreamData { .. } => "max_stream_data",
        Frame::MaxStreams { .. } => "max_streams",
        Frame::DataBlocked { .. } => "data_blocked",
        Frame::StreamDataBlocked { .. } => "stream_data_blocked",
        Frame::StreamsBlocked { .. } => "streams_blocked",
        Frame::NewConnectionId(_) => "new_connection_id",
        Frame::RetireConnectionId { .. } => "retire_connection_id",
        Frame::PathChallenge(_) => "path_challenge",
        Frame::PathResponse(_) => "path_response",
        Frame::ConnectionClose(_) => "connection_close",
        Frame::HandshakeDone => "handshake_done",
        Frame::Datagram { .. } => "datagram",
        Frame::AckFrequency(_) => "ack_frequency",
        Frame::ImmediateAck => "immediate_ack",
        Frame::Multipath(m) => multipath_frame_name(m),
    }
}

/// The multipath frames' names: their names in draft-ietf-quic-multipath §4, in lower
/// case as the qlog drafts write frame types (no qlog draft names them yet).
pub fn multipath_frame_name(m: &MultipathFrame) -> &'static str {
    use MultipathFrame as M;
    match m {
        M::PathAck { .. } => "path_ack",
        M::PathAbandon { .. } => "path_abandon",
        M::PathStatus { backup: true, .. } => "path_status_backup",
        M::PathStatus { backup: false, .. } => "path_status_available",
        M::PathNewConnectionId { .. } => "path_new_connection_id",
        M::PathRetireConnectionId { .. } => "path_retire_connection_id",
        M::MaxPathId(_) => "max_path_id",
        M::PathsBlocked(_) => "paths_blocked",
        M::PathCidsBlocked { .. } => "path_cids_blocked",
    }
}
