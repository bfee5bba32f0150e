//! Packet and header protection (RFC 9001 §5.3-5.4), in place.
//!
//! Every length is checked before slicing: these functions run on packets from the
//! network and return a [`CryptoError`] (the packet is dropped) instead of panicking.

use super::CryptoError;
use crate::wire::PathId;
use rustls::quic::{HeaderProtectionKey, PacketKey};
use std::ops::Range;

/// RFC 9001 §5.4.2: the sample starts 4 bytes after the start of the Packet Number field.
const SAMPLE_OFFSET: usize = 4;
/// Sample length of every QUIC header protection algorithm (RFC 9001 §5.4.3-5.4.4).
const MAX_SAMPLE_LEN: usize = 16;

/// Encrypts and header-protects one packet in place.
///
/// `packet` holds the unprotected header (whose low first-byte bits give the packet
/// number length, the packet number at `pn_offset`), the plaintext payload, and
/// `packet_key.tag_len()` spare bytes at the end for the tag. The caller must have padded
/// the payload so that a 16-byte sample exists 4 bytes after `pn_offset` (RFC 9001 §5.4.2).
pub fn seal(
    packet_key: &dyn PacketKey,
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
    pn: u64,
) -> Result<(), CryptoError> {
    seal_on_path(packet_key, header_key, packet, pn_offset, pn, None)
}

/// [`seal`] with the AEAD nonce of a multipath 1-RTT packet when `path` is `Some`
/// (draft-ietf-quic-multipath §2.4: the path ID joins the packet number); `None` is
/// RFC 9001 §5.3's nonce.
pub fn seal_on_path(
    packet_key: &dyn PacketKey,
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
    pn: u64,
    path: Option<PathId>,
) -> Result<(), CryptoError> {
    let first = *packet.first().ok_or(CryptoError::TooShort)?;
    // RFC 9000 §17.2: the two low bits of the first byte are the packet number length - 1.
    let pn_len = usize::from(first & 0x03) + 1;
    let tag_len = packet_key.tag_len();
    let payload_start = pn_offset.checked_add(pn_len).ok_or(CryptoError::TooShort)?;
    let payload_end = packet
        .len()
        .checked_sub(tag_len)
        .ok_or(CryptoError::TooShort)?;
    if pn_offset == 0 || payload_start > payload_end {
        return Err(CryptoError::TooShort);
    }
    sample_range(header_key, pn_offset, packet.len())?;

    // RFC 9001 §5.3: the header up to and including the packet number is the AAD.
    let (header, rest) = packet.split_at_mut(payload_start);
    let (payload, tag_space) = rest.split_at_mut(payload_end - payload_start);
    let tag = match path {
        None => packet_key.encrypt_in_place(pn, header, payload),
        Some(p) => packet_key.encrypt_in_place_for_path(p.0, pn, header, payload),
    }
    .map_err(|_| CryptoError::EncryptFailed)?;
    if tag.as_ref().len() != tag_space.len() {
        return Err(CryptoError::EncryptFailed);
    }
    tag_space.copy_from_slice(tag.as_ref());

    // RFC 9001 §5.4.1: mask the first byte and the packet number with the sample.
    apply_header_protection(header_key, packet, pn_offset, pn_len, true)
        .map_err(|_| CryptoError::EncryptFailed)
}

/// What header-protection removal reveals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnprotectedHeader {
    /// The first byte with protection removed (key phase, pn length bits visible).
    pub first_byte: u8,
    /// Packet number length in bytes (1-4).
    pub pn_len: usize,
    /// The truncated packet number as sent.
    pub truncated_pn: u64,
}

