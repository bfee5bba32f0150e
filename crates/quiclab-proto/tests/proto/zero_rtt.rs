//! Resumption and 0-RTT (RFC 9001 §4.5-4.6, RFC 9000 §7.4.1) between two pairs that
//! share TLS configs: the first connection gets tickets, the second resumes.

use crate::common;

use common::config;
use quiclab_proto::testing::{LinkConfig, Pair, PairTls, ALPN};
use quiclab_proto::tls::{
    resuming_client_config, server_session_storage, ticketing_server_config, ServerVerification,
    SessionCache, VirtualClock,
};
use quiclab_proto::{
    tls, Dir, Instant, StreamError, TransportConfig, TransportErrorCode, ZeroRttStatus,
};
use rustls::server::StoresServerSessions;
use std::sync::Arc;
use std::time::Duration;

const RTT_MS: u64 = 40;

struct Tls {
    client: Arc<rustls::ClientConfig>,
    server: Arc<rustls::ServerConfig>,
    cache: Arc<SessionCache>,
    storage: Arc<dyn StoresServerSessions>,
}

fn base_tls() -> Tls {
    let names = vec!["localhost".to_string()];
    let id = tls::self_signed(&names, 9, 0);
    let roots = id.chain.clone();
    let server = tls::server_config(id, &[ALPN.to_vec()], None).unwrap();
    let client = tls::client_config(ServerVerification::Roots(roots), &[ALPN.to_vec()], None);
    Tls {
        client,
        server,
        cache: SessionCache::new(),
        storage: server_session_storage(64),
    }
}

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(RTT_MS / 2));
    [l.clone(), l]
}

fn zconfig(zero_rtt: bool) -> TransportConfig {
    TransportConfig {
        zero_rtt,
        ..config()
    }
}

/// A pair whose client resumes through `tls.cache` (0-RTT when `client_0rtt`), and
/// whose server issues tickets (accepting 0-RTT when `server_0rtt`).
fn pair(tls: &Tls, client: TransportConfig, server: TransportConfig, seed: u64) -> Pair {
    let clock = VirtualClock::default();
    let c = resuming_client_config(&tls.client, tls.cache.clone(), client.zero_rtt, clock);
    let s = ticketing_server_config(&tls.server, tls.storage.clone(), 2, server.zero_rtt, clock);
    let pt = PairTls {
        configs: Some((c, s)),
        ..PairTls::default()
    };
    Pair::with_tls(client, server, links(), seed, pt)
}

/// Writes a request right away (in 0-RTT if the client can), then runs until the
/// server has read it whole; returns when that was.
fn request(p: &mut Pair) -> Result<Instant, String> {
    let limit = Instant::from_millis(10_000);
    if !p.client_conn().is_zero_rtt_sending() {
        // Without 0-RTT the stream limits come with the handshake.
        p.run_until(limit, |p| p.client_conn().is_handshake_complete())
            .map_err(|e| e.to_string())?;
    }
    let id = p.client_conn().open_stream(Dir::Bi).ok_or("no stream")?;
    assert_eq!(p.client_conn().write(id, b"GET /index.html"), Ok(15));
    p.client_conn().finish(id).unwrap();
    let mut got = Vec::new();
    let mut sid = None;
    p.run_until(limit, |p| {
        if p.client_conn().is_closed() {
            return true;
        }
        let Some(s) = p.server_conn() else {
            return false;
        };
        if sid.is_none() {
            sid = s.accept_stream(Dir::Bi);
        }
        let Some(id) = sid else { return false };
        let mut buf = [0u8; 64];
        loop {
            match s.read(id, &mut buf) {
                Ok(r) if r.fin => {
                    got.extend_from_slice(&buf[..r.bytes]);
                    return true;
                }
                Ok(r) if r.bytes > 0 => got.extend_from_slice(&buf[..r.bytes]),
                Ok(_) | Err(StreamError::Blocked) => return false,
                Err(e) => panic!("{e}"),
            }
        }
    })
    .map_err(|e| e.to_string())?;
    let at = p.now;
    // Then the handshake completes (and the client learns what became of its 0-RTT).
    p.run_until(limit, |p| {
        p.client_conn().is_handshake_confirmed() || p.client_conn().is_closed()
    })
    .map_err(|e| e.to_string())?;
    if p.client_conn().is_closed() {
        return Err(format!("{:?}", p.client_conn().close_reason()));
    }
    assert_eq!(got, b"GET /index.html");
    Ok(at)
}

