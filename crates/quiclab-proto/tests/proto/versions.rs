//! Version Negotiation (RFC 9000 §6), QUIC v2 (RFC 9369) and downgrade prevention
//! (RFC 9368 §4) in the pair harness.

use crate::common;

use common::{config, fetch};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{
    CloseReason, Instant, QuicVersion, TransportConfig, VersionConfig, VERSION_1, VERSION_2,
};
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

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(10));
    [l.clone(), l]
}

#[test]
fn v2_end_to_end() {
    use QuicVersion::*;
    let mut pair = Pair::new(versions(V2, &[V2]), versions(V2, &[V2, V1]), links(), 3);
    fetch(&mut pair, 200_000).unwrap();
    assert_eq!(pair.client_conn().version(), VERSION_2);
    assert_eq!(pair.server_conn().unwrap().version(), VERSION_2);
    // One round trip for the handshake: no Version Negotiation happened.
    let hs = pair.client_conn().stats().handshake_completed_at.unwrap();
    assert_eq!(hs, Instant::from_millis(20));
}

#[test]
fn v2_only_client_against_v1_only_server_gets_version_negotiation() {
    use QuicVersion::*;
    let mut pair = Pair::new(versions(V2, &[V2]), config(), links(), 4);
    pair.run_until(Instant::from_millis(5_000), |p| p.client_conn().is_closed())
        .unwrap();
    // The server answered with Version Negotiation and kept no connection.
    assert!(pair.server_conn.is_none());
    assert_eq!(pair.server.handles().count(), 0);
    let reason = pair.client_conn().close_reason().cloned().unwrap();
    let CloseReason::Transport { error, .. } = reason else {
        panic!("{reason:?}")
    };
    assert!(
        error.reason.contains("only versions [1]"),
        "{}",
        error.reason
    );
    assert!(pair.client_conn().is_drained());
}

#[test]
fn client_falls_back_to_v1_after_version_negotiation() {
    use QuicVersion::*;
    let mut pair = Pair::new(versions(V2, &[V2, V1]), versions(V1, &[V1]), links(), 5);
    fetch(&mut pair, 50_000).unwrap();
    assert_eq!(pair.client_conn().version(), VERSION_1);
    assert_eq!(
        pair.server.handles().count(),
        1,
        "only the v1 attempt made state"
    );
    // VN costs one extra round trip: handshake done at 2 RTT.
    let hs = pair.client_conn().stats().handshake_completed_at.unwrap();
    assert_eq!(hs, Instant::from_millis(40));
}

#[test]
fn version_negotiation_listing_our_version_is_ignored() {
    use quiclab_proto::raw::write_version_negotiation;
    use QuicVersion::*;
    let mut pair = Pair::new(versions(V2, &[V2, V1]), versions(V2, &[V2, V1]), links(), 6);
    pair.flush();
    let (local, orig) = {
        let c = pair.client_conn();
        (c.local_cid(), c.original_dcid())
    };
    // A forged VN that lists the version we offered: RFC 9000 §6.2 says ignore it.
    let mut vn = Vec::new();
    write_version_negotiation(
        &mut vn,
        local.as_bytes(),
        orig.as_bytes(),
        &[VERSION_1, VERSION_2],
        0,
    );
    let now = pair.now;
    let server = pair.server_addr;
    let _ = pair
        .client
        .handle_datagram(now, server, quiclab_proto::Ecn::NotEct, &mut vn);
    fetch(&mut pair, 10_000).unwrap();
    assert_eq!(pair.client_conn().version(), VERSION_2);
}

#[test]
fn forged_version_negotiation_is_a_detected_downgrade() {
    use quiclab_proto::raw::write_version_negotiation;
    use QuicVersion::*;
    // Both speak v2 and prefer it, but an attacker's VN claims the server has only v1.
    let mut pair = Pair::new(versions(V2, &[V2, V1]), versions(V2, &[V2, V1]), links(), 7);
    // Drop the client's first (v2) Initial so only the forged VN answers it.
    pair.links[0].loss = 1.0;
    pair.flush();
    pair.links[0].loss = 0.0;
    let (local, orig) = {
        let c = pair.client_conn();
        (c.local_cid(), c.original_dcid())
    };
    let mut vn = Vec::new();
    write_version_negotiation(&mut vn, local.as_bytes(), orig.as_bytes(), &[VERSION_1], 0);
    let now = pair.now;
    let server = pair.server_addr;
    let _ = pair
        .client
        .handle_datagram(now, server, quiclab_proto::Ecn::NotEct, &mut vn);
    assert_eq!(pair.client_conn().version(), VERSION_1);
    let err = fetch(&mut pair, 1_000).unwrap_err();
    assert!(
        err.contains("downgrade") || err.contains("VERSION_NEGOTIATION"),
        "{err}"
    );
    let code = pair.client_conn().stats().local_error.unwrap();
    assert_eq!(code.0, 0x11);
}

#[test]
fn unsupported_version_never_creates_state() {
    use quiclab_proto::Unrouted;
    let mut pair = Pair::new(config(), config(), links(), 8);
    for version in [0x1a2a_3a4a_u32, VERSION_2] {
        let mut d = vec![0u8; 1200];
        d[0] = 0xd0; // Initial in v2; 0-RTT in v1: a long header either way.
        d[1..5].copy_from_slice(&version.to_be_bytes());
        d[5] = 8;
        d[6..14].copy_from_slice(&[7; 8]);
        d[14] = 0;
        let now = pair.now;
        let client = pair.client_addr;
        let r = pair
            .server
            .handle_datagram(now, client, quiclab_proto::Ecn::NotEct, &mut d);
        assert_eq!(r, Err(Unrouted::VersionNegotiation), "{version:#x}");
        // A small datagram gets nothing (RFC 9000 §14.1: no amplification).
        let r = pair
            .server
            .handle_datagram(now, client, quiclab_proto::Ecn::NotEct, &mut d[..100]);
        assert_eq!(r, Err(Unrouted::Dropped), "{version:#x}");
    }
    assert_eq!(pair.server.handles().count(), 0);
}
