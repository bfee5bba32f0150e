//! Tests of the multipath frames: round trips, exact bytes, malformed input.
#![allow(clippy::arithmetic_side_effects)] // tests compute expected values freely

use super::*;
use crate::error::TransportErrorCode as Code;
use crate::wire::frame::{AckFrame, EcnCounts, NewConnectionIdFrame};
use crate::wire::frame_mp::{abandon_code, is_multipath_type};
use crate::wire::header::PacketType;
use crate::wire::ids::ConnectionId;
use crate::wire::{decode_frames, Frame};
use proptest::prelude::*;
use MultipathFrame as M;

fn decode_all(buf: &[u8]) -> Result<Vec<Frame<'_>>, TransportError> {
    decode_frames(buf).collect()
}

fn err(buf: &[u8]) -> TransportError {
    decode_all(buf).unwrap_err()
}

fn cid_frame(sequence: u64, retire_prior_to: u64) -> NewConnectionIdFrame {
    NewConnectionIdFrame {
        sequence,
        retire_prior_to,
        id: ConnectionId::new(&[9; 8]).unwrap(),
        reset_token: [0x5a; 16],
    }
}

fn samples() -> Vec<MultipathFrame> {
    vec![
        M::PathAck {
            path_id: PathId(1),
            ack: AckFrame {
                ack_delay: 10,
                ranges: vec![20..=30, 5..=10],
                ecn: None,
            },
        },
        M::PathAck {
            path_id: PathId(u32::MAX),
            ack: AckFrame {
                ack_delay: 0,
                ranges: vec![0..=0],
                ecn: Some(EcnCounts {
                    ect0: 3,
                    ect1: 0,
                    ce: 1,
                }),
            },
        },
        M::PathAbandon {
            path_id: PathId(2),
            error_code: abandon_code::PATH_UNSTABLE_OR_POOR,
        },
        M::PathStatus {
            path_id: PathId(3),
            sequence: 7,
            backup: true,
        },
        M::PathStatus {
            path_id: PathId(3),
            sequence: 8,
            backup: false,
        },
        M::PathNewConnectionId {
            path_id: PathId(1),
            cid: cid_frame(4, 2),
        },
        M::PathRetireConnectionId {
            path_id: PathId(0),
            sequence: 1,
        },
        M::MaxPathId(PathId(16)),
        M::PathsBlocked(PathId(16)),
        M::PathCidsBlocked {
            path_id: PathId(5),
            next_sequence: 3,
        },
    ]
}

#[test]
fn roundtrip_each_and_all() {
    let mut all = Vec::new();
    for m in samples() {
        let f = Frame::Multipath(m.clone());
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(buf.len(), f.encoded_len(), "{m:?}");
        assert_eq!(decode_all(&buf).unwrap(), vec![f.clone()]);
        all.push(f);
    }
    let mut buf = Vec::new();
    for f in &all {
        f.encode(&mut buf);
    }
    assert_eq!(decode_all(&buf).unwrap(), all);
}

#[test]
fn exact_bytes() {
    // Written by hand from the draft's figures (§4.1, §4.2, §4.6).
    let enc = |m: MultipathFrame| {
        let mut b = Vec::new();
        m.encode(&mut b);
        b
    };
    // PATH_ACK: type 0x3e, path 1, largest 5, delay 0, 0 more ranges, first range 5.
    let ack = M::PathAck {
        path_id: PathId(1),
        ack: AckFrame {
            ack_delay: 0,
            ranges: vec![0..=5],
            ecn: None,
        },
    };
    assert_eq!(enc(ack), [0x3e, 0x01, 0x05, 0x00, 0x00, 0x05]);
    // PATH_ABANDON: 0x3e75 as a 2-byte varint is 0x7e 0x75.
    let abandon = M::PathAbandon {
        path_id: PathId(1),
        error_code: 0,
    };
    assert_eq!(enc(abandon), [0x7e, 0x75, 0x01, 0x00]);
    // MAX_PATH_ID 2^32-1: 0x3e7a, then an 8-byte varint.
    assert_eq!(
        enc(M::MaxPathId(PathId(u32::MAX))),
        [0x7e, 0x7a, 0xc0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]
    );
}

