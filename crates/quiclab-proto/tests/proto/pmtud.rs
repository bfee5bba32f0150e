//! PMTU discovery (RFC 9000 §14.3, RFC 8899) end to end in the pair harness: the
//! search finds the path's limit, lost probes are no congestion signal, the peer's
//! max_udp_payload_size bounds it, and without it nothing changes.

use crate::common;

use common::{config, fetch};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::TransportConfig;
use std::time::Duration;

fn pmtud(max: u16) -> TransportConfig {
    TransportConfig {
        pmtud_max_udp_payload_size: Some(max),
        ..config()
    }
}

fn link(mtu: Option<usize>) -> LinkConfig {
    LinkConfig {
        mtu,
        ..LinkConfig::delay(Duration::from_millis(10))
    }
}

#[test]
fn a_path_carrying_the_upper_bound_gets_it_with_one_probe() {
    let mut pair = Pair::new(pmtud(1452), pmtud(1452), [link(None), link(None)], 3);
    fetch(&mut pair, 2_000_000).unwrap();
    let s = pair.server_conn().unwrap();
    assert_eq!(s.max_datagram_size(), 1452);
    assert_eq!(
        (s.stats().pmtu_probes_sent, s.stats().pmtu_probes_lost),
        (1, 0)
    );
    assert_eq!(pair.link_stats[1].max_datagram, 1452);
}

#[test]
fn the_search_settles_below_a_smaller_path_mtu_without_congestion() {
    let mtu = 1321;
    let mut pair = Pair::new(
        pmtud(1452),
        pmtud(1452),
        [link(Some(mtu)), link(Some(mtu))],
        4,
    );
    fetch(&mut pair, 20_000_000).unwrap();
    let s = pair.server_conn().unwrap();
    let found = s.max_datagram_size();
    assert!(found <= mtu && found + 16 > mtu, "found {found}");
    let st = s.stats().clone();
    // Each too-big size is tried three times (RFC 8899 MAX_PROBES) before the search
    // moves below it; none of those losses is a congestion event (RFC 9000 §14.4).
    assert!(st.pmtu_probes_lost >= 3, "{st:?}");
    assert_eq!(st.congestion_events, 0, "{st:?}");
    assert_eq!(st.packets_lost, 0, "{st:?}");
    assert_eq!(pair.link_stats[1].too_big, st.pmtu_probes_lost);
}

#[test]
fn the_peer_limit_bounds_the_search() {
    // The client does not discover, so it advertises max_udp_payload_size 1200.
    let mut pair = Pair::new(config(), pmtud(1452), [link(None), link(None)], 5);
    fetch(&mut pair, 500_000).unwrap();
    let s = pair.server_conn().unwrap();
    assert_eq!(s.max_datagram_size(), 1200);
    assert_eq!(s.stats().pmtu_probes_sent, 0);
    assert_eq!(pair.link_stats[1].max_datagram, 1200);
}

#[test]
fn a_short_exchange_sends_no_probe() {
    // 20 kB at 10 ms one way: done within a few round trips of the handshake.
    let mut pair = Pair::new(pmtud(1452), pmtud(1452), [link(None), link(None)], 7);
    fetch(&mut pair, 20_000).unwrap();
    assert_eq!(pair.server_conn().unwrap().stats().pmtu_probes_sent, 0);
    assert_eq!(pair.link_stats[1].max_datagram, 1200);
}

#[test]
fn without_discovery_datagrams_stay_at_the_configured_size() {
    let mut pair = Pair::new(config(), config(), [link(None), link(None)], 6);
    fetch(&mut pair, 500_000).unwrap();
    assert_eq!(pair.link_stats[1].max_datagram, 1200);
    assert_eq!(pair.server_conn().unwrap().stats().pmtu_probes_sent, 0);
}
