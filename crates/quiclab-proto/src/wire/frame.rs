//! Frame types (RFC 9000 §19, RFC 9221 §4, draft-ietf-quic-ack-frequency §4-5).
//!
//! Decoded frames borrow their variable-length data from the decrypted packet payload.
//! Encoding lives in `frame_encode.rs`, decoding in `frame_decode.rs`.

use super::frame_mp::MultipathFrame;
pub use super::frame_parts::{AckFrame, EcnCounts, NewConnectionIdFrame};
use super::ids::{Dir, StreamId};

/// Frame type codes (RFC 9000 §19, Table 3, plus extensions).
pub mod frame_type {
    pub const PADDING: u64 = 0x00;
    pub const PING: u64 = 0x01;
    pub const ACK: u64 = 0x02;
    pub const ACK_ECN: u64 = 0x03;
    pub const RESET_STREAM: u64 = 0x04;
    pub const STOP_SENDING: u64 = 0x05;
    pub const CRYPTO: u64 = 0x06;
    pub const NEW_TOKEN: u64 = 0x07;
    /// STREAM is 0x08..=0x0f; the low bits are OFF (0x04), LEN (0x02), FIN (0x01).
    pub const STREAM: u64 = 0x08;
    pub const MAX_DATA: u64 = 0x10;
    pub const MAX_STREAM_DATA: u64 = 0x11;
    pub const MAX_STREAMS_BIDI: u64 = 0x12;
    pub const MAX_STREAMS_UNI: u64 = 0x13;
    pub const DATA_BLOCKED: u64 = 0x14;
    pub const STREAM_DATA_BLOCKED: u64 = 0x15;
    pub const STREAMS_BLOCKED_BIDI: u64 = 0x16;
    pub const STREAMS_BLOCKED_UNI: u64 = 0x17;
    pub const NEW_CONNECTION_ID: u64 = 0x18;
    pub const RETIRE_CONNECTION_ID: u64 = 0x19;
    pub const PATH_CHALLENGE: u64 = 0x1a;
    pub const PATH_RESPONSE: u64 = 0x1b;
    pub const CONNECTION_CLOSE: u64 = 0x1c;
    pub const CONNECTION_CLOSE_APP: u64 = 0x1d;
    pub const HANDSHAKE_DONE: u64 = 0x1e;
    /// draft-ietf-quic-ack-frequency §5.
    pub const IMMEDIATE_ACK: u64 = 0x1f;
    /// RFC 9221 §4: 0x30 without a length, 0x31 with one.
    pub const DATAGRAM: u64 = 0x30;
    pub const DATAGRAM_LEN: u64 = 0x31;
    /// draft-ietf-quic-ack-frequency §4.
    pub const ACK_FREQUENCY: u64 = 0xaf;
}

/// A STREAM frame (RFC 9000 §19.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamFrame<'a> {
    pub id: StreamId,
    pub offset: u64,
    pub fin: bool,
    pub data: &'a [u8],
}

/// CONNECTION_CLOSE (RFC 9000 §19.19): `frame_type` is `Some` for the transport variant
/// (0x1c) and `None` for the application variant (0x1d).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionCloseFrame<'a> {
    pub error_code: u64,
    pub frame_type: Option<u64>,
    pub reason: &'a [u8],
}

/// ACK_FREQUENCY (draft-ietf-quic-ack-frequency §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFrequencyFrame {
    pub sequence: u64,
    pub ack_eliciting_threshold: u64,
    /// Requested Max Ack Delay, in microseconds.
    pub request_max_ack_delay: u64,
    pub reordering_threshold: u64,
}

