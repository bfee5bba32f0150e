//! A peer that ignores flow control (RFC 9000 §4): data past a stream's or the
//! connection's limit, or a final size past it, is a FLOW_CONTROL_ERROR; a final size
//! that changes is a FINAL_SIZE_ERROR. What the victim buffers never exceeds the
//! credit it gave.

use crate::misbehaving;

use misbehaving::{connected_with, expect_close, send};
use quiclab_proto::raw::{frame_type, Frame, SpaceId, StreamFrame};
use quiclab_proto::{Dir, FlowConfig, Side, StreamId, TransportConfig, TransportErrorCode as Code};

/// Small windows, so the buffers the test fills stay small.
const STREAM_WINDOW: u64 = 40_000;
const CONN_WINDOW: u64 = 100_000;

fn victim_config() -> TransportConfig {
    TransportConfig {
        flow: FlowConfig {
            initial_max_data: CONN_WINDOW,
            initial_max_stream_data: STREAM_WINDOW,
            autotune: false,
            ..FlowConfig::default()
        },
        ..TransportConfig::default()
    }
}

/// A client misbehaving toward a server with [`victim_config`].
fn setup(seed: u64) -> quiclab_proto::testing::Pair {
    connected_with(TransportConfig::default(), victim_config(), seed)
}

fn bidi(index: u64) -> StreamId {
    StreamId::new(Side::Client, Dir::Bi, index)
}

fn stream(id: StreamId, offset: u64, data: &[u8], fin: bool) -> Frame<'_> {
    Frame::Stream(StreamFrame {
        id,
        offset,
        fin,
        data,
    })
}

/// STREAM frame type with the OFF and LEN bits (RFC 9000 §19.8).
const STREAM_OFF_LEN: u64 = frame_type::STREAM | 0x04 | 0x02;

/// RFC 9000 §4.1: data past MAX_STREAM_DATA is a FLOW_CONTROL_ERROR, and none of it
/// is buffered.
#[test]
fn data_past_the_stream_limit() {
    let mut p = setup(1);
    let data = [7u8; 20];
    let frame = stream(bidi(0), STREAM_WINDOW - 10, &data, false);
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Server,
        Code::FLOW_CONTROL_ERROR,
        STREAM_OFF_LEN,
    );
    let f = p.server_conn().unwrap().footprint();
    assert_eq!(f.stream_recv_buffered, 0, "nothing past the limit is kept");
}

/// RFC 9000 §4.1: streams each within their limit, but together past MAX_DATA, are a
/// FLOW_CONTROL_ERROR. The victim never holds more than the connection window,
/// though each frame (one byte at the end of a stream's window) asks it to hold a
/// whole stream window of gap.
#[test]
fn data_past_the_connection_limit() {
    let mut p = setup(2);
    let streams = CONN_WINDOW / STREAM_WINDOW; // 2 fit; the third does not
    let frames: Vec<Frame<'_>> = (0..=streams)
        .map(|i| stream(bidi(i), STREAM_WINDOW - 1, b"x", false))
        .collect();
    send(&mut p, Side::Client, SpaceId::Data, &frames);
    expect_close(
        &mut p,
        Side::Server,
        Code::FLOW_CONTROL_ERROR,
        STREAM_OFF_LEN,
    );
    let f = p.server_conn().unwrap().footprint();
    assert!(
        f.stream_recv_buffered as u64 <= CONN_WINDOW,
        "{} bytes buffered past the {CONN_WINDOW}-byte connection window",
        f.stream_recv_buffered
    );
}

/// RFC 9000 §4.5: a RESET_STREAM whose final size is past the stream limit is a
/// FLOW_CONTROL_ERROR.
#[test]
fn reset_with_a_final_size_past_the_limit() {
    let mut p = setup(3);
    let frame = Frame::ResetStream {
        id: bidi(0),
        error_code: 0,
        final_size: STREAM_WINDOW + 1,
    };
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Server,
        Code::FLOW_CONTROL_ERROR,
        frame_type::RESET_STREAM,
    );
}

/// RFC 9000 §4.5: data past a known final size, or a second FIN at another offset,
/// is a FINAL_SIZE_ERROR.
#[test]
fn data_past_the_final_size() {
    let mut p = setup(4);
    let fin = stream(bidi(0), 0, b"hello", true);
    let more = stream(bidi(0), 5, b"!", false);
    send(&mut p, Side::Client, SpaceId::Data, &[fin, more]);
    expect_close(
        &mut p,
        Side::Server,
        Code::FINAL_SIZE_ERROR,
        frame_type::STREAM | 0x04 | 0x02,
    );

    let mut p = setup(5);
    let fin = stream(bidi(0), 0, b"hello", true);
    let other_fin = stream(bidi(0), 0, b"hell", true);
    send(&mut p, Side::Client, SpaceId::Data, &[fin, other_fin]);
    expect_close(
        &mut p,
        Side::Server,
        Code::FINAL_SIZE_ERROR,
        frame_type::STREAM | 0x02 | 0x01,
    );
}

/// The server misbehaves toward a client too: a server's data past the client's
/// stream limit on a bidirectional stream the client opened.
#[test]
fn server_data_past_the_stream_limit() {
    let mut p = connected_with(victim_config(), TransportConfig::default(), 6);
    let id = p.client_conn().open_stream(Dir::Bi).unwrap();
    let data = [1u8; 10];
    let frame = stream(id, STREAM_WINDOW - 5, &data, false);
    send(&mut p, Side::Server, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Client,
        Code::FLOW_CONTROL_ERROR,
        STREAM_OFF_LEN,
    );
}
