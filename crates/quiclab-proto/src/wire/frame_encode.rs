//! Frame encoding (RFC 9000 §19). Values come from our own state, so encoding cannot fail;
//! out-of-range values are bugs and panic in `varint::write`.

use super::frame::{frame_type as t, AckFrame, Frame};
use super::frame_fields::{ack_body_len, size, write_ack_body};
use super::ids::{Dir, StreamId};
use super::varint;

/// Size of a STREAM frame header for `data_len` bytes at `offset`
/// (`with_len`: whether the Length field is present; omit it only for a packet's last frame).
pub fn stream_header_len(id: StreamId, offset: u64, data_len: usize, with_len: bool) -> usize {
    size(&[
        1,
        varint::len(id.0),
        if offset > 0 { varint::len(offset) } else { 0 },
        if with_len {
            varint::len(data_len as u64)
        } else {
            0
        },
    ])
}

/// Appends a STREAM frame header (RFC 9000 §19.8); the caller appends `data_len` bytes.
pub fn write_stream_header(
    buf: &mut Vec<u8>,
    id: StreamId,
    offset: u64,
    data_len: usize,
    fin: bool,
    with_len: bool,
) {
    let ty = t::STREAM
        | if offset > 0 { 0x04 } else { 0 }
        | if with_len { 0x02 } else { 0 }
        | u64::from(fin);
    varint::write(buf, ty);
    varint::write(buf, id.0);
    if offset > 0 {
        varint::write(buf, offset);
    }
    if with_len {
        varint::write(buf, data_len as u64);
    }
}

/// Size of a CRYPTO frame header (RFC 9000 §19.6) for `data_len` bytes at `offset`.
pub fn crypto_header_len(offset: u64, data_len: usize) -> usize {
    size(&[1, varint::len(offset), varint::len(data_len as u64)])
}

/// Appends a CRYPTO frame header; the caller appends `data_len` bytes.
pub fn write_crypto_header(buf: &mut Vec<u8>, offset: u64, data_len: usize) {
    varint::write(buf, t::CRYPTO);
    varint::write(buf, offset);
    varint::write(buf, data_len as u64);
}

fn ack_len(a: &AckFrame) -> usize {
    ack_body_len(a).saturating_add(1)
}

fn write_ack(buf: &mut Vec<u8>, a: &AckFrame) {
    varint::write(buf, if a.ecn.is_some() { t::ACK_ECN } else { t::ACK });
    write_ack_body(buf, a);
}

fn dir_code(dir: Dir, bidi: u64, uni: u64) -> u64 {
    match dir {
        Dir::Bi => bidi,
        Dir::Uni => uni,
    }
}

