//! Path validation and the server's side of connection migration (RFC 9000 §8.2,
//! §9.3) in the pair harness: NAT rebindings, spoofed and replayed packets from other
//! addresses, the anti-amplification limit on unvalidated addresses, bounded state.

use crate::download;

use download::{run_download, Download};
use proptest::prelude::*;
use quiclab_proto::events::{Event, EventSink, MigrationPhase};
use quiclab_proto::raw::{Frame, SpaceId};
use quiclab_proto::testing::{with_tampered_transport_parameters, LinkConfig, Pair};
use quiclab_proto::{
    ConnectionId, Instant, MigrateError, PacketType, Side, TransportConfig, MAX_OTHER_ADDRESSES,
};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DELAY: Duration = Duration::from_millis(10);

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn pair(seed: u64, loss: f64) -> Pair {
    let link = LinkConfig {
        loss,
        ..LinkConfig::delay(DELAY)
    };
    Pair::new(
        TransportConfig::default(),
        TransportConfig::default(),
        [link.clone(), link],
        seed,
    )
}

fn connected(seed: u64, loss: f64) -> Pair {
    let mut p = pair(seed, loss);
    p.run_until(Instant::from_millis(10_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
    p
}

/// Every address but `legitimate` got at most 3x what the server received from it
/// (RFC 9000 §8.1, §9.3.1).
fn assert_amplification_bound(p: &Pair, legitimate: &[SocketAddr]) {
    for (to, &sent) in &p.server_sent_to {
        if legitimate.contains(to) {
            continue;
        }
        let received = p.server_received_from.get(to).copied().unwrap_or(0);
        assert!(
            sent <= 3 * received,
            "{to}: sent {sent} > 3 x received {received}"
        );
    }
}

/// Records the server's migration events with their times.
#[derive(Clone, Default)]
struct Phases(Arc<Mutex<Vec<(Instant, MigrationPhase, SocketAddr)>>>);

impl EventSink for Phases {
    fn event(&mut self, now: Instant, event: &Event) {
        if let Event::MigrationStateUpdated { new, remote } = event {
            self.0.lock().unwrap().push((now, *new, *remote));
        }
    }
}

fn watch_server(p: &mut Pair) -> Phases {
    let phases = Phases::default();
    let now = p.now;
    let sink = Box::new(phases.clone());
    p.server_conn().unwrap().set_event_sink(now, sink);
    phases
}

/// A 1-RTT packet from the client carrying `frames`, as bytes (not sent).
fn client_packet(p: &mut Pair, frames: &[Frame<'_>]) -> Vec<u8> {
    let mut payload = Vec::new();
    for f in frames {
        f.encode(&mut payload);
    }
    let now = p.now;
    p.client_conn()
        .craft_datagram(now, SpaceId::Data, &payload, None)
        .expect("1-RTT keys")
}

#[test]
fn a_port_rebinding_moves_the_server_and_keeps_its_congestion_state() {
    let mut p = connected(1, 0.0);
    let phases = watch_server(&mut p);
    let mut d = Download::new(1, 2_000_000);
    let new = addr("10.0.0.1:40001");
    let mut rtt_before = None;
    let old = p.client_addr;
    let mut expired = false;
    let start = p.now;
    p.run_until(start + Duration::from_secs(60), |p| {
        if rtt_before.is_none() && p.now >= start + Duration::from_millis(50) {
            rtt_before = Some(p.server_conn().unwrap().rtt().smoothed());
            p.rebind_client(new);
        }
        if !expired && p.server_conn().unwrap().remote_address() == new {
            // The old mapping times out: the old path's check fails (§9.3.3).
            expired = true;
            p.expire_client_address(old);
        }
        d.drive(p);
        d.done
    })
    .expect("download completes");
    assert_eq!(d.received, d.data);
    // Past the old path check's timeout (RFC 9000 §8.2.4: about 3 s here).
    p.run_until(p.now + Duration::from_secs(5), |_| false).ok();
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), new);
    assert!(s.remote_validated());
    let m = s.migration_stats();
    assert_eq!(m.migrations, 1);
    assert_eq!(m.reverts, 0);
    // RFC 9000 §9.4: only the port changed, so RTT samples continue from the old path
    // (a fresh estimator would restart at 333 ms).
    assert!(s.rtt().smoothed() < Duration::from_millis(100));
    let _ = rtt_before;
    let phases = phases.0.lock().unwrap();
    let kinds: Vec<MigrationPhase> = phases.iter().map(|e| e.1).collect();
    assert!(
        kinds.contains(&MigrationPhase::MigrationStarted),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&MigrationPhase::MigrationComplete),
        "{kinds:?}"
    );
    // RFC 9000 §9.3.3: the old path is challenged too; its NAT binding is gone.
    assert!(kinds.contains(&MigrationPhase::ProbingStarted), "{kinds:?}");
    assert!(
        kinds.contains(&MigrationPhase::ProbingAbandoned),
        "{kinds:?}"
    );
}

