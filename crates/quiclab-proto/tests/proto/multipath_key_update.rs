//! 1-RTT key updates (RFC 9001 §6) once path 0 is abandoned
//! (`src/connection/key_update_paths.rs`; draft-ietf-quic-multipath §2.5: the key phase
//! is the connection's). Before, updates were driven by path 0's packet numbers only: with
//! path 0 gone, the initiator's §6.1 condition (an acknowledgment of a packet of the
//! current phase) could never hold again, and a packet on path 1 in the next phase was
//! dropped as undecryptable. Here both sides update every few packets
//! (`key_update.every_packets`) while the client sends a stream on path 1 alone for
//! 3 s (the draft's wait of 3 × the largest PTO spaces updates about 200 ms apart).

use crate::misbehaving::{conn, pair, run_for, DELAY};
use crate::multipath::{
    config, confirm_handshake, open_second_path, second_address, two_paths_with,
};

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Dir, KeyUpdateConfig, Side, TransportConfig};
use std::time::Duration;

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
fn updates(p: &mut Pair) -> [(u64, u64); 2] {
    [Side::Client, Side::Server].map(|side| {
        let s = conn(p, side).stats();
        (s.key_updates_initiated, s.key_updates)
    })
}

/// The client writes 2,000 bytes on a stream every 5 ms for `rounds` rounds, then
/// finishes it; `each` runs after every round. Returns what it wrote and what the
/// server read (all of it, once the pair ran 2 s more).
fn trickle(p: &mut Pair, rounds: usize, mut each: impl FnMut(&mut Pair)) -> (Vec<u8>, Vec<u8>) {
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let (mut sent, mut got, mut sid) = (Vec::new(), Vec::new(), None);
    for round in 0..rounds + 400 {
        if round < rounds {
            let chunk = [(round % 251) as u8; 2_000];
            let n = p.client_conn().write(id, &chunk).unwrap();
            sent.extend_from_slice(&chunk[..n]);
        } else if round == rounds {
            p.client_conn().finish(id).unwrap();
        }
        run_for(p, Duration::from_millis(5));
        each(p);
        let s = p.server_conn().unwrap();
        sid = sid.or_else(|| s.accept_stream(Dir::Uni));
        if let Some(sid) = sid {
            if drain_stream(s, sid, &mut got) {
                break;
            }
        }
    }
    (sent, got)
}

/// Either side abandons path 0; then one side, the initiator, updates every 15 packets
/// (the other only follows: with the draft's wait between updates, the side whose
/// policy triggers first would initiate them all) while the client sends on path 1 and
/// the server PINGs on it every 20 ms (§6.1 waits for the acknowledgment of an
/// ack-eliciting packet of the current phase).
#[test]
fn key_updates_go_on_both_ways_after_path_0_is_abandoned() {
    let runs = [(Side::Client, 501), (Side::Server, 502)]
        .into_iter()
        .flat_map(|(a, seed)| [(a, Side::Client, seed), (a, Side::Server, seed + 10)]);
    for (abandoner, initiator, seed) in runs {
        let (client, server) = match initiator {
            Side::Client => (every(15), config(Some(3))),
            Side::Server => (config(Some(3)), every(15)),
        };
        let mut p = two_paths_with(client, server, seed);
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
        let mut round = 0;
        let (sent, got) = trickle(&mut p, 600, |p| {
            round += 1;
            if round % 4 == 0 {
                p.server_conn().unwrap().multipath_ping(1).unwrap();
            }
        });
        let run = format!("{abandoner:?} abandons, {initiator:?} initiates");
        assert!(got == sent, "{run}: byte-exact");
        let after = updates(&mut p);
        let [(ci, cr), (si, sr)] = after;
        let [(ci0, cr0), (si0, sr0)] = before;
        let (initiated, other) = match initiator {
            Side::Client => (ci - ci0, si - si0),
            Side::Server => (si - si0, ci - ci0),
        };
        assert!(initiated >= 3, "{run}: {before:?} -> {after:?}");
        assert_eq!(other, 0, "{run}: {before:?} -> {after:?}");
        // Every phase change of one side is one of the other's (the last one may be
        // still in flight): the counts of phase changes differ by at most one.
        let (client, server) = (ci - ci0 + cr - cr0, si - si0 + sr - sr0);
        assert!(client.abs_diff(server) <= 1, "{run}: {client} / {server}");
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(!c.is_closed(), "{run} {side:?}");
            assert!(c.stats().local_error.is_none(), "{run} {side:?}");
            assert_eq!(c.multipath_packets(1).map(|_| ()), Some(()));
        }
    }
}

/// Path 1's extra one-way delay in the slow-path tests: 200 ms RTT there, 20 ms on
/// path 0.
pub(crate) const SLOW: Duration = Duration::from_millis(90);

/// A lower bound of a PTO on the slow path (RFC 9002 §6.2.1: smoothed_rtt, never below
/// the 200 ms of the links, + kGranularity + the default max_ack_delay of 25 ms).
pub(crate) const SLOW_PTO: Duration = Duration::from_millis(200 + 1 + 25);

/// A pair with `client`'s and `server`'s configs, path 1 open from the client's second
/// address over [`SLOW`] more one-way delay, validated by both sides.
pub(crate) fn slow_second_path(
    client: TransportConfig,
    server: TransportConfig,
    seed: u64,
) -> Pair {
    let mut p = pair(client, server, seed);
    p.address_delay.insert(second_address(), SLOW);
    confirm_handshake(&mut p);
    open_second_path(&mut p, DELAY * 4, Duration::from_millis(800));
    assert!(p.client_conn().multipath_path_validated(1));
    assert!(p.server_conn().unwrap().multipath_path_validated(1));
    p
}

/// draft-ietf-quic-multipath "Key Phase Update Process": "endpoints SHOULD wait for at
/// least three times the largest PTO among all the paths before initiating a new key
/// update after receiving an acknowledgment that confirms the receipt of the previous
/// key update". The client would update every 10 packets, and path 0 (20 ms RTT)
/// acknowledges its packets of a new phase within tens of milliseconds; the largest PTO
/// is path 1's (200 ms RTT), so consecutive updates are at least 3 × [`SLOW_PTO`]
/// apart. Before the wait, they came about every 25 ms.
#[test]
fn a_new_key_update_waits_three_times_the_largest_pto_among_paths() {
    let mut p = slow_second_path(every(10), config(Some(3)), 503);
    let mut initiated = Vec::new();
    let mut last = p.client_conn().stats().key_updates_initiated;
    let (sent, got) = trickle(&mut p, 800, |p| {
        let n = p.client_conn().stats().key_updates_initiated;
        if n > last {
            assert_eq!(n, last + 1, "one update per 5 ms at most");
            initiated.push(p.now);
            last = n;
        }
    });
    assert!(initiated.len() >= 3, "{initiated:?}");
    for w in initiated.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= SLOW_PTO * 3, "{gap:?}: {initiated:?}");
    }
    assert!(
        got == sent && sent.len() > 1_000_000,
        "{} bytes",
        sent.len()
    );
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert!(!c.is_closed(), "{side:?}");
        assert!(c.stats().local_error.is_none(), "{side:?}");
    }
}