/// Removes header protection in place (RFC 9001 §5.4.1). `packet` is exactly one packet.
///
/// The long-header bit of the first byte selects how many first-byte bits are unmasked
/// (4 for long headers, 5 for short ones). Fails with [`CryptoError::TooShort`] when the
/// packet does not hold a full sample at `pn_offset + 4` (RFC 9001 §5.4.2).
pub fn unprotect_header(
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
) -> Result<UnprotectedHeader, CryptoError> {
    if pn_offset == 0 {
        return Err(CryptoError::TooShort);
    }
    sample_range(header_key, pn_offset, packet.len())?;
    // The packet number length is not known until the first byte is unmasked: offer
    // all 4 possible bytes (they exist, the sample lies after them); only `pn_len` change.
    apply_header_protection(header_key, packet, pn_offset, 4, false)
        .map_err(|_| CryptoError::TooShort)?;
    let first_byte = packet[0];
    let pn_len = usize::from(first_byte & 0x03) + 1;
    let truncated_pn = packet[pn_offset..pn_offset + pn_len]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    Ok(UnprotectedHeader {
        first_byte,
        pn_len,
        truncated_pn,
    })
}

/// Decrypts the payload in place after [`unprotect_header`]; `header_len` is
/// `pn_offset + pn_len`. Returns the plaintext's range within `packet`.
pub fn decrypt_payload(
    packet_key: &dyn PacketKey,
    packet: &mut [u8],
    header_len: usize,
    pn: u64,
) -> Result<Range<usize>, CryptoError> {
    decrypt_payload_on_path(packet_key, packet, header_len, pn, None)
}

/// [`decrypt_payload`] with the multipath nonce of `path` when `Some`
/// (draft-ietf-quic-multipath §2.4).
pub fn decrypt_payload_on_path(
    packet_key: &dyn PacketKey,
    packet: &mut [u8],
    header_len: usize,
    pn: u64,
    path: Option<PathId>,
) -> Result<Range<usize>, CryptoError> {
    let payload_len = packet
        .len()
        .checked_sub(header_len)
        .ok_or(CryptoError::TooShort)?;
    if payload_len < packet_key.tag_len() {
        return Err(CryptoError::TooShort);
    }
    // RFC 9001 §5.3: AEAD open with the unprotected header as associated data.
    let (header, payload) = packet.split_at_mut(header_len);
    let plain_len = match path {
        None => packet_key.decrypt_in_place(pn, header, payload),
        Some(p) => packet_key.decrypt_in_place_for_path(p.0, pn, header, payload),
    }
    .map_err(|_| CryptoError::DecryptFailed)?
    .len();
    Ok(header_len..header_len + plain_len)
}

/// Where the header protection sample lies (RFC 9001 §5.4.2), if the packet holds it.
fn sample_range(
    header_key: &dyn HeaderProtectionKey,
    pn_offset: usize,
    packet_len: usize,
) -> Result<Range<usize>, CryptoError> {
    let sample_len = header_key.sample_len();
    if sample_len > MAX_SAMPLE_LEN {
        return Err(CryptoError::TooShort);
    }
    let start = pn_offset
        .checked_add(SAMPLE_OFFSET)
        .ok_or(CryptoError::TooShort)?;
    let end = start.checked_add(sample_len).ok_or(CryptoError::TooShort)?;
    if end > packet_len {
        return Err(CryptoError::TooShort);
    }
    Ok(start..end)
}