#[test]
fn an_address_change_resets_the_congestion_controller_and_rtt() {
    let mut p = connected(2, 0.0);
    let mut d = Download::new(2, 2_000_000);
    let new = addr("10.0.9.9:5000");
    let mut checked = false;
    let start = p.now;
    let mut moved = false;
    p.run_until(start + Duration::from_secs(60), |p| {
        if !moved && p.now >= start + Duration::from_millis(50) {
            moved = true;
            p.rebind_client(new);
        }
        if moved && !checked && p.server_conn().unwrap().remote_address() == new {
            checked = true;
            let s = p.server_conn().unwrap();
            // RFC 9000 §9.4, RFC 9002 B.3: kInitialWindow and kInitialRtt again.
            assert_eq!(s.congestion_window(), 10 * 1200);
            assert_eq!(s.rtt().smoothed(), Duration::from_millis(333));
        }
        if moved && !p.server_conn().unwrap().remote_validated() {
            // RFC 9000 §9.3.1: until validated, at most 3x what came from the address.
            assert_amplification_bound(p, &[addr("10.0.0.1:40000")]);
        }
        d.drive(p);
        d.done
    })
    .expect("download completes");
    assert!(checked);
    assert_eq!(d.received, d.data);
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), new);
    assert!(s.remote_validated());
}

#[test]
fn a_spoofed_copy_moves_the_server_only_until_the_real_client_speaks() {
    let mut p = connected(3, 0.0);
    let phases = watch_server(&mut p);
    let mut d = Download::new(3, 300_000);
    let fake = addr("203.0.113.7:9999");
    run_download(&mut p, &mut d, 80, |p| p.spoof_client_datagrams(fake, 1));
    let client = p.client_addr;
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), client);
    assert!(s.remote_validated());
    assert_eq!(s.migration_stats().migrations, 2, "there and back");
    let phases = phases.0.lock().unwrap();
    assert!(phases
        .iter()
        .any(|e| e.1 == MigrationPhase::MigrationStarted && e.2 == fake));
    assert_amplification_bound(&p, &[client]);
}

