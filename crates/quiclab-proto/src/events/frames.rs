//! [`FrameSummary`]: what events keep of a frame. Built for every frame of every packet
//! while a sink is attached, so it copies only integers (an ACK's ranges and a
//! CONNECTION_CLOSE reason are the only allocations) and never the payload bytes.

use super::names::frame_type_name;
use crate::wire::{
    stream_header_len, AckFrequencyFrame, ConnectionId, Dir, EcnCounts, Frame, MultipathFrame,
    StreamId,
};

/// What a sink reads of packets' frames (see
/// [`EventSink::frame_detail`](super::EventSink::frame_detail)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FrameDetail {
    /// Each frame's `FrameSummary::name`, `wire_len` and `FrameKind` variant are
    /// exact (so [`FrameSummary::is_ack_eliciting`] is too); the fields that would
    /// need an allocation are left empty: an ACK's `ranges`, a CONNECTION_CLOSE's
    /// `reason`.
    Counts,
    /// Every field (the qlog writer needs it).
    Full,
}

/// An owned summary of a frame for events: data is replaced by its length, and the
/// frame's encoded size is kept so byte counts per frame type need no re-encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSummary {
    /// Bytes of the frame on the wire (its encoded length; STREAM and DATAGRAM as
    /// encoded by this stack, i.e. with a Length field).
    pub wire_len: usize,
    /// The frame type's event name ([`frame_type_name`]).
    pub name: &'static str,
    pub kind: FrameKind,
}

/// The frame's fields, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A run of `len` PADDING bytes.
    Padding {
        len: usize,
    },
    Ping,
    Ack {
        /// The raw encoded ACK Delay field: its unit depends on the sender's
        /// ack_delay_exponent, which the frame does not carry (the qlog writer scales it).
        ack_delay: u64,
        /// `(lowest, highest)` packet numbers, highest range first.
        ranges: Vec<(u64, u64)>,
        /// How many ranges the frame reports (`ranges.len()` at
        /// [`FrameDetail::Full`]; also kept at [`FrameDetail::Counts`], where `ranges`
        /// is empty, for sinks that measure ACK sizes).
        range_count: usize,
        ecn: Option<EcnCounts>,
    },
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
        length: usize,
    },
    NewToken {
        length: usize,
    },
    Stream {
        id: StreamId,
        offset: u64,
        length: usize,
        fin: bool,
    },
    MaxData {
        max: u64,
    },
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
    NewConnectionId {
        sequence: u64,
        retire_prior_to: u64,
        id: ConnectionId,
        reset_token: [u8; 16],
    },
    RetireConnectionId {
        sequence: u64,
    },
    PathChallenge([u8; 8]),
    PathResponse([u8; 8]),
    ConnectionClose {
        /// `Some` for the transport variant (0x1c), `None` for the application one.
        frame_type: Option<u64>,
        error_code: u64,
        /// The reason phrase as lossy UTF-8.
        reason: String,
    },
    HandshakeDone,
    Datagram {
        length: usize,
    },
    AckFrequency(AckFrequencyFrame),
    ImmediateAck,
    /// A multipath frame (draft-ietf-quic-multipath §4), copied whole: only sent or
    /// accepted when multipath is negotiated, so single-path runs never build one.
    Multipath(MultipathFrame),
}

impl FrameSummary {
    /// The draft's `frame_type` string (as [`frame_type_name`] gives it).
    pub fn frame_type_name(&self) -> &'static str {
        self.name
    }

    /// Bytes of the frame on the wire.
    pub fn wire_len(&self) -> usize {
        self.wire_len
    }

    /// Whether the frame makes its packet ack-eliciting (RFC 9002 §2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self.kind,
            FrameKind::Padding { .. }
                | FrameKind::Ack { .. }
                | FrameKind::ConnectionClose { .. }
                | FrameKind::Multipath(MultipathFrame::PathAck { .. })
        )
    }

    /// Application payload bytes carried (STREAM and DATAGRAM data; 0 otherwise).
    pub fn app_data_len(&self) -> usize {
        match self.kind {
            FrameKind::Stream { length, .. } | FrameKind::Datagram { length } => length,
            _ => 0,
        }
    }
}

impl FrameSummary {
    /// The summary of a STREAM frame the send path wrote (`length` bytes of stream `id`
    /// at `offset`), equal to [`FrameSummary::from`] of that frame decoded again at any
    /// detail, without decoding it: `wire_len` counts a Length field, as for every
    /// STREAM frame (this stack always writes one).
    pub fn stream(id: StreamId, offset: u64, length: usize, fin: bool) -> Self {
        FrameSummary {
            wire_len: stream_header_len(id, offset, length, true).saturating_add(length),
            name: "stream",
            kind: FrameKind::Stream {
                id,
                offset,
                length,
                fin,
            },
        }
    }

