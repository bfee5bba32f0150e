//! `multipath.abandon_after_ptos` (`src/connection/multipath_failed.rs`;
//! draft-ietf-quic-multipath §3.4: a path may be abandoned on "implicit signals such as
//! an idle time-out ... or packet losses"): path 0 goes dead in the middle of a 1 MB
//! upload (every datagram from or to the client's first address is lost) and nobody
//! tells the client. With the knob, the client abandons path 0 at its third PTO in a
//! row (path 1 looks failed too: its PATH_ACKs ride on path 0 under the default
//! `ack_path = "any"`), its PATH_ABANDON leaves in a probe on path 1, the server
//! follows, and path 1 carries the rest; without it (the default), path 0 is kept and
//! the upload stalls.

use crate::misbehaving::conn;
use crate::multipath::{config, payload, two_paths_with, upload};

use quiclab_proto::{Side, TransportConfig};

fn client(abandon_after_ptos: Option<u32>) -> TransportConfig {
    let mut c = config(Some(3));
    c.multipath.abandon_after_ptos = abandon_after_ptos;
    c.idle_timeout_ms = 600_000;
    c
}

/// Runs the upload with path 0 dead from round 6 (at most 20 s); returns the pair and
/// what the server read.
fn dead_path0(knob: Option<u32>, seed: u64) -> (quiclab_proto::testing::Pair, Vec<u8>) {
    let mut p = two_paths_with(client(knob), config(Some(3)), seed);
    let first = p.client_addr;
    let got = upload(&mut p, &payload(), |p, round| {
        if round == 6 {
            p.drop_filter = Some(Box::new(move |_, from, to, _| from == first || to == first));
        }
    });
    (p, got)
}

#[test]
fn an_untold_client_abandons_a_dead_path_0_only_when_configured() {
    let data = payload();
    let (mut on, got) = dead_path0(Some(3), 601);
    assert!(got == data, "byte-exact on path 1");
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut on, side);
        assert!(c.multipath_path_abandoned(0), "{side:?}");
        assert!(!c.multipath_path_abandoned(1), "{side:?}");
        assert!(c.stats().local_error.is_none(), "{side:?}");
    }
    assert_eq!(
        on.client_conn().stats().pto_count_total,
        3,
        "abandoned at the 3rd"
    );
    // The default keeps path 0, which with `ack_path = "any"` carries every PATH_ACK:
    // path 1's packets are never acknowledged either and the upload stalls (20 s).
    let (mut off, got) = dead_path0(None, 601);
    assert!(got.len() < data.len() / 2, "stalled at {}", got.len());
    for side in [Side::Client, Side::Server] {
        assert!(
            !conn(&mut off, side).multipath_path_abandoned(0),
            "{side:?}"
        );
    }
    assert!(off.client_conn().stats().pto_count_total > 3);
    assert!(off.client_conn().multipath_path_loss(1).unwrap().pto_count >= 3);
}