#[test]
fn a_failed_validation_returns_to_the_last_validated_path_after_three_ptos() {
    let mut p = connected(4, 0.0);
    let phases = watch_server(&mut p);
    let fake = addr("203.0.113.8:1234");
    let ping = client_packet(&mut p, &[Frame::Ping]);
    let t0 = p.now;
    // The client's path is cut both ways: the server's challenge on the old path
    // (RFC 9000 §9.3.3) goes unanswered, and the client's own probes (its PING is
    // unacknowledged) would move the server back before the timeout.
    p.links = [
        LinkConfig {
            loss: 1.0,
            ..LinkConfig::delay(DELAY)
        },
        LinkConfig {
            loss: 1.0,
            ..LinkConfig::delay(DELAY)
        },
    ];
    p.inject_to_server(fake, ping);
    assert_eq!(p.server_conn().unwrap().remote_address(), fake);
    assert!(!p.server_conn().unwrap().remote_validated());
    // The idle client sends nothing: the fake address never answers.
    p.run_until(t0 + Duration::from_secs(10), |p| {
        p.server_conn().unwrap().migration_stats().reverts == 1
    })
    .expect("revert");
    let client = p.client_addr;
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), client);
    assert!(s.remote_validated());
    // RFC 9000 §8.2.4: 3 x max(current PTO, PTO from kInitialRtt) with the peer's
    // max_ack_delay of 25 ms: 3 x (333 + 4 x 166.5 + 25) ms = 3072 ms.
    let phases = phases.0.lock().unwrap();
    let (at, _, remote) = *phases
        .iter()
        .find(|e| e.1 == MigrationPhase::MigrationAbandoned)
        .expect("abandoned");
    assert_eq!(remote, fake);
    assert_eq!(at - t0, Duration::from_millis(3072));
    assert_amplification_bound(&p, &[p.client_addr]);
}

#[test]
fn a_challenge_to_an_unvalidated_address_is_limited_by_what_came_from_it() {
    let mut p = connected(5, 0.0);
    let fake = addr("203.0.113.9:1");
    let ping = client_packet(&mut p, &[Frame::Ping]);
    let len = ping.len() as u64;
    assert!(
        len * 3 < 1200,
        "a small packet: the challenge cannot be padded to 1200"
    );
    p.inject_to_server(fake, ping);
    p.run_until(p.now + Duration::from_secs(5), |_| false).ok();
    let sent = p.server_sent_to.get(&fake).copied().unwrap_or(0);
    assert!(sent > 0, "a challenge went to the new address");
    assert!(sent <= 3 * len, "{sent} > 3 x {len}");
}

#[test]
fn a_probing_packet_from_a_new_address_does_not_move_the_server() {
    let mut p = connected(6, 0.0);
    let other = addr("10.0.0.1:50000");
    // RFC 9000 §9.1: PATH_CHALLENGE and PADDING only.
    let probe = client_packet(
        &mut p,
        &[Frame::PathChallenge([9; 8]), Frame::Padding { len: 1100 }],
    );
    let len = probe.len() as u64;
    p.inject_to_server(other, probe);
    p.run_until(p.now + Duration::from_millis(500), |_| false)
        .ok();
    let client = p.client_addr;
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), client);
    assert_eq!(s.migration_stats().migrations, 0);
    assert_eq!(s.migration_stats().responses_sent, 1);
    // RFC 9000 §8.2.2: the response goes back where the challenge came from, padded
    // to 1200 bytes as the budget (3 x len) allows.
    let sent = p.server_sent_to.get(&other).copied().unwrap_or(0);
    assert_eq!(sent, 1200.min(3 * len));
}

#[test]
fn a_reordered_older_packet_from_a_new_address_does_not_move_the_server() {
    let mut p = connected(7, 0.0);
    let older = client_packet(&mut p, &[Frame::Ping]);
    let newer = client_packet(&mut p, &[Frame::Ping]);
    p.inject_to_server(p.client_addr, newer);
    p.inject_to_server(addr("10.0.0.1:50001"), older);
    let client = p.client_addr;
    let s = p.server_conn().unwrap();
    assert_eq!(
        s.remote_address(),
        client,
        "RFC 9000 §9.3: highest-numbered only"
    );
    assert_eq!(s.migration_stats().migrations, 0);
}

#[test]
fn state_for_other_addresses_stays_bounded() {
    let mut p = connected(8, 0.0);
    for i in 0..200u16 {
        let probe = client_packet(&mut p, &[Frame::PathChallenge([i as u8; 8])]);
        let from = SocketAddr::from(([198, 51, 100, (i % 250) as u8], 1000 + i));
        p.inject_to_server(from, probe);
    }
    let client = p.client_addr;
    let s = p.server_conn().unwrap();
    assert!(s.migration_stats().other_addresses <= MAX_OTHER_ADDRESSES);
    assert_eq!(s.remote_address(), client);
    p.run_until(p.now + Duration::from_millis(500), |_| false)
        .ok();
    assert!(!p.server_conn().unwrap().is_closed());
    assert_amplification_bound(&p, &[p.client_addr]);
}