    /// The summary of `f` at `detail`: [`FrameSummary::from`] for
    /// [`FrameDetail::Full`]; without the ACK ranges and the CONNECTION_CLOSE reason
    /// (the only allocations) for [`FrameDetail::Counts`].
    pub fn with_detail(f: &Frame<'_>, detail: FrameDetail) -> Self {
        if detail == FrameDetail::Full {
            return FrameSummary::from(f);
        }
        let kind = match f {
            Frame::Ack(a) => FrameKind::Ack {
                ack_delay: a.ack_delay,
                ranges: Vec::new(),
                range_count: a.ranges.len(),
                ecn: a.ecn,
            },
            Frame::ConnectionClose(c) => FrameKind::ConnectionClose {
                frame_type: c.frame_type,
                error_code: c.error_code,
                reason: String::new(),
            },
            _ => return FrameSummary::from(f),
        };
        FrameSummary {
            wire_len: f.encoded_len(),
            name: frame_type_name(f),
            kind,
        }
    }
}

impl From<&Frame<'_>> for FrameSummary {
    fn from(f: &Frame<'_>) -> Self {
        let kind = match f {
            Frame::Padding { len } => FrameKind::Padding { len: *len },
            Frame::Ping => FrameKind::Ping,
            Frame::Ack(a) => FrameKind::Ack {
                ack_delay: a.ack_delay,
                ranges: a.ranges.iter().map(|r| (*r.start(), *r.end())).collect(),
                range_count: a.ranges.len(),
                ecn: a.ecn,
            },
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => FrameKind::ResetStream {
                id: *id,
                error_code: *error_code,
                final_size: *final_size,
            },
            Frame::StopSending { id, error_code } => FrameKind::StopSending {
                id: *id,
                error_code: *error_code,
            },
            Frame::Crypto { offset, data } => FrameKind::Crypto {
                offset: *offset,
                length: data.len(),
            },
            Frame::NewToken { token } => FrameKind::NewToken {
                length: token.len(),
            },
            Frame::Stream(s) => FrameKind::Stream {
                id: s.id,
                offset: s.offset,
                length: s.data.len(),
                fin: s.fin,
            },
            Frame::MaxData(max) => FrameKind::MaxData { max: *max },
            Frame::MaxStreamData { id, max } => FrameKind::MaxStreamData { id: *id, max: *max },
            Frame::MaxStreams { dir, max } => FrameKind::MaxStreams {
                dir: *dir,
                max: *max,
            },
            Frame::DataBlocked { limit } => FrameKind::DataBlocked { limit: *limit },
            Frame::StreamDataBlocked { id, limit } => FrameKind::StreamDataBlocked {
                id: *id,
                limit: *limit,
            },
            Frame::StreamsBlocked { dir, limit } => FrameKind::StreamsBlocked {
                dir: *dir,
                limit: *limit,
            },
            Frame::NewConnectionId(n) => FrameKind::NewConnectionId {
                sequence: n.sequence,
                retire_prior_to: n.retire_prior_to,
                id: n.id,
                reset_token: n.reset_token,
            },
            Frame::RetireConnectionId { sequence } => FrameKind::RetireConnectionId {
                sequence: *sequence,
            },
            Frame::PathChallenge(d) => FrameKind::PathChallenge(*d),
            Frame::PathResponse(d) => FrameKind::PathResponse(*d),
            Frame::ConnectionClose(c) => FrameKind::ConnectionClose {
                frame_type: c.frame_type,
                error_code: c.error_code,
                reason: String::from_utf8_lossy(c.reason).into_owned(),
            },
            Frame::HandshakeDone => FrameKind::HandshakeDone,
            Frame::Datagram { data } => FrameKind::Datagram { length: data.len() },
            Frame::AckFrequency(a) => FrameKind::AckFrequency(*a),
            Frame::ImmediateAck => FrameKind::ImmediateAck,
            Frame::Multipath(m) => FrameKind::Multipath(m.clone()),
        };
        FrameSummary {
            wire_len: f.encoded_len(),
            name: frame_type_name(f),
            kind,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::StreamFrame;

    #[test]
    fn stream_summary_equals_the_decoded_frames() {
        let data = [0u8; 300];
        for (id, offset, len, fin) in [
            (0, 0, 0, true),
            (4, 0, 63, false),
            (8, 1, 64, false),
            (1 << 20, 1 << 31, 300, true),
            (2, (1 << 62) - 400, 17, false),
        ] {
            let f = Frame::Stream(StreamFrame {
                id: StreamId(id),
                offset,
                fin,
                data: &data[..len],
            });
            let mine = FrameSummary::stream(StreamId(id), offset, len, fin);
            assert_eq!(mine, FrameSummary::from(&f));
            assert_eq!(mine, FrameSummary::with_detail(&f, FrameDetail::Counts));
            let mut buf = Vec::new();
            f.encode(&mut buf);
            assert_eq!(mine.wire_len, buf.len());
        }
    }
}
