//! The client's half of compatible version negotiation on crafted server packets
//! (anyone can build an Initial: its keys come from the DCID, RFC 9001 §5.2), and its
//! RFC 9368 §4 checks of the server's version_information.

use crate::config::{QuicVersion, TransportConfig, VersionConfig};
use crate::connection::Connection;
use crate::crypto::cert::{client_config, ServerVerification};
use crate::crypto::initial::initial_keys;
use crate::crypto::protect::seal;
use crate::crypto::TAG_LEN;
use crate::error::TransportErrorCode;
use crate::time::Instant;
use crate::wire::header::write_long_header;
use crate::wire::{varint, ConnectionId, Frame, PacketType, Side, TransportParameters};
use crate::wire::{VersionInformation, VERSION_1, VERSION_2};
use std::net::SocketAddr;
use std::sync::Arc;

fn server_addr() -> SocketAddr {
    "10.0.0.2:443".parse().unwrap()
}

/// A client that starts in v1; `offer_v2`: it also offers v2 (preferring it).
fn client(offer_v2: bool) -> Connection {
    let mut config = TransportConfig::default();
    if offer_v2 {
        config.versions = VersionConfig {
            initial: QuicVersion::V1,
            supported: vec![QuicVersion::V2, QuicVersion::V1],
        };
    }
    let tls = client_config(ServerVerification::Insecure, &[b"x".to_vec()], None);
    let now = Instant::ZERO;
    Connection::new_client(now, Arc::new(config), tls, "localhost", server_addr(), 1).unwrap()
}

