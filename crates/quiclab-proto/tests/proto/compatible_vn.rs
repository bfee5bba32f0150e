//! Compatible version negotiation (RFC 9368 §2.3, RFC 9369 §4.1): a v1 Initial whose
//! ClientHello offers v2 makes a v2 connection on a server that prefers v2, and
//! quiclab's client follows it (also exercised against aioquic in
//! tests/interop/run.sh, case v2); the reverse (v2 -> v1) for a server preferring v1.

use crate::common;

use common::{config, fetch};
use quiclab_proto::raw::parse_header;
use quiclab_proto::testing::{Captured, LinkConfig, Pair, ALPN};
use quiclab_proto::tls::{client_config, self_signed, server_config, ServerVerification};
use quiclab_proto::{
    Endpoint, Instant, KeyUpdateConfig, PacketType, QuicVersion, RetryMode, TransportConfig,
    VersionConfig, VERSION_1, VERSION_2,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn versions(initial: QuicVersion, supported: &[QuicVersion]) -> TransportConfig {
    TransportConfig {
        versions: VersionConfig {
            initial,
            supported: supported.to_vec(),
        },
        ..config()
    }
}

/// The server's version for the first Initial of a client with `client` versions,
/// and the version of the server's first datagram.
fn server_answer(client: TransportConfig, server: TransportConfig) -> (u32, u32) {
    let identity = self_signed(&["localhost".into()], 1, 0);
    let tls = server_config(identity, &[ALPN.to_vec()], None).unwrap();
    let mut s = Endpoint::new(Arc::new(server), Some(tls), 2);
    let mut c = Endpoint::new(Arc::new(client), None, 3);
    let ctls = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
    let addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    c.connect(Instant::ZERO, ctls, "localhost", addr).unwrap();
    let mut d = Vec::new();
    let t = c.poll_transmit(Instant::ZERO, &mut d).unwrap();
    d.truncate(t.size);
    assert_eq!(parse_header(&d, 8).unwrap().version, VERSION_1);
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let h = s
        .handle_datagram(Instant::ZERO, from, quiclab_proto::Ecn::NotEct, &mut d)
        .unwrap();
    let version = s.connection(h).unwrap().version();
    let mut out = Vec::new();
    let t = s.poll_transmit(Instant::ZERO, &mut out).unwrap();
    let hdr = parse_header(&out[..t.size], 8).unwrap();
    assert_eq!(hdr.ty, PacketType::Initial);
    (version, hdr.version)
}

#[test]
fn a_v1_initial_offering_v2_is_upgraded_by_a_v2_preferring_server() {
    use QuicVersion::*;
    let r = server_answer(versions(V1, &[V2, V1]), versions(V1, &[V2, V1]));
    assert_eq!(r, (VERSION_2, VERSION_2));
    // The client's preference order does not matter: the server chooses (§2.3).
    let r = server_answer(versions(V1, &[V1, V2]), versions(V1, &[V2, V1]));
    assert_eq!(r, (VERSION_2, VERSION_2));
}

#[test]
fn no_upgrade_without_an_offer_or_a_preference() {
    use QuicVersion::*;
    // A v1-only client sends no version_information (default config).
    let r = server_answer(config(), versions(V1, &[V2, V1]));
    assert_eq!(r, (VERSION_1, VERSION_1));
    // The server prefers v1.
    let r = server_answer(versions(V1, &[V1, V2]), versions(V1, &[V1, V2]));
    assert_eq!(r, (VERSION_1, VERSION_1));
}

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(10));
    [l.clone(), l]
}

/// The versions of every long header in the captured datagrams from the client
/// (`from_client`) or the server, in order.
fn long_header_versions(capture: &[Captured], from_client: bool) -> Vec<u32> {
    let mut out = Vec::new();
    for (_, _, d) in capture.iter().filter(|c| c.1 == from_client) {
        let mut rest = &d[..];
        while let Ok(h) = parse_header(rest, 8) {
            if h.ty == PacketType::OneRtt {
                break;
            }
            out.push(h.version);
            rest = &rest[h.packet_len.min(rest.len())..];
        }
    }
    out
}

/// A client starting in `from` and offering both versions, preferring v2, against a
/// server preferring `server_first`: a download both ways, its packets captured.
fn upgraded_pair(from: QuicVersion, server_first: QuicVersion, seed: u64) -> Pair {
    use QuicVersion::*;
    let other = if server_first == V1 { V2 } else { V1 };
    let mut pair = Pair::new(
        versions(from, &[V2, V1]),
        versions(V1, &[server_first, other]),
        links(),
        seed,
    );
    pair.capture = Some(Vec::new());
    pair
}

