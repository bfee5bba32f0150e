//! Frame decoding (RFC 9000 §12.4, §19). Peer input: never panics; every malformed frame
//! is a `TransportError` (FRAME_ENCODING_ERROR, or PROTOCOL_VIOLATION where the RFC says
//! so) carrying the offending frame type.

use super::frame::{frame_type as t, AckFrequencyFrame, ConnectionCloseFrame, Frame, StreamFrame};
use super::frame_fields::{bad, decode_ack, decode_new_cid, Fields};
use super::frame_mp::is_multipath_type;
use super::frame_mp_codec;
use super::header::PacketType;
use super::ids::{Dir, StreamId};
use super::varint::{self, Reader};
use crate::error::TransportError;
use std::ops::RangeInclusive;

/// RFC 9000 §19.11, §19.14: stream counts above 2^60 cannot be expressed as stream IDs.
const MAX_STREAM_COUNT: u64 = 1 << 60;

/// Iterates over the frames of a decrypted packet payload. After the first error it
/// yields `None`.
pub struct FrameIter<'a> {
    r: Reader<'a>,
    failed: bool,
    /// The buffer the next ACK frame's ranges are decoded into (taken by that frame).
    ack_ranges: Vec<RangeInclusive<u64>>,
}

/// Frames of `payload`, in order.
pub fn decode_frames(payload: &[u8]) -> FrameIter<'_> {
    decode_frames_reusing(payload, Vec::new())
}

/// Frames of `payload`, in order; the first ACK frame's ranges are decoded into
/// `ack_ranges` (cleared first), so a caller that hands back the previous ACK's
/// `ranges` decodes the common ACK without allocating.
pub fn decode_frames_reusing(
    payload: &[u8],
    ack_ranges: Vec<RangeInclusive<u64>>,
) -> FrameIter<'_> {
    FrameIter {
        r: Reader::new(payload),
        failed: false,
        ack_ranges,
    }
}

impl FrameIter<'_> {
    /// The range buffer no ACK frame took (empty, or the caller's if none came).
    pub fn take_ack_ranges(&mut self) -> Vec<RangeInclusive<u64>> {
        std::mem::take(&mut self.ack_ranges)
    }
}

impl<'a> Iterator for FrameIter<'a> {
    type Item = Result<Frame<'a>, TransportError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.r.is_empty() {
            return None;
        }
        let res = decode_one(&mut self.r, &mut self.ack_ranges);
        if res.is_err() {
            self.failed = true;
        }
        Some(res)
    }
}

