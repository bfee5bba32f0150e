//! A client's first ClientHello retransmission read from the emulator's capture, for a
//! client that writes no qlog (the lab's fallback; `qlog.rs` has the same definition
//! for clients that do).
//!
//! The capture is `quiclab emulate`'s `pcap/all.pcap`: every datagram of both sides as
//! it reaches the relay (classic pcap, LINKTYPE_RAW IPv4/UDP, microsecond times). The
//! client is the source of the capture's first datagram (its first Initial). Each of
//! the client's coalesced Initial packets is opened with the Initial keys (RFC 9001
//! §5.2) of its first Initial's Destination Connection ID, or, after a Retry, of the
//! packet's own DCID (RFC 9001 §5.2: a Retry changes the keys). The first packet with a
//! CRYPTO frame at offset 0 carries the ClientHello; the first later one (a new packet
//! number: QUIC never resends a packet, RFC 9000 §13.3) with a CRYPTO frame at offset 0
//! is the client's first retransmission of it: a PTO or a Retry. Its time since the
//! client's first datagram is `first_retransmit_ms`. The first PTO's *value* is not in
//! a pcap unless it fires.

use pcap_file::pcap::PcapParser;
use pcap_file::{DataLink, PcapError};
use quiclab_proto::events::FrameKind;
use quiclab_proto::{coalesced_packets, read_client_initial, ConnectionId, PacketType};
use std::path::Path;

const UDP_HEADER: usize = 8;
const IP_PROTO_UDP: u8 = 17;

/// A datagram's source: IPv4 address and UDP port.
pub type Source = ([u8; 4], u16);

/// Whether a link type is raw IP: LINKTYPE_RAW (101) or its older DLT value (12 on
/// some systems, 14 on OpenBSD).
fn is_raw_ip(link: DataLink) -> bool {
    matches!(link, DataLink::RAW | DataLink::Unknown(12 | 14))
}

/// The crate's error as this module's text.
fn pcap_error(e: PcapError) -> String {
    match e {
        PcapError::IncompleteBuffer => "pcap: truncated".into(),
        PcapError::InvalidField(what) if what.contains("magic") => {
            "pcap: not a classic pcap file".into()
        }
        other => format!("pcap: {other}"),
    }
}

/// One UDP datagram of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// Capture time, microseconds.
    pub t_us: u64,
    pub src: Source,
    pub payload: Vec<u8>,
}

/// The IPv4/UDP datagrams of a classic pcap file with raw-IP link type (other packets
/// are skipped), parsed by the `pcap-file` crate (either byte order, micro- or
/// nanosecond times). Malformed files are an error naming what is wrong, never a panic.
pub fn read_pcap(bytes: &[u8]) -> Result<Vec<Datagram>, String> {
    let (mut rest, parser) = PcapParser::new(bytes).map_err(pcap_error)?;
    let link = parser.header().datalink;
    if !is_raw_ip(link) {
        return Err(format!(
            "pcap: link type {}, expected raw IP (101)",
            u32::from(link)
        ));
    }
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (next, packet) = parser.next_packet(rest).map_err(pcap_error)?;
        rest = next;
        if let Some((src, payload)) = udp_of_ipv4(&packet.data) {
            out.push(Datagram {
                t_us: u64::try_from(packet.timestamp.as_micros()).unwrap_or(u64::MAX),
                src,
                payload: payload.to_vec(),
            });
        }
    }
    Ok(out)
}

/// The source and UDP payload of an IPv4 packet, if it is one carrying UDP.
fn udp_of_ipv4(ip: &[u8]) -> Option<(Source, &[u8])> {
    let first = *ip.first()?;
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 || *ip.get(9)? != IP_PROTO_UDP {
        return None;
    }
    let src_ip: [u8; 4] = ip.get(12..16)?.try_into().ok()?;
    let udp = ip.get(ihl..)?;
    let port = u16::from_be_bytes([*udp.first()?, *udp.get(1)?]);
    let udp_len = usize::from(u16::from_be_bytes([*udp.get(4)?, *udp.get(5)?]));
    let payload = udp.get(UDP_HEADER..udp_len.max(UDP_HEADER))?;
    Some(((src_ip, port), payload))
}