/// The DCIDs of the 1-RTT packets a side sends, in order.
#[derive(Clone, Default)]
struct Dcids(Arc<Mutex<Vec<ConnectionId>>>);

impl EventSink for Dcids {
    fn event(&mut self, _now: Instant, event: &Event) {
        if let Event::PacketSent { header, .. } = event {
            if header.ty == PacketType::OneRtt {
                let mut v = self.0.lock().unwrap();
                if v.last() != Some(&header.dcid) {
                    v.push(header.dcid);
                }
            }
        }
    }
}

#[test]
fn a_client_migrates_with_a_new_connection_id_and_the_transfer_completes() {
    let mut p = connected(9, 0.0);
    let (client_dcids, server_dcids) = (Dcids::default(), Dcids::default());
    let now = p.now;
    p.client_conn()
        .set_event_sink(now, Box::new(client_dcids.clone()));
    p.server_conn()
        .unwrap()
        .set_event_sink(now, Box::new(server_dcids.clone()));
    let mut d = Download::new(9, 1_000_000);
    let new = addr("10.0.0.3:40000");
    let old = p.client_addr;
    let mut result = None;
    run_download(&mut p, &mut d, 50, |p| result = Some(p.migrate_client(new)));
    assert_eq!(result, Some(Ok(())));
    p.expire_client_address(old);
    p.run_until(p.now + Duration::from_secs(5), |_| false).ok();
    let c = p.client_conn();
    assert_eq!(c.migration_stats().validations_succeeded, 1);
    assert_eq!(c.migration_stats().reverts, 0);
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), new);
    assert!(s.remote_validated());
    // RFC 9000 §9.5: both sides use a new connection ID on the new path.
    let client_dcids = client_dcids.0.lock().unwrap();
    assert_eq!(client_dcids.len(), 2, "{client_dcids:?}");
    let server_dcids = server_dcids.0.lock().unwrap();
    assert!(server_dcids.len() >= 2, "{server_dcids:?}");
}

#[test]
fn a_client_whose_new_path_fails_returns_to_its_old_address() {
    let mut p = connected(10, 0.0);
    let old = p.client_addr;
    let now = p.now;
    // The new address is a dead end: nothing the client sends from it arrives.
    p.links[0].loss = 1.0;
    p.client_conn()
        .migrate(now, old, addr("10.0.0.4:40000"))
        .unwrap();
    let t0 = p.now;
    p.run_until(t0 + Duration::from_secs(10), |p| {
        p.client_conn().migration_stats().reverts == 1
    })
    .expect("the client returns");
    // RFC 9000 §8.2.4: after 3 x max(PTO, PTO from kInitialRtt), at least 3 s.
    assert!(
        p.now - t0 >= Duration::from_millis(2997),
        "{:?}",
        p.now - t0
    );
    assert_eq!(p.client_conn().migration_stats().validations_failed, 1);
    // Back on the old address, the connection works.
    p.links[0].loss = 0.0;
    let mut d = Download::new(10, 50_000);
    run_download(&mut p, &mut d, 0, |_| {});
    let s = p.server_conn().unwrap();
    assert_eq!(s.remote_address(), old);
}

#[test]
fn migration_is_refused_when_the_rfc_says_so() {
    let old = addr("10.0.0.1:40000");
    let new = addr("10.0.0.5:40000");
    let mut p = pair(11, 0.0);
    let now = p.now;
    assert_eq!(
        p.client_conn().migrate(now, old, new),
        Err(MigrateError::HandshakeNotConfirmed)
    );
    let mut p = connected(11, 0.0);
    let now = p.now;
    assert_eq!(
        p.server_conn().unwrap().migrate(now, old, new),
        Err(MigrateError::NotClient)
    );
    assert_eq!(
        p.client_conn().migrate(now, old, old),
        Err(MigrateError::SameAddress)
    );
    // RFC 9000 §9.5: each move needs an unused ID; the server issued 3 (our
    // active_connection_id_limit is 4) and replaces retired ones only later.
    for i in 0..3u16 {
        let to = SocketAddr::from(([10, 0, 1, 1], 2000 + i));
        p.client_conn().migrate(now, old, to).unwrap();
    }
    let to = addr("10.0.2.2:1");
    assert_eq!(
        p.client_conn().migrate(now, old, to),
        Err(MigrateError::NoConnectionId)
    );
}

