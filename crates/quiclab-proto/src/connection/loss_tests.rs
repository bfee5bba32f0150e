//! PTO probes of the handshake spaces, seen as an on-path observer sees them.

use crate::config::TransportConfig;
use crate::events::FrameKind;
use crate::inspect::{coalesced_packets, read_client_initial};
use crate::testing::{LinkConfig, Pair};
use crate::time::Instant;
use crate::wire::PacketType;

/// RFC 9002 §6.2.4: when the client's first flight is lost, each of its two PTO probes
/// carries the ClientHello again (CRYPTO from offset 0). A bare PING in the second probe
/// would reach a server that cannot answer it, so losing the first probe would cost a
/// whole further PTO.
#[test]
fn every_client_initial_probe_carries_the_client_hello() {
    let lost = LinkConfig {
        loss: 1.0,
        ..LinkConfig::default()
    };
    let mut pair = Pair::new(
        TransportConfig::default(),
        TransportConfig::default(),
        [lost, LinkConfig::default()],
        3,
    );
    pair.capture = Some(Vec::new());
    // Long enough for the first datagram and two PTO expiries (1 s initial RTT: RFC
    // 9002 §6.2.2 gives a first PTO of 3 s, then 6 s more with backoff).
    let _ = pair.run_until(Instant::from_millis(9_500), |_| false);
    let captured = pair.capture.take().expect("capturing");
    let mut initials = 0;
    for (_, from_client, datagram) in captured.iter().filter(|(_, c, _)| *c) {
        assert!(from_client);
        for (h, packet) in coalesced_packets(datagram) {
            if h.ty != PacketType::Initial {
                continue;
            }
            initials += 1;
            let frames = read_client_initial(packet, &h.dcid).expect("a client Initial opens");
            assert!(
                frames
                    .iter()
                    .any(|f| matches!(f.kind, FrameKind::Crypto { offset: 0, .. })),
                "client Initial #{initials} lacks the ClientHello: {frames:?}"
            );
        }
    }
    // The first flight and at least two probes after each of two PTOs.
    assert!(initials >= 5, "{initials} client Initials");
}