/// Whether a client Initial packet (one packet, still protected) carries a CRYPTO
/// frame at offset 0, opened with the keys of `first_dcid` or else of its own DCID.
/// `None` when it cannot be opened (not an Initial, or neither key fits).
fn hello_in_initial(
    packet: &[u8],
    own_dcid: &ConnectionId,
    first_dcid: &ConnectionId,
) -> Option<bool> {
    // RFC 9000 §17.1: the packet number decodes near 0 (no largest acknowledged); a
    // ClientHello retransmission's number is small.
    let frames = read_client_initial(packet, first_dcid)
        .or_else(|| read_client_initial(packet, own_dcid))?;
    Some(
        frames
            .iter()
            .any(|f| matches!(f.kind, FrameKind::Crypto { offset: 0, .. })),
    )
}

/// The client's first ClientHello retransmission, ms after its first datagram (see the
/// module doc); `None` if it never resent it (or sent no Initial).
pub fn first_retransmit_ms(datagrams: &[Datagram]) -> Option<f64> {
    let first = datagrams.first()?;
    let client = first.src;
    let first_dcid = coalesced_packets(&first.payload).next()?.0.dcid;
    let mut hello_seen = false;
    for d in datagrams.iter().filter(|d| d.src == client) {
        // Coalesced packets (RFC 9000 §12.2): long headers carry their length.
        for (h, packet) in coalesced_packets(&d.payload) {
            if h.ty == PacketType::OneRtt {
                break;
            }
            if hello_in_initial(packet, &h.dcid, &first_dcid) == Some(true) {
                if hello_seen {
                    return Some(d.t_us.saturating_sub(first.t_us) as f64 / 1e3);
                }
                hello_seen = true;
            }
        }
    }
    None
}

/// [`first_retransmit_ms`] of a capture file.
pub fn first_retransmit_in(path: &Path) -> Result<Option<f64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let datagrams = read_pcap(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(first_retransmit_ms(&datagrams))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first four datagrams of a real `quiclab emulate` capture (all.pcap): quic-go's
    /// client against `quiclab server`, the forward link dropping the client's first
    /// datagram (`drops = [{ flight = 1, max_drops = 1 }]`, 10 ms each way). quic-go's
    /// ClientHello spans two Initials (CRYPTO 0..1234 at 0 ms, 1234..1495 at 57.5 ms);
    /// the server acknowledges the second (77.6 ms); the client resends CRYPTO from offset
    /// 0 at 97.635 ms, which its qlog also shows (97.6 ms after its first packet).
    const CAPTURE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quic-go-hello-resent.pcap"
    ));

    #[test]
    fn retransmission_from_a_real_capture() {
        let d = read_pcap(CAPTURE).unwrap();
        assert_eq!(d.len(), 4);
        assert_eq!(d[2].src.1, 24101, "the server's ACK");
        let t = first_retransmit_ms(&d).unwrap();
        assert!((t - 97.635).abs() < 0.01, "{t}");
        // Without the resent datagram there is no retransmission (the second Initial
        // continues the ClientHello; it does not start it again).
        assert_eq!(first_retransmit_ms(&d[..3]), None);
        assert_eq!(first_retransmit_ms(&[]), None);
    }

    #[test]
    fn malformed_captures_are_errors() {
        assert!(read_pcap(&CAPTURE[..10]).is_err());
        assert!(read_pcap(&CAPTURE[..CAPTURE.len() - 5]).is_err());
        let mut other = CAPTURE.to_vec();
        other[20] = 1; // Ethernet
        assert!(read_pcap(&other).unwrap_err().contains("link type 1"));
        assert!(read_pcap(&[0u8; 24])
            .unwrap_err()
            .contains("not a classic pcap"));
        // Garbage UDP payloads are skipped, not a panic.
        let mut junk = CAPTURE.to_vec();
        for b in junk.iter_mut().skip(24 + 16 + 28).take(200) {
            *b = 0xff;
        }
        let d = read_pcap(&junk).unwrap();
        let _ = first_retransmit_ms(&d);
    }
}
