//! STREAM data at huge offsets (RFC 9000 §4.1, §19.8): data ending past 2^62-1 is a
//! FRAME_ENCODING_ERROR, data past the window a FLOW_CONTROL_ERROR, and data just
//! inside the window is taken. In every case the receive buffer (gap included) stays
//! within the stream window, whatever offset the peer names.

use crate::misbehaving;

use misbehaving::{connected_with, expect_close, run_for, send};
use quiclab_proto::raw::{frame_type, Frame, SpaceId, StreamFrame};
use quiclab_proto::testing::Pair;
use quiclab_proto::{
    varint, Dir, FlowConfig, Side, StreamId, TransportConfig, TransportErrorCode as Code,
};
use std::time::Duration;

const STREAM_WINDOW: u64 = 64 * 1024;

fn setup(seed: u64) -> Pair {
    let server = TransportConfig {
        flow: FlowConfig {
            initial_max_stream_data: STREAM_WINDOW,
            autotune: false,
            ..FlowConfig::default()
        },
        ..TransportConfig::default()
    };
    connected_with(TransportConfig::default(), server, seed)
}

fn at(offset: u64, data: &[u8], fin: bool) -> Frame<'_> {
    Frame::Stream(StreamFrame {
        id: StreamId::new(Side::Client, Dir::Bi, 0),
        offset,
        fin,
        data,
    })
}

/// STREAM frame type bits (RFC 9000 §19.8).
const OFF_LEN: u64 = frame_type::STREAM | 0x04 | 0x02;

/// RFC 9000 §19.8: "the largest offset delivered on a stream ... cannot exceed
/// 2^62-1"; a receiver treats more as a FRAME_ENCODING_ERROR.
#[test]
fn data_ending_past_two_to_the_sixty_two() {
    let mut p = setup(1);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[at(varint::MAX, b"ab", false)],
    );
    expect_close(&mut p, Side::Server, Code::FRAME_ENCODING_ERROR, OFF_LEN);
    assert_eq!(p.server_conn().unwrap().footprint().stream_recv_buffered, 0);
}

/// RFC 9000 §4.1: data ending at 2^62-1, the largest offset there is, is far past the
/// window: a FLOW_CONTROL_ERROR, with nothing buffered for the gap. So is a FIN
/// without data at a huge offset (§4.5: its final size is past the limit).
#[test]
fn data_at_the_largest_offset() {
    let mut p = setup(2);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[at(varint::MAX - 1, b"a", false)],
    );
    expect_close(&mut p, Side::Server, Code::FLOW_CONTROL_ERROR, OFF_LEN);
    assert_eq!(p.server_conn().unwrap().footprint().stream_recv_buffered, 0);

    let mut p = setup(3);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[at(1 << 40, b"", true)],
    );
    expect_close(
        &mut p,
        Side::Server,
        Code::FLOW_CONTROL_ERROR,
        OFF_LEN | 0x01,
    );
    assert_eq!(p.server_conn().unwrap().footprint().stream_recv_buffered, 0);
}

/// The last byte of the window is fine; the gap before it is held (zero-filled until
/// data comes) and is the most a stream ever holds; the stream is not readable.
#[test]
fn data_at_the_end_of_the_window_is_taken() {
    let mut p = setup(4);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[at(STREAM_WINDOW - 1, b"z", false)],
    );
    run_for(&mut p, Duration::from_millis(100));
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(s.footprint().stream_recv_buffered as u64, STREAM_WINDOW);
    let id = s.accept_stream(Dir::Bi).expect("the stream opened");
    let mut buf = [0u8; 16];
    assert!(s.read(id, &mut buf).is_err(), "nothing contiguous to read");
}
