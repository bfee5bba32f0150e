//! What a probe measures, read from the client connection's event log (the same
//! events its qlog gets): the datagrams and packets received, in order, with the
//! driver's receive time.

use quiclab_proto::events::{ConnectionState, Event, FrameKind};
use quiclab_proto::{Instant, PacketType};
use std::time::Duration;

/// The handshake's shape as the client saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// An ACK-only Initial packet (ACK, with PADDING or PING at most) arrived in an
    /// earlier datagram than the Initial packet carrying the ServerHello (the first
    /// CRYPTO frame in the Initial space): an instant ACK.
    pub instant_ack: bool,
    /// From that ACK's datagram to the ServerHello's (µs); `None` without one.
    pub iack_sh_gap_us: Option<u64>,
    /// From the connection's start to the first datagram from the server (µs).
    pub first_datagram_us: Option<u64>,
    /// From the start to the ServerHello's arrival (µs).
    pub server_hello_us: Option<u64>,
    /// From the start to the handshake's completion at the client (µs).
    pub handshake_us: Option<u64>,
    /// Bytes the client sent before anything came back (its first flight: the
    /// ClientHello's datagrams); the amplification limit is 3x this (RFC 9000 §8.1).
    pub client_first_flight_bytes: u64,
    /// UDP payload bytes and datagrams received before the handshake completed (or
    /// before the probe ended, without completion).
    pub first_flight_bytes: u64,
    pub first_flight_datagrams: u64,
    /// At some datagram, the bytes received exceeded 3x the bytes sent until then
    /// (the server did not keep to RFC 9000 §8.1 as the client can see it).
    pub amplification_exceeded: bool,
    /// Bytes of the server's TLS messages in Initial (ServerHello) and Handshake
    /// packets (EncryptedExtensions .. Finished), from the CRYPTO frames' extents.
    pub server_initial_crypto_bytes: u64,
    pub server_handshake_crypto_bytes: u64,
    /// Versions a Version Negotiation packet offered (RFC 9000 §6), when one came.
    pub versions_offered: Vec<u32>,
    /// Packets the client dropped (undecryptable, unknown CID...).
    pub packets_dropped: u64,
    /// The client's probe timeouts before its handshake completed (RFC 9002 §6.2): an
    /// instant ACK's RTT sample makes the client's PTO short, so a server that then
    /// waits long for its certificate draws spurious client probes (the seed's
    /// "spurious retransmits").
    pub client_ptos: u32,
}

/// Reads `events` (a client connection's, in order) from `start`.
pub fn shape(events: &[(Instant, Event)], start: Instant) -> Shape {
    let us = |t: Instant| duration_us(t.saturating_duration_since(start));
    let mut s = Shape::default();
    let mut sent: u64 = 0;
    let mut received: u64 = 0;
    let mut datagram = 0u64;
    let mut datagram_time = start;
    let mut done = false;
    let mut handshake_seen = false;
    let mut iack: Option<(u64, Instant)> = None;
    for (t, ev) in events {
        match ev {
            Event::PacketSent { size, .. } => {
                sent += *size as u64;
                if received == 0 {
                    s.client_first_flight_bytes = sent;
                }
            }
            Event::DatagramReceived { size, .. } => {
                datagram += 1;
                datagram_time = *t;
                received += *size as u64;
                s.first_datagram_us.get_or_insert(us(*t));
                // RFC 9000 §8.1: a server sends at most 3x what it received.
                s.amplification_exceeded |= received > 3 * sent;
                if !done {
                    s.first_flight_bytes = received;
                    s.first_flight_datagrams = datagram;
                }
            }
            Event::PacketReceived { header, frames, .. } => {
                handshake_seen = true;
                let crypto_end = frames
                    .iter()
                    .filter_map(|f| match f.kind {
                        FrameKind::Crypto { offset, length } => Some(offset + length as u64),
                        _ => None,
                    })
                    .max();
                match header.ty {
                    PacketType::Initial => {
                        if let Some(end) = crypto_end {
                            if s.server_hello_us.is_none() {
                                s.server_hello_us = Some(us(datagram_time));
                                if let Some((d, at)) = iack.filter(|(d, _)| *d < datagram) {
                                    let _ = d;
                                    s.instant_ack = true;
                                    s.iack_sh_gap_us = Some(duration_us(
                                        datagram_time.saturating_duration_since(at),
                                    ));
                                }
                            }
                            s.server_initial_crypto_bytes = s.server_initial_crypto_bytes.max(end);
                        } else if s.server_hello_us.is_none() && iack.is_none() && ack_only(frames)
                        {
                            iack = Some((datagram, datagram_time));
                        }
                    }
                    PacketType::Handshake => {
                        if let Some(end) = crypto_end {
                            s.server_handshake_crypto_bytes =
                                s.server_handshake_crypto_bytes.max(end);
                        }
                    }
                    _ => {}
                }
            }
            Event::PacketDropped { .. } => s.packets_dropped += 1,
            Event::PtoExpired { .. } if !done => s.client_ptos += 1,
            // A Version Negotiation packet comes before any packet of the server's
            // handshake; the same event later reports the server's version_information
            // transport parameter (RFC 9368 §3), which is not an offer.
            Event::VersionInformation {
                server_versions, ..
            } if !server_versions.is_empty()
                && s.versions_offered.is_empty()
                && !handshake_seen =>
            {
                s.versions_offered = server_versions.clone();
            }
            Event::ConnectionStateUpdated {
                new: ConnectionState::HandshakeComplete,
            } if !done => {
                done = true;
                s.handshake_us = Some(us(*t));
            }
            _ => {}
        }
    }
    s
}

