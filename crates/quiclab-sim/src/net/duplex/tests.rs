use super::*;
use crate::scenario::LinkSide;
use quiclab_link::link::Packet;
use std::net::SocketAddrV4;

const HEAD: &str =
    "name = \"t\"\nseed = 1\n[stop]\ntime_s = 10.0\n[topology]\nkind = \"point_to_point\"\n";

fn duplex(links: &str) -> Duplex {
    let text = format!("{HEAD}{links}");
    let s: Scenario = toml::from_str(&text).unwrap();
    s.validate_links("t.toml").unwrap();
    build_duplex(&s, "t.toml").unwrap()
}

fn packet(len: usize, tag: u8) -> Packet {
    Packet {
        src: SocketAddrV4::new([127, 0, 0, 1].into(), 1000),
        dst: SocketAddrV4::new([127, 0, 0, 1].into(), 2000),
        payload: vec![tag; len],
        route: 0,
        hop: 0,
        cross: false,
        extra_delay: std::time::Duration::ZERO,
        reorder: false,
        tcp: false,
        ecn: quiclab_proto::Ecn::NotEct,
    }
}

fn drain(d: &mut Duplex, until: Instant) -> Vec<(LinkSide, u64, u8)> {
    std::iter::from_fn(|| d.poll(until))
        .map(|x| (x.side, x.due.as_nanos(), x.packet.payload[0]))
        .collect()
}

#[test]
fn rate_delay_and_drop_tail() {
    let mut d = duplex(
        "[topology.forward]\nrate_mbps = 8.0\ndelay_ms = 10.0\nqueue = { discipline = \"drop_tail\", packets = 2 }\n\
         [topology.return]\ndelay_ms = 5.0\n",
    );
    // 972 + 28 = 1000 wire bytes at 8 Mbit/s: 1 ms each.
    for tag in 0..5 {
        d.arrive(Instant::ZERO, LinkSide::Forward, packet(972, tag));
    }
    d.arrive(Instant::ZERO, LinkSide::Return, packet(100, 9));
    assert_eq!(d.link(LinkSide::Forward).queued_packets(), 2);
    assert!(d.poll(Instant::from_millis(4)).is_none());
    assert_eq!(d.next_due(), Some(Instant::from_millis(5)));
    let got = drain(&mut d, Instant::from_millis(100));
    assert_eq!(
        got,
        vec![
            (LinkSide::Return, 5_000_000, 9),
            (LinkSide::Forward, 11_000_000, 0),
            (LinkSide::Forward, 12_000_000, 1),
            (LinkSide::Forward, 13_000_000, 2),
        ]
    );
    let s = &d.link(LinkSide::Forward).stats;
    assert_eq!(
        (s.queue_drops, s.max_queue_packets, s.delivered_packets),
        (2, 2, 3)
    );
    assert_eq!(d.next_due(), None);
}

#[test]
fn late_caller_keeps_the_model_timeline() {
    let mut d = duplex("[topology.forward]\nrate_mbps = 8.0\ndelay_ms = 1.0\n[topology.return]\n");
    d.arrive(Instant::ZERO, LinkSide::Forward, packet(972, 1));
    d.arrive(Instant::ZERO, LinkSide::Forward, packet(972, 2));
    // Polled long after: still due at 2 ms and 3 ms.
    let got = drain(&mut d, Instant::from_millis(50));
    assert_eq!(
        got,
        vec![
            (LinkSide::Forward, 2_000_000, 1),
            (LinkSide::Forward, 3_000_000, 2)
        ]
    );
}

#[test]
fn scripted_drops_and_schedule() {
    let mut d = duplex(
        "[topology.forward]\ndelay_ms = 1.0\n[[topology.forward.impairments.drops]]\ndatagrams = [2]\n\
         [topology.return]\ndelay_ms = 1.0\n\
         [[schedule]]\nat_s = 0.5\nlink = \"forward\"\ndelay_ms = 20.0\n\
         [[schedule]]\nat_s = 1.0\nlink = \"return\"\noutage_s = 1.0\n",
    );
    for tag in 1..=3 {
        d.arrive(Instant::ZERO, LinkSide::Forward, packet(100, tag));
    }
    let got = drain(&mut d, Instant::from_millis(10));
    assert_eq!(
        got,
        vec![
            (LinkSide::Forward, 1_000_000, 1),
            (LinkSide::Forward, 1_000_000, 3)
        ]
    );
    assert_eq!(d.link(LinkSide::Forward).stats.impairment_drops, 1);
    // The change at 0.5 s runs when the caller reaches it.
    assert_eq!(d.next_due(), Some(Instant::from_millis(500)));
    d.arrive(Instant::from_millis(600), LinkSide::Forward, packet(100, 4));
    assert_eq!(
        drain(&mut d, Instant::from_millis(1000)),
        vec![(LinkSide::Forward, 620_000_000, 4)]
    );
    d.arrive(Instant::from_millis(1500), LinkSide::Return, packet(100, 5));
    assert!(drain(&mut d, Instant::from_millis(3000)).is_empty());
    assert_eq!(d.link(LinkSide::Return).stats.outage_drops, 1);
}

#[test]
fn dumbbell_is_refused() {
    let text = "name = \"t\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"dumbbell\"\npairs = 2\n[topology.forward]\n[topology.return]\n";
    let s: Scenario = toml::from_str(text).unwrap();
    let e = build_duplex(&s, "t.toml").err().unwrap();
    assert!(e.to_string().contains("topology.kind"), "{e}");
}
