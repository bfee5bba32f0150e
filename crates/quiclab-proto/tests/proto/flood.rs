//! Initial-flood resistance in the endpoint: undecryptable Initials create no state,
//! and the number of connections mid-handshake is capped.

use crate::common;

use common::{config, fetch};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{DetRng, TransportConfig, Unrouted};
use std::net::SocketAddr;
use std::time::Duration;

/// A 1200-byte v1 Initial with a random 8-byte DCID and a random (undecryptable) body.
fn junk_initial(rng: &mut DetRng) -> Vec<u8> {
    let mut d = vec![0u8; 1200];
    rng.fill(&mut d);
    d[0] = 0xc3; // long header, fixed bit, Initial, 4-byte packet number
    d[1..5].copy_from_slice(&1u32.to_be_bytes());
    d[5] = 8; // DCID length; bytes 6..14 stay random
    d[14] = 8; // SCID length; bytes 15..23 random
    d[23] = 0; // token length
    d[24..26].copy_from_slice(&(0x4000u16 | 1150).to_be_bytes()); // Length
    d
}

#[test]
fn junk_initials_create_no_connection_and_a_real_client_still_connects() {
    let l = LinkConfig::delay(Duration::from_millis(5));
    let mut pair = Pair::new(config(), config(), [l.clone(), l], 1);
    let mut rng = DetRng::new(99);
    let attacker: SocketAddr = "10.0.0.66:5555".parse().unwrap();
    for _ in 0..5_000 {
        let mut d = junk_initial(&mut rng);
        let now = pair.now;
        let r = pair
            .server
            .handle_datagram(now, attacker, quiclab_proto::Ecn::NotEct, &mut d);
        assert_eq!(r, Err(Unrouted::Dropped));
    }
    assert_eq!(pair.server.handles().count(), 0);
    let mut out = Vec::new();
    let now = pair.now;
    assert!(
        pair.server.poll_transmit(now, &mut out).is_none(),
        "nothing to send"
    );
    fetch(&mut pair, 100_000).unwrap();
    assert_eq!(pair.server.handles().count(), 1);
}

#[test]
fn handshaking_connections_are_capped() {
    let mut server = config();
    server.admission.max_handshaking = 1;
    let l = LinkConfig::delay(Duration::from_millis(5));
    let mut pair = Pair::new(config(), server, [l.clone(), l], 2);
    // A second, real client's first Initial arrives while the first handshake runs.
    let mut other =
        quiclab_proto::Endpoint::new(std::sync::Arc::new(TransportConfig::default()), None, 7);
    let tls = quiclab_proto::tls::client_config(
        quiclab_proto::tls::ServerVerification::Insecure,
        &[b"hq-interop".to_vec()],
        None,
    );
    let now = pair.now;
    let server_addr = pair.server_addr;
    other.connect(now, tls, "localhost", server_addr).unwrap();
    let mut first = Vec::new();
    pair.flush();
    other.poll_transmit(now, &mut first).unwrap();
    pair.step(); // the pair's client Initial reaches the server: 1 handshaking
    let addr: SocketAddr = "10.0.0.3:4000".parse().unwrap();
    let now = pair.now;
    let r = pair
        .server
        .handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut first.clone());
    assert_eq!(r, Err(Unrouted::Dropped), "over the cap");
    fetch(&mut pair, 10_000).unwrap();
    // Once the first handshake completed, the second client gets in.
    let now = pair.now;
    assert!(pair
        .server
        .handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut first)
        .is_ok());
    assert_eq!(pair.server.handles().count(), 2);
}
