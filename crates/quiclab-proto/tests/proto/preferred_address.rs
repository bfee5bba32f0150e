//! The server's preferred address (RFC 9000 §9.6, §18.2) in the pair harness: the
//! transport parameter's encoding and its errors, the client validating the address
//! and moving there with the connection ID of sequence number 1, staying on the
//! original address when validation fails or when told to ignore the address, and the
//! server answering from the address packets came to.

use crate::download;
use crate::misbehaving;

use download::{run_download, Download};
use misbehaving::{expect_close, DELAY};
use proptest::prelude::*;
use quiclab_proto::events::{Event, EventSink, MigrationPhase};
use quiclab_proto::raw::frame_type;
use quiclab_proto::raw::transport_params::id;
use quiclab_proto::testing::{with_tampered_transport_parameters, LinkConfig, Pair};
use quiclab_proto::{
    varint, ConnectionId, Instant, MigrateError, PacketType, PreferredAddress,
    PreferredAddressConfig, Side, TransportConfig, TransportErrorCode as Code, TransportParameters,
};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// The address the harness's server announces.
fn preferred() -> SocketAddr {
    addr("10.0.0.3:4433")
}

fn server_config() -> TransportConfig {
    TransportConfig {
        preferred_address: Some(PreferredAddressConfig::One(preferred())),
        ..TransportConfig::default()
    }
}

/// A pair whose server announces `preferred()`; `listening`: the harness delivers
/// datagrams sent there to the server.
fn pair(seed: u64, client: TransportConfig, listening: bool) -> Pair {
    let link = LinkConfig::delay(DELAY);
    let mut p = Pair::new(client, server_config(), [link.clone(), link], seed);
    if listening {
        p.server_extra_addrs.push(preferred());
    }
    p
}