/// A server Initial of `version` to `c` carrying `frames` (padded), protected with
/// that version's server Initial keys of `c`'s original DCID; `corrupt` flips a
/// payload bit after protection. Packet numbers count the packets `c` received.
fn server_initial(c: &Connection, version: u32, frames: &[Frame<'_>], corrupt: bool) -> Vec<u8> {
    let pn = c.stats().packets_received[0];
    let scid = ConnectionId::new(&[9; 8]).unwrap();
    let mut p = Vec::new();
    let o = write_long_header(
        &mut p,
        PacketType::Initial,
        version,
        &c.local_cid(),
        &scid,
        &[],
        pn,
        2,
    );
    for f in frames {
        f.encode(&mut p);
    }
    p.resize(1200 - TAG_LEN, 0); // PADDING
    let length = (p.len() + TAG_LEN - o.pn_offset) as u64;
    varint::patch_u14(&mut p, o.length_offset, length);
    p.resize(1200, 0);
    let keys = initial_keys(version, &c.original_dcid(), Side::Server);
    seal(
        &*keys.local.packet,
        &*keys.local.header,
        &mut p,
        o.pn_offset,
        pn,
    )
    .unwrap();
    if corrupt {
        p[100] ^= 1;
    }
    p
}

/// Hands `c` the datagram [`server_initial`] builds.
fn deliver(c: &mut Connection, version: u32, frames: &[Frame<'_>], corrupt: bool) {
    let mut datagram = server_initial(c, version, frames, corrupt);
    c.handle_datagram(
        Instant::from_millis(10),
        server_addr(),
        crate::Ecn::NotEct,
        &mut datagram,
    );
}

#[test]
fn an_initial_in_an_offered_version_moves_the_client_once_it_authenticates() {
    let mut c = client(true);
    let mut first = Vec::new();
    c.poll_transmit(Instant::ZERO, &mut first).unwrap();
    assert_eq!(first[1..5], VERSION_1.to_be_bytes());
    // A v2 Initial that does not authenticate moves nothing.
    deliver(&mut c, VERSION_2, &[Frame::Ping], true);
    assert_eq!((c.version(), c.stats().packets_dropped), (VERSION_1, 1));
    // An authentic one does: the client answers in v2 (its ACK), from v2 keys.
    deliver(&mut c, VERSION_2, &[Frame::Ping], false);
    assert_eq!((c.version(), c.stats().packets_dropped), (VERSION_2, 1));
    assert_eq!(c.stats().packets_received[0], 1);
    let mut out = Vec::new();
    let now = Instant::from_millis(10);
    c.poll_transmit(now, &mut out).unwrap();
    assert_eq!(out[1..5], VERSION_2.to_be_bytes());
    // The version has settled: a v1 Initial is not the connection's any more.
    deliver(&mut c, VERSION_1, &[Frame::Ping], false);
    assert_eq!((c.version(), c.stats().packets_dropped), (VERSION_2, 2));
}

#[test]
fn an_initial_in_a_version_not_offered_is_dropped() {
    // A v1-only client (no version_information, as before compatible negotiation).
    let mut c = client(false);
    deliver(&mut c, VERSION_2, &[Frame::Ping], false);
    assert_eq!((c.version(), c.stats().packets_dropped), (VERSION_1, 1));
    assert_eq!(c.stats().packets_received, [0; 3]);
    // Its own version still works.
    deliver(&mut c, VERSION_1, &[Frame::Ping], false);
    assert_eq!(c.stats().packets_received[0], 1);
}

#[test]
fn crypto_data_in_the_chosen_version_settles_it() {
    // RFC 9369 §4.1: a CRYPTO frame in the original version means no upgrade. (At an
    // offset TLS does not read yet, so no ServerHello is needed.)
    let mut c = client(true);
    let crypto = Frame::Crypto {
        offset: 500,
        data: &[0; 8],
    };
    // An ACK-less PING in v1 first: the server may answer in the chosen version
    // before it reads the ClientHello, which leaves the upgrade possible.
    deliver(&mut c, VERSION_1, &[Frame::Ping], false);
    assert!(!c.versions.settled);
    deliver(&mut c, VERSION_1, &[crypto], false);
    assert!(c.versions.settled);
    deliver(&mut c, VERSION_2, &[Frame::Ping], false);
    assert_eq!((c.version(), c.stats().packets_dropped), (VERSION_1, 1));
}

fn params(vi: Option<(u32, &[u32])>) -> TransportParameters {
    TransportParameters {
        version_information: vi.map(|(chosen, available)| VersionInformation {
            chosen,
            available: available.to_vec(),
        }),
        ..TransportParameters::default()
    }
}

fn check(c: &mut Connection, vi: Option<(u32, &[u32])>) -> Result<(), String> {
    c.check_peer_version_information(Instant::ZERO, &params(vi))
        .map_err(|e| {
            assert_eq!(e.code, TransportErrorCode::VERSION_NEGOTIATION_ERROR);
            e.reason
        })
}

#[test]
fn server_version_information_must_confirm_the_negotiated_version() {
    let both: &[u32] = &[VERSION_2, VERSION_1];
    let mut c = client(true);
    // Offered [v2, v1], still in v1: the server's Chosen Version must be v1.
    assert_eq!(check(&mut c, Some((VERSION_1, both))), Ok(()));
    let e = check(&mut c, Some((VERSION_2, both))).unwrap_err();
    assert!(e.contains("not the version in use"), "{e}");
    let e = check(&mut c, Some((0x1a2a_3a4a, both))).unwrap_err();
    assert!(e.contains("was not offered"), "{e}");
    // No upgrade: a server without version_information is a plain RFC 9000 one.
    assert_eq!(check(&mut c, None), Ok(()));

    // Moved to v2 by an upgrade (the long header said so): the server must confirm
    // v2 (RFC 9368 §4), so a forged long header cannot choose the version.
    c.versions.current = VERSION_2;
    assert_eq!(check(&mut c, Some((VERSION_2, &[VERSION_2]))), Ok(()));
    let e = check(&mut c, Some((VERSION_1, both))).unwrap_err();
    assert!(e.contains("not the version in use"), "{e}");
    let e = check(&mut c, None).unwrap_err();
    assert!(e.contains("changed the version"), "{e}");
}