#[test]
fn quiclab_client_follows_an_upgrade_to_v2() {
    use QuicVersion::*;
    let mut pair = upgraded_pair(V1, V2, 11);
    let got = fetch(&mut pair, 200_000).unwrap();
    assert_eq!(got.len(), 200_000);
    assert_eq!(pair.client_conn().version(), VERSION_2);
    assert_eq!(pair.server_conn().unwrap().version(), VERSION_2);
    // No extra round trip: the handshake takes one, as without negotiation.
    let hs = pair.client_conn().stats().handshake_completed_at.unwrap();
    assert_eq!(hs, Instant::from_millis(20));
    // On the wire: the client's first flight in v1, everything after it (Initial
    // ACKs, Handshake) in v2; the server's packets all in v2.
    let capture = pair.capture.take().unwrap();
    let client = long_header_versions(&capture, true);
    let server = long_header_versions(&capture, false);
    assert_eq!(client[0], VERSION_1);
    assert!(
        client.len() > 1 && client[1..].iter().all(|&v| v == VERSION_2),
        "{client:x?}"
    );
    assert!(
        !server.is_empty() && server.iter().all(|&v| v == VERSION_2),
        "{server:x?}"
    );
}

#[test]
fn a_v1_preferring_server_moves_a_v2_client_to_v1() {
    use QuicVersion::*;
    // The opposite direction: v1's labels for keys of a session created in v2.
    let mut pair = upgraded_pair(V2, V1, 12);
    fetch(&mut pair, 100_000).unwrap();
    assert_eq!(pair.client_conn().version(), VERSION_1);
    let capture = pair.capture.take().unwrap();
    let client = long_header_versions(&capture, true);
    assert_eq!(client[0], VERSION_2);
    assert!(client[1..].iter().all(|&v| v == VERSION_1), "{client:x?}");
}

#[test]
fn a_v1_preferring_server_keeps_a_v1_client_in_v1() {
    use QuicVersion::*;
    let mut pair = upgraded_pair(V1, V1, 13);
    fetch(&mut pair, 100_000).unwrap();
    assert_eq!(pair.client_conn().version(), VERSION_1);
    assert_eq!(pair.server_conn().unwrap().version(), VERSION_1);
    let capture = pair.capture.take().unwrap();
    let all = [true, false].map(|c| long_header_versions(&capture, c));
    assert!(all.iter().flatten().all(|&v| v == VERSION_1), "{all:x?}");
}

#[test]
fn key_updates_after_an_upgrade_use_v2_labels() {
    use QuicVersion::*;
    // "quicv2 ku" on both sides (RFC 9369 §3.3.2): with v1's label on one side the
    // first update would not decrypt and the download would stall.
    let every = |n| KeyUpdateConfig {
        every_packets: Some(n),
        ..Default::default()
    };
    for (client_every, server_every) in [(Some(20), None), (None, Some(100))] {
        let mut c = versions(V1, &[V2, V1]);
        c.key_update = client_every.map(every).unwrap_or_default();
        let mut s = versions(V1, &[V2, V1]);
        s.key_update = server_every.map(every).unwrap_or_default();
        let mut pair = Pair::new(c, s, links(), 14);
        fetch(&mut pair, 1_000_000).unwrap();
        assert_eq!(pair.client_conn().version(), VERSION_2);
        let client = pair.client_conn().stats().clone();
        let server = pair.server_conn().unwrap().stats().clone();
        let updates = client.key_updates_initiated + server.key_updates_initiated;
        let followed = client.key_updates + server.key_updates;
        assert!(updates >= 3, "{client:?} {server:?}");
        // The last update may not have reached the peer yet.
        assert!(followed + 1 >= updates, "{client:?} {server:?}");
    }
}

#[test]
fn retry_then_upgrade() {
    use QuicVersion::*;
    // RFC 9369 §4.1: the Retry in the original version; the client's Initial keys
    // of the new version then come from the Retry's connection ID.
    let mut s = versions(V1, &[V2, V1]);
    s.admission.retry = RetryMode::Always;
    let mut pair = Pair::new(versions(V1, &[V2, V1]), s, links(), 15);
    fetch(&mut pair, 50_000).unwrap();
    assert!(pair.client_conn().retry_received());
    assert_eq!(pair.client_conn().version(), VERSION_2);
}