#[test]
fn every_type_code_dispatches() {
    for ty in [
        0x3e, 0x3f, 0x3e75, 0x3e76, 0x3e77, 0x3e78, 0x3e79, 0x3e7a, 0x3e7b, 0x3e7c,
    ] {
        assert!(is_multipath_type(ty), "{ty:#x}");
    }
    for ty in [0x3d, 0x40, 0x3e74, 0x3e7d] {
        assert!(!is_multipath_type(ty), "{ty:#x}");
    }
    let codes: Vec<u64> = samples().iter().map(|m| m.type_code()).collect();
    for ty in [
        0x3e, 0x3f, 0x3e75, 0x3e76, 0x3e77, 0x3e78, 0x3e79, 0x3e7a, 0x3e7b, 0x3e7c,
    ] {
        assert!(codes.contains(&ty), "no sample of {ty:#x}");
    }
    // Types next to the range stay unknown: FRAME_ENCODING_ERROR (RFC 9000 §12.4).
    let e = err(&[0x7e, 0x7d, 0x00]);
    assert_eq!(
        (e.code, e.frame_type),
        (Code::FRAME_ENCODING_ERROR, Some(0x3e7d))
    );
}

#[test]
fn truncation_is_frame_encoding_error() {
    for m in samples() {
        let mut buf = Vec::new();
        m.encode(&mut buf);
        let ty = m.type_code();
        for cut in varint::len(ty)..buf.len() {
            let e = err(&buf[..cut]);
            assert_eq!(
                (e.code, e.frame_type),
                (Code::FRAME_ENCODING_ERROR, Some(ty)),
                "{m:?} cut at {cut}"
            );
        }
    }
}

#[test]
fn path_id_above_32_bits_is_protocol_violation() {
    // §4: a path ID above every possible Maximum Path Identifier; §4.6 likewise.
    let mut big = Vec::new();
    varint::write(&mut big, 1 << 32);
    for ty in [0x3e_u64, 0x3e75, 0x3e76, 0x3e79, 0x3e7a, 0x3e7b, 0x3e7c] {
        let mut buf = Vec::new();
        varint::write(&mut buf, ty);
        buf.extend_from_slice(&big);
        buf.extend_from_slice(&[0, 0, 0, 0]);
        let e = err(&buf);
        assert_eq!(
            (e.code, e.frame_type),
            (Code::PROTOCOL_VIOLATION, Some(ty)),
            "{ty:#x}"
        );
    }
}

#[test]
fn path_new_connection_id_field_checks() {
    // §4.4 keeps RFC 9000 §19.15's checks: length 1..=20, Retire Prior To <= Sequence.
    let frame = |seq: u8, rpt: u8, len: u8| {
        let mut b = vec![0x7e, 0x78, 0x01, seq, rpt, len];
        b.extend(std::iter::repeat_n(7, len as usize + 16));
        b
    };
    assert!(decode_all(&frame(1, 0, 20)).is_ok());
    for bad in [frame(1, 0, 0), frame(1, 0, 21), frame(1, 2, 8)] {
        let e = err(&bad);
        assert_eq!(
            (e.code, e.frame_type),
            (Code::FRAME_ENCODING_ERROR, Some(0x3e78))
        );
    }
}

#[test]
fn path_ack_range_underflow() {
    // Largest 5, first range 6: below zero (RFC 9000 §19.3.1, as for ACK).
    let e = err(&[0x3e, 0x00, 0x05, 0x00, 0x00, 0x06]);
    assert_eq!(
        (e.code, e.frame_type),
        (Code::FRAME_ENCODING_ERROR, Some(0x3e))
    );
}