/// A first connection that completes and receives its tickets.
fn first(tls: &Tls, client: TransportConfig, server: TransportConfig) {
    let mut p = pair(tls, client, server, 1);
    p.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed() && tls.cache.tickets() >= 2
    })
    .unwrap();
    assert!(!p.client_conn().is_resumed());
}

#[test]
fn zero_rtt_is_accepted_and_saves_a_round_trip() {
    let tls = base_tls();
    first(&tls, zconfig(true), zconfig(true));
    let mut p = pair(&tls, zconfig(true), zconfig(true), 2);
    assert!(p.client_conn().is_zero_rtt_sending());
    let at = request(&mut p).unwrap();
    // The request arrives with the ClientHello: half a round trip.
    assert_eq!(at, Instant::from_millis(RTT_MS / 2));
    let c = p.client_conn();
    assert!(c.zero_rtt_packets() >= 1);
    assert!(c.is_resumed());
    assert_eq!(c.zero_rtt_status(), ZeroRttStatus::Accepted);
    let s = p.server_conn().unwrap();
    assert_eq!(s.zero_rtt_status(), ZeroRttStatus::Accepted);
    assert!(s.zero_rtt_packets() >= 1);
    assert!(s.is_resumed());

    // Without 0-RTT the same request arrives 1.5 round trips later.
    let tls = base_tls();
    first(&tls, zconfig(false), zconfig(false));
    let mut p = pair(&tls, zconfig(false), zconfig(false), 2);
    let at = request(&mut p).unwrap();
    assert_eq!(at, Instant::from_millis(3 * RTT_MS / 2));
}

#[test]
fn rejected_zero_rtt_is_resent_in_one_rtt() {
    let tls = base_tls();
    // Tickets allow 0-RTT, but the second server does not accept it.
    first(&tls, zconfig(true), zconfig(true));
    let mut p = pair(&tls, zconfig(true), zconfig(false), 2);
    assert!(p.client_conn().is_zero_rtt_sending());
    let at = request(&mut p).unwrap();
    assert!(at >= Instant::from_millis(3 * RTT_MS / 2), "{at:?}");
    let c = p.client_conn();
    assert!(c.is_resumed(), "resumed even though 0-RTT was rejected");
    assert_eq!(c.zero_rtt_status(), ZeroRttStatus::Rejected);
    assert!(c.zero_rtt_packets() >= 1);
    let s = p.server_conn().unwrap();
    assert_eq!(s.zero_rtt_packets(), 0, "a rejecting server reads no 0-RTT");
}

