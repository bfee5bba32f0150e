//! `packet_sent` / `packet_received` records and their `$QuicFrame` objects
//! (draft-ietf-quic-qlog-quic-events), one writer per frame family.

use super::frame_fields::{write_ack, write_new_connection_id};
use super::json::Json;
use super::multipath::write_multipath_frame;
use super::record::{begin, end, write_transport_error};
use crate::events::{packet_type_name, FrameKind, FrameSummary, PacketHeaderInfo};
use crate::time::Instant;
use crate::wire::{AckFrequencyFrame, Dir, StreamId};

/// One packet record: header, raw length and frames.
pub(super) fn write_packet(
    buf: &mut Vec<u8>,
    now: Instant,
    name: &str,
    header: &PacketHeaderInfo,
    size: usize,
    frames: &[FrameSummary],
    ack_delay_exponent: u64,
) {
    let mut j = begin(buf, now, name);
    j.key("header").begin_obj();
    j.key("packet_type").lit(packet_type_name(header.ty));
    if let Some(pn) = header.pn {
        j.key("packet_number").u64(pn);
    }
    if let Some(path) = header.path_id {
        write_path_id(&mut j, path);
    }
    j.key("dcid").hex(header.dcid.as_bytes());
    if let Some(scid) = &header.scid {
        j.key("scid").hex(scid.as_bytes());
    }
    j.end_obj();
    j.key("raw").begin_obj();
    j.key("length").u64(size as u64);
    j.end_obj();
    j.key("frames").begin_arr();
    for f in frames {
        write_frame(&mut j, f, ack_delay_exponent);
    }
    j.end_arr();
    end(j);
}

/// The path of a multipath connection's packet, beside its packet number (the two
/// name the packet, draft-ietf-quic-multipath §2.3). No qlog draft defines a packet's
/// path yet (the main schema's `tuple` names a 4-tuple, not a path ID): `path_id` as
/// in the multipath frames' fields ([`super::multipath`]), inside `header`.
pub(super) fn write_path_id(j: &mut Json<'_>, path: u32) {
    j.key("path_id").u64(u64::from(path));
}

/// One `$QuicFrame` object.
fn write_frame(j: &mut Json<'_>, f: &FrameSummary, ack_delay_exponent: u64) {
    j.begin_obj();
    j.key("frame_type").lit(f.frame_type_name());
    let data_len = write_frame_fields(j, &f.kind, ack_delay_exponent);
    j.key("raw").begin_obj();
    match data_len {
        Some(n) => {
            j.key("length").u64(n as u64);
            j.key("payload_length").u64(n as u64);
        }
        None => {
            j.key("length").u64(f.wire_len as u64);
        }
    }
    j.end_obj();
    j.end_obj();
}

/// The frame's own fields. Returns the Length field of frames whose length the draft
/// puts in `raw.length` (data-carrying frames and PADDING); `None` for the others,
/// which log their encoded size there.
fn write_frame_fields(
    j: &mut Json<'_>,
    kind: &FrameKind,
    ack_delay_exponent: u64,
) -> Option<usize> {
    match kind {
        FrameKind::Padding { len } => return Some(*len),
        FrameKind::Ping | FrameKind::HandshakeDone | FrameKind::ImmediateAck => {}
        FrameKind::Ack {
            ack_delay,
            ranges,
            ecn,
            ..
        } => write_ack(j, *ack_delay, ranges, ecn.as_ref(), ack_delay_exponent),
        FrameKind::Crypto { offset, length } => return Some(write_crypto(j, *offset, *length)),
        FrameKind::NewToken { length } => write_new_token(j, *length),
        FrameKind::Stream {
            id,
            offset,
            length,
            fin,
        } => return Some(write_stream(j, *id, *offset, *length, *fin)),
        FrameKind::Datagram { length } => {
            j.key("length").u64(*length as u64);
            return Some(*length);
        }
        FrameKind::ResetStream {
            id,
            error_code,
            final_size,
        } => write_stream_error(j, *id, *error_code, Some(*final_size)),
        FrameKind::StopSending { id, error_code } => write_stream_error(j, *id, *error_code, None),
        FrameKind::MaxData { max } => write_limit(j, "maximum", None, *max),
        FrameKind::MaxStreamData { id, max } => write_limit(j, "maximum", Some(*id), *max),
        FrameKind::MaxStreams { dir, max } => write_stream_count(j, "maximum", *dir, *max),
        FrameKind::DataBlocked { limit } => write_limit(j, "limit", None, *limit),
        FrameKind::StreamDataBlocked { id, limit } => write_limit(j, "limit", Some(*id), *limit),
        FrameKind::StreamsBlocked { dir, limit } => write_stream_count(j, "limit", *dir, *limit),
        FrameKind::NewConnectionId {
            sequence,
            retire_prior_to,
            id,
            reset_token,
        } => write_new_connection_id(j, *sequence, *retire_prior_to, id, reset_token),
        FrameKind::RetireConnectionId { sequence } => {
            j.key("sequence_number").u64(*sequence);
        }
        FrameKind::PathChallenge(d) | FrameKind::PathResponse(d) => {
            j.key("data").hex(d);
        }
        FrameKind::ConnectionClose {
            frame_type,
            error_code,
            reason,
        } => write_connection_close(j, *frame_type, *error_code, reason),
        FrameKind::AckFrequency(a) => write_ack_frequency(j, a),
        FrameKind::Multipath(m) => write_multipath_frame(j, m, ack_delay_exponent),
    }
    None
}

