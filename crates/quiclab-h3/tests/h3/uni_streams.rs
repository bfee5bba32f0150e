//! Peer unidirectional streams of unknown types (RFC 9114 §6.2) are stopped and
//! forgotten: a peer opening, typing and resetting them over and over leaves nothing
//! behind (issue 40: ~70 bytes per cycle stayed for the connection's life).

use crate::common;

use common::{check_body, H3Pair};
use quiclab_h3::H3Config;
use quiclab_proto::Dir;
use std::time::Duration;

/// Runs the pair for `ms` of virtual time (or until nothing is scheduled before).
fn settle(p: &mut H3Pair, ms: u64) {
    let limit = p.pair.now + Duration::from_millis(ms);
    loop {
        p.pump();
        p.pair.flush();
        match p.pair.next_event_time() {
            Some(t) if t <= limit => {
                p.pair.step();
            }
            _ => return,
        }
    }
}

#[test]
fn open_type_reset_cycles_leave_nothing_behind() {
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(5),
        21,
    );
    p.handshake();
    assert!(p.run(5, |p| p.server.peer_uni_streams() == 3));
    let mut opened = 0;
    for _ in 0..100 {
        // As many as the stream limit allows, each with a reserved (grease) stream
        // type, 0x1f * 7 + 0x21, that the server reads (and stops) before the reset.
        let conn = p.pair.client_conn();
        let mut ids = Vec::new();
        while let Some(id) = conn.open_stream(Dir::Uni) {
            assert_eq!(conn.write(id, &[0x40, 0xfc]).unwrap(), 2);
            ids.push(id);
        }
        settle(&mut p, 50);
        let conn = p.pair.client_conn();
        for &id in &ids {
            // Its answer to STOP_SENDING may have reset (and freed) it already.
            let _ = conn.reset_stream(id, 0);
        }
        opened += ids.len();
        settle(&mut p, 50);
        assert!(
            p.server.peer_uni_streams() <= 3 + 100,
            "{} tracked after {opened} cycles",
            p.server.peer_uni_streams()
        );
    }
    assert!(opened >= 5_000, "only {opened} cycles");
    assert_eq!(
        p.server.peer_uni_streams(),
        3,
        "control, QPACK encoder and decoder"
    );
    assert!(p.server.error().is_none());
    let id = p.get("/1000", &[]);
    settle(&mut p, 1000);
    assert!(p.responses[&id].finished);
    check_body(&p.responses[&id], 1000);
}