fn decode_one<'a>(
    r: &mut Reader<'a>,
    ack_ranges: &mut Vec<RangeInclusive<u64>>,
) -> Result<Frame<'a>, TransportError> {
    let start = r.position();
    // RFC 9000 §12.4: the type is a varint but must use its shortest encoding.
    let ty = r
        .varint()
        .map_err(|_| TransportError::frame_encoding("frame type truncated"))?;
    if r.position().saturating_sub(start) != varint::len(ty) {
        return Err(
            TransportError::protocol_violation("frame type not minimally encoded").with_frame(ty),
        );
    }
    let mut f = Fields { r, ty };
    let frame = match ty {
        t::PADDING => {
            // RFC 9000 §19.1: a run of PADDING bytes is reported as one frame.
            let zeros = f.r.clone().rest().iter().take_while(|&&b| b == 0).count();
            let _ = f.r.bytes(zeros);
            Frame::Padding {
                len: zeros.saturating_add(1),
            }
        }
        t::PING => Frame::Ping,
        t::ACK | t::ACK_ECN => {
            let spare = std::mem::take(ack_ranges);
            Frame::Ack(decode_ack(&mut f, ty == t::ACK_ECN, spare)?)
        }
        t::RESET_STREAM => Frame::ResetStream {
            id: StreamId(f.varint()?),
            error_code: f.varint()?,
            final_size: f.varint()?,
        },
        t::STOP_SENDING => Frame::StopSending {
            id: StreamId(f.varint()?),
            error_code: f.varint()?,
        },
        t::CRYPTO => {
            // RFC 9000 §19.6: offset + length must stay below 2^62.
            let offset = f.varint()?;
            let data = f.len_prefixed()?;
            check_end(ty, offset, data.len())?;
            Frame::Crypto { offset, data }
        }
        t::NEW_TOKEN => {
            // RFC 9000 §19.7: an empty token is FRAME_ENCODING_ERROR.
            let token = f.len_prefixed()?;
            if token.is_empty() {
                return Err(bad(ty, "empty NEW_TOKEN"));
            }
            Frame::NewToken { token }
        }
        0x08..=0x0f => {
            // RFC 9000 §19.8: OFF (0x04), LEN (0x02), FIN (0x01) bits.
            let id = StreamId(f.varint()?);
            let offset = if ty & 0x04 != 0 { f.varint()? } else { 0 };
            let data = if ty & 0x02 != 0 {
                f.len_prefixed()?
            } else {
                f.r.rest()
            };
            check_end(ty, offset, data.len())?;
            Frame::Stream(StreamFrame {
                id,
                offset,
                fin: ty & 0x01 != 0,
                data,
            })
        }
        t::MAX_DATA => Frame::MaxData(f.varint()?),
        t::MAX_STREAM_DATA => Frame::MaxStreamData {
            id: StreamId(f.varint()?),
            max: f.varint()?,
        },
        t::MAX_STREAMS_BIDI | t::MAX_STREAMS_UNI => Frame::MaxStreams {
            dir: dir_of(ty, t::MAX_STREAMS_BIDI),
            max: stream_count(&mut f)?,
        },
        t::DATA_BLOCKED => Frame::DataBlocked { limit: f.varint()? },
        t::STREAM_DATA_BLOCKED => Frame::StreamDataBlocked {
            id: StreamId(f.varint()?),
            limit: f.varint()?,
        },
        t::STREAMS_BLOCKED_BIDI | t::STREAMS_BLOCKED_UNI => Frame::StreamsBlocked {
            dir: dir_of(ty, t::STREAMS_BLOCKED_BIDI),
            limit: stream_count(&mut f)?,
        },
        t::NEW_CONNECTION_ID => Frame::NewConnectionId(decode_new_cid(&mut f)?),
        t::RETIRE_CONNECTION_ID => Frame::RetireConnectionId {
            sequence: f.varint()?,
        },
        t::PATH_CHALLENGE => Frame::PathChallenge(f.array()?),
        t::PATH_RESPONSE => Frame::PathResponse(f.array()?),
        t::CONNECTION_CLOSE | t::CONNECTION_CLOSE_APP => {
            // RFC 9000 §19.19: only the transport variant carries a frame type.
            let error_code = f.varint()?;
            let frame_type = if ty == t::CONNECTION_CLOSE {
                Some(f.varint()?)
            } else {
                None
            };
            Frame::ConnectionClose(ConnectionCloseFrame {
                error_code,
                frame_type,
                reason: f.len_prefixed()?,
            })
        }
        t::HANDSHAKE_DONE => Frame::HandshakeDone,
        // draft-ietf-quic-ack-frequency §5.
        t::IMMEDIATE_ACK => Frame::ImmediateAck,
        // RFC 9221 §4: without the length bit the data runs to the end of the packet.
        t::DATAGRAM => Frame::Datagram { data: f.r.rest() },
        t::DATAGRAM_LEN => Frame::Datagram {
            data: f.len_prefixed()?,
        },
        // draft-ietf-quic-ack-frequency §4.
        t::ACK_FREQUENCY => Frame::AckFrequency(AckFrequencyFrame {
            sequence: f.varint()?,
            ack_eliciting_threshold: f.varint()?,
            request_max_ack_delay: f.varint()?,
            reordering_threshold: f.varint()?,
        }),
        // draft-ietf-quic-multipath §4; whether they may be used is the connection's call.
        mp if is_multipath_type(mp) => Frame::Multipath(frame_mp_codec::decode(&mut f)?),
        // RFC 9000 §12.4: unknown frame types are FRAME_ENCODING_ERROR.
        _ => return Err(bad(ty, "unknown frame type")),
    };
    Ok(frame)
}

