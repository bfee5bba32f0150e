//! 1-RTT key updates (RFC 9001 §6) once path 0 is abandoned
//! (`src/connection/key_update_paths.rs`; draft-ietf-quic-multipath §2.5: the key phase
//! is the connection's). Before, updates were driven by path 0's packet numbers only: with
//! path 0 gone, the initiator's §6.1 condition (an acknowledgment of a packet of the
//! current phase) could never hold again, and a packet on path 1 in the next phase was
//! dropped as undecryptable. Here both sides update every few packets
//! (`key_update.every_packets`) while the client uploads 1 MB on path 1 alone.

use crate::misbehaving::{conn, run_for, DELAY};
use crate::multipath::{config, payload, two_paths_with, upload};

use quiclab_proto::{KeyUpdateConfig, Side, TransportConfig};

fn every(n: u64) -> TransportConfig {
    TransportConfig {
        key_update: KeyUpdateConfig {
            every_packets: Some(n),
            ..Default::default()
        },
        ..config(Some(3))
    }
}

/// (initiated, responded) key updates of each side: client's, then server's.
fn updates(p: &mut quiclab_proto::testing::Pair) -> [(u64, u64); 2] {
    [Side::Client, Side::Server].map(|side| {
        let s = conn(p, side).stats();
        (s.key_updates_initiated, s.key_updates)
    })
}

#[test]
fn key_updates_go_on_both_ways_after_path_0_is_abandoned() {
    for (abandoner, seed) in [(Side::Client, 501), (Side::Server, 502)] {
        let mut p = two_paths_with(every(40), every(15), seed);
        conn(&mut p, abandoner)
            .multipath_abandon_path(0, 0)
            .unwrap();
        run_for(&mut p, DELAY * 10);
        for side in [Side::Client, Side::Server] {
            assert!(
                conn(&mut p, side).multipath_path_abandoned(0),
                "{abandoner:?}"
            );
        }
        let before = updates(&mut p);
        let data = payload();
        let got = upload(&mut p, &data, |_, _| {});
        assert!(got == data, "{abandoner:?}: byte-exact");
        let after = updates(&mut p);
        let [(ci, cr), (si, sr)] = after;
        let [(ci0, cr0), (si0, sr0)] = before;
        assert!(ci - ci0 >= 3, "{abandoner:?}: the client initiated updates");
        assert!(si - si0 >= 3, "{abandoner:?}: the server initiated updates");
        // Every phase change of one side is one of the other's, initiated or followed
        // (two updates that cross are one phase change on each side; the last one may
        // be still in flight): the counts of phase changes differ by at most one.
        let (client, server) = (ci - ci0 + cr - cr0, si - si0 + sr - sr0);
        assert!(
            client.abs_diff(server) <= 1,
            "{abandoner:?}: {client} / {server}"
        );
        assert!(client >= 6, "{abandoner:?}");
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(!c.is_closed(), "{abandoner:?} {side:?}");
            assert!(c.stats().local_error.is_none(), "{abandoner:?} {side:?}");
            assert_eq!(c.multipath_packets(1).map(|_| ()), Some(()));
        }
    }
}
