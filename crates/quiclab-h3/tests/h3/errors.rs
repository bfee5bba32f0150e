//! Bad peer input over the pair harness: each gets the RFC 9114 error, and what must
//! be ignored (unknown frame and stream types) is.

use crate::common;

use common::{check_body, H3Pair};
use quiclab_h3::frame::{self, ty, Frame};
use quiclab_h3::qpack::Encoder;
use quiclab_h3::{code, message, Field, H3Config, H3Event};
use quiclab_proto::Dir;

fn ready() -> H3Pair {
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(5),
        11,
    );
    p.handshake();
    p
}

/// Writes raw bytes on a new client stream (FIN if `fin`).
fn raw(p: &mut H3Pair, dir: Dir, bytes: &[u8], fin: bool) {
    let conn = p.pair.client_conn();
    let id = conn.open_stream(dir).unwrap();
    assert_eq!(conn.write(id, bytes).unwrap(), bytes.len());
    if fin {
        conn.finish(id).unwrap();
    }
}

fn headers(fields: &[Field]) -> Vec<u8> {
    let mut out = vec![];
    frame::encode(&mut out, &Frame::Headers(Encoder::new(0).encode(0, fields)));
    out
}

fn server_error(p: &mut H3Pair) -> u64 {
    assert!(
        p.run(5, |p| p.server.error().is_some()),
        "no connection error"
    );
    p.server.error().unwrap().code
}

#[test]
fn second_control_stream() {
    let mut p = ready();
    let mut b = vec![0x00];
    frame::encode(&mut b, &Frame::Settings(Default::default()));
    raw(&mut p, Dir::Uni, &b, false);
    assert_eq!(server_error(&mut p), code::H3_STREAM_CREATION_ERROR);
}

#[test]
fn data_before_headers() {
    let mut p = ready();
    let mut b = vec![];
    frame::encode_header(&mut b, ty::DATA, 2);
    b.extend_from_slice(b"hi");
    raw(&mut p, Dir::Bi, &b, true);
    assert_eq!(server_error(&mut p), code::H3_FRAME_UNEXPECTED);
}

#[test]
fn http2_frame_type() {
    let mut p = ready();
    raw(&mut p, Dir::Bi, &[0x02, 0x00], true);
    assert_eq!(server_error(&mut p), code::H3_FRAME_UNEXPECTED);
}

#[test]
fn truncated_frame_at_fin() {
    let mut p = ready();
    let mut b = headers(&message::get_request("localhost", "/5", &[]));
    b.extend_from_slice(&[0x00, 0x10, 1, 2]);
    raw(&mut p, Dir::Bi, &b, true);
    assert_eq!(server_error(&mut p), code::H3_FRAME_ERROR);
}

#[test]
fn unknown_frames_and_streams_are_ignored() {
    let mut p = ready();
    // An unknown uni stream type (reserved 0x1f*2+0x21), with data.
    raw(&mut p, Dir::Uni, &[0x40, 0x5f, 1, 2, 3], false);
    // A request with a grease frame before and after HEADERS.
    let mut b = vec![0x21, 0x03, 7, 7, 7];
    b.extend(headers(&message::get_request("localhost", "/77", &[])));
    b.extend_from_slice(&[0x40, 0x5f, 0x00]);
    raw(&mut p, Dir::Bi, &b, true);
    assert!(p.run(5, |p| p
        .server_events
        .iter()
        .any(|e| matches!(e, H3Event::Finished { .. }))));
    assert!(p.server.error().is_none());
    // The request was answered (stream 4: stream 0 is unused by the client H3).
    assert!(p.run(5, |p| p.server.active_requests() == 0));
    let id = p.get("/1000", &[]);
    assert!(p.run(5, |p| p.responses[&id].finished));
    check_body(&p.responses[&id], 1000);
}

#[test]
fn malformed_request_is_a_stream_error() {
    let mut p = ready();
    let b = headers(&message::get_request(
        "localhost",
        "/5",
        &[Field::new("Upper", "x")],
    ));
    raw(&mut p, Dir::Bi, &b, true);
    assert!(p.run(5, |p| p.server_events.iter().any(
        |e| matches!(e, H3Event::Reset { code: c, .. } if *c == code::H3_MESSAGE_ERROR)
    )));
    assert!(p.server.error().is_none());
    let id = p.get("/10", &[]);
    assert!(p.run(5, |p| p.responses[&id].finished));
}

#[test]
fn missing_settings_and_push_refused() {
    // A client whose first control frame is not SETTINGS: checked on the decoder side
    // by a server receiving a control stream from a pair without client H3.
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(5),
        12,
    );
    assert!(p
        .pair
        .run_until(
            quiclab_proto::Instant::ZERO.saturating_add(std::time::Duration::from_secs(5)),
            |p| p.client_conn().is_handshake_complete()
        )
        .is_ok());
    let mut b = vec![0x00];
    frame::encode(&mut b, &Frame::GoAway(0));
    raw(&mut p, Dir::Uni, &b, false);
    // Only pump the server.
    let limit = quiclab_proto::Instant::ZERO.saturating_add(std::time::Duration::from_secs(10));
    while p.server.error().is_none() && p.pair.now < limit && p.pair.step() {
        let now = p.pair.now;
        if let Some(conn) = p.pair.server_conn() {
            while let Some(ev) = conn.poll_event() {
                p.server.handle_event(conn, now, &ev);
            }
            p.server.poll(conn, now);
        }
    }
    assert_eq!(
        p.server.error().map(|e| e.code),
        Some(code::H3_MISSING_SETTINGS)
    );

    // A server opening a push stream: the client never allowed pushes.
    let mut p = ready();
    let now = p.pair.now;
    let conn = p.pair.server_conn().unwrap();
    let id = conn.open_stream(Dir::Uni).unwrap();
    conn.write(id, &[0x01, 0x00]).unwrap();
    let _ = now;
    assert!(p.run(5, |p| p.client.error().is_some()));
    assert_eq!(p.client.error().unwrap().code, code::H3_ID_ERROR);
}

#[test]
fn reset_of_a_qpack_blocked_stream_unblocks_it() {
    let mut p = ready();
    // HEADERS referencing dynamic entry 0, whose insert never comes (RIC = 1).
    let conn = p.pair.client_conn();
    let id = conn.open_stream(Dir::Bi).unwrap();
    conn.write(id, &[0x01, 0x03, 0x02, 0x00, 0x80]).unwrap();
    assert!(p.run(5, |p| p.server.qpack().1.blocked_streams() == 1));
    let conn = p.pair.client_conn();
    conn.reset_stream(id, code::H3_REQUEST_CANCELLED).unwrap();
    assert!(p.run(5, |p| p.server.qpack().1.blocked_streams() == 0));
    assert!(p.server.error().is_none());
    assert!(p
        .server_events
        .iter()
        .any(|e| matches!(e, H3Event::Reset { code: c, .. } if *c == code::H3_REQUEST_CANCELLED)));
}