/// CRYPTO; returns its Length field.
fn write_crypto(j: &mut Json<'_>, offset: u64, length: usize) -> usize {
    j.key("offset").u64(offset);
    j.key("length").u64(length as u64);
    length
}

fn write_new_token(j: &mut Json<'_>, length: usize) {
    j.key("token").begin_obj();
    j.key("raw").begin_obj();
    j.key("length").u64(length as u64);
    j.end_obj().end_obj();
}

/// STREAM; returns its Length field.
fn write_stream(j: &mut Json<'_>, id: StreamId, offset: u64, length: usize, fin: bool) -> usize {
    j.key("stream_id").u64(id.0);
    j.key("offset").u64(offset);
    j.key("length").u64(length as u64);
    j.key("fin").bool(fin);
    length
}

/// RESET_STREAM (with `final_size`) and STOP_SENDING (without).
fn write_stream_error(j: &mut Json<'_>, id: StreamId, error_code: u64, final_size: Option<u64>) {
    j.key("stream_id").u64(id.0);
    j.key("error").lit("unknown");
    j.key("error_code").u64(error_code);
    if let Some(size) = final_size {
        j.key("final_size").u64(size);
    }
}

/// MAX_DATA / DATA_BLOCKED (no stream) and MAX_STREAM_DATA / STREAM_DATA_BLOCKED;
/// `key` is `maximum` or `limit`.
fn write_limit(j: &mut Json<'_>, key: &str, id: Option<StreamId>, value: u64) {
    if let Some(id) = id {
        j.key("stream_id").u64(id.0);
    }
    j.key(key).u64(value);
}

/// MAX_STREAMS and STREAMS_BLOCKED; `key` is `maximum` or `limit`.
fn write_stream_count(j: &mut Json<'_>, key: &str, dir: Dir, value: u64) {
    j.key("stream_type").lit(stream_type_name(dir));
    j.key(key).u64(value);
}

/// CONNECTION_CLOSE: the transport variant carries the frame type that triggered it.
fn write_connection_close(
    j: &mut Json<'_>,
    frame_type: Option<u64>,
    error_code: u64,
    reason: &str,
) {
    match frame_type {
        Some(ft) => {
            j.key("error_space").lit("transport");
            write_transport_error(j, "error", error_code);
            j.key("reason").str(reason);
            j.key("trigger_frame_type").u64(ft);
        }
        None => {
            j.key("error_space").lit("application");
            j.key("error").lit("unknown");
            j.key("error_code").u64(error_code);
            j.key("reason").str(reason);
        }
    }
}

/// ACK_FREQUENCY (draft-ietf-quic-ack-frequency); the delay in ms.
fn write_ack_frequency(j: &mut Json<'_>, a: &AckFrequencyFrame) {
    j.key("sequence_number").u64(a.sequence);
    j.key("ack_eliciting_threshold")
        .u64(a.ack_eliciting_threshold);
    j.key("request_max_ack_delay")
        .ms_from_us(a.request_max_ack_delay);
    j.key("reordering_threshold").u64(a.reordering_threshold);
}

fn stream_type_name(d: Dir) -> &'static str {
    match d {
        Dir::Bi => "bidirectional",
        Dir::Uni => "unidirectional",
    }
}