#[test]
fn lowered_limits_after_accepting_zero_rtt_are_a_protocol_violation() {
    let tls = base_tls();
    first(&tls, zconfig(true), zconfig(true));
    let mut lower = zconfig(true);
    lower.flow.initial_max_data /= 2;
    let mut p = pair(&tls, zconfig(true), lower, 2);
    let err = request(&mut p).unwrap_err();
    assert!(err.contains("initial_max_data"), "{err}");
    match p.client_conn().close_reason() {
        Some(quiclab_proto::CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, TransportErrorCode::PROTOCOL_VIOLATION)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn resumption_without_zero_rtt() {
    let tls = base_tls();
    first(&tls, zconfig(false), zconfig(false));
    let mut p = pair(&tls, zconfig(false), zconfig(false), 2);
    assert!(!p.client_conn().is_zero_rtt_sending());
    request(&mut p).unwrap();
    let c = p.client_conn();
    assert!(c.is_resumed());
    assert_eq!(c.zero_rtt_status(), ZeroRttStatus::None);
    assert_eq!(c.zero_rtt_packets(), 0);
    assert!(p.server_conn().unwrap().is_resumed());
}

#[test]
fn same_seed_same_resumed_bytes() {
    let run = || {
        let tls = base_tls();
        first(&tls, zconfig(true), zconfig(true));
        let mut p = pair(&tls, zconfig(true), zconfig(true), 2);
        p.capture = Some(Vec::new());
        request(&mut p).unwrap();
        p.capture.take().unwrap()
    };
    let (a, b) = (run(), run());
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

/// Client and server offering both versions, starting in v1, preferring v2.
fn both_versions(mut c: TransportConfig) -> TransportConfig {
    use quiclab_proto::{QuicVersion, VersionConfig};
    c.versions = VersionConfig {
        initial: QuicVersion::V1,
        supported: vec![QuicVersion::V2, QuicVersion::V1],
    };
    c
}

/// The versions of the 0-RTT packets in the client's captured datagrams.
fn zero_rtt_versions(capture: &[quiclab_proto::testing::Captured]) -> Vec<u32> {
    use quiclab_proto::raw::parse_header;
    use quiclab_proto::PacketType;
    let mut out = Vec::new();
    for (_, _, d) in capture.iter().filter(|c| c.1) {
        let mut rest = &d[..];
        while let Ok(h) = parse_header(rest, 8) {
            if h.ty == PacketType::OneRtt {
                break;
            }
            if h.ty == PacketType::ZeroRtt {
                out.push(h.version);
            }
            rest = &rest[h.packet_len.min(rest.len())..];
        }
    }
    out
}

#[test]
fn an_upgrading_server_declines_zero_rtt() {
    use quiclab_proto::{VERSION_1, VERSION_2};
    let tls = base_tls();
    first(&tls, zconfig(true), zconfig(true));
    let z = || both_versions(zconfig(true));
    let mut p = pair(&tls, z(), z(), 2);
    p.capture = Some(Vec::new());
    assert!(p.client_conn().is_zero_rtt_sending());
    request(&mut p).unwrap();
    // This server, having moved the connection to v2, reads none of the client's v1
    // 0-RTT (RFC 9368 §7.3) and says so in TLS: the request goes again in 1-RTT.
    let c = p.client_conn();
    assert_eq!(c.version(), VERSION_2);
    assert!(c.zero_rtt_packets() >= 1);
    assert_eq!(c.zero_rtt_status(), ZeroRttStatus::Rejected);
    // RFC 9369 §5: the v1 ticket is not accepted on the v2 connection: a full
    // handshake.
    assert!(!c.is_resumed());
    assert!(!p.server_conn().unwrap().is_resumed());
    assert_eq!(p.server_conn().unwrap().zero_rtt_packets(), 0);
    let versions = zero_rtt_versions(&p.capture.take().unwrap());
    assert!(!versions.is_empty() && versions.iter().all(|&v| v == VERSION_1));
}

#[test]
fn zero_rtt_after_the_upgrade_stays_in_the_original_version() {
    use quiclab_proto::raw::parse_header;
    use quiclab_proto::{Dir, VERSION_1, VERSION_2};
    let tls = base_tls();
    first(&tls, zconfig(true), zconfig(true));
    let z = || both_versions(zconfig(true));
    let mut p = pair(&tls, z(), z(), 2);
    p.capture = Some(Vec::new());
    // The server's first datagram (v2 Initial + Handshake) is lost, but we hand the
    // client its Initial alone: the client is in v2, its handshake not complete.
    p.links[1].loss = 1.0;
    let limit = Instant::from_millis(1_000);
    p.run_until(limit, |p| p.capture.as_ref().unwrap().iter().any(|c| !c.1))
        .unwrap();
    let datagram = p
        .capture
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| !c.1)
        .unwrap()
        .2
        .clone();
    let h = parse_header(&datagram, 8).unwrap();
    assert_eq!(h.version, VERSION_2);
    let mut initial = datagram[..h.packet_len].to_vec();
    let (now, from) = (p.now, p.server_addr);
    p.client
        .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut initial)
        .unwrap();
    assert_eq!(p.client_conn().version(), VERSION_2);
    assert!(!p.client_conn().is_handshake_complete());
    // RFC 9369 §4.1: 0-RTT packets never use the negotiated version.
    let before = p.client_conn().zero_rtt_packets();
    let id = p.client_conn().open_stream(Dir::Bi).unwrap();
    p.client_conn().write(id, b"GET /after-the-switch").unwrap();
    p.capture = Some(Vec::new());
    p.flush();
    assert!(p.client_conn().zero_rtt_packets() > before);
    let versions = zero_rtt_versions(&p.capture.take().unwrap());
    assert!(!versions.is_empty() && versions.iter().all(|&v| v == VERSION_1));
    p.links[1].loss = 0.0;
    p.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .unwrap();
    assert_eq!(p.client_conn().zero_rtt_status(), ZeroRttStatus::Rejected);
}

// ----- RFC 9369 §5: tickets are specific to the QUIC version that issued them -----

fn only(version: quiclab_proto::QuicVersion, mut c: TransportConfig) -> TransportConfig {
    use quiclab_proto::VersionConfig;
    c.versions = VersionConfig {
        initial: version,
        supported: vec![version],
    };
    c
}

/// A server accepting both versions that moves no client (it prefers `first`, and a
/// single-version client offers nothing else).
fn both_server(first: quiclab_proto::QuicVersion) -> TransportConfig {
    use quiclab_proto::{QuicVersion, VersionConfig};
    let mut c = zconfig(true);
    let other = if first == QuicVersion::V1 {
        QuicVersion::V2
    } else {
        QuicVersion::V1
    };
    c.versions = VersionConfig {
        initial: first,
        supported: vec![first, other],
    };
    c
}

#[test]
fn a_ticket_is_offered_only_in_its_version() {
    use quiclab_proto::QuicVersion::{V1, V2};
    use quiclab_proto::{VERSION_1, VERSION_2};
    for (mine, other, wire) in [(V1, V2, VERSION_2), (V2, V1, VERSION_1)] {
        let tls = base_tls();
        let z = |v| only(v, zconfig(true));
        first(&tls, z(mine), both_server(mine));
        let held = tls.cache.tickets();
        // The other version's client finds no ticket: a full handshake, no 0-RTT.
        let mut p = pair(&tls, z(other), both_server(mine), 2);
        assert!(
            !p.client_conn().is_zero_rtt_sending(),
            "{mine:?} ticket in {wire:#x}"
        );
        request(&mut p).unwrap();
        let c = p.client_conn();
        assert_eq!(c.version(), wire);
        assert!(!c.is_resumed());
        assert_eq!(c.zero_rtt_packets(), 0);
        assert!(!p.server_conn().unwrap().is_resumed());
        // The first version's tickets are still there, and the new ones are added.
        assert!(tls.cache.tickets() > held, "{}", tls.cache.tickets());
        // The same version still resumes with 0-RTT.
        let mut p = pair(&tls, z(mine), both_server(mine), 3);
        assert!(p.client_conn().is_zero_rtt_sending());
        request(&mut p).unwrap();
        assert!(p.client_conn().is_resumed());
        assert_eq!(p.client_conn().zero_rtt_status(), ZeroRttStatus::Accepted);
    }
}

#[test]
fn a_server_moving_a_v2_client_to_v1_rejects_its_v2_ticket() {
    use quiclab_proto::QuicVersion::{V1, V2};
    use quiclab_proto::{VersionConfig, VERSION_1};
    let tls = base_tls();
    first(&tls, only(V2, zconfig(true)), both_server(V2));
    // Client starts in v2 offering v1; this server prefers v1 and moves it there.
    let mut client = zconfig(true);
    client.versions = VersionConfig {
        initial: V2,
        supported: vec![V2, V1],
    };
    let mut p = pair(&tls, client, both_server(V1), 2);
    assert!(
        p.client_conn().is_zero_rtt_sending(),
        "a v2 ticket for a v2 start"
    );
    request(&mut p).unwrap();
    let c = p.client_conn();
    assert_eq!(c.version(), VERSION_1);
    // RFC 9369 §5: a full TLS handshake, without 0-RTT.
    assert!(!c.is_resumed());
    assert_eq!(c.zero_rtt_status(), ZeroRttStatus::Rejected);
    let s = p.server_conn().unwrap();
    assert!(!s.is_resumed());
    assert_eq!(s.zero_rtt_packets(), 0);
}

#[test]
fn tickets_after_an_upgrade_belong_to_the_negotiated_version() {
    use quiclab_proto::QuicVersion::V2;
    use quiclab_proto::VERSION_2;
    let tls = base_tls();
    // v1 start, moved to v2: its tickets are v2 tickets (RFC 9369 §5).
    let z = || both_versions(zconfig(true));
    first(&tls, z(), z());
    // A v2-starting client resumes them, with 0-RTT.
    let mut p = pair(&tls, only(V2, zconfig(true)), both_server(V2), 2);
    assert!(p.client_conn().is_zero_rtt_sending());
    request(&mut p).unwrap();
    assert_eq!(p.client_conn().version(), VERSION_2);
    assert!(p.client_conn().is_resumed());
    assert_eq!(p.client_conn().zero_rtt_status(), ZeroRttStatus::Accepted);
    // A v1-starting one finds none.
    let mut p = pair(&tls, both_versions(zconfig(true)), z(), 3);
    assert!(!p.client_conn().is_zero_rtt_sending());
}
