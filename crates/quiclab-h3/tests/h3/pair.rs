//! HTTP/3 end to end over the in-memory QUIC pair: requests, QPACK compression and
//! blocked-stream limits under reordering, errors and GOAWAY.

use crate::common;

use common::{check_body, H3Pair};
use quiclab_h3::{code, Field, H3Config, H3Event};
use quiclab_proto::testing::LinkConfig;
use std::time::Duration;

#[test]
fn concurrent_gets_byte_exact() {
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(10),
        1,
    );
    p.handshake();
    let sizes = [0u64, 1, 1000, 100_000, 1_000_000];
    let ids: Vec<_> = sizes.iter().map(|n| p.get(&format!("/{n}"), &[])).collect();
    assert!(p.run(60, |p| p.all_done()));
    for (id, n) in ids.iter().zip(sizes) {
        let r = &p.responses[id];
        assert_eq!(r.status.as_deref(), Some(&b"200"[..]));
        assert!(r.finished, "{id:?}");
        check_body(r, n);
    }
    assert!(p.client.error().is_none() && p.server.error().is_none());
}

/// Header bytes of `n` sequential identical-header requests with a given capacity.
fn header_bytes(capacity: u64, n: usize) -> Vec<u64> {
    let cfg = H3Config {
        qpack_max_table_capacity: capacity,
        ..H3Config::default()
    };
    let mut p = H3Pair::new(cfg.clone(), cfg, H3Pair::delay(10), 2);
    p.handshake();
    let extra = [
        Field::new(
            "user-agent",
            "quiclab-test/0.1 (a long user agent string, as browsers send)",
        ),
        Field::new("accept-language", "en-GB,en;q=0.9,de;q=0.8"),
        Field::new("cookie", "session=0123456789abcdef0123456789abcdef"),
    ];
    let mut per = vec![];
    for i in 0..n {
        let before = p.client.stats();
        p.get(&format!("/{}", 10 + i), &extra);
        let after = p.client.stats();
        per.push(
            after.header_bytes_sent + after.encoder_bytes_sent
                - before.header_bytes_sent
                - before.encoder_bytes_sent,
        );
        assert!(p.run(30, |p| p.all_done()));
    }
    per
}

#[test]
fn dynamic_table_shrinks_repeated_headers() {
    let dynamic = header_bytes(4096, 5);
    let static_only = header_bytes(0, 5);
    eprintln!("header+encoder bytes per request: dynamic {dynamic:?}, static only {static_only:?}");
    // Static-only costs the same every time; with a table, repeats cost a fraction.
    assert!(static_only.windows(2).all(|w| w[0].abs_diff(w[1]) <= 2));
    assert!(dynamic[1..].iter().all(|&b| b * 3 < static_only[0]));
    let total_dyn: u64 = dynamic.iter().sum();
    let total_static: u64 = static_only.iter().sum();
    assert!(
        total_dyn * 2 < total_static,
        "{total_dyn} vs {total_static}"
    );
}

#[test]
fn blocked_streams_limit_holds_under_reordering() {
    let mut decoder_blocked = 0;
    for (limit, seed) in [(0u64, 3u64), (1, 4), (2, 5), (2, 6), (3, 9)] {
        // Big inserts span several packets, so reordering can deliver a HEADERS frame
        // before the encoder-stream bytes it depends on.
        let server = H3Config {
            qpack_blocked_streams: limit,
            qpack_max_table_capacity: 64 * 1024,
            ..H3Config::default()
        };
        let client = H3Config {
            qpack_max_table_capacity: 64 * 1024,
            ..H3Config::default()
        };
        let link = LinkConfig {
            delay: Duration::from_millis(20),
            reorder: 0.3,
            reorder_extra: Duration::from_millis(40),
            loss: 0.03,
            ..LinkConfig::default()
        };
        let mut p = H3Pair::new(client, server, [link.clone(), link], seed);
        p.handshake();
        // Every request carries new values, so each one inserts and wants to block.
        let mut ids = vec![];
        for i in 0..30 {
            let value = format!("value-{i}-{}", "z".repeat(1500 + 37 * i));
            let extra = [Field::new("x-request", value)];
            ids.push(p.get(&format!("/{}", 500 + i), &extra));
        }
        assert!(p.run(120, |p| p.all_done()), "limit {limit}: not done");
        for (i, id) in ids.iter().enumerate() {
            check_body(&p.responses[id], 500 + i as u64);
        }
        eprintln!(
            "limit {limit}: most blocked at the decoder {}, most blocking at the encoder {}",
            p.max_server_blocked, p.max_client_blocking
        );
        assert!(p.max_server_blocked <= limit as usize);
        assert!(p.max_client_blocking <= limit as usize);
        assert!(p.server.error().is_none(), "{:?}", p.server.error());
        if limit > 0 {
            assert!(
                p.max_client_blocking > 0,
                "the test never exercised blocking"
            );
        }
        decoder_blocked += p.max_server_blocked;
    }
    // Reordering did make the decoder wait on inserts (not only the encoder plan).
    assert!(
        decoder_blocked > 0,
        "no stream was ever blocked at the decoder"
    );
}

#[test]
fn cancel_reaches_the_server() {
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(10),
        7,
    );
    p.handshake();
    let id = p.get("/50000000", &[]);
    assert!(p.run(10, |p| p.responses[&id].body.len() > 10_000));
    let now = p.pair.now;
    let conn = p.pair.client_conn();
    p.client.cancel(conn, id, code::H3_REQUEST_CANCELLED);
    let _ = now;
    let ok = p.run(10, |p| {
        p.server_events.iter().any(
            |e| matches!(e, H3Event::Reset { code: c, .. } if *c == code::H3_REQUEST_CANCELLED),
        )
    });
    assert!(
        ok,
        "{:?} {:?}",
        p.server_events
            .iter()
            .filter(|e| !matches!(e, H3Event::Data { .. }))
            .collect::<Vec<_>>(),
        p.client_events
            .iter()
            .filter(|e| !matches!(e, H3Event::Data { .. }))
            .collect::<Vec<_>>()
    );
    // The connection stays usable.
    let id2 = p.get("/1234", &[]);
    assert!(p.run(10, |p| p.responses[&id2].finished));
    check_body(&p.responses[&id2], 1234);
}

#[test]
fn goaway_refuses_new_requests_and_finishes_old() {
    let mut p = H3Pair::new(
        H3Config::default(),
        H3Config::default(),
        H3Pair::delay(10),
        8,
    );
    p.handshake();
    let a = p.get("/200000", &[]);
    assert!(p.run(10, |p| !p.server_events.is_empty()));
    let now = p.pair.now;
    let conn = p.pair.server_conn().unwrap();
    p.server.send_goaway(conn, now);
    assert!(p.run(10, |p| p.client.goaway_received().is_some()));
    let now = p.pair.now;
    let conn = p.pair.client_conn();
    let fields = quiclab_h3::message::get_request("localhost", "/1", &[]);
    assert!(p.client.send_request(conn, now, &fields, true).is_none());
    assert!(p.run(20, |p| p.responses[&a].finished));
    check_body(&p.responses[&a], 200_000);
}