fn confirmed(p: &mut Pair) {
    p.run_until(Instant::from_millis(10_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
}

/// A side's migration events and the DCIDs of its 1-RTT packets, with their times.
#[derive(Clone, Default)]
struct Watch {
    phases: Arc<Mutex<Vec<(Instant, MigrationPhase, SocketAddr)>>>,
    dcids: Arc<Mutex<Vec<(Instant, ConnectionId)>>>,
}

impl EventSink for Watch {
    fn event(&mut self, now: Instant, event: &Event) {
        match event {
            Event::MigrationStateUpdated { new, remote } => {
                self.phases.lock().unwrap().push((now, *new, *remote));
            }
            Event::PacketSent { header, .. } if header.ty == PacketType::OneRtt => {
                self.dcids.lock().unwrap().push((now, header.dcid));
            }
            _ => {}
        }
    }
}

impl Watch {
    fn phases(&self) -> Vec<(Instant, MigrationPhase, SocketAddr)> {
        self.phases.lock().unwrap().clone()
    }
}

fn watch_client(p: &mut Pair) -> Watch {
    let w = Watch::default();
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(w.clone()));
    w
}

#[test]
fn the_client_moves_to_the_preferred_address_and_the_transfer_completes() {
    let mut p = pair(1, TransportConfig::default(), true);
    let client = watch_client(&mut p);
    confirmed(&mut p);
    let server = Watch::default();
    let now = p.now;
    p.server_conn()
        .unwrap()
        .set_event_sink(now, Box::new(server.clone()));
    let announced = p.client_conn().peer_preferred_address().cloned().unwrap();
    assert_eq!(announced.ipv4, Some(([10, 0, 0, 3], 4433)));
    assert_eq!(announced.ipv6, None, "all zeros: no IPv6 address (§18.2)");
    let mut d = Download::new(1, 1_000_000);
    run_download(&mut p, &mut d, 0, |_| {});
    let c = p.client_conn();
    assert!(c.on_preferred_address());
    assert_eq!(c.remote_address(), preferred());
    let m = c.migration_stats();
    assert_eq!(
        (m.migrations, m.validations_succeeded, m.reverts),
        (1, 1, 0)
    );
    // RFC 9000 §9.6.1, §5.1.1: after the move the client's packets carry the ID of
    // sequence number 1 from the transport parameter, and never the handshake's again.
    let moved_at = (client.phases().iter())
        .find(|e| e.1 == MigrationPhase::MigrationComplete)
        .unwrap()
        .0;
    let dcids = client.dcids.lock().unwrap().clone();
    let (before, after): (Vec<_>, Vec<_>) = dcids.iter().partition(|(t, _)| *t < moved_at);
    assert!(after.len() > 100, "{}", after.len());
    assert!(after.iter().all(|(_, c)| *c == announced.connection_id));
    // Before the move, only the probes of the preferred address carried it (§9.5:
    // one ID per destination).
    let probes = before.iter().filter(|(_, c)| *c == announced.connection_id);
    assert_eq!(probes.count() as u64, c.migration_stats().challenges_sent);
    // §9.6.2: the server sends from its preferred address once the client moved and
    // the path is validated.
    let s = p.server_conn().unwrap();
    assert_eq!(s.migration_stats().migrations, 1);
    let from_preferred = p.server_sent_from.get(&preferred()).copied().unwrap_or(0);
    assert!(from_preferred > 500, "{:?}", p.server_sent_from);
    // From now on nothing leaves from the original address.
    let original = p.server_addr;
    let from_original = p.server_sent_from[&original];
    let mut more = Download::new(2, 100_000);
    run_download(&mut p, &mut more, 0, |_| {});
    assert_eq!(
        p.server_sent_from[&original], from_original,
        "the server's packets come from its preferred address only (§9.6.2)"
    );
    // The server also probed from its preferred address (§9.6.2: MUST) and the client
    // answered; its own probe of the preferred address succeeded.
    let kinds: Vec<MigrationPhase> = server.phases().iter().map(|e| e.1).collect();
    assert!(
        kinds.contains(&MigrationPhase::ProbingSuccessful),
        "{kinds:?}"
    );
    let kinds: Vec<MigrationPhase> = client.phases().iter().map(|e| e.1).collect();
    assert_eq!(
        kinds,
        [
            MigrationPhase::ProbingStarted,
            MigrationPhase::ProbingSuccessful,
            MigrationPhase::MigrationComplete
        ]
    );
}

#[test]
fn a_failed_validation_leaves_the_client_on_the_original_address() {
    // The server announces an address nothing listens on.
    let mut p = pair(2, TransportConfig::default(), false);
    let client = watch_client(&mut p);
    confirmed(&mut p);
    let mut d = Download::new(2, 500_000);
    run_download(&mut p, &mut d, 0, |_| {});
    p.run_until(p.now + Duration::from_secs(5), |_| false).ok();
    let server_addr = p.server_addr;
    let c = p.client_conn();
    assert!(!c.on_preferred_address());
    assert_eq!(
        c.remote_address(),
        server_addr,
        "RFC 9000 §9.6.1: MUST continue"
    );
    let m = c.migration_stats();
    assert_eq!((m.migrations, m.validations_failed), (0, 1));
    // RFC 9000 §8.2.1: every challenge padded to 1200 bytes; §8.2.4: abandoned after 3
    // x max(PTO, PTO from kInitialRtt) = 3 x (333 + 4 x 166.5 + 25) ms = 3072 ms.
    let phases = client.phases();
    let started = phases
        .iter()
        .find(|e| e.1 == MigrationPhase::ProbingStarted)
        .unwrap();
    let abandoned = phases
        .iter()
        .find(|e| e.1 == MigrationPhase::ProbingAbandoned)
        .unwrap();
    assert_eq!(started.2, preferred());
    assert_eq!(abandoned.0 - started.0, Duration::from_millis(3072));
    assert!(m.challenges_sent >= 1 && m.challenges_sent <= 3, "{m:?}");
    // The ID of sequence 1 stays unused: a later migration can take it (§9.5).
    let (now, old) = (p.now, p.client_addr);
    assert_eq!(
        p.client_conn().migrate(now, old, addr("10.0.0.9:1")),
        Ok(())
    );
}

#[test]
fn a_client_told_to_ignore_it_stays() {
    let client = TransportConfig {
        ignore_preferred_address: true,
        ..TransportConfig::default()
    };
    let mut p = pair(3, client, true);
    confirmed(&mut p);
    let mut d = Download::new(3, 300_000);
    run_download(&mut p, &mut d, 0, |_| {});
    let server_addr = p.server_addr;
    let c = p.client_conn();
    assert!(c.peer_preferred_address().is_some());
    assert_eq!(c.remote_address(), server_addr);
    assert_eq!(c.migration_stats().challenges_sent, 0);
    assert_eq!(p.server_sent_from.get(&preferred()), None);
}

/// RFC 9000 §9.6.2: a probe to the preferred address is answered from there, and the
/// server probes from there too, but keeps sending non-probing packets from its
/// original address until a non-probing packet arrives at the preferred one.
#[test]
fn a_probe_alone_does_not_move_the_server() {
    let client = TransportConfig {
        ignore_preferred_address: true,
        ..TransportConfig::default()
    };
    let mut p = pair(9, client, true);
    confirmed(&mut p);
    let now = p.now;
    let (from, to) = (p.client_addr, preferred());
    let probe = p
        .client_conn()
        .craft_datagram(
            now,
            quiclab_proto::raw::SpaceId::Data,
            &[0x1a, 1, 2, 3, 4, 5, 6, 7, 8], // PATH_CHALLENGE (§19.17)
            None,
        )
        .unwrap();
    p.inject_to_server_at(from, to, probe);
    let before = p.server_sent_from.get(&p.server_addr).copied().unwrap_or(0);
    let mut d = Download::new(9, 200_000);
    run_download(&mut p, &mut d, 0, |_| {});
    let s = p.server_conn().unwrap();
    assert_eq!(s.migration_stats().responses_sent, 1);
    assert_eq!(s.migration_stats().migrations, 0);
    // The response and the server's own challenge (§9.6.2: MUST probe) left from the
    // preferred address (together, or the challenge resent); the transfer from the
    // original one.
    let from_preferred = p.server_sent_from.get(&preferred()).copied().unwrap_or(0);
    assert!((1..=3).contains(&from_preferred), "{from_preferred}");
    assert!(p.server_sent_from[&p.server_addr] > before + 100);
}

#[test]
fn disable_active_migration_does_not_forbid_the_preferred_address() {
    let mut p = pair(4, TransportConfig::default(), true);
    // disable_active_migration (0x0c), zero-length (RFC 9000 §18.2).
    let edit = |params: &mut Vec<u8>| params.extend_from_slice(&[0x0c, 0x00]);
    with_tampered_transport_parameters(Side::Server, edit, || {
        p.run_until(Instant::from_millis(100), |p| p.server_conn().is_some())
            .expect("the ClientHello arrives");
    });
    confirmed(&mut p);
    let (now, old) = (p.now, p.client_addr);
    assert_eq!(
        p.client_conn().migrate(now, old, addr("10.0.0.7:1")),
        Err(MigrateError::PreferredAddressPending)
    );
    let mut d = Download::new(4, 200_000);
    run_download(&mut p, &mut d, 0, |_| {});
    assert!(p.client_conn().on_preferred_address());
    // §18.2: "does not prohibit connection migration after a client has acted on a
    // preferred_address transport parameter".
    let now = p.now;
    assert_eq!(
        p.client_conn().migrate(now, old, addr("10.0.0.7:1")),
        Ok(())
    );
}

/// A raw preferred_address parameter with `value`.
fn param(value: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    varint::write(&mut b, id::PREFERRED_ADDRESS);
    varint::write(&mut b, value.len() as u64);
    b.extend_from_slice(value);
    b
}

/// The parameter's value (RFC 9000 Figure 22).
fn value(pa: &PreferredAddress) -> Vec<u8> {
    let tp = TransportParameters {
        preferred_address: Some(pa.clone()),
        ..TransportParameters::default()
    };
    let mut buf = Vec::new();
    tp.encode(&mut buf);
    // One parameter: its ID (1 byte) and length (a 1-byte varint below 64).
    assert!(buf[1] < 64);
    buf[2..].to_vec()
}

#[test]
fn the_server_refuses_a_preferred_address_from_a_client() {
    let pa = PreferredAddress {
        ipv4: Some(([10, 0, 0, 3], 4433)),
        ipv6: None,
        connection_id: ConnectionId::new(&[7; 8]).unwrap(),
        reset_token: [1; 16],
    };
    let bytes = param(&value(&pa));
    let mut p = with_tampered_transport_parameters(
        Side::Client,
        move |raw: &mut Vec<u8>| raw.extend_from_slice(&bytes),
        || misbehaving::pair(TransportConfig::default(), TransportConfig::default(), 5),
    );
    // RFC 9000 §18.2: server-only.
    expect_close(
        &mut p,
        Side::Server,
        Code::TRANSPORT_PARAMETER_ERROR,
        frame_type::CRYPTO,
    );
}

#[test]
fn the_client_refuses_a_malformed_preferred_address() {
    let pa = PreferredAddress {
        ipv4: Some(([10, 0, 0, 3], 4433)),
        ipv6: None,
        connection_id: ConnectionId::new(&[7; 8]).unwrap(),
        reset_token: [1; 16],
    };
    let good = value(&pa);
    let mut zero_cid = good.clone();
    zero_cid[24] = 0; // Connection ID Length 0 (§18.2: MUST NOT)
    zero_cid.drain(25..33);
    let cases = [
        good[..good.len() - 1].to_vec(),
        zero_cid,
        [&good[..], &[0]].concat(),
    ];
    for (seed, bad) in (6..).zip(cases) {
        let bytes = param(&bad);
        let mut p = misbehaving::pair(TransportConfig::default(), server_config(), seed);
        with_tampered_transport_parameters(
            Side::Server,
            move |raw: &mut Vec<u8>| {
                // Replace the server's own preferred_address with the malformed one.
                let mut tp = TransportParameters::decode(raw, Side::Server).unwrap();
                tp.preferred_address = None;
                raw.clear();
                tp.encode(raw);
                raw.extend_from_slice(&bytes);
            },
            || {
                p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
                    .expect("the ClientHello arrives");
            },
        );
        expect_close(
            &mut p,
            Side::Client,
            Code::TRANSPORT_PARAMETER_ERROR,
            frame_type::CRYPTO,
        );
    }
}

fn arb_preferred() -> impl Strategy<Value = PreferredAddress> {
    (
        proptest::option::of((any::<[u8; 4]>(), 1u16..)),
        proptest::option::of((any::<[u8; 16]>(), 1u16..)),
        proptest::collection::vec(any::<u8>(), 1..=20),
        any::<[u8; 16]>(),
    )
        .prop_map(|(ipv4, ipv6, cid, reset_token)| PreferredAddress {
            ipv4,
            ipv6,
            connection_id: ConnectionId::new(&cid).unwrap(),
            reset_token,
        })
}

proptest! {
    /// RFC 9000 §18.2: every well-formed value round-trips; every truncation and every
    /// extension of it, and a zero-length connection ID, is a TRANSPORT_PARAMETER_ERROR;
    /// a client may never send one.
    #[test]
    fn the_parameter_round_trips_and_malformed_ones_are_errors(
        pa in arb_preferred(),
        cut in any::<prop::sample::Index>(),
        extra in proptest::collection::vec(any::<u8>(), 1..8),
    ) {
        let good = value(&pa);
        prop_assert_eq!(good.len(), 4 + 2 + 16 + 2 + 1 + pa.connection_id.len() + 16);
        let tp = TransportParameters::decode(&param(&good), Side::Server).unwrap();
        prop_assert_eq!(tp.preferred_address.as_ref(), Some(&pa));
        let code = |v: &[u8], side| TransportParameters::decode(&param(v), side).unwrap_err().code;
        prop_assert_eq!(code(&good, Side::Client), Code::TRANSPORT_PARAMETER_ERROR);
        let short = &good[..cut.index(good.len())];
        prop_assert_eq!(code(short, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
        let long = [&good[..], &extra[..]].concat();
        prop_assert_eq!(code(&long, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
        let mut empty = good[..24].to_vec();
        empty.push(0);
        empty.extend_from_slice(&pa.reset_token);
        prop_assert_eq!(code(&empty, Side::Server), Code::TRANSPORT_PARAMETER_ERROR);
    }
}

/// The client's qlog: the parameter in `parameters_set`, the probe and the move in
/// `migration_state_updated`/`tuple_assigned`, and the new connection ID in the
/// packets sent after the move (the issue's "done when").
#[test]
fn the_client_qlog_shows_the_parameter_the_move_and_the_new_connection_id() {
    use quiclab_proto::events::SharedSink;
    use quiclab_proto::QlogWriter;
    let mut p = pair(8, TransportConfig::default(), true);
    let sink = SharedSink::new(QlogWriter::new(Vec::new(), "pa", Side::Client, None));
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    confirmed(&mut p);
    let mut d = Download::new(8, 200_000);
    run_download(&mut p, &mut d, 0, |_| {});
    let cid = p
        .client_conn()
        .peer_preferred_address()
        .unwrap()
        .connection_id;
    drop(p);
    let qlog = String::from_utf8(sink.try_unwrap().ok().unwrap().into_inner()).unwrap();
    let hex: String = cid.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    let param = format!(
        r#""preferred_address":{{"ip_v4":"10.0.0.3","port_v4":4433,"connection_id":"{hex}""#
    );
    assert!(qlog.contains(&param), "{param}");
    let complete = qlog
        .find(r#""new":"migration_complete""#)
        .expect("migration_complete");
    let tuple = qlog[complete..]
        .find(r#""name":"quic:tuple_assigned""#)
        .expect("tuple_assigned after the move");
    assert!(qlog[complete + tuple..].contains(r#""ip_v4":"10.0.0.3""#));
    let sent_after: Vec<&str> = qlog[complete..]
        .split("quic:packet_sent")
        .skip(1)
        .filter(|r| r.contains(r#""packet_type":"1RTT""#))
        .collect();
    assert!(sent_after.len() > 10);
    let dcid = format!(r#""dcid":"{hex}""#);
    assert!(sent_after.iter().all(|r| r.contains(&dcid)));
}
