//! Initial secrets and keys (RFC 9001 §5.2; RFC 9369 §3.3.1 for v2).
//!
//! The secrets are derived here with ring's HKDF so the Appendix A vectors can be checked
//! byte for byte; the packet keys themselves come from rustls (`Keys::initial`), which
//! runs the same derivation, and a test checks that both agree.

use crate::wire::{ConnectionId, Side, VERSION_2};
use ring::hkdf;
use rustls::quic::Keys;
use rustls::Tls13CipherSuite;

/// RFC 9001 §5.2: the QUIC v1 initial salt.
const INITIAL_SALT_V1: [u8; 20] = [
    0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad,
    0xcc, 0xbb, 0x7f, 0x0a,
];

/// RFC 9369 §3.3.1: the QUIC v2 initial salt.
const INITIAL_SALT_V2: [u8; 20] = [
    0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb,
    0xf9, 0xbd, 0x2e, 0xd9,
];

/// The client and server Initial secrets derived from the client's first Destination
/// Connection ID (for the RFC 9001 Appendix A vectors).
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialSecrets {
    pub client: [u8; 32],
    pub server: [u8; 32],
}

/// RFC 9001 §5.2: HKDF-Extract(initial_salt, cid), then "client in" / "server in".
///
/// `version` selects the salt: [`VERSION_2`] uses RFC 9369's, anything else QUIC v1's
/// (other versions never reach this point: they are answered by Version Negotiation).
#[cfg(test)]
pub fn initial_secrets(version: u32, client_dcid: &ConnectionId) -> InitialSecrets {
    let salt: &[u8] = if version == VERSION_2 {
        &INITIAL_SALT_V2
    } else {
        &INITIAL_SALT_V1
    };
    let initial_secret = hkdf::Salt::new(hkdf::HKDF_SHA256, salt).extract(client_dcid.as_bytes());
    InitialSecrets {
        client: expand_label(&initial_secret, b"client in"),
        server: expand_label(&initial_secret, b"server in"),
    }
}

/// Initial packet protection keys for `side` (AES-128-GCM): `local` seals what `side`
/// sends, `remote` opens what it receives.
pub fn initial_keys(version: u32, client_dcid: &ConnectionId, side: Side) -> Keys {
    let (suite, quic) = aes128_suite();
    let version = if version == VERSION_2 {
        rustls::quic::Version::V2
    } else {
        rustls::quic::Version::V1
    };
    let side = match side {
        Side::Client => rustls::Side::Client,
        Side::Server => rustls::Side::Server,
    };
    Keys::initial(version, suite, quic, client_dcid.as_bytes(), side)
}

/// TLS_AES_128_GCM_SHA256 and its QUIC algorithm from ring, used for Initial packets
/// (RFC 9001 §5.2).
fn aes128_suite() -> (
    &'static Tls13CipherSuite,
    &'static dyn rustls::quic::Algorithm,
) {
    let suite = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
        .tls13()
        .expect("TLS13_AES_128_GCM_SHA256 is a TLS 1.3 suite");
    let quic = suite
        .quic
        .expect("ring's TLS13_AES_128_GCM_SHA256 supports QUIC");
    (suite, quic)
}