fn dir_of(ty: u64, bidi: u64) -> Dir {
    if ty == bidi {
        Dir::Bi
    } else {
        Dir::Uni
    }
}

/// RFC 9000 §19.8 / §19.6: the end of the data must not exceed 2^62 - 1.
fn check_end(ty: u64, offset: u64, len: usize) -> Result<(), TransportError> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= varint::MAX => Ok(()),
        _ => Err(bad(ty, "data end exceeds 2^62-1")),
    }
}

/// RFC 9000 §19.11, §19.14: a count above 2^60 is FRAME_ENCODING_ERROR.
fn stream_count(f: &mut Fields<'_, '_>) -> Result<u64, TransportError> {
    let v = f.varint()?;
    if v > MAX_STREAM_COUNT {
        return Err(bad(f.ty, "stream count exceeds 2^60"));
    }
    Ok(v)
}

impl Frame<'_> {
    /// Whether this frame may appear in a packet of type `ty` (RFC 9000 §12.4, Table 3;
    /// RFC 9221 §4 and the ack-frequency draft: 0-RTT and 1-RTT only).
    ///
    /// 0-RTT also excludes RETIRE_CONNECTION_ID: Table 3 lists it as "__01", but
    /// RFC 9000 §12.5 says it cannot be sent in 0-RTT and allows rejecting it.
    pub fn permitted_in(&self, ty: PacketType) -> bool {
        use PacketType as P;
        match self {
            Frame::Padding { .. } | Frame::Ping => {
                matches!(ty, P::Initial | P::Handshake | P::ZeroRtt | P::OneRtt)
            }
            Frame::Ack(_) | Frame::Crypto { .. } => {
                matches!(ty, P::Initial | P::Handshake | P::OneRtt)
            }
            // "ih01": only the transport variant (0x1c) in Initial/Handshake.
            Frame::ConnectionClose(c) => match ty {
                P::Initial | P::Handshake => c.frame_type.is_some(),
                P::ZeroRtt | P::OneRtt => true,
                P::Retry | P::VersionNegotiation => false,
            },
            // "___1" (and RETIRE_CONNECTION_ID per §12.5).
            Frame::NewToken { .. }
            | Frame::HandshakeDone
            | Frame::PathResponse(_)
            | Frame::RetireConnectionId { .. } => ty == P::OneRtt,
            // "__01", DATAGRAM (RFC 9221 §4) and the ack-frequency frames.
            Frame::ResetStream { .. }
            | Frame::StopSending { .. }
            | Frame::Stream(_)
            | Frame::MaxData(_)
            | Frame::MaxStreamData { .. }
            | Frame::MaxStreams { .. }
            | Frame::DataBlocked { .. }
            | Frame::StreamDataBlocked { .. }
            | Frame::StreamsBlocked { .. }
            | Frame::NewConnectionId(_)
            | Frame::PathChallenge(_)
            | Frame::Datagram { .. }
            | Frame::AckFrequency(_)
            | Frame::ImmediateAck => matches!(ty, P::ZeroRtt | P::OneRtt),
            // draft-ietf-quic-multipath §4: "MUST only be sent in 1-RTT packets".
            Frame::Multipath(_) => ty == P::OneRtt,
        }
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;
    use crate::error::TransportErrorCode as Code;
    use crate::wire::frame::{AckFrame, EcnCounts, NewConnectionIdFrame};
    use crate::wire::ids::ConnectionId;
    use proptest::prelude::*;

    fn decode_all(buf: &[u8]) -> Result<Vec<Frame<'_>>, TransportError> {
        decode_frames(buf).collect()
    }

    fn roundtrip(frame: &Frame<'_>) {
        let mut buf = Vec::new();
        frame.encode(&mut buf);
        assert_eq!(buf.len(), frame.encoded_len(), "{frame:?}");
        let got = decode_all(&buf).unwrap();
        assert_eq!(got, vec![frame.clone()]);
    }

    fn err(buf: &[u8]) -> TransportError {
        let res: Result<Vec<_>, _> = decode_frames(buf).collect();
        res.unwrap_err()
    }

    fn assert_err(buf: &[u8], code: Code, ty: u64) {
        let e = err(buf);
        assert_eq!((e.code, e.frame_type), (code, Some(ty)), "{buf:02x?}: {e}");
    }

    fn sample_frames() -> Vec<Frame<'static>> {
        let cid = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        vec![
            Frame::Padding { len: 7 },
            Frame::Ping,
            Frame::Ack(AckFrame {
                ack_delay: 1234,
                ranges: vec![100..=110, 50..=97, 0..=0],
                ecn: None,
            }),
            Frame::Ack(AckFrame {
                ack_delay: 0,
                ranges: vec![5..=5],
                ecn: Some(EcnCounts {
                    ect0: 1,
                    ect1: 2,
                    ce: 1 << 40,
                }),
            }),
            Frame::ResetStream {
                id: StreamId(4),
                error_code: 77,
                final_size: 1 << 20,
            },
            Frame::StopSending {
                id: StreamId(3),
                error_code: 9,
            },
            Frame::Crypto {
                offset: 1000,
                data: b"client hello",
            },
            Frame::NewToken { token: b"tok" },
            Frame::Stream(StreamFrame {
                id: StreamId(8),
                offset: 0,
                fin: false,
                data: b"abc",
            }),
            Frame::Stream(StreamFrame {
                id: StreamId(1 << 30),
                offset: 99_999,
                fin: true,
                data: b"",
            }),
            Frame::MaxData(1 << 50),
            Frame::MaxStreamData {
                id: StreamId(2),
                max: 65536,
            },
            Frame::MaxStreams {
                dir: Dir::Bi,
                max: 100,
            },
            Frame::MaxStreams {
                dir: Dir::Uni,
                max: MAX_STREAM_COUNT,
            },
            Frame::DataBlocked { limit: 10 },
            Frame::StreamDataBlocked {
                id: StreamId(6),
                limit: 20,
            },
            Frame::StreamsBlocked {
                dir: Dir::Bi,
                limit: 3,
            },
            Frame::StreamsBlocked {
                dir: Dir::Uni,
                limit: 4,
            },
            Frame::NewConnectionId(NewConnectionIdFrame {
                sequence: 3,
                retire_prior_to: 1,
                id: cid,
                reset_token: [0xab; 16],
            }),
            Frame::RetireConnectionId { sequence: 2 },
            Frame::PathChallenge([1, 2, 3, 4, 5, 6, 7, 8]),
            Frame::PathResponse([8, 7, 6, 5, 4, 3, 2, 1]),
            Frame::ConnectionClose(ConnectionCloseFrame {
                error_code: 0x0a,
                frame_type: Some(0x08),
                reason: b"bad stream",
            }),
            Frame::ConnectionClose(ConnectionCloseFrame {
                error_code: 42,
                frame_type: None,
                reason: b"",
            }),
            Frame::HandshakeDone,
            Frame::Datagram { data: b"dgram" },
            Frame::AckFrequency(AckFrequencyFrame {
                sequence: 1,
                ack_eliciting_threshold: 10,
                request_max_ack_delay: 25_000,
                reordering_threshold: 3,
            }),
            Frame::ImmediateAck,
        ]
    }

    #[test]
    fn roundtrip_every_frame_type() {
        let frames = sample_frames();
        for f in &frames {
            roundtrip(f);
        }
        // All of them back to back (PADDING first so it does not merge with another run).
        let mut buf = Vec::new();
        for f in &frames {
            f.encode(&mut buf);
        }
        assert_eq!(decode_all(&buf).unwrap(), frames);
    }

    #[test]
    fn padding_run_is_one_frame() {
        let buf = [0, 0, 0, 1, 0, 0];
        assert_eq!(
            decode_all(&buf).unwrap(),
            vec![
                Frame::Padding { len: 3 },
                Frame::Ping,
                Frame::Padding { len: 2 }
            ]
        );
        assert!(decode_frames(&[]).next().is_none());
    }

    #[test]
    fn implicit_length_stream_and_datagram() {
        // STREAM without LEN (0x08 | OFF | FIN) and DATAGRAM 0x30 run to the end.
        let buf = [0x0d, 0x04, 0x05, b'h', b'i'];
        assert_eq!(
            decode_all(&buf).unwrap(),
            vec![Frame::Stream(StreamFrame {
                id: StreamId(4),
                offset: 5,
                fin: true,
                data: b"hi"
            })]
        );
        let buf = [0x01, 0x30, 1, 2, 3];
        assert_eq!(
            decode_all(&buf).unwrap(),
            vec![Frame::Ping, Frame::Datagram { data: &[1, 2, 3] }]
        );
    }

    /// A handed-back range buffer is cleared and reused (no allocation); the second ACK
    /// of a packet gets a fresh one; bad ranges still fail with their typed error.
    #[test]
    fn ack_ranges_decode_into_the_reused_buffer() {
        let mut spare = Vec::with_capacity(4);
        spare.push(900..=901);
        let ptr = spare.as_ptr();
        // ACK largest 10, delay 0, 1 more range, first 2 (8..=10), gap 0 len 1 (5..=6);
        // then ACK largest 3, delay 0, 0 more, first 0.
        let buf = [0x02, 10, 0, 1, 2, 0, 1, 0x02, 3, 0, 0, 0];
        let frames: Vec<_> = decode_frames_reusing(&buf, spare).collect();
        let [Ok(Frame::Ack(a)), Ok(Frame::Ack(b))] = &frames[..] else {
            panic!("two ACKs: {frames:?}");
        };
        assert_eq!(
            (&a.ranges[..], &b.ranges[..]),
            (&[8..=10, 5..=6][..], &[3..=3][..])
        );
        assert_eq!(a.ranges.as_ptr(), ptr);
        // Without an ACK, the buffer comes back.
        let mut it = decode_frames_reusing(&[0x01], vec![7..=7]);
        assert_eq!(it.next(), Some(Ok(Frame::Ping)));
        assert_eq!(it.take_ack_ranges(), [7..=7]);
        // Largest 2, first range 5: below zero.
        let res: Result<Vec<_>, _> =
            decode_frames_reusing(&[0x02, 2, 0, 0, 5], vec![1..=1]).collect();
        assert_eq!(res.unwrap_err().code, Code::FRAME_ENCODING_ERROR);
    }

    #[test]
    fn stops_after_first_error() {
        let mut it = decode_frames(&[0x01, 0x21, 0x01]);
        assert_eq!(it.next(), Some(Ok(Frame::Ping)));
        assert!(matches!(it.next(), Some(Err(_))));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn truncated_frames() {
        for f in sample_frames() {
            if matches!(f, Frame::Padding { .. }) {
                continue;
            }
            let mut buf = Vec::new();
            f.encode(&mut buf);
            let ty = f.type_code();
            for cut in 1..buf.len() {
                let prefix = &buf[..cut];
                // Cuts that leave a valid shorter frame: implicit-length frames do not
                // exist in our encoding, so every proper prefix must fail.
                let e = err(prefix);
                if cut < varint::len(ty) {
                    continue;
                }
                assert_eq!(e.code, Code::FRAME_ENCODING_ERROR, "{f:?} cut {cut}");
                assert_eq!(e.frame_type, Some(ty), "{f:?} cut {cut}");
            }
        }
    }

    #[test]
    fn unknown_frame_type() {
        assert_err(&[0x21], Code::FRAME_ENCODING_ERROR, 0x21);
        assert_err(&[0x40, 0x40], Code::FRAME_ENCODING_ERROR, 0x40);
        // A truncated type has no frame type to report.
        let e = err(&[0x01, 0x40]);
        assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, None));
    }

    #[test]
    fn non_minimal_frame_type() {
        // RFC 9000 §12.4: PING as 0x4001.
        assert_err(&[0x40, 0x01], Code::PROTOCOL_VIOLATION, 0x01);
        assert_err(&[0x80, 0, 0, 0x00], Code::PROTOCOL_VIOLATION, 0x00);
    }

    #[test]
    fn ack_underflow() {
        // First range longer than Largest Acknowledged.
        assert_err(&[0x02, 5, 0, 0, 6], Code::FRAME_ENCODING_ERROR, 0x02);
        // Gap below zero: smallest 3, gap 2 -> 3 - 2 - 2 < 0.
        assert_err(&[0x02, 5, 0, 1, 2, 2, 0], Code::FRAME_ENCODING_ERROR, 0x02);
        // Range below zero: smallest 5, gap 0 -> hi 3, len 4.
        assert_err(&[0x03, 5, 0, 1, 0, 0, 4], Code::FRAME_ENCODING_ERROR, 0x03);
        // Exactly reaching zero is fine.
        let ok = decode_all(&[0x02, 5, 0, 1, 0, 0, 3]).unwrap();
        assert_eq!(
            ok,
            vec![Frame::Ack(AckFrame {
                ack_delay: 0,
                ranges: vec![5..=5, 0..=3],
                ecn: None
            })]
        );
        // A huge range count with no ranges following is truncation, not an allocation.
        let buf = [
            0x02, 5, 0, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,
        ];
        assert_err(&buf, Code::FRAME_ENCODING_ERROR, 0x02);
    }

    #[test]
    fn stream_and_crypto_end_limit() {
        let max8 = [0xff; 8];
        // STREAM with OFF|LEN: offset 2^62-1, length 1.
        let mut buf = vec![0x0e, 0x00];
        buf.extend_from_slice(&max8);
        buf.extend_from_slice(&[0x01, 0xaa]);
        assert_err(&buf, Code::FRAME_ENCODING_ERROR, 0x0e);
        // Offset 2^62-1 with no data is allowed.
        buf.truncate(10);
        buf.push(0x00);
        assert!(decode_all(&buf).is_ok());
        // CRYPTO likewise.
        let mut buf = vec![0x06];
        buf.extend_from_slice(&max8);
        buf.extend_from_slice(&[0x01, 0xaa]);
        assert_err(&buf, Code::FRAME_ENCODING_ERROR, 0x06);
    }

    #[test]
    fn new_connection_id_checks() {
        let frame = |seq: u8, rpt: u8, len: u8| {
            let mut b = vec![0x18, seq, rpt, len];
            b.extend(std::iter::repeat_n(7, len as usize + 16));
            b
        };
        assert!(decode_all(&frame(1, 0, 20)).is_ok());
        assert_err(&frame(1, 0, 0), Code::FRAME_ENCODING_ERROR, 0x18);
        assert_err(&frame(1, 0, 21), Code::FRAME_ENCODING_ERROR, 0x18);
        assert_err(&frame(1, 2, 8), Code::FRAME_ENCODING_ERROR, 0x18);
    }

    #[test]
    fn stream_count_limit() {
        // 2^60 + 1 as an 8-byte varint.
        let mut v = Vec::new();
        varint::write(&mut v, MAX_STREAM_COUNT + 1);
        for ty in [0x12u8, 0x13, 0x16, 0x17] {
            let mut buf = vec![ty];
            buf.extend_from_slice(&v);
            assert_err(&buf, Code::FRAME_ENCODING_ERROR, u64::from(ty));
        }
    }

    #[test]
    fn empty_new_token() {
        assert_err(&[0x07, 0x00], Code::FRAME_ENCODING_ERROR, 0x07);
    }

    #[test]
    fn bad_lengths() {
        // Length runs past the end of the payload.
        assert_err(&[0x31, 0x05, 1, 2], Code::FRAME_ENCODING_ERROR, 0x31);
        assert_err(&[0x1d, 0x00, 0x09, b'x'], Code::FRAME_ENCODING_ERROR, 0x1d);
        assert_err(&[0x0a, 0x00, 0x03, b'x'], Code::FRAME_ENCODING_ERROR, 0x0a);
        // An 8-byte length beyond usize on 32-bit targets, beyond input everywhere.
        let buf = [0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_err(&buf, Code::FRAME_ENCODING_ERROR, 0x07);
    }

    #[test]
    fn permitted_frames() {
        use PacketType as P;
        let close_app = Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: 0,
            frame_type: None,
            reason: b"",
        });
        let close = Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: 0,
            frame_type: Some(0),
            reason: b"",
        });
        // [Initial, Handshake, 0-RTT, 1-RTT]
        let check = |f: &Frame<'_>, want: [bool; 4]| {
            let got = [P::Initial, P::Handshake, P::ZeroRtt, P::OneRtt].map(|t| f.permitted_in(t));
            assert_eq!(got, want, "{f:?}");
            assert!(!f.permitted_in(P::Retry) && !f.permitted_in(P::VersionNegotiation));
        };
        for f in sample_frames() {
            if matches!(f, Frame::ConnectionClose(_)) {
                continue;
            }
            let want = match f {
                Frame::Padding { .. } | Frame::Ping => [true; 4],
                Frame::Ack(_) | Frame::Crypto { .. } => [true, true, false, true],
                Frame::NewToken { .. }
                | Frame::HandshakeDone
                | Frame::PathResponse(_)
                | Frame::RetireConnectionId { .. } => [false, false, false, true],
                _ => [false, false, true, true],
            };
            check(&f, want);
        }
        check(&close, [true; 4]);
        check(&close_app, [false, false, true, true]);
    }

    pub(crate) fn arb_frame() -> impl Strategy<Value = Frame<'static>> {
        let v = || 0..=varint::MAX;
        let data = || {
            proptest::collection::vec(any::<u8>(), 0..40)
                .prop_map(|v| &*Box::leak(v.into_boxed_slice()))
        };
        let ack = (
            v(),
            v(),
            proptest::collection::vec((0u64..1000, 0u64..1000), 0..8),
            proptest::option::of((v(), v(), v())),
        )
            .prop_map(|(largest, delay, steps, ecn)| {
                // Walk downwards, stopping when the next range would go below zero.
                let mut ranges = Vec::new();
                let mut hi = largest;
                for (i, (gap, len)) in steps.into_iter().enumerate() {
                    if i > 0 {
                        match hi.checked_sub(gap + 2) {
                            Some(h) => hi = h,
                            None => break,
                        }
                    }
                    let lo = hi.saturating_sub(len);
                    ranges.push(lo..=hi);
                    hi = lo;
                }
                if ranges.is_empty() {
                    ranges.push(largest..=largest);
                }
                Frame::Ack(AckFrame {
                    ack_delay: delay,
                    ranges,
                    ecn: ecn.map(|(ect0, ect1, ce)| EcnCounts { ect0, ect1, ce }),
                })
            });
        prop_oneof![
            (1usize..50).prop_map(|len| Frame::Padding { len }),
            Just(Frame::Ping),
            ack,
            (v(), v(), v()).prop_map(|(id, error_code, final_size)| Frame::ResetStream {
                id: StreamId(id),
                error_code,
                final_size
            }),
            (v(), v()).prop_map(|(id, e)| Frame::StopSending {
                id: StreamId(id),
                error_code: e
            }),
            (0..=varint::MAX - 100, data())
                .prop_map(|(offset, data)| Frame::Crypto { offset, data }),
            data()
                .prop_filter("non-empty", |d| !d.is_empty())
                .prop_map(|token| Frame::NewToken { token }),
            (v(), 0..=varint::MAX - 100, any::<bool>(), data()).prop_map(
                |(id, offset, fin, data)| Frame::Stream(StreamFrame {
                    id: StreamId(id),
                    offset,
                    fin,
                    data
                })
            ),
            v().prop_map(Frame::MaxData),
            (v(), v()).prop_map(|(id, max)| Frame::MaxStreamData {
                id: StreamId(id),
                max
            }),
            (any::<bool>(), 0..=MAX_STREAM_COUNT).prop_map(|(b, max)| Frame::MaxStreams {
                dir: if b { Dir::Bi } else { Dir::Uni },
                max
            }),
            v().prop_map(|limit| Frame::DataBlocked { limit }),
            (v(), v()).prop_map(|(id, limit)| Frame::StreamDataBlocked {
                id: StreamId(id),
                limit
            }),
            (any::<bool>(), 0..=MAX_STREAM_COUNT).prop_map(|(b, limit)| Frame::StreamsBlocked {
                dir: if b { Dir::Bi } else { Dir::Uni },
                limit
            }),
            (
                v(),
                v(),
                proptest::collection::vec(any::<u8>(), 1..=20),
                any::<[u8; 16]>()
            )
                .prop_map(|(a, b, id, reset_token)| Frame::NewConnectionId(
                    NewConnectionIdFrame {
                        sequence: a.max(b),
                        retire_prior_to: a.min(b),
                        id: ConnectionId::new(&id).unwrap(),
                        reset_token,
                    }
                )),
            v().prop_map(|sequence| Frame::RetireConnectionId { sequence }),
            any::<[u8; 8]>().prop_map(Frame::PathChallenge),
            any::<[u8; 8]>().prop_map(Frame::PathResponse),
            (v(), proptest::option::of(v()), data()).prop_map(
                |(error_code, frame_type, reason)| {
                    Frame::ConnectionClose(ConnectionCloseFrame {
                        error_code,
                        frame_type,
                        reason,
                    })
                }
            ),
            Just(Frame::HandshakeDone),
            data().prop_map(|data| Frame::Datagram { data }),
            (v(), v(), v(), v()).prop_map(|(a, b, c, d)| Frame::AckFrequency(AckFrequencyFrame {
                sequence: a,
                ack_eliciting_threshold: b,
                request_max_ack_delay: c,
                reordering_threshold: d,
            })),
            Just(Frame::ImmediateAck),
        ]
    }

    proptest! {
        #[test]
        fn prop_frames_roundtrip(frames in proptest::collection::vec(arb_frame(), 1..10)) {
            // Adjacent PADDING runs would merge when decoded: merge them up front.
            let mut want: Vec<Frame<'static>> = Vec::new();
            for f in frames {
                match (want.last_mut(), &f) {
                    (Some(Frame::Padding { len }), Frame::Padding { len: more }) => *len += more,
                    _ => want.push(f),
                }
            }
            let mut buf = Vec::new();
            for f in &want {
                f.encode(&mut buf);
            }
            prop_assert_eq!(decode_all(&buf).unwrap(), want);
        }

        #[test]
        fn prop_arbitrary_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut out = Vec::new();
            for f in decode_frames(&buf).flatten() {
                // Whatever decodes must re-encode and decode to the same frame.
                out.clear();
                f.encode(&mut out);
                let again = decode_all(&out).unwrap();
                prop_assert_eq!(again, vec![f]);
            }
        }
    }
}