#[test]
fn a_server_with_disable_active_migration_is_not_migrated_from() {
    let mut p = pair(12, 0.0);
    // disable_active_migration (0x0c), zero-length (RFC 9000 §18.2).
    let edit = |params: &mut Vec<u8>| params.extend_from_slice(&[0x0c, 0x00]);
    with_tampered_transport_parameters(Side::Server, edit, || {
        p.run_until(Instant::from_millis(100), |p| p.server_conn().is_some())
            .expect("the ClientHello arrives");
    });
    p.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .expect("handshake");
    let now = p.now;
    let old = p.client_addr;
    assert_eq!(
        p.client_conn().migrate(now, old, addr("10.0.0.6:40000")),
        Err(MigrateError::DisabledByPeer)
    );
}

/// The server's config `disable_active_migration` sends the transport parameter
/// (RFC 9000 §18.2), and the client then refuses to move.
#[test]
fn a_server_configured_to_disable_active_migration_announces_it() {
    let server = TransportConfig {
        disable_active_migration: true,
        ..TransportConfig::default()
    };
    let link = LinkConfig::delay(DELAY);
    let mut p = Pair::new(TransportConfig::default(), server, [link.clone(), link], 13);
    p.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .expect("handshake");
    assert!(
        p.client_conn()
            .peer_params()
            .unwrap()
            .disable_active_migration
    );
    let (now, old) = (p.now, p.client_addr);
    assert_eq!(
        p.client_conn().migrate(now, old, addr("10.0.0.6:40000")),
        Err(MigrateError::DisabledByPeer)
    );
    // Without it the same move is allowed.
    let mut q = connected(13, 0.0);
    let (now, old) = (q.now, q.client_addr);
    assert!(q
        .client_conn()
        .peer_params()
        .is_some_and(|p| !p.disable_active_migration));
    assert_eq!(
        q.client_conn().migrate(now, old, addr("10.0.0.6:40000")),
        Ok(())
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, .. ProptestConfig::default() })]
    /// Done-when: a spoofed packet (a copy replayed from another address) never moves
    /// the connection for good, the transfer completes byte-exact, and an unvalidated
    /// address never gets more than 3x what came from it.
    #[test]
    fn spoofed_copies_never_move_the_connection_for_good(
        seed in any::<u64>(),
        at_ms in 0u64..400,
        copies in 1u32..6,
        port_only in any::<bool>(),
        loss in 0.0f64..0.05,
    ) {
        let mut p = connected(seed, loss);
        let fake = if port_only {
            addr("10.0.0.1:40404")
        } else {
            addr("198.51.100.77:40000")
        };
        let mut d = Download::new(seed, 150_000);
        run_download(&mut p, &mut d, at_ms, |p| p.spoof_client_datagrams(fake, copies));
        // The client keeps talking until the server is back on its address.
        let back = p.run_until(p.now + Duration::from_secs(30), |p| {
            let client = p.client_addr;
            let s = p.server_conn().unwrap();
            s.remote_address() == client && s.remote_validated()
        });
        prop_assert!(back.is_ok());
        assert_amplification_bound(&p, &[p.client_addr]);
    }
}

