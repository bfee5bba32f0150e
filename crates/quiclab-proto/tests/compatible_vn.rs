//! Compatible version negotiation on the server (RFC 9368 §2.3): a v1 Initial whose
//! ClientHello offers v2 makes a v2 connection on a server that prefers v2 (exercised
//! against aioquic in tests/interop/run.sh); what quiclab's own client offers.

mod common;

use common::config;
use quiclab_proto::config::{QuicVersion, VersionConfig};
use quiclab_proto::crypto::cert::{client_config, self_signed, server_config, ServerVerification};
use quiclab_proto::testing::ALPN;
use quiclab_proto::wire::header::parse_header;
use quiclab_proto::wire::{PacketType, VERSION_1};
use quiclab_proto::{Endpoint, Instant, TransportConfig};
use std::net::SocketAddr;
use std::sync::Arc;

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
    let h = s.handle_datagram(Instant::ZERO, from, &mut d).unwrap();
    let version = s.connection(h).unwrap().version();
    let mut out = Vec::new();
    let t = s.poll_transmit(Instant::ZERO, &mut out).unwrap();
    let hdr = parse_header(&out[..t.size], 8).unwrap();
    assert_eq!(hdr.ty, PacketType::Initial);
    (version, hdr.version)
}

#[test]
fn quiclab_client_offers_only_what_it_can_follow() {
    use QuicVersion::*;
    // quiclab's client cannot follow an upgrade (its rustls session's version is
    // fixed), so its Available Versions name only v1: no upgrade. The upgrade itself
    // is exercised against aioquic's client (tests/interop/run.sh, case v2).
    let r = server_answer(versions(V1, &[V1, V2]), versions(V1, &[V2, V1]));
    assert_eq!(r, (VERSION_1, VERSION_1));
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
