//! Compatible version negotiation on the server (RFC 9368 §2.3; v1 and v2 are
//! compatible, RFC 9369 §4): before a connection exists, the server reads the
//! version_information transport parameter in the ClientHello of a client's first
//! Initial and, when the client offers a version the server prefers to the one the
//! Initial is in, creates the connection in that version. The TLS session's key
//! derivation (rustls) is fixed when it is created, which is why the choice is made here
//! and not after TLS has read the ClientHello (the client, whose session was created in
//! its first version, rederives its keys: `crypto::version_keys`).
//!
//! Only a ClientHello whose transport parameters are in the first Initial packet is
//! read; otherwise the connection stays in the client's version (a correct, if
//! unnegotiated, outcome). Servers supporting one version skip all of this.

use crate::config::compatible_versions;
use crate::config::VersionConfig;
use crate::crypto::initial::initial_keys;
use crate::crypto::protect::{decrypt_payload, unprotect_header};
use crate::wire::header::decode_packet_number;
use crate::wire::{decode_frames, ConnectionId, Frame, Side, TransportParameters};

/// TLS extension quic_transport_parameters (RFC 9001 §8.2).
const QUIC_TRANSPORT_PARAMETERS: u16 = 0x39;

/// The server's upgrade of a connection from the client's version.
pub(super) struct Upgrade {
    /// The negotiated version (RFC 9368 §2.3).
    pub version: u32,
    /// The client's Available Versions, for qlog.
    pub client_versions: Vec<u32>,
}

/// The version to create the connection in, when it is not the client's `original`:
/// the server's most preferred version among the client's Available Versions
/// (RFC 9368 §2.3: the server chooses), if compatible with `original`.
pub(super) fn negotiate(
    versions: &VersionConfig,
    original: u32,
    dcid: &ConnectionId,
    packet: &[u8],
    pn_offset: usize,
) -> Option<Upgrade> {
    if versions.supported.len() < 2 {
        return None;
    }
    let plain = decrypt(original, dcid, packet, pn_offset)?;
    let hello = first_crypto(&plain)?;
    let raw = transport_parameters(&hello)?;
    let vi = TransportParameters::decode(raw, Side::Client)
        .ok()?
        .version_information?;
    // RFC 9368 §4: a Chosen Version other than the packet's is the connection's to
    // reject (VERSION_NEGOTIATION_ERROR), in the client's version.
    if vi.chosen != original {
        return None;
    }
    let version = versions
        .supported_wire()
        .into_iter()
        .find(|v| vi.available.contains(v))?;
    (version != original && compatible_versions(original, version)).then_some(Upgrade {
        version,
        client_versions: vi.available,
    })
}

/// The plaintext payload of a client Initial (a copy; the endpoint has already checked
/// that it decrypts).
fn decrypt(version: u32, dcid: &ConnectionId, packet: &[u8], pn_offset: usize) -> Option<Vec<u8>> {
    let keys = initial_keys(version, dcid, Side::Server);
    let mut copy = packet.to_vec();
    let h = unprotect_header(&*keys.remote.header, &mut copy, pn_offset).ok()?;
    let pn = decode_packet_number(None, h.truncated_pn, h.pn_len);
    let range = decrypt_payload(&*keys.remote.packet, &mut copy, pn_offset + h.pn_len, pn).ok()?;
    Some(copy[range].to_vec())
}

/// The CRYPTO data from offset 0 that this packet carries contiguously.
fn first_crypto(payload: &[u8]) -> Option<Vec<u8>> {
    let mut frames: Vec<(u64, &[u8])> = decode_frames(payload)
        .filter_map(Result::ok)
        .filter_map(|f| match f {
            Frame::Crypto { offset, data } => Some((offset, data)),
            _ => None,
        })
        .collect();
    frames.sort_by_key(|f| f.0);
    let mut out = Vec::new();
    for (offset, data) in frames {
        if offset != out.len() as u64 {
            break;
        }
        out.extend_from_slice(data);
    }
    (!out.is_empty()).then_some(out)
}

/// Splits `n` bytes off the front of `b`.
fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (head, rest) = b.split_at_checked(n)?;
    *b = rest;
    Some(head)
}

fn take_len(b: &mut &[u8], width: usize) -> Option<usize> {
    Some(
        take(b, width)?
            .iter()
            .fold(0usize, |acc, &x| acc << 8 | usize::from(x)),
    )
}

/// The quic_transport_parameters extension of a TLS 1.3 ClientHello (RFC 8446
/// §4.1.2, §4.2), or `None` if `msg` is not a whole ClientHello.
fn transport_parameters(msg: &[u8]) -> Option<&[u8]> {
    let mut m = msg;
    if take(&mut m, 1)? != [1] {
        return None; // not a ClientHello
    }
    let len = take_len(&mut m, 3)?;
    let mut b = take(&mut m, len)?;
    take(&mut b, 2 + 32)?; // legacy_version, random
    for width in [1, 2, 1] {
        // legacy_session_id, cipher_suites, legacy_compression_methods
        let n = take_len(&mut b, width)?;
        take(&mut b, n)?;
    }
    let n = take_len(&mut b, 2)?;
    let mut ext = take(&mut b, n)?;
    while !ext.is_empty() {
        let ty = take_len(&mut ext, 2)?;
        let n = take_len(&mut ext, 2)?;
        let data = take(&mut ext, n)?;
        if ty == usize::from(QUIC_TRANSPORT_PARAMETERS) {
            return Some(data);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_hello_parsing_finds_the_extension_and_rejects_truncation() {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        let exts = [0, 0x0a, 0, 1, 9, 0, 0x39, 0, 2, 0xab, 0xcd];
        body.extend_from_slice(&[0, exts.len() as u8]);
        body.extend_from_slice(&exts);
        let mut msg = vec![1, 0, 0, body.len() as u8];
        msg.extend_from_slice(&body);
        assert_eq!(transport_parameters(&msg), Some(&[0xab, 0xcd][..]));
        for cut in 0..msg.len() {
            assert_eq!(transport_parameters(&msg[..cut]), None, "{cut}");
        }
        msg[0] = 2;
        assert_eq!(transport_parameters(&msg), None);
    }
}