/// Masks (`protect`) or unmasks the first byte and `pn_field_len` packet number bytes
/// (RFC 9001 §5.4.1). The caller has checked `0 < pn_offset` and the sample range.
fn apply_header_protection(
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
    pn_field_len: usize,
    protect: bool,
) -> Result<(), CryptoError> {
    let range = sample_range(header_key, pn_offset, packet.len())?;
    let mut sample = [0u8; MAX_SAMPLE_LEN];
    let sample = &mut sample[..range.len()];
    sample.copy_from_slice(&packet[range]);
    let (first, rest) = packet.split_first_mut().ok_or(CryptoError::TooShort)?;
    let pn_field = rest
        .get_mut(pn_offset - 1..pn_offset - 1 + pn_field_len)
        .ok_or(CryptoError::TooShort)?;
    let result = if protect {
        header_key.encrypt_in_place(sample, first, pn_field)
    } else {
        header_key.decrypt_in_place(sample, first, pn_field)
    };
    result.map_err(|_| CryptoError::TooShort)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::tests::{hex, rfc_dcid};
    use crate::crypto::initial::{expand_label, initial_keys, prk};
    use crate::wire::{Side, VERSION_1, VERSION_2};

    const A2_CRYPTO: &str = "060040f1010000ed0303ebf8fa56f129 39b9584a3896472ec40bb863cfd3e868
        04fe3a47f06a2b69484c000004130113 02010000c000000010000e00000b6578
        616d706c652e636f6dff01000100000a 00080006001d00170018001000070005
        04616c706e0005000501000000000033 00260024001d00209370b2c9caa47fba
        baf4559fedba753de171fa71f50f1ce1 5d43e994ec74d748002b000302030400
        0d0010000e0403050306030203080408 050806002d00020101001c0002400100
        3900320408ffffffffffffffff050480 00ffff07048000ffff08011001048000
        75300901100f088394c8f03e51570806 048000ffff";

    const A2_PROTECTED: &str = "
        c000000001088394c8f03e5157080000 449e7b9aec34d1b1c98dd7689fb8ec11
        d242b123dc9bd8bab936b47d92ec356c 0bab7df5976d27cd449f63300099f399
        1c260ec4c60d17b31f8429157bb35a12 82a643a8d2262cad67500cadb8e7378c
        8eb7539ec4d4905fed1bee1fc8aafba1 7c750e2c7ace01e6005f80fcb7df6212
        30c83711b39343fa028cea7f7fb5ff89 eac2308249a02252155e2347b63d58c5
        457afd84d05dfffdb20392844ae81215 4682e9cf012f9021a6f0be17ddd0c208
        4dce25ff9b06cde535d0f920a2db1bf3 62c23e596d11a4f5a6cf3948838a3aec
        4e15daf8500a6ef69ec4e3feb6b1d98e 610ac8b7ec3faf6ad760b7bad1db4ba3
        485e8a94dc250ae3fdb41ed15fb6a8e5 eba0fc3dd60bc8e30c5c4287e53805db
        059ae0648db2f64264ed5e39be2e20d8 2df566da8dd5998ccabdae053060ae6c
        7b4378e846d29f37ed7b4ea9ec5d82e7 961b7f25a9323851f681d582363aa5f8
        9937f5a67258bf63ad6f1a0b1d96dbd4 faddfcefc5266ba6611722395c906556
        be52afe3f565636ad1b17d508b73d874 3eeb524be22b3dcbc2c7468d54119c74
        68449a13d8e3b95811a198f3491de3e7 fe942b330407abf82a4ed7c1b311663a
        c69890f4157015853d91e923037c227a 33cdd5ec281ca3f79c44546b9d90ca00
        f064c99e3dd97911d39fe9c5d0b23a22 9a234cb36186c4819e8b9c5927726632
        291d6a418211cc2962e20fe47feb3edf 330f2c603a9d48c0fcb5699dbfe58964
        25c5bac4aee82e57a85aaf4e2513e4f0 5796b07ba2ee47d80506f8d2c25e50fd
        14de71e6c418559302f939b0e1abd576 f279c4b2e0feb85c1f28ff18f58891ff
        ef132eef2fa09346aee33c28eb130ff2 8f5b766953334113211996d20011a198
        e3fc433f9f2541010ae17c1bf202580f 6047472fb36857fe843b19f5984009dd
        c324044e847a4f4a0ab34f719595de37 252d6235365e9b84392b061085349d73
        203a4a13e96f5432ec0fd4a1ee65accd d5e3904df54c1da510b0ff20dcc0c77f
        cb2c0e0eb605cb0504db87632cf3d8b4 dae6e705769d1de354270123cb11450e
        fc60ac47683d7b8d0f811365565fd98c 4c8eb936bcab8d069fc33bd801b03ade
        a2e1fbc5aa463d08ca19896d2bf59a07 1b851e6c239052172f296bfb5e724047
        90a2181014f3b94a4e97d117b4381303 68cc39dbb2d198065ae3986547926cd2
        162f40a29f0c3c8745c0f50fba3852e5 66d44575c29d39a03f0cda721984b6f4
        40591f355e12d439ff150aab7613499d bd49adabc8676eef023b15b65bfc5ca0
        6948109f23f350db82123535eb8a7433 bdabcb909271a6ecbcb58b936a88cd4e
        8f2e6ff5800175f113253d8fa9ca8885 c2f552e657dc603f252e1a8e308f76f0
        be79e2fb8f5d5fbbe2e30ecadd220723 c8c0aea8078cdfcb3868263ff8f09400
        54da48781893a7e49ad5aff4af300cd8 04a6b6279ab3ff3afb64491c85194aab
        760d58a606654f9f4400e8b38591356f bf6425aca26dc85244259ff2b19c41b9
        f96f3ca9ec1dde434da7d2d392b905dd f3d1f9af93d1af5950bd493f5aa731b4
        056df31bd267b6b90a079831aaf579be 0a39013137aac6d404f518cfd4684064
        7e78bfe706ca4cf5e9c5453e9f7cfd2b 8b4c8d169a44e55c88d4a9a7f9474241
        e221af44860018ab0856972e194cd934";

    const A3_PAYLOAD: &str = "02000000000600405a020000560303ee fce7f7b37ba1d1632e96677825ddf739
        88cfc79825df566dc5430b9a045a1200 130100002e00330024001d00209d3c94
        0d89690b84d08a60993c144eca684d10 81287c834d5311bcf32bb9da1a002b00
        020304";

    const A3_PROTECTED: &str = "cf000000010008f067a5502a4262b500 4075c0d95a482cd0991cd25b0aac406a
        5816b6394100f37a1c69797554780bb3 8cc5a99f5ede4cf73c3ec2493a1839b3
        dbcba3f6ea46c5b7684df3548e7ddeb9 c3bf9c73cc3f3bded74b562bfb19fb84
        022f8ef4cdd93795d77d06edbb7aaf2f 58891850abbdca3d20398c276456cbc4
        2158407dd074ee";

    /// Seals `header || payload || tag space` and compares with `expected`, then opens it
    /// again with the peer's keys and checks header and payload come back.
    fn roundtrip(
        version: u32,
        sender: Side,
        header: &str,
        payload: &[u8],
        pn: u64,
        expected: &str,
    ) {
        let header = hex(header);
        let pn_offset = header.len() - (usize::from(header[0] & 3) + 1);
        let mut packet = header.clone();
        packet.extend_from_slice(payload);
        packet.extend_from_slice(&[0; 16]);
        let keys = initial_keys(version, &rfc_dcid(), sender);
        seal(
            keys.local.packet.as_ref(),
            keys.local.header.as_ref(),
            &mut packet,
            pn_offset,
            pn,
        )
        .unwrap();
        assert_eq!(packet, hex(expected));

        let peer = initial_keys(version, &rfc_dcid(), sender.peer());
        let h = unprotect_header(peer.remote.header.as_ref(), &mut packet, pn_offset).unwrap();
        assert_eq!(h.first_byte, header[0]);
        assert_eq!(h.truncated_pn, pn);
        assert_eq!(packet[..header.len()], header[..]);
        let range =
            decrypt_payload(peer.remote.packet.as_ref(), &mut packet, header.len(), pn).unwrap();
        assert_eq!(&packet[range], payload);
    }

    fn a2_payload() -> Vec<u8> {
        let mut p = hex(A2_CRYPTO);
        p.resize(1162, 0); // RFC 9001 A.2: PADDING to a 1162-byte payload
        p
    }

    // RFC 9001 Appendix A.2
    #[test]
    fn rfc9001_a2_client_initial() {
        roundtrip(
            VERSION_1,
            Side::Client,
            "c300000001088394c8f03e5157080000449e00000002",
            &a2_payload(),
            2,
            A2_PROTECTED,
        );
    }

    // RFC 9001 Appendix A.3
    #[test]
    fn rfc9001_a3_server_initial() {
        roundtrip(
            VERSION_1,
            Side::Server,
            "c1000000010008f067a5502a4262b50040750001",
            &hex(A3_PAYLOAD),
            1,
            A3_PROTECTED,
        );
    }

    // RFC 9369 Appendix A.3 (v2 server Initial)
    #[test]
    fn rfc9369_a3_server_initial() {
        roundtrip(
            VERSION_2,
            Side::Server,
            "d16b3343cf0008f067a5502a4262b50040750001",
            &hex(A3_PAYLOAD),
            1,
            "dc6b3343cf0008f067a5502a4262b500 4075d92faaf16f05d8a4398c47089698
             baeea26b91eb761d9b89237bbf872630 17915358230035f7fd3945d88965cf17
             f9af6e16886c61bfc703106fbaf3cb4c fa52382dd16a393e42757507698075b2
             c984c707f0a0812d8cd5a6881eaf21ce da98f4bd23f6fe1a3e2c43edd9ce7ca8
             4bed8521e2e140",
        );
    }

    /// Directional keys for a 32-byte-key suite from a traffic secret (RFC 9001 §5.1).
    fn chacha_keys(secret: &[u8]) -> rustls::quic::DirectionalKeys {
        use rustls::crypto::cipher::{AeadKey, Iv};
        let quic = rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256
            .tls13()
            .unwrap()
            .quic
            .unwrap();
        let p = prk(secret);
        let key: [u8; 32] = expand_label(&p, b"quic key");
        let iv: [u8; 12] = expand_label(&p, b"quic iv");
        let hp: [u8; 32] = expand_label(&p, b"quic hp");
        let ku: [u8; 32] = expand_label(&p, b"quic ku");
        assert_eq!(
            (key.to_vec(), iv.to_vec(), hp.to_vec(), ku.to_vec()),
            (
                hex("c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8"),
                hex("e0459b3474bdd0e44a41c144"),
                hex("25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4"),
                hex("1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9"),
            )
        );
        rustls::quic::DirectionalKeys {
            header: quic.header_protection_key(AeadKey::from(hp)),
            packet: quic.packet_key(AeadKey::from(key), Iv::new(iv)),
        }
    }

    // RFC 9001 Appendix A.5
    #[test]
    fn rfc9001_a5_chacha20_short_header() {
        let keys = chacha_keys(&hex(
            "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b",
        ));
        let pn = 654_360_564;
        let mut packet = hex("4200bff4");
        packet.push(0x01); // PING
        packet.extend_from_slice(&[0; 16]);
        seal(
            keys.packet.as_ref(),
            keys.header.as_ref(),
            &mut packet,
            1,
            pn,
        )
        .unwrap();
        assert_eq!(packet, hex("4cfe4189655e5cd55c41f69080575d7999c25a5bfb"));

        let h = unprotect_header(keys.header.as_ref(), &mut packet, 1).unwrap();
        assert_eq!((h.first_byte, h.pn_len, h.truncated_pn), (0x42, 3, 0xbff4));
        let r = decrypt_payload(keys.packet.as_ref(), &mut packet, 4, pn).unwrap();
        assert_eq!(&packet[r], &[0x01]);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let keys = initial_keys(VERSION_1, &rfc_dcid(), Side::Client);
        let (pk, hk) = (keys.local.packet.as_ref(), keys.local.header.as_ref());
        for len in 0..40 {
            for pn_offset in [0, 1, 5, 18, 39, usize::MAX - 2, usize::MAX] {
                let mut p = vec![0xc3; len];
                let _ = seal(pk, hk, &mut p, pn_offset, 1);
                let mut p = vec![0x43; len];
                let _ = unprotect_header(hk, &mut p, pn_offset);
                let mut p = vec![0x43; len];
                let _ = decrypt_payload(pk, &mut p, pn_offset, 1);
            }
        }
        let mut short = vec![0xc3; 20];
        assert_eq!(
            unprotect_header(hk, &mut short, 4),
            Err(CryptoError::TooShort)
        );
        // A flipped ciphertext bit fails authentication.
        let mut p = hex(A2_PROTECTED);
        let last = p.len() - 1;
        p[last] ^= 1;
        let server = initial_keys(VERSION_1, &rfc_dcid(), Side::Server);
        let h = unprotect_header(server.remote.header.as_ref(), &mut p, 18).unwrap();
        assert_eq!(
            decrypt_payload(server.remote.packet.as_ref(), &mut p, 18 + h.pn_len, 2),
            Err(CryptoError::DecryptFailed)
        );
    }
}