#[test]
fn only_in_one_rtt_and_ack_eliciting_but_path_ack() {
    use PacketType as P;
    for m in samples() {
        let f = Frame::Multipath(m.clone());
        let allowed = [P::Initial, P::Handshake, P::ZeroRtt, P::OneRtt].map(|t| f.permitted_in(t));
        assert_eq!(allowed, [false, false, false, true], "{m:?}");
        let is_ack = matches!(m, M::PathAck { .. });
        assert_eq!(f.is_ack_eliciting(), !is_ack, "{m:?}");
        assert!(!f.is_probing());
    }
}

#[test]
fn non_minimal_type_is_protocol_violation() {
    // RFC 9000 §12.4 applies to the new types: PATH_ACK 0x3e as a 2-byte varint.
    let e = err(&[0x40, 0x3e, 0x00, 0x00, 0x00, 0x00, 0x00]);
    assert_eq!(
        (e.code, e.frame_type),
        (Code::PROTOCOL_VIOLATION, Some(0x3e))
    );
}

fn arb_mp() -> impl Strategy<Value = MultipathFrame> {
    let v = || 0..=varint::MAX;
    let pid = || any::<u32>().prop_map(PathId);
    let ack = (
        0..=varint::MAX / 2,
        v(),
        0u64..1000,
        proptest::option::of((v(), v(), v())),
    )
        .prop_map(|(largest, ack_delay, len, ecn)| AckFrame {
            ack_delay,
            ranges: vec![largest.saturating_sub(len)..=largest],
            ecn: ecn.map(|(ect0, ect1, ce)| EcnCounts { ect0, ect1, ce }),
        });
    let cid = (
        v(),
        v(),
        proptest::collection::vec(any::<u8>(), 1..=20),
        any::<[u8; 16]>(),
    )
        .prop_map(|(a, b, id, reset_token)| NewConnectionIdFrame {
            sequence: a.max(b),
            retire_prior_to: a.min(b),
            id: ConnectionId::new(&id).unwrap(),
            reset_token,
        });
    prop_oneof![
        (pid(), ack).prop_map(|(path_id, ack)| M::PathAck { path_id, ack }),
        (pid(), v()).prop_map(|(path_id, error_code)| M::PathAbandon {
            path_id,
            error_code
        }),
        (pid(), v(), any::<bool>()).prop_map(|(path_id, sequence, backup)| M::PathStatus {
            path_id,
            sequence,
            backup
        }),
        (pid(), cid).prop_map(|(path_id, cid)| M::PathNewConnectionId { path_id, cid }),
        (pid(), v())
            .prop_map(|(path_id, sequence)| M::PathRetireConnectionId { path_id, sequence }),
        pid().prop_map(M::MaxPathId),
        pid().prop_map(M::PathsBlocked),
        (pid(), v()).prop_map(|(path_id, next_sequence)| M::PathCidsBlocked {
            path_id,
            next_sequence
        }),
    ]
}

proptest! {
    #[test]
    fn prop_roundtrip(frames in proptest::collection::vec(arb_mp(), 1..8)) {
        let want: Vec<Frame<'static>> = frames.into_iter().map(Frame::Multipath).collect();
        let mut buf = Vec::new();
        for f in &want {
            let before = buf.len();
            f.encode(&mut buf);
            prop_assert_eq!(buf.len() - before, f.encoded_len());
        }
        prop_assert_eq!(decode_all(&buf).unwrap(), want);
    }

    #[test]
    fn prop_bytes_after_a_multipath_type_never_panic(
        ty in prop::sample::select(vec![0x3e_u64, 0x3f, 0x3e75, 0x3e76, 0x3e77, 0x3e78, 0x3e79, 0x3e7a, 0x3e7b, 0x3e7c]),
        rest in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut buf = Vec::new();
        varint::write(&mut buf, ty);
        buf.extend_from_slice(&rest);
        let mut out = Vec::new();
        for f in decode_frames(&buf) {
            match f {
                Ok(f) => {
                    out.clear();
                    f.encode(&mut out);
                    prop_assert_eq!(decode_all(&out).unwrap(), vec![f]);
                }
                Err(e) => prop_assert!(matches!(
                    e.code,
                    Code::FRAME_ENCODING_ERROR | Code::PROTOCOL_VIOLATION
                )),
            }
        }
    }
}