/// Any frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A run of consecutive PADDING bytes, decoded as one frame.
    Padding {
        len: usize,
    },
    Ping,
    Ack(AckFrame),
    ResetStream {
        id: StreamId,
        error_code: u64,
        final_size: u64,
    },
    StopSending {
        id: StreamId,
        error_code: u64,
    },
    Crypto {
        offset: u64,
        data: &'a [u8],
    },
    NewToken {
        token: &'a [u8],
    },
    Stream(StreamFrame<'a>),
    MaxData(u64),
    MaxStreamData {
        id: StreamId,
        max: u64,
    },
    MaxStreams {
        dir: Dir,
        max: u64,
    },
    DataBlocked {
        limit: u64,
    },
    StreamDataBlocked {
        id: StreamId,
        limit: u64,
    },
    StreamsBlocked {
        dir: Dir,
        limit: u64,
    },
    NewConnectionId(NewConnectionIdFrame),
    RetireConnectionId {
        sequence: u64,
    },
    PathChallenge([u8; 8]),
    PathResponse([u8; 8]),
    ConnectionClose(ConnectionCloseFrame<'a>),
    HandshakeDone,
    Datagram {
        data: &'a [u8],
    },
    AckFrequency(AckFrequencyFrame),
    ImmediateAck,
    /// The multipath extension's frames (draft-ietf-quic-multipath §4).
    Multipath(MultipathFrame),
}

impl Frame<'_> {
    /// Whether receiving this frame makes a packet ack-eliciting (RFC 9002 §2:
    /// every frame but ACK, PADDING and CONNECTION_CLOSE; draft-ietf-quic-multipath §4:
    /// PATH_ACK is not, every other multipath frame is).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self,
            Frame::Padding { .. }
                | Frame::Ack(_)
                | Frame::ConnectionClose(_)
                | Frame::Multipath(MultipathFrame::PathAck { .. })
        )
    }

    /// RFC 9000 §9.1: PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID and PADDING
    /// are probing frames; a packet of only these does not migrate the connection.
    pub fn is_probing(&self) -> bool {
        matches!(
            self,
            Frame::Padding { .. }
                | Frame::PathChallenge(_)
                | Frame::PathResponse(_)
                | Frame::NewConnectionId(_)
        )
    }

    /// The frame's type code as it is (or would be) encoded.
    pub fn type_code(&self) -> u64 {
        use frame_type as t;
        match self {
            Frame::Padding { .. } => t::PADDING,
            Frame::Ping => t::PING,
            Frame::Ack(a) => {
                if a.ecn.is_some() {
                    t::ACK_ECN
                } else {
                    t::ACK
                }
            }
            Frame::ResetStream { .. } => t::RESET_STREAM,
            Frame::StopSending { .. } => t::STOP_SENDING,
            Frame::Crypto { .. } => t::CRYPTO,
            Frame::NewToken { .. } => t::NEW_TOKEN,
            Frame::Stream(s) => {
                t::STREAM | 0x02 | if s.offset > 0 { 0x04 } else { 0 } | u64::from(s.fin)
            }
            Frame::MaxData(_) => t::MAX_DATA,
            Frame::MaxStreamData { .. } => t::MAX_STREAM_DATA,
            Frame::MaxStreams { dir: Dir::Bi, .. } => t::MAX_STREAMS_BIDI,
            Frame::MaxStreams { dir: Dir::Uni, .. } => t::MAX_STREAMS_UNI,
            Frame::DataBlocked { .. } => t::DATA_BLOCKED,
            Frame::StreamDataBlocked { .. } => t::STREAM_DATA_BLOCKED,
            Frame::StreamsBlocked { dir: Dir::Bi, .. } => t::STREAMS_BLOCKED_BIDI,
            Frame::StreamsBlocked { dir: Dir::Uni, .. } => t::STREAMS_BLOCKED_UNI,
            Frame::NewConnectionId(_) => t::NEW_CONNECTION_ID,
            Frame::RetireConnectionId { .. } => t::RETIRE_CONNECTION_ID,
            Frame::PathChallenge(_) => t::PATH_CHALLENGE,
            Frame::PathResponse(_) => t::PATH_RESPONSE,
            Frame::ConnectionClose(c) => {
                if c.frame_type.is_some() {
                    t::CONNECTION_CLOSE
                } else {
                    t::CONNECTION_CLOSE_APP
                }
            }
            Frame::HandshakeDone => t::HANDSHAKE_DONE,
            Frame::Datagram { .. } => t::DATAGRAM_LEN,
            Frame::AckFrequency(_) => t::ACK_FREQUENCY,
            Frame::ImmediateAck => t::IMMEDIATE_ACK,
            Frame::Multipath(m) => m.type_code(),
        }
    }
}
