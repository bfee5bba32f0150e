use super::*;

/// An IPv4 packet as a stack would send it: `proto`, `tos`, `body` after the header.
fn packet(proto: u8, tos: u8, frag: u16, body: &[u8]) -> Vec<u8> {
    let total = (20 + body.len()) as u16;
    let mut h = vec![0x45, tos];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34]);
    h.extend_from_slice(&frag.to_be_bytes());
    h.extend_from_slice(&[63, proto, 0, 0, 198, 18, 0, 2, 198, 18, 0, 1]);
    h.extend_from_slice(body);
    h
}

fn checksum_ok(bytes: &[u8]) -> bool {
    fold(ones_sum(0, bytes)) == 0xffff
}

fn udp_checksum_ok(ip: &[u8]) -> bool {
    let udp = &ip[20..];
    let mut pseudo = [0u8; 12];
    pseudo[0..8].copy_from_slice(&ip[12..20]);
    pseudo[9] = PROTO_UDP;
    pseudo[10..12].copy_from_slice(&(udp.len() as u16).to_be_bytes());
    fold(ones_sum(ones_sum(0, &pseudo), udp)) == 0xffff
}

#[test]
fn udp_round_trip_keeps_ports_payload_and_ecn() {
    let mut body = vec![0x30, 0x39, 0x1f, 0x90, 0, 13, 0, 0];
    body.extend_from_slice(b"hello"); // odd length: the checksum pads
    let ip = packet(PROTO_UDP, 0b10, 0x4000, &body);
    let p = parse(&ip).unwrap();
    assert!(!p.tcp);
    assert_eq!(p.payload, b"hello");
    assert_eq!(p.src, "198.18.0.2:12345".parse().unwrap());
    assert_eq!(p.dst, "198.18.0.1:8080".parse().unwrap());
    assert_eq!(p.ecn, Ecn::Ect0);
    assert_eq!(p.wire_size(), ip.len() as u64);
    let mut marked = p.clone();
    marked.ecn = Ecn::Ce;
    let out = build(&marked, 7);
    assert_eq!(out.len(), ip.len());
    assert_eq!(out[1] & 3, 0b11, "the link's CE mark reaches the stack");
    assert_eq!(out[9], PROTO_UDP);
    assert!(checksum_ok(&out[..20]), "IPv4 header checksum");
    assert!(udp_checksum_ok(&out), "UDP checksum");
    assert_eq!(&out[20..26], &body[..6]);
    assert_eq!(&out[28..], b"hello");
}

#[test]
fn tcp_segment_is_carried_whole() {
    let mut seg = vec![0u8; 32];
    seg[0..2].copy_from_slice(&40000u16.to_be_bytes());
    seg[2..4].copy_from_slice(&80u16.to_be_bytes());
    seg[12] = 8 << 4;
    seg[16] = 0xab; // its own checksum, untouched
    seg.extend_from_slice(&[1, 2, 3]);
    let ip = packet(PROTO_TCP, 0, 0x4000, &seg);
    let p = parse(&ip).unwrap();
    assert!(p.tcp);
    assert_eq!(p.wire_size(), ip.len() as u64);
    assert_eq!(protocol(&p), PROTO_TCP);
    let out = build(&p, 1);
    assert_eq!(&out[20..], &seg[..]);
    assert_eq!(out[9], PROTO_TCP);
    assert!(checksum_ok(&out[..20]));
}

#[test]
fn other_protocols_keep_their_number() {
    let icmp = [8u8, 0, 0xf7, 0xff, 0, 0, 0, 0];
    let ip = packet(1, 0, 0, &icmp);
    let p = parse(&ip).unwrap();
    assert_eq!(protocol(&p), 1);
    assert_eq!(p.wire_size(), ip.len() as u64);
    let out = build(&p, 9);
    assert_eq!(out[9], 1);
    assert_eq!(&out[20..], &icmp);
}

#[test]
fn refusals_are_typed() {
    let udp = [0u8, 1, 0, 2, 0, 8, 0, 0];
    assert_eq!(parse(&[]).unwrap_err(), Refused::NotIpv4);
    assert_eq!(parse(&[0x60; 40]).unwrap_err(), Refused::NotIpv4);
    assert_eq!(parse(&[0x45, 0, 0]).unwrap_err(), Refused::Malformed);
    let mut short = packet(PROTO_UDP, 0, 0, &udp);
    short.pop();
    assert_eq!(parse(&short).unwrap_err(), Refused::Malformed);
    assert_eq!(
        parse(&packet(PROTO_UDP, 0, 0x2000, &udp)).unwrap_err(),
        Refused::Fragment
    );
    assert_eq!(
        parse(&packet(PROTO_UDP, 0, 0x0001, &udp)).unwrap_err(),
        Refused::Fragment
    );
    let mut opts = packet(PROTO_UDP, 0, 0, &udp);
    opts[0] = 0x46;
    assert_eq!(parse(&opts).unwrap_err(), Refused::Options);
    let mut bad_len = udp;
    bad_len[5] = 9;
    assert_eq!(
        parse(&packet(PROTO_UDP, 0, 0, &bad_len)).unwrap_err(),
        Refused::Malformed
    );
    assert_eq!(
        parse(&packet(PROTO_TCP, 0, 0, &[0u8; 20])).unwrap_err(),
        Refused::Malformed,
        "TCP from port 0"
    );
}