impl Frame<'_> {
    /// Appends the frame. STREAM and DATAGRAM frames are written with a Length field.
    ///
    /// # Panics
    /// On values a peer could never accept (an ACK with no range, a varint above 2^62-1).
    pub fn encode(&self, buf: &mut Vec<u8>) {
        let w = |buf: &mut Vec<u8>, v: u64| varint::write(buf, v);
        match self {
            Frame::Padding { len } => buf.resize(buf.len().saturating_add(*len), 0),
            Frame::Ping => w(buf, t::PING),
            Frame::Ack(a) => write_ack(buf, a),
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => {
                w(buf, t::RESET_STREAM);
                w(buf, id.0);
                w(buf, *error_code);
                w(buf, *final_size);
            }
            Frame::StopSending { id, error_code } => {
                w(buf, t::STOP_SENDING);
                w(buf, id.0);
                w(buf, *error_code);
            }
            Frame::Crypto { offset, data } => {
                write_crypto_header(buf, *offset, data.len());
                buf.extend_from_slice(data);
            }
            Frame::NewToken { token } => {
                w(buf, t::NEW_TOKEN);
                w(buf, token.len() as u64);
                buf.extend_from_slice(token);
            }
            Frame::Stream(s) => {
                write_stream_header(buf, s.id, s.offset, s.data.len(), s.fin, true);
                buf.extend_from_slice(s.data);
            }
            Frame::MaxData(v) => {
                w(buf, t::MAX_DATA);
                w(buf, *v);
            }
            Frame::MaxStreamData { id, max } => {
                w(buf, t::MAX_STREAM_DATA);
                w(buf, id.0);
                w(buf, *max);
            }
            Frame::MaxStreams { dir, max } => {
                w(buf, dir_code(*dir, t::MAX_STREAMS_BIDI, t::MAX_STREAMS_UNI));
                w(buf, *max);
            }
            Frame::DataBlocked { limit } => {
                w(buf, t::DATA_BLOCKED);
                w(buf, *limit);
            }
            Frame::StreamDataBlocked { id, limit } => {
                w(buf, t::STREAM_DATA_BLOCKED);
                w(buf, id.0);
                w(buf, *limit);
            }
            Frame::StreamsBlocked { dir, limit } => {
                w(
                    buf,
                    dir_code(*dir, t::STREAMS_BLOCKED_BIDI, t::STREAMS_BLOCKED_UNI),
                );
                w(buf, *limit);
            }
            Frame::NewConnectionId(f) => {
                w(buf, t::NEW_CONNECTION_ID);
                w(buf, f.sequence);
                w(buf, f.retire_prior_to);
                buf.push(f.id.len() as u8);
                buf.extend_from_slice(f.id.as_bytes());
                buf.extend_from_slice(&f.reset_token);
            }
            Frame::RetireConnectionId { sequence } => {
                w(buf, t::RETIRE_CONNECTION_ID);
                w(buf, *sequence);
            }
            Frame::PathChallenge(d) => {
                w(buf, t::PATH_CHALLENGE);
                buf.extend_from_slice(d);
            }
            Frame::PathResponse(d) => {
                w(buf, t::PATH_RESPONSE);
                buf.extend_from_slice(d);
            }
            Frame::ConnectionClose(c) => {
                match c.frame_type {
                    Some(ft) => {
                        w(buf, t::CONNECTION_CLOSE);
                        w(buf, c.error_code);
                        w(buf, ft);
                    }
                    None => {
                        w(buf, t::CONNECTION_CLOSE_APP);
                        w(buf, c.error_code);
                    }
                }
                w(buf, c.reason.len() as u64);
                buf.extend_from_slice(c.reason);
            }
            Frame::HandshakeDone => w(buf, t::HANDSHAKE_DONE),
            Frame::Datagram { data } => {
                w(buf, t::DATAGRAM_LEN);
                w(buf, data.len() as u64);
                buf.extend_from_slice(data);
            }
            Frame::AckFrequency(f) => {
                w(buf, t::ACK_FREQUENCY);
                w(buf, f.sequence);
                w(buf, f.ack_eliciting_threshold);
                w(buf, f.request_max_ack_delay);
                w(buf, f.reordering_threshold);
            }
            Frame::ImmediateAck => w(buf, t::IMMEDIATE_ACK),
            Frame::Multipath(m) => m.encode(buf),
        }
    }

    /// The number of bytes [`Frame::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        let l = varint::len;
        match self {
            Frame::Padding { len } => *len,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::ImmediateAck => 1,
            Frame::Ack(a) => ack_len(a),
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => size(&[1, l(id.0), l(*error_code), l(*final_size)]),
            Frame::StopSending { id, error_code } => size(&[1, l(id.0), l(*error_code)]),
            Frame::Crypto { offset, data } => {
                size(&[crypto_header_len(*offset, data.len()), data.len()])
            }
            Frame::NewToken { token } => size(&[1, l(token.len() as u64), token.len()]),
            Frame::Stream(s) => size(&[
                stream_header_len(s.id, s.offset, s.data.len(), true),
                s.data.len(),
            ]),
            Frame::MaxData(v) => size(&[1, l(*v)]),
            Frame::MaxStreamData { id, max } => size(&[1, l(id.0), l(*max)]),
            Frame::MaxStreams { max, .. } => size(&[1, l(*max)]),
            Frame::DataBlocked { limit } => size(&[1, l(*limit)]),
            Frame::StreamDataBlocked { id, limit } => size(&[1, l(id.0), l(*limit)]),
            Frame::StreamsBlocked { limit, .. } => size(&[1, l(*limit)]),
            Frame::NewConnectionId(f) => {
                // Type, sequence, retire prior to, length byte, ID, 16-byte reset token.
                size(&[1, l(f.sequence), l(f.retire_prior_to), 1, f.id.len(), 16])
            }
            Frame::RetireConnectionId { sequence } => size(&[1, l(*sequence)]),
            Frame::PathChallenge(_) | Frame::PathResponse(_) => 9,
            Frame::ConnectionClose(c) => size(&[
                1,
                l(c.error_code),
                c.frame_type.map_or(0, l),
                l(c.reason.len() as u64),
                c.reason.len(),
            ]),
            Frame::Datagram { data } => size(&[1, l(data.len() as u64), data.len()]),
            Frame::AckFrequency(f) => size(&[
                2,
                l(f.sequence),
                l(f.ack_eliciting_threshold),
                l(f.request_max_ack_delay),
                l(f.reordering_threshold),
            ]),
            Frame::Multipath(m) => m.encoded_len(),
        }
    }
}