/// The first address of `watched` that got more than 3x what the server received from
/// it (RFC 9000 §8.1, §9.3.1), with both counts.
fn amplified(p: &Pair, watched: &[SocketAddr]) -> Option<(SocketAddr, u64, u64)> {
    watched.iter().find_map(|to| {
        let sent = p.server_sent_to.get(to).copied().unwrap_or(0);
        let received = p.server_received_from.get(to).copied().unwrap_or(0);
        (sent > 3 * received).then_some((*to, sent, received))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, .. ProptestConfig::default() })]
    /// Done-when (issue 32): a real NAT rebinding at a random time, raced by an
    /// attacker's copies of the client's packets from a third address, leaves the
    /// connection on the client's real new address for good, the transfer byte-exact;
    /// the attacker's address never gets more than 3x what came from it, nor the new
    /// one while it is not validated (RFC 9000 §8.1, §9.3, §9.3.1).
    #[test]
    fn a_rebinding_raced_by_spoofed_copies_ends_on_the_real_address(
        seed in any::<u64>(),
        rebind_ms in 0u64..60,
        spoof_ms in 0u64..80,
        copies in 1u32..4,
        addr_change in any::<bool>(),
        loss in 0.0f64..0.03,
    ) {
        rebinding_race(seed, rebind_ms, spoof_ms, copies, addr_change, loss)?;
    }
}

/// The case a fresh CI run found (seed 7870330259985403950: rebinding at 12 ms,
/// two spoofed copies at 47 ms, a port change, 2.9% loss).
#[test]
fn rebinding_race_regression_ci_2026_11_27() {
    rebinding_race(7870330259985403950, 12, 47, 2, false, 0.02915224822559018).unwrap();
}

/// One case of the property above.
fn rebinding_race(
    seed: u64,
    rebind_ms: u64,
    spoof_ms: u64,
    copies: u32,
    addr_change: bool,
    loss: f64,
) -> Result<(), TestCaseError> {
    let mut p = connected(seed, loss);
    let fake = addr("198.51.100.77:40000");
    let new = if addr_change {
        addr("10.0.7.7:40000")
    } else {
        addr("10.0.0.1:40001")
    };
    // Long enough that both happen mid-transfer (a silent client shows no address).
    let mut d = Download::new(seed, 1_000_000);
    let start = p.now;
    let (mut rebound, mut spoofed) = (false, false);
    let mut violation = None;
    let mut new_validated = false;
    let done = p.run_until(start + Duration::from_secs(60), |p| {
        if !rebound && p.now >= start + Duration::from_millis(rebind_ms) {
            rebound = true;
            p.rebind_client(new);
        }
        if !spoofed && p.now >= start + Duration::from_millis(spoof_ms) {
            spoofed = true;
            p.spoof_client_datagrams(fake, copies);
        }
        // The new address counts from its validation on (it stays legitimate). A step
        // may validate it and move the server to a spoofed address at once, and the
        // server then challenges it as the previous path with no limit (RFC 9000
        // §9.3.3): so any successful validation counts, as only the real client, on
        // `new`, can answer a challenge (the CI case below).
        new_validated |= p.server_conn().is_some_and(|s| {
            (s.remote_address() == new && s.remote_validated())
                || s.migration_stats().validations_succeeded > 0
        });
        let watched: &[SocketAddr] = if new_validated { &[fake] } else { &[fake, new] };
        violation = violation.or_else(|| amplified(p, watched));
        d.drive(p);
        d.done
    });
    prop_assert!(done.is_ok(), "download incomplete");
    prop_assert!(rebound && spoofed, "the download ended first");
    prop_assert_eq!(&d.received, &d.data);
    let back = p.run_until(p.now + Duration::from_secs(30), |p| {
        let s = p.server_conn().unwrap();
        s.remote_address() == new && s.remote_validated()
    });
    let s = p.server_conn().unwrap();
    prop_assert!(
        back.is_ok(),
        "the server is on {} (validated {}), not {new}: {:?}",
        s.remote_address(),
        s.remote_validated(),
        s.migration_stats()
    );
    prop_assert!(violation.is_none(), "amplification: {:?}", violation);
    prop_assert!(amplified(&p, &[fake]).is_none());
    Ok(())
}
