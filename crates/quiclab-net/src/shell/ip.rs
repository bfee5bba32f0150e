//! IPv4 packets read from the shell's TUN devices as quiclab-link [`Packet`]s, and back.
//!
//! The link models count a packet's size as [`Packet::wire_size`]: a UDP payload plus
//! 28 bytes, or (with `tcp`) a segment plus 20. So a UDP datagram enters the link as
//! its UDP payload (the QUIC packet, which the QUIC-aware impairments and `corrupt`
//! read, as in the emulator) and a TCP segment as the segment; either way the wire size
//! is the IPv4 packet's total length. Any other protocol (ICMP, ...) enters as `tcp`
//! with the bytes after the IP header, its protocol number kept in the destination
//! port (ports mean nothing for it; its link capture then shows it as TCP).
//!
//! Leaving the link, the packet gets a fresh IPv4 header (RFC 791 §3.1: version 4,
//! IHL 5, DSCP 0, the ECN codepoint the link left, DF, TTL 64, a per-direction ID);
//! a UDP datagram gets a fresh UDP header and checksum (RFC 768), so a datagram the
//! link corrupted arrives with a valid checksum, as the emulator's would; a TCP segment
//! keeps its own header and checksum (which covers no IP field the relay changes).
//!
//! Not carried (typed [`Refused`] reasons, counted by the relay): IPv6 (the namespace
//! has only IPv4), fragments (TCP and QUIC set DF) and IP options.

use quiclab_link::link::Packet;
use quiclab_proto::Ecn;
use std::net::{Ipv4Addr, SocketAddrV4};

const IPV4_HEADER: usize = 20;
const UDP_HEADER: usize = 8;
pub(crate) const PROTO_TCP: u8 = 6;
pub(crate) const PROTO_UDP: u8 = 17;
/// Don't Fragment (RFC 791 §3.1).
const FLAG_DF: u16 = 0x4000;
const TTL: u8 = 64;

/// Why a packet read from a TUN device is not carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not IPv4 (IPv6, or garbage).
    NotIpv4,
    /// Shorter than its headers say, its total length disagrees with the read, or a TCP
    /// segment from port 0.
    Malformed,
    /// A fragment (MF set or a non-zero offset).
    Fragment,
    /// IP options (IHL > 5).
    Options,
}

/// The IPv4 packet `bytes` as a link packet (see the module docs).
pub fn parse(bytes: &[u8]) -> Result<Packet, Refused> {
    if bytes.first().map(|b| b >> 4) != Some(4) {
        return Err(Refused::NotIpv4);
    }
    if bytes.len() < IPV4_HEADER {
        return Err(Refused::Malformed);
    }
    let ihl = usize::from(bytes[0] & 0x0f) * 4;
    if ihl < IPV4_HEADER {
        return Err(Refused::Malformed);
    }
    if ihl > IPV4_HEADER {
        return Err(Refused::Options);
    }
    let total = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    if total != bytes.len() {
        return Err(Refused::Malformed);
    }
    let frag = u16::from_be_bytes([bytes[6], bytes[7]]);
    if frag & 0x3fff != 0 {
        return Err(Refused::Fragment);
    }
    let ecn = Ecn::from_bits(bytes[1]);
    let proto = bytes[9];
    let src = Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]);
    let dst = Ipv4Addr::new(bytes[16], bytes[17], bytes[18], bytes[19]);
    let body = &bytes[IPV4_HEADER..];
    let port = |at: usize| u16::from_be_bytes([body[at], body[at + 1]]);
    let (src, dst, payload, tcp) = match proto {
        PROTO_UDP => {
            if body.len() < UDP_HEADER || usize::from(port(4)) != body.len() {
                return Err(Refused::Malformed);
            }
            let (s, d) = (port(0), port(2));
            (
                SocketAddrV4::new(src, s),
                SocketAddrV4::new(dst, d),
                body[UDP_HEADER..].to_vec(),
                false,
            )
        }
        PROTO_TCP => {
            if body.len() < 20 || port(0) == 0 {
                return Err(Refused::Malformed);
            }
            (
                SocketAddrV4::new(src, port(0)),
                SocketAddrV4::new(dst, port(2)),
                body.to_vec(),
                true,
            )
        }
        other => (
            SocketAddrV4::new(src, 0),
            SocketAddrV4::new(dst, u16::from(other)),
            body.to_vec(),
            true,
        ),
    };
    Ok(Packet {
        tcp,
        ecn,
        ..Packet::datagram(src, dst, payload)
    })
}

/// The protocol number of a packet made by [`parse`]: another protocol's is in the
/// destination port of a `tcp` packet from port 0 (a real TCP segment from port 0 is
/// refused by [`parse`], RFC 9293 §3.1 leaves port 0 unused).
pub fn protocol(p: &Packet) -> u8 {
    if !p.tcp {
        PROTO_UDP
    } else if p.src.port() == 0 {
        u8::try_from(p.dst.port()).unwrap_or(PROTO_TCP)
    } else {
        PROTO_TCP
    }
}

/// The IPv4 packet for a link packet from [`parse`] (see the module docs); `id` is the
/// IP identification to use.
pub fn build(p: &Packet, id: u16) -> Vec<u8> {
    let proto = protocol(p);
    let body_len = if p.tcp {
        p.payload.len()
    } else {
        UDP_HEADER + p.payload.len()
    };
    let total = IPV4_HEADER + body_len;
    let mut out = Vec::with_capacity(total);
    let mut h = [0u8; IPV4_HEADER];
    h[0] = 0x45;
    h[1] = p.ecn.bits();
    // parse() read at most a 16-bit total length; the link never grows a packet.
    h[2..4].copy_from_slice(&(total.min(usize::from(u16::MAX)) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6..8].copy_from_slice(&FLAG_DF.to_be_bytes());
    h[8] = TTL;
    h[9] = proto;
    h[12..16].copy_from_slice(&p.src.ip().octets());
    h[16..20].copy_from_slice(&p.dst.ip().octets());
    let sum = fold(ones_sum(0, &h));
    h[10..12].copy_from_slice(&(!sum).to_be_bytes());
    out.extend_from_slice(&h);
    if !p.tcp {
        let len = body_len as u16;
        let mut u = [0u8; UDP_HEADER];
        u[0..2].copy_from_slice(&p.src.port().to_be_bytes());
        u[2..4].copy_from_slice(&p.dst.port().to_be_bytes());
        u[4..6].copy_from_slice(&len.to_be_bytes());
        // RFC 768: the checksum covers a pseudo-header, the UDP header and the data.
        let mut pseudo = [0u8; 12];
        pseudo[0..4].copy_from_slice(&p.src.ip().octets());
        pseudo[4..8].copy_from_slice(&p.dst.ip().octets());
        pseudo[9] = PROTO_UDP;
        pseudo[10..12].copy_from_slice(&len.to_be_bytes());
        let sum = ones_sum(ones_sum(ones_sum(0, &pseudo), &u), &p.payload);
        // RFC 768: a computed zero is sent as all ones (zero means "no checksum").
        let c = match !fold(sum) {
            0 => 0xffff,
            c => c,
        };
        u[6..8].copy_from_slice(&c.to_be_bytes());
        out.extend_from_slice(&u);
    }
    out.extend_from_slice(&p.payload);
    out
}

/// The one's-complement sum of 16-bit words (RFC 1071), unfolded; an odd trailing byte
/// is padded with zero. Every caller's pieces but the last have even lengths.
fn ones_sum(mut acc: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

#[cfg(test)]
mod tests;