/// An HKDF output length for ring.
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// Whether `packet` (one Initial packet of QUIC `version`, its Packet Number field at
/// `pn_offset`) is a genuine client Initial: it decrypts with the client's Initial
/// keys for its Destination Connection ID (RFC 9001 §5.2). A server checks this before
/// it creates any state for a new connection (Initial-flood resistance), so it is kept
/// cheap: only the client's key, IV and header key are derived (ring directly, no
/// boxed rustls keys for both directions), and a packet whose reserved bits are not
/// zero once header protection is removed (RFC 9000 §17.2; random junk, 3 in 4) is
/// rejected before the AEAD open. Only the header is copied; the payload is opened
/// in a scratch copy since `packet` must stay intact for the connection.
pub fn is_valid_client_initial(
    version: u32,
    dcid: &ConnectionId,
    packet: &[u8],
    pn_offset: usize,
) -> bool {
    use ring::aead;
    // RFC 9001 §5.4.2: the sample starts 4 bytes after the Packet Number field starts.
    let Some(sample) = packet.get(pn_offset + 4..pn_offset + 4 + 16) else {
        return false;
    };
    let (salt, labels): (&[u8], [&[u8]; 3]) = if version == VERSION_2 {
        (
            &INITIAL_SALT_V2,
            [b"quicv2 key", b"quicv2 iv", b"quicv2 hp"],
        )
    } else {
        (&INITIAL_SALT_V1, [b"quic key", b"quic iv", b"quic hp"])
    };
    let initial = hkdf::Salt::new(hkdf::HKDF_SHA256, salt).extract(dcid.as_bytes());
    let client: [u8; 32] = expand_label(&initial, b"client in");
    let client = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, &client);
    let hp: [u8; 16] = expand_label(&client, labels[2]);
    let Ok(hpk) = aead::quic::HeaderProtectionKey::new(&aead::quic::AES_128, &hp) else {
        return false;
    };
    let Ok(mask) = hpk.new_mask(sample) else {
        return false;
    };
    // RFC 9001 §5.4.1: long header, the low 4 bits of the first byte are masked.
    let first = packet[0] ^ (mask[0] & 0x0f);
    if first & 0x0c != 0 {
        return false; // reserved bits (RFC 9000 §17.2)
    }
    let pn_len = usize::from(first & 0x03) + 1;
    let header_len = pn_offset + pn_len;
    let mut header = packet[..header_len].to_vec();
    header[0] = first;
    for (b, m) in header[pn_offset..].iter_mut().zip(&mask[1..]) {
        *b ^= m;
    }
    let truncated = header[pn_offset..]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    // The first packet number space starts at 0: decoding against no largest received.
    let pn = crate::wire::header::decode_packet_number(None, truncated, pn_len);
    let key: [u8; 16] = expand_label(&client, labels[0]);
    let mut nonce: [u8; 12] = expand_label(&client, labels[1]);
    // RFC 9001 §5.3: the nonce is the IV XORed with the left-padded packet number.
    for (n, p) in nonce[4..].iter_mut().zip(pn.to_be_bytes()) {
        *n ^= p;
    }
    let Ok(key) = aead::UnboundKey::new(&aead::AES_128_GCM, &key) else {
        return false;
    };
    let mut payload = packet[header_len..].to_vec();
    aead::LessSafeKey::new(key)
        .open_in_place(
            aead::Nonce::assume_unique_for_key(nonce),
            aead::Aad::from(&header),
            &mut payload,
        )
        .is_ok()
}

/// The same check through rustls's Initial keys for both directions (the way a
/// connection opens the packet), for the tests to compare with.
#[cfg(test)]
fn is_valid_client_initial_rustls(
    version: u32,
    dcid: &ConnectionId,
    packet: &[u8],
    pn_offset: usize,
) -> bool {
    use super::protect::{decrypt_payload, unprotect_header};
    let keys = initial_keys(version, dcid, Side::Server);
    let mut copy = packet.to_vec();
    let Ok(h) = unprotect_header(&*keys.remote.header, &mut copy, pn_offset) else {
        return false;
    };
    if h.first_byte & 0x0c != 0 {
        return false;
    }
    let pn = crate::wire::header::decode_packet_number(None, h.truncated_pn, h.pn_len);
    decrypt_payload(&*keys.remote.packet, &mut copy, pn_offset + h.pn_len, pn).is_ok()
}

/// HKDF-Expand-Label(secret, label, "", N) with SHA-256 (RFC 8446 §7.1, used by
/// RFC 9001 §5.1): info = length (u16) || len || "tls13 " + label || empty context.
pub(crate) fn expand_label<const N: usize>(prk: &hkdf::Prk, label: &[u8]) -> [u8; N] {
    const PREFIX: &[u8] = b"tls13 ";
    // Labels are our own constants, at most a dozen bytes: these casts cannot truncate.
    let length = (N as u16).to_be_bytes();
    let label_len = [(PREFIX.len() + label.len()) as u8];
    let info: [&[u8]; 5] = [&length, &label_len, PREFIX, label, &[0]];
    let mut out = [0u8; N];
    prk.expand(&info, Len(N))
        .and_then(|okm| okm.fill(&mut out))
        .expect("HKDF-Expand output of at most 255 hash lengths");
    out
}

