//! HTTP/3 frames on a stream that may not carry them (RFC 9114 §7.2, Table 1; §4.1,
//! §6.2.1): the receiver closes the connection with H3_FRAME_UNEXPECTED. A raw peer
//! (`raw_peer`) writes the frames; the victim runs quiclab-h3.

use crate::raw_peer;

use quiclab_h3::frame::{self, ty, Frame};
use quiclab_h3::qpack::Encoder;
use quiclab_h3::{code, message, Field, H3Config};
use quiclab_proto::{Dir, Side};
use raw_peer::RawPeer;

fn server_victim(seed: u64) -> RawPeer {
    RawPeer::new(Side::Server, H3Config::default(), seed)
}

fn bytes(frames: &[Frame]) -> Vec<u8> {
    let mut out = vec![];
    for f in frames {
        frame::encode(&mut out, f);
    }
    out
}

/// A HEADERS frame with `fields`, QPACK static table and literals only.
fn headers(fields: &[Field]) -> Frame {
    Frame::Headers(Encoder::new(0).encode(0, fields))
}

fn request_head() -> Frame {
    headers(&message::get_request("localhost", "/", &[]))
}

/// RFC 9114 §7.2.1, §7.2.2: DATA and HEADERS are request-stream frames; on the
/// control stream they are H3_FRAME_UNEXPECTED. So is PUSH_PROMISE (§7.2.5).
#[test]
fn request_frames_on_the_control_stream() {
    let mut data = vec![];
    frame::encode_header(&mut data, ty::DATA, 2);
    data.extend_from_slice(b"hi");
    let cases = [
        data,
        bytes(&[request_head()]),
        bytes(&[Frame::PushPromise(0)]),
    ];
    for (seed, case) in (1..).zip(cases) {
        let mut p = server_victim(seed);
        p.control(&case);
        p.expect_close(code::H3_FRAME_UNEXPECTED);
    }
}

/// RFC 9114 §7.2.4: a second SETTINGS frame on the control stream.
#[test]
fn second_settings() {
    let mut p = server_victim(10);
    p.control(&bytes(&[Frame::Settings(Default::default())]));
    p.expect_close(code::H3_FRAME_UNEXPECTED);
}

/// RFC 9114 §7.2.3, §7.2.4, §7.2.6, §7.2.7: CANCEL_PUSH, SETTINGS, GOAWAY and
/// MAX_PUSH_ID are control-stream frames; on a request stream (here after a valid
/// request head) they are H3_FRAME_UNEXPECTED. §7.2.5: a client's PUSH_PROMISE too.
#[test]
fn control_frames_on_a_request_stream() {
    let cases = [
        Frame::CancelPush(0),
        Frame::Settings(Default::default()),
        Frame::GoAway(0),
        Frame::MaxPushId(0),
        Frame::PushPromise(0),
    ];
    for (seed, bad) in (20..).zip(cases) {
        let mut p = server_victim(seed);
        p.open(Dir::Bi, &bytes(&[request_head(), bad]));
        p.expect_close(code::H3_FRAME_UNEXPECTED);
        assert!(p.h3.active_requests() <= 1);
    }
}

/// RFC 9114 §4.1: after trailers, no frame but unknown ones; another HEADERS is
/// H3_FRAME_UNEXPECTED.
#[test]
fn headers_after_trailers() {
    let mut p = server_victim(30);
    let trailers = headers(&[Field::new("x-checksum", "1")]);
    p.open(
        Dir::Bi,
        &bytes(&[request_head(), trailers.clone(), trailers]),
    );
    p.expect_close(code::H3_FRAME_UNEXPECTED);
}

/// RFC 9114 §7.2.7: MAX_PUSH_ID from a server.
#[test]
fn max_push_id_from_a_server() {
    let mut p = RawPeer::new(Side::Client, H3Config::default(), 40);
    p.control(&bytes(&[Frame::MaxPushId(0)]));
    p.expect_close(code::H3_FRAME_UNEXPECTED);
}

/// RFC 9114 §7.2.6, §7.2.4: GOAWAY and SETTINGS on a response stream, after a valid
/// response head; the victim is a client with a request in flight.
#[test]
fn control_frames_on_a_response_stream() {
    let cases = [Frame::GoAway(0), Frame::Settings(Default::default())];
    for (seed, bad) in (50..).zip(cases) {
        let mut p = RawPeer::new(Side::Client, H3Config::default(), seed);
        let now = p.pair.now;
        let fields = message::get_request("localhost", "/", &[]);
        let conn = p.pair.client_conn();
        let id = p.h3.send_request(conn, now, &fields, true).unwrap();
        assert!(p.run(|p| p.raw().accept_stream(Dir::Bi) == Some(id)));
        let head = headers(&[Field::new(":status", "200")]);
        p.write(id, &bytes(&[head, bad]));
        p.expect_close(code::H3_FRAME_UNEXPECTED);
    }
}

/// Control: the raw peer's well-formed request (and an unknown frame type on the
/// control stream, which §9 says to ignore) closes nothing, so the failures above are
/// the frames' doing.
#[test]
fn well_formed_raw_input_is_taken() {
    let mut p = server_victim(60);
    p.control(&[0x21, 0x01, 0x00]);
    let id = p.open(Dir::Bi, &bytes(&[request_head()]));
    p.raw().finish(id).unwrap();
    assert!(p.run(|p| p
        .events
        .iter()
        .any(|e| matches!(e, quiclab_h3::H3Event::Finished { stream } if *stream == id))));
    assert!(p.h3.error().is_none());
    assert!(!p.victim_conn().unwrap().is_closed());
}
