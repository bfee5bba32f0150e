//! The server's side of a path the client opens (draft-ietf-quic-multipath §3.1): it
//! answers the client's PATH_CHALLENGE on that path and validates the client's address
//! there with its own PATH_CHALLENGE; until then it sends at most three times what it
//! received on the path (RFC 9000 §8.1, §9.3), and once validated it sends stream data
//! on the path within the path's own window.

use crate::misbehaving::{conn, connected_with, run_for, DELAY};
use crate::multipath::{config, payload, second_address, two_paths, upload};

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Dir, Side};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// The client asks for `data` on a new bidirectional stream; the server writes it back
/// (finished) as the client's stream window lets it; returns what the client read.
fn download(p: &mut Pair, data: &[u8]) -> Vec<u8> {
    let id = p.client_conn().open_stream(Dir::Bi).unwrap();
    p.client_conn().write(id, b"GET").unwrap();
    p.client_conn().finish(id).unwrap();
    let mut sid = None;
    let mut written = 0;
    let mut got = Vec::new();
    for _ in 0..4000 {
        run_for(p, DELAY / 2);
        let s = p.server_conn().unwrap();
        sid = sid.or_else(|| s.accept_stream(Dir::Bi));
        if let Some(sid) = sid {
            if written < data.len() {
                written += s.write(sid, &data[written..]).unwrap_or(0);
                if written == data.len() {
                    s.finish(sid).unwrap();
                }
            }
        }
        if drain_stream(p.client_conn(), id, &mut got) {
            break;
        }
    }
    got
}

/// §3.1: the server validates the client's new path (its own PATH_CHALLENGE, answered
/// on the path), then a 1 MB download from the server goes over both paths, each
/// within its own window, and arrives byte-exact.
#[test]
fn a_download_spreads_over_both_paths_once_the_server_validated_the_path() {
    let mut p = two_paths(70);
    let s = p.server_conn().unwrap();
    assert!(s.multipath_path_validated(1), "the server validated path 1");
    let data = payload();
    let got = download(&mut p, &data);
    assert_eq!(got.len(), data.len());
    assert!(got == data, "byte-exact");
    let c = p.client_conn();
    assert!(!c.is_closed(), "{:?}", c.close_reason());
    let on_1 = c.multipath_bytes_received(1);
    let total = c.stats().datagrams_received.bytes;
    assert!(on_1 >= 200_000, "path 1 carried {on_1} bytes to the client");
    assert!(
        total - on_1 >= 200_000,
        "path 0 carried {} bytes to the client",
        total - on_1
    );
    let sent_on_1 = p
        .server_sent_to
        .get(&second_address())
        .copied()
        .unwrap_or(0);
    assert!(
        sent_on_1 >= on_1,
        "the server sent them to the second address"
    );
}

/// RFC 9000 §8.1, §8.2 on a new path: the server's datagrams to the client's second
/// address are lost, so neither side's PATH_CHALLENGE on path 1 is answered. While a
/// download runs on path 0, the server sends there at most three times what it
/// received from there and no stream data; the client sends its challenge again at
/// its path's PTOs (three padded challenges in all), then gives the path up
/// (§8.2.4) and abandons it (draft-ietf-quic-multipath §3.1), and the server answers
/// with its own PATH_ABANDON; the connection goes on.
#[test]
fn an_unanswered_path_is_retried_then_abandoned_within_the_3x_limit() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 71);
    run_for(&mut p, DELAY * 4);
    let second = second_address();
    p.add_client_address(second);
    let challenges = Rc::new(Cell::new(0u32));
    let count = challenges.clone();
    p.drop_filter = Some(Box::new(move |_, from, to, len| {
        if from == second && len >= 1200 {
            count.set(count.get() + 1);
        }
        to == second
    }));
    p.client_conn().multipath_open_path(1, second).unwrap();
    let data: Vec<u8> = payload()[..200_000].to_vec();
    let got = download(&mut p, &data);
    assert!(got == data, "the download completes on path 0");
    run_for(&mut p, Duration::from_secs(10));
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert!(!c.is_closed(), "{:?}", c.close_reason());
        assert!(!c.multipath_path_validated(1), "{side:?}");
        assert!(c.multipath_path_abandoned(1), "{side:?}");
    }
    assert_eq!(challenges.get(), 3, "the first challenge and two retries");
    let loss = p.client_conn().multipath_path_loss(1).unwrap();
    assert_eq!(loss.ptos, 3, "{loss:?}");
    let received = p.server_received_from.get(&second).copied().unwrap_or(0);
    let sent = p.server_sent_to.get(&second).copied().unwrap_or(0);
    assert!(
        received >= 3 * 1200,
        "the challenges came, padded: {received}"
    );
    assert!(sent >= 1200, "the server answered and challenged: {sent}");
    assert!(sent <= 3 * received, "sent {sent} for {received} received");
    assert!(sent < 20_000, "no stream data on the path: {sent}");
    stream_arrives_after(&mut p);
}

/// The server's own validation of the client's path fails: the client's challenge
/// reaches the server, the server's answer and challenge reach the client (which so
/// validates the path and sends data on it), but nothing more from the client's second
/// address arrives. The server sends its challenge again at its path's PTOs within 3x
/// the one datagram it received there (3600 bytes in all), gives up at the third PTO
/// and abandons the path (§3.1); the client's data stuck on path 1 goes again on path
/// 0 and the upload completes byte-exact.
#[test]
fn the_server_gives_up_a_path_whose_client_never_answers() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 72);
    run_for(&mut p, DELAY * 4);
    let second = second_address();
    p.add_client_address(second);
    let from_second = Rc::new(Cell::new(0u32));
    let n = from_second.clone();
    p.drop_filter = Some(Box::new(move |_, from, _, _| {
        if from != second {
            return false;
        }
        n.set(n.get() + 1);
        n.get() > 1
    }));
    p.client_conn().multipath_open_path(1, second).unwrap();
    run_for(&mut p, DELAY * 4);
    assert!(p.client_conn().multipath_path_validated(1));
    assert!(!p.server_conn().unwrap().multipath_path_validated(1));
    let data: Vec<u8> = payload()[..300_000].to_vec();
    let got = upload(&mut p, &data, |_, _| {});
    assert!(got == data, "byte-exact");
    run_for(&mut p, Duration::from_secs(5));
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert!(!c.is_closed(), "{:?}", c.close_reason());
        assert!(c.multipath_path_abandoned(1), "{side:?}");
    }
    assert!(from_second.get() > 10, "the client sent data on path 1");
    let loss = p.server_conn().unwrap().multipath_path_loss(1).unwrap();
    assert_eq!(loss.ptos, 3, "{loss:?}");
    let received = p.server_received_from.get(&second).copied().unwrap_or(0);
    let sent = p.server_sent_to.get(&second).copied().unwrap_or(0);
    assert_eq!(received, 1200);
    assert_eq!(
        sent,
        3 * 1200,
        "the answer and challenge, then two challenges"
    );
}

/// After path 1 was given up, a further download still completes (on path 0).
fn stream_arrives_after(p: &mut Pair) {
    let data: Vec<u8> = payload()[..50_000].to_vec();
    assert!(download(p, &data) == data);
}
