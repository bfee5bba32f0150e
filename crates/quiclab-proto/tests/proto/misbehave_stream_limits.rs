//! A peer that opens more streams than allowed, or uses stream IDs it may not
//! (RFC 9000 §4.6, §19.8-§19.14): STREAM_LIMIT_ERROR past MAX_STREAMS whatever frame
//! opens the stream, STREAM_STATE_ERROR for streams in the wrong state or direction,
//! FRAME_ENCODING_ERROR for stream counts past 2^60. The victim keeps at most the
//! streams it allowed.

use crate::misbehaving;

use misbehaving::{connected, connected_with, expect_close, send};
use quiclab_proto::raw::{frame_type, Frame, SpaceId, StreamFrame};
use quiclab_proto::testing::Pair;
use quiclab_proto::{
    varint, Dir, FlowConfig, Side, StreamId, TransportConfig, TransportErrorCode as Code,
};

/// The victim server's limits.
const MAX_BIDI: u64 = 10;
const MAX_UNI: u64 = 5;

fn setup(seed: u64) -> Pair {
    let server = TransportConfig {
        flow: FlowConfig {
            max_streams_bidi: MAX_BIDI,
            max_streams_uni: MAX_UNI,
            ..FlowConfig::default()
        },
        ..TransportConfig::default()
    };
    connected_with(TransportConfig::default(), server, seed)
}

fn data(id: StreamId) -> Frame<'static> {
    Frame::Stream(StreamFrame {
        id,
        offset: 0,
        fin: false,
        data: b"x",
    })
}

/// STREAM frame type with the LEN bit (RFC 9000 §19.8), as [`data`] encodes it.
const STREAM_LEN: u64 = frame_type::STREAM | 0x02;

/// RFC 9000 §4.6: a stream past the limit is a STREAM_LIMIT_ERROR; the highest stream
/// allowed opens all below it (§3.2) and no more.
#[test]
fn bidi_stream_past_max_streams() {
    let mut p = setup(1);
    let last = StreamId::new(Side::Client, Dir::Bi, MAX_BIDI - 1);
    let over = StreamId::new(Side::Client, Dir::Bi, MAX_BIDI);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[data(last), data(over)],
    );
    expect_close(&mut p, Side::Server, Code::STREAM_LIMIT_ERROR, STREAM_LEN);
    let f = p.server_conn().unwrap().footprint();
    assert_eq!(f.streams as u64, MAX_BIDI, "the allowed streams, no more");
}

#[test]
fn uni_stream_past_max_streams() {
    let mut p = setup(2);
    let over = StreamId::new(Side::Client, Dir::Uni, MAX_UNI);
    send(&mut p, Side::Client, SpaceId::Data, &[data(over)]);
    expect_close(&mut p, Side::Server, Code::STREAM_LIMIT_ERROR, STREAM_LEN);
    assert_eq!(p.server_conn().unwrap().footprint().streams, 0);
}

/// The limit holds for every frame that opens a stream (RFC 9000 §19.4, §19.5,
/// §19.10, §19.13), and for a stream ID at the top of the range.
#[test]
fn every_opening_frame_is_limited() {
    let over = StreamId::new(Side::Client, Dir::Bi, MAX_BIDI);
    let huge = StreamId::new(Side::Client, Dir::Bi, (varint::MAX >> 2) - 1);
    let cases = [
        (
            Frame::ResetStream {
                id: over,
                error_code: 0,
                final_size: 0,
            },
            frame_type::RESET_STREAM,
        ),
        (
            Frame::StopSending {
                id: over,
                error_code: 0,
            },
            frame_type::STOP_SENDING,
        ),
        (
            Frame::MaxStreamData { id: over, max: 1 },
            frame_type::MAX_STREAM_DATA,
        ),
        (
            Frame::StreamDataBlocked { id: over, limit: 0 },
            frame_type::STREAM_DATA_BLOCKED,
        ),
        (data(huge), STREAM_LEN),
    ];
    for (seed, (frame, ty)) in (10..).zip(cases) {
        let mut p = setup(seed);
        send(&mut p, Side::Client, SpaceId::Data, &[frame]);
        expect_close(&mut p, Side::Server, Code::STREAM_LIMIT_ERROR, ty);
        assert_eq!(p.server_conn().unwrap().footprint().streams, 0);
    }
}

/// RFC 9000 §19.8: STREAM data on a stream the receiver initiated and has not opened,
/// or on its own send-only stream, is a STREAM_STATE_ERROR.
#[test]
fn streams_in_the_wrong_state_or_direction() {
    let mut p = connected(3);
    let not_opened = StreamId::new(Side::Server, Dir::Bi, 0);
    send(&mut p, Side::Client, SpaceId::Data, &[data(not_opened)]);
    expect_close(&mut p, Side::Server, Code::STREAM_STATE_ERROR, STREAM_LEN);

    let mut p = connected(4);
    let ours = p.client_conn().open_stream(Dir::Uni).unwrap();
    send(&mut p, Side::Server, SpaceId::Data, &[data(ours)]);
    expect_close(&mut p, Side::Client, Code::STREAM_STATE_ERROR, STREAM_LEN);

    // RFC 9000 §19.10: MAX_STREAM_DATA for a receive-only stream.
    let mut p = connected(5);
    let theirs = StreamId::new(Side::Client, Dir::Uni, 0);
    let frame = Frame::MaxStreamData { id: theirs, max: 1 };
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Server,
        Code::STREAM_STATE_ERROR,
        frame_type::MAX_STREAM_DATA,
    );
}

/// RFC 9000 §19.11, §19.14: a MAX_STREAMS or STREAMS_BLOCKED count past 2^60 is a
/// FRAME_ENCODING_ERROR. (Our encoder writes any varint, so the frames go as they are.)
#[test]
fn stream_counts_past_two_to_the_sixty() {
    let cases = [
        (
            Frame::MaxStreams {
                dir: Dir::Bi,
                max: (1 << 60) + 1,
            },
            frame_type::MAX_STREAMS_BIDI,
        ),
        (
            Frame::StreamsBlocked {
                dir: Dir::Uni,
                limit: (1 << 60) + 1,
            },
            frame_type::STREAMS_BLOCKED_UNI,
        ),
    ];
    for (seed, (frame, ty)) in (20..).zip(cases) {
        let mut p = connected(seed);
        send(&mut p, Side::Client, SpaceId::Data, &[frame]);
        expect_close(&mut p, Side::Server, Code::FRAME_ENCODING_ERROR, ty);
    }
}
