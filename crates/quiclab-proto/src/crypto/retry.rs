//! Retry packet integrity (RFC 9001 §5.8; RFC 9369 §3.3.3 for v2).

use super::TAG_LEN;
use crate::wire::header::RETRY_TAG_LEN;
use crate::wire::{ConnectionId, VERSION_2};
use ring::aead;

/// RFC 9001 §5.8: fixed AEAD_AES_128_GCM key and nonce for QUIC v1.
const KEY_V1: [u8; 16] = [
    0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e,
];
const NONCE_V1: [u8; 12] = [
    0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb,
];
/// RFC 9369 §3.3.3: the v2 key and nonce.
const KEY_V2: [u8; 16] = [
    0x8f, 0xb4, 0xb0, 0x1b, 0x56, 0xac, 0x48, 0xe2, 0x60, 0xfb, 0xcb, 0xce, 0xad, 0x7c, 0xcc, 0x92,
];
const NONCE_V2: [u8; 12] = [
    0xd8, 0x69, 0x69, 0xbc, 0x2d, 0x7c, 0x6d, 0x99, 0x90, 0xef, 0xb0, 0x4a,
];

// RFC 9001 §5.8: the Retry Integrity Tag is the AEAD_AES_128_GCM tag, so the wire
// layer's field length (which it needs to parse Retry packets, below this layer) is the
// AEAD tag length.
const _: () = assert!(RETRY_TAG_LEN == TAG_LEN);

/// The key, nonce and pseudo-packet (RFC 9001 §5.8, Figure 8) for one Retry.
fn prepare(
    version: u32,
    original_dcid: &ConnectionId,
    retry_without_tag: &[u8],
) -> (aead::LessSafeKey, aead::Nonce, Vec<u8>) {
    let (key, nonce) = if version == VERSION_2 {
        (&KEY_V2, NONCE_V2)
    } else {
        (&KEY_V1, NONCE_V1)
    };
    let key = aead::LessSafeKey::new(
        aead::UnboundKey::new(&aead::AES_128_GCM, key).expect("a 16-byte AES-128 key"),
    );
    // Retry Pseudo-Packet: ODCID Length (8), ODCID, then the Retry packet minus its tag.
    let mut pseudo = Vec::with_capacity(1 + original_dcid.len() + retry_without_tag.len());
    pseudo.push(original_dcid.len() as u8); // at most 20
    pseudo.extend_from_slice(original_dcid.as_bytes());
    pseudo.extend_from_slice(retry_without_tag);
    (key, aead::Nonce::assume_unique_for_key(nonce), pseudo)
}

/// The Retry Integrity Tag over the pseudo-packet (ODCID length, ODCID, Retry packet
/// without its tag).
pub fn integrity_tag(
    version: u32,
    original_dcid: &ConnectionId,
    retry_without_tag: &[u8],
) -> [u8; RETRY_TAG_LEN] {
    let (key, nonce, pseudo) = prepare(version, original_dcid, retry_without_tag);
    // RFC 9001 §5.8: empty plaintext, the pseudo-packet as associated data; the tag is
    // the whole output. Sealing an empty plaintext cannot fail.
    let tag = key
        .seal_in_place_separate_tag(nonce, aead::Aad::from(&pseudo), &mut [])
        .expect("AES-GCM over an empty plaintext");
    let mut out = [0u8; RETRY_TAG_LEN];
    out.copy_from_slice(tag.as_ref());
    out
}

/// Whether the last 16 bytes of `retry_packet` are a valid tag for `original_dcid`.
/// The tag is checked by ring's AEAD open, in constant time.
pub fn verify(version: u32, original_dcid: &ConnectionId, retry_packet: &[u8]) -> bool {
    let Some(body_len) = retry_packet.len().checked_sub(RETRY_TAG_LEN) else {
        return false;
    };
    let (body, tag) = retry_packet.split_at(body_len);
    let (key, nonce, pseudo) = prepare(version, original_dcid, body);
    let mut tag_buf = [0u8; RETRY_TAG_LEN];
    tag_buf.copy_from_slice(tag);
    key.open_in_place(nonce, aead::Aad::from(&pseudo), &mut tag_buf)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::tests::{hex, rfc_dcid};
    use crate::crypto::initial::{expand_label, prk};
    use crate::wire::VERSION_1;

    fn check(version: u32, packet_hex: &str) {
        let packet = hex(packet_hex);
        let (body, tag) = packet.split_at(packet.len() - 16);
        assert_eq!(integrity_tag(version, &rfc_dcid(), body), tag);
        assert!(verify(version, &rfc_dcid(), &packet));
        let mut bad = packet.clone();
        bad[5] ^= 1;
        assert!(!verify(version, &rfc_dcid(), &bad));
        let other = ConnectionId::new(&[1, 2, 3]).unwrap();
        assert!(!verify(version, &other, &packet));
        assert!(!verify(version, &rfc_dcid(), &packet[..10]));
    }

    // RFC 9001 Appendix A.4
    #[test]
    fn rfc9001_a4_retry() {
        check(
            VERSION_1,
            "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba",
        );
    }

    // RFC 9369 Appendix A.4
    #[test]
    fn rfc9369_a4_retry() {
        check(
            VERSION_2,
            "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d955543665dcc7b6",
        );
    }

    /// The fixed keys are the HKDF-Expand-Label outputs the RFCs say they are.
    #[test]
    fn retry_keys_derive_from_published_secrets() {
        let v1 = prk(&hex(
            "d9c9943e6101fd200021506bcc02814c73030f25c79d71ce876eca876e6fca8e",
        ));
        assert_eq!(expand_label::<16>(&v1, b"quic key"), KEY_V1);
        assert_eq!(expand_label::<12>(&v1, b"quic iv"), NONCE_V1);
        let v2 = prk(&hex(
            "c4dd2484d681aefa4ff4d69c2c20299984a765a5d3c31982f38fc74162155e9f",
        ));
        assert_eq!(expand_label::<16>(&v2, b"quicv2 key"), KEY_V2);
        assert_eq!(expand_label::<12>(&v2, b"quicv2 iv"), NONCE_V2);
    }
}
