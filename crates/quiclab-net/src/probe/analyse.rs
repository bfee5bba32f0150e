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
            Event::VersionInformation {
                server_versions, ..
            } if !server_versions.is_empty() && s.versions_offered.is_empty() => {
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