/// A SHA-256 PRK from a TLS secret, for [`expand_label`] (the tests' vectors).
#[cfg(test)]
pub(crate) fn prk(secret: &[u8]) -> hkdf::Prk {
    hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, secret)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::VERSION_1;

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    pub(crate) fn rfc_dcid() -> ConnectionId {
        ConnectionId::new(&hex("8394c8f03e515708")).unwrap()
    }

    /// key, iv, hp from a secret with the given label prefix ("quic" or "quicv2").
    fn kih(secret: &[u8], v: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let p = prk(secret);
        let k: [u8; 16] = expand_label(&p, format!("{v} key").as_bytes());
        let i: [u8; 12] = expand_label(&p, format!("{v} iv").as_bytes());
        let h: [u8; 16] = expand_label(&p, format!("{v} hp").as_bytes());
        (k.to_vec(), i.to_vec(), h.to_vec())
    }

    // RFC 9001 Appendix A.1
    #[test]
    fn rfc9001_a1_keys() {
        let s = initial_secrets(VERSION_1, &rfc_dcid());
        assert_eq!(
            s.client.to_vec(),
            hex("c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea")
        );
        assert_eq!(
            s.server.to_vec(),
            hex("3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b")
        );
        assert_eq!(
            kih(&s.client, "quic"),
            (
                hex("1f369613dd76d5467730efcbe3b1a22d"),
                hex("fa044b2f42a3fd3b46fb255c"),
                hex("9f50449e04a0e810283a1e9933adedd2")
            )
        );
        assert_eq!(
            kih(&s.server, "quic"),
            (
                hex("cf3a5331653c364c88f0f379b6067e37"),
                hex("0ac1493ca1905853b0bba03e"),
                hex("c206b8d9b9f0f37644430b490eeaa314")
            )
        );
    }

    // RFC 9369 Appendix A.1
    #[test]
    fn rfc9369_a1_keys() {
        let s = initial_secrets(VERSION_2, &rfc_dcid());
        assert_eq!(
            s.client.to_vec(),
            hex("14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b")
        );
        assert_eq!(
            s.server.to_vec(),
            hex("0263db1782731bf4588e7e4d93b7463907cb8cd8200b5da55a8bd488eafc37c1")
        );
        assert_eq!(
            kih(&s.client, "quicv2"),
            (
                hex("8b1a0bc121284290a29e0971b5cd045d"),
                hex("91f73e2351d8fa91660e909f"),
                hex("45b95e15235d6f45a6b19cbcb0294ba9")
            )
        );
    }

    /// rustls's `Keys::initial` must use the same key/iv/hp as our secrets: seal with
    /// rustls, seal with ring from our derived key, compare; same for the header mask.
    #[test]
    fn rustls_initial_keys_match_our_secrets() {
        use ring::aead;
        for version in [VERSION_1, VERSION_2] {
            let label = if version == VERSION_2 {
                "quicv2"
            } else {
                "quic"
            };
            let secrets = initial_secrets(version, &rfc_dcid());
            for side in [Side::Client, Side::Server] {
                let keys = initial_keys(version, &rfc_dcid(), side);
                let (local, remote) = match side {
                    Side::Client => (secrets.client, secrets.server),
                    Side::Server => (secrets.server, secrets.client),
                };
                for (dk, secret) in [(&keys.local, local), (&keys.remote, remote)] {
                    let (k, iv, hp) = kih(&secret, label);
                    let pn = 0x1234_5678u64;
                    let header = b"header bytes";
                    let mut a = b"some payload".to_vec();
                    let tag_a = dk.packet.encrypt_in_place(pn, header, &mut a).unwrap();
                    let mut nonce = [0u8; 12];
                    nonce.copy_from_slice(&iv);
                    for (n, p) in nonce[4..].iter_mut().zip(pn.to_be_bytes()) {
                        *n ^= p;
                    }
                    let key = aead::LessSafeKey::new(
                        aead::UnboundKey::new(&aead::AES_128_GCM, &k).unwrap(),
                    );
                    let mut b = b"some payload".to_vec();
                    let tag_b = key
                        .seal_in_place_separate_tag(
                            aead::Nonce::assume_unique_for_key(nonce),
                            aead::Aad::from(header),
                            &mut b,
                        )
                        .unwrap();
                    assert_eq!((a, tag_a.as_ref()), (b, tag_b.as_ref()));

                    let sample = [7u8; 16];
                    let hpk =
                        aead::quic::HeaderProtectionKey::new(&aead::quic::AES_128, &hp).unwrap();
                    let mask = hpk.new_mask(&sample).unwrap();
                    let mut first = 0xc3u8;
                    let mut pn_bytes = [0u8; 4];
                    dk.header
                        .encrypt_in_place(&sample, &mut first, &mut pn_bytes)
                        .unwrap();
                    assert_eq!(first, 0xc3 ^ (mask[0] & 0x0f));
                    assert_eq!(pn_bytes[..], mask[1..5]);
                }
            }
        }
    }

    /// The fast check agrees with opening through rustls's keys: on genuine client
    /// Initials of both versions (sealed with rustls's client keys), on the same with
    /// one bit flipped anywhere, and on random junk.
    #[test]
    fn fast_initial_check_matches_rustls() {
        use crate::rng::DetRng;
        let mut rng = DetRng::new(5);
        let mut accepted = 0;
        for version in [VERSION_1, VERSION_2] {
            for i in 0..200u64 {
                let mut dcid = [0u8; 8];
                rng.fill(&mut dcid);
                let dcid = ConnectionId::new(&dcid).unwrap();
                // Long header: first byte, version, DCID, SCID (0), token (0), Length.
                let mut pkt = vec![0xc1u8];
                pkt.extend_from_slice(&version.to_be_bytes());
                pkt.push(8);
                pkt.extend_from_slice(dcid.as_bytes());
                pkt.extend_from_slice(&[0, 0]);
                let payload_len = 1150usize;
                pkt.extend_from_slice(&(0x4000u16 | (payload_len + 2) as u16).to_be_bytes());
                let pn_offset = pkt.len();
                pkt.extend_from_slice(&(i as u16).to_be_bytes());
                let mut body = vec![0u8; payload_len - 16]; // PADDING, tag appended
                body[0] = 0x01; // PING
                let keys = initial_keys(version, &dcid, Side::Client);
                let tag = keys
                    .local
                    .packet
                    .encrypt_in_place(i, &pkt, &mut body)
                    .unwrap();
                pkt.extend_from_slice(&body);
                pkt.extend_from_slice(tag.as_ref());
                let (head, rest) = pkt.split_at_mut(pn_offset);
                let (pn_bytes, sample_area) = rest.split_at_mut(2);
                keys.local
                    .header
                    .encrypt_in_place(&sample_area[2..18], &mut head[0], pn_bytes)
                    .unwrap();
                let check = |p: &[u8]| {
                    let fast = is_valid_client_initial(version, &dcid, p, pn_offset);
                    assert_eq!(
                        fast,
                        is_valid_client_initial_rustls(version, &dcid, p, pn_offset)
                    );
                    fast
                };
                assert!(check(&pkt), "genuine Initial {i} of version {version:#x}");
                accepted += 1;
                let mut bad = pkt.clone();
                let bit = (rng.next_u64() % (bad.len() as u64 * 8)) as usize;
                bad[bit / 8] ^= 1 << (bit % 8);
                check(&bad);
                let mut junk = pkt.clone();
                rng.fill(&mut junk[pn_offset..]);
                assert!(!check(&junk));
                assert!(!check(&pkt[..pn_offset + 10]), "too short for a sample");
            }
        }
        assert_eq!(accepted, 400);
    }
}