/// An ACK, with nothing but PADDING or PING beside it (the PING variant of instant
/// ACK, `handshake.instant_ack_ping`, is still an instant ACK).
fn ack_only(frames: &[quiclab_proto::events::FrameSummary]) -> bool {
    frames
        .iter()
        .any(|f| matches!(f.kind, FrameKind::Ack { .. }))
        && frames.iter().all(|f| {
            matches!(
                f.kind,
                FrameKind::Ack { .. } | FrameKind::Padding { .. } | FrameKind::Ping
            )
        })
}

fn duration_us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiclab_proto::events::{FrameSummary, PacketHeaderInfo};
    use quiclab_proto::ConnectionId;
    use quiclab_proto::Ecn;

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    fn datagram(us: u64, size: usize) -> (Instant, Event) {
        (
            at(us),
            Event::DatagramReceived {
                size,
                ecn: Ecn::NotEct,
            },
        )
    }

    fn packet(us: u64, ty: PacketType, kinds: Vec<FrameKind>) -> (Instant, Event) {
        let frames = kinds
            .into_iter()
            .map(|kind| FrameSummary {
                wire_len: 1,
                name: "x",
                kind,
            })
            .collect();
        let header = PacketHeaderInfo {
            ty,
            pn: Some(0),
            dcid: ConnectionId::EMPTY,
            scid: None,
            path_id: None,
        };
        (
            at(us),
            Event::PacketReceived {
                header,
                size: 100,
                frames,
            },
        )
    }

    fn ack() -> FrameKind {
        FrameKind::Ack {
            ack_delay: 0,
            ranges: vec![(0, 0)],
            range_count: 1,
            ecn: None,
        }
    }

    fn crypto(offset: u64, length: usize) -> FrameKind {
        FrameKind::Crypto { offset, length }
    }

    fn sent(us: u64, size: usize) -> (Instant, Event) {
        let header = PacketHeaderInfo {
            ty: PacketType::Initial,
            pn: Some(0),
            dcid: ConnectionId::EMPTY,
            scid: None,
            path_id: None,
        };
        (
            at(us),
            Event::PacketSent {
                header,
                size,
                frames: vec![],
            },
        )
    }

    fn complete(us: u64) -> (Instant, Event) {
        let new = ConnectionState::HandshakeComplete;
        (at(us), Event::ConnectionStateUpdated { new })
    }

    /// An ACK-only Initial in its own datagram, then the ServerHello 20 ms later: an
    /// instant ACK with its gap; the server's version_information after the handshake
    /// packets is no Version Negotiation.
    #[test]
    fn instant_ack_and_gap() {
        let events = vec![
            sent(0, 1200),
            datagram(1_000, 50),
            packet(1_000, PacketType::Initial, vec![ack()]),
            datagram(21_000, 1200),
            packet(21_000, PacketType::Initial, vec![ack(), crypto(0, 90)]),
            packet(21_000, PacketType::Handshake, vec![crypto(0, 500)]),
            (
                at(21_000),
                Event::VersionInformation {
                    server_versions: vec![1, 0x6b33_43cf],
                    client_versions: vec![1],
                    chosen: Some(1),
                },
            ),
            complete(21_000),
            datagram(30_000, 100),
        ];
        let s = shape(&events, at(0));
        assert!(s.instant_ack);
        assert_eq!(s.iack_sh_gap_us, Some(20_000));
        assert_eq!(s.first_datagram_us, Some(1_000));
        assert_eq!((s.first_flight_bytes, s.first_flight_datagrams), (1250, 2));
        assert_eq!(s.client_first_flight_bytes, 1200);
        assert_eq!(s.server_initial_crypto_bytes, 90);
        assert_eq!(s.server_handshake_crypto_bytes, 500);
        assert!(!s.amplification_exceeded);
        assert!(s.versions_offered.is_empty());
    }

    /// The ACK coalesced with the ServerHello: WFC. More than 3x the client's bytes
    /// before it sent more: the limit exceeded. A Version Negotiation before any
    /// packet: its versions are the offer.
    #[test]
    fn wfc_vn_and_amplification() {
        let events = vec![
            (
                at(0),
                Event::VersionInformation {
                    server_versions: vec![0xff00_001d],
                    client_versions: vec![1],
                    chosen: None,
                },
            ),
            sent(0, 1200),
            datagram(5_000, 1500),
            packet(5_000, PacketType::Initial, vec![ack(), crypto(0, 90)]),
            datagram(5_001, 1500),
            datagram(5_002, 1500),
            packet(5_002, PacketType::Handshake, vec![crypto(0, 4000)]),
        ];
        let s = shape(&events, at(0));
        assert!(!s.instant_ack);
        assert_eq!(s.iack_sh_gap_us, None);
        assert!(s.amplification_exceeded);
        assert_eq!(s.versions_offered, vec![0xff00_001d]);
        assert_eq!(s.handshake_us, None);
        assert_eq!(s.first_flight_bytes, 4500);
    }
}
