//! Checksum packet protection: a simulator-only stand-in for the AEAD and header
//! protection of RFC 9001 §5.3-5.4 (`PacketProtection::Checksum`). Not interoperable
//! and not secure: the payload stays plaintext and the 16-byte tag is a keyed
//! non-cryptographic hash ([`super::checksum_hash`]). What depends on protection keeps
//! working as with the real keys:
//!
//! - Each wrapper is keyed by a fingerprint of the real key it replaces, taken with ONE
//!   real operation on a fixed probe at construction. Both endpoints derive the same key
//!   for a direction, so their fingerprints match; another key (key phase, Initial keys
//!   of another DCID, 0-RTT vs 1-RTT, another QUIC version) gives another fingerprint,
//!   so a packet opened with the wrong key fails (`rustls::Error::DecryptError`, what
//!   the AEAD returns): drops, stateless reset checks, key-update trial decryption and
//!   integrity-limit counting behave as they do with AES-GCM / ChaCha20-Poly1305.
//! - The tag covers the fingerprint, the path ID (multipath nonce), the packet number,
//!   the header (the AEAD's associated data) and the payload; any single bit flip in
//!   them changes it (so a corrupted datagram is still dropped).
//! - Header protection masks the same bits as RFC 9001 §5.4.1 with a mask hashed from
//!   the header key's fingerprint and the sample.
//! - Tag length, confidentiality and integrity limits are the real key's.

use super::checksum_hash::{chain, finish, tag};
use super::header_mask::{MaskSource, MaskedHeaderKey};
use crate::config::PacketProtection;
use rustls::quic::{DirectionalKeys, HeaderProtectionKey, Keys, PacketKey, PacketKeySet, Tag};

/// The tag length every QUIC AEAD has (and `rustls::quic::Tag` holds).
const TAG_LEN: usize = super::TAG_LEN;
/// The fixed probe each packet key seals once for its fingerprint.
const PROBE_PN: u64 = 0x5155_4943_4C41_4221;
const PROBE_HEADER: &[u8] = b"quiclab checksum probe";
/// What the tag hashes for a packet without a path ID (no u32 path ID is this).
const NO_PATH: u64 = u64::MAX;

/// A packet key of `protection`: `inner` itself for AEAD, else its checksum wrapper.
pub fn packet_key(protection: PacketProtection, inner: Box<dyn PacketKey>) -> Box<dyn PacketKey> {
    match protection {
        PacketProtection::Aead => inner,
        PacketProtection::Checksum => match ChecksumPacketKey::new(inner.as_ref()) {
            Some(k) => Box::new(k),
            // The real key could not seal 16 bytes or has another tag length: keep it.
            None => inner,
        },
    }
}

/// A header protection key of `protection` (see [`packet_key`]).
pub fn header_key(
    protection: PacketProtection,
    inner: Box<dyn HeaderProtectionKey>,
) -> Box<dyn HeaderProtectionKey> {
    match protection {
        PacketProtection::Aead => inner,
        PacketProtection::Checksum => match ChecksumHeaderKey::new(inner.as_ref()) {
            Some(k) => Box::new(MaskedHeaderKey(k)),
            None => inner,
        },
    }
}

/// One direction's keys of `protection`.
pub fn directional(protection: PacketProtection, keys: DirectionalKeys) -> DirectionalKeys {
    DirectionalKeys {
        header: header_key(protection, keys.header),
        packet: packet_key(protection, keys.packet),
    }
}

/// Both directions' keys of `protection`.
pub fn keys(protection: PacketProtection, keys: Keys) -> Keys {
    Keys {
        local: directional(protection, keys.local),
        remote: directional(protection, keys.remote),
    }
}

/// A key phase's packet keys of `protection` (RFC 9001 §6: header keys do not change).
pub fn packet_key_set(protection: PacketProtection, set: PacketKeySet) -> PacketKeySet {
    PacketKeySet {
        local: packet_key(protection, set.local),
        remote: packet_key(protection, set.remote),
    }
}

/// A fingerprint's 32 bytes as the hash's four lane seeds.
fn seeds(fp: &[u8; 32]) -> [u64; 4] {
    let mut s = [0u64; 4];
    for (s, w) in s.iter_mut().zip(fp.chunks_exact(8)) {
        *s = u64::from_le_bytes(w.try_into().expect("8 bytes"));
    }
    s
}

/// Packet protection by checksum (module docs).
struct ChecksumPacketKey {
    seeds: [u64; 4],
    confidentiality_limit: u64,
    integrity_limit: u64,
}

impl ChecksumPacketKey {
    /// Fingerprints `inner` by sealing 16 zero bytes under a fixed packet number and
    /// header: ciphertext and tag, 32 bytes. `None` if it cannot.
    fn new(inner: &dyn PacketKey) -> Option<Self> {
        if inner.tag_len() != TAG_LEN {
            return None;
        }
        let mut fp = [0u8; 32];
        let t = inner
            .encrypt_in_place(PROBE_PN, PROBE_HEADER, &mut fp[..16])
            .ok()?;
        fp[16..].copy_from_slice(t.as_ref().get(..TAG_LEN)?);
        Some(ChecksumPacketKey {
            seeds: seeds(&fp),
            confidentiality_limit: inner.confidentiality_limit(),
            integrity_limit: inner.integrity_limit(),
        })
    }

    /// The tag of a packet: the AEAD's inputs (nonce parts, associated data, payload).
    /// The packet number, path and payload length seed the header's chain (a bijection
    /// of its seed), so a change in any of them changes the associated-data word.
    fn tag(&self, path: u64, pn: u64, header: &[u8], payload: &[u8]) -> [u8; TAG_LEN] {
        let mut fixed = [0u8; 24];
        fixed[..8].copy_from_slice(&pn.to_le_bytes());
        fixed[8..16].copy_from_slice(&path.to_le_bytes());
        fixed[16..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        let assoc = chain(chain(self.seeds[0] ^ self.seeds[3], &fixed), header);
        tag(self.seeds, assoc, payload)
    }

    fn seal(&self, path: u64, pn: u64, header: &[u8], payload: &[u8]) -> Tag {
        Tag::from(&self.tag(path, pn, header, payload)[..])
    }

    /// RFC 9001 §5.3's open, with the checksum: the payload without its tag, or the
    /// AEAD's error when the tag does not match.
    fn open<'a>(
        &self,
        path: u64,
        pn: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        let plain_len = payload
            .len()
            .checked_sub(TAG_LEN)
            .ok_or(rustls::Error::DecryptError)?;
        let (plain, received) = payload.split_at(plain_len);
        if self.tag(path, pn, header, plain) != received {
            return Err(rustls::Error::DecryptError);
        }
        Ok(&payload[..plain_len])
    }
}

impl PacketKey for ChecksumPacketKey {
    fn encrypt_in_place(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        Ok(self.seal(NO_PATH, packet_number, header, payload))
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        self.open(NO_PATH, packet_number, header, payload)
    }

    /// draft-ietf-quic-multipath §2.4: the path ID is part of the nonce, here of the tag.
    fn encrypt_in_place_for_path(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        Ok(self.seal(u64::from(path_id), packet_number, header, payload))
    }

    fn decrypt_in_place_for_path<'a>(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        self.open(u64::from(path_id), packet_number, header, payload)
    }

    fn tag_len(&self) -> usize {
        TAG_LEN
    }

    fn confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
    }

    fn integrity_limit(&self) -> u64 {
        self.integrity_limit
    }
}

/// Header protection by checksum (module docs).
struct ChecksumHeaderKey {
    seeds: [u64; 2],
    sample_len: usize,
}

/// The fixed samples whose real masks fingerprint a header key.
const HP_PROBES: [[u8; 16]; 2] = [[0x00; 16], [0xA5; 16]];

impl ChecksumHeaderKey {
    /// Fingerprints `inner` by masking a zero short header (first byte 0x03: 5 masked
    /// bits, a 4-byte packet number) with each probe sample: 37 mask bits each.
    fn new(inner: &dyn HeaderProtectionKey) -> Option<Self> {
        let sample_len = inner.sample_len();
        let mut seeds = [0u64; 2];
        for (seed, probe) in seeds.iter_mut().zip(HP_PROBES) {
            let mut first = 0x03u8;
            let mut pn = [0u8; 4];
            inner
                .encrypt_in_place(probe.get(..sample_len)?, &mut first, &mut pn)
                .ok()?;
            let mut w = [0u8; 8];
            w[0] = first;
            w[1..5].copy_from_slice(&pn);
            *seed = u64::from_le_bytes(w);
        }
        Some(ChecksumHeaderKey { seeds, sample_len })
    }
}

/// RFC 9001 §5.4.1's masking as the ring key does it (`header_mask`), with a hashed
/// 5-byte mask.
impl MaskSource for ChecksumHeaderKey {
    fn mask(&self, sample: &[u8]) -> Result<[u8; 5], rustls::Error> {
        if sample.len() != self.sample_len {
            return Err(rustls::Error::General("sample of invalid length".into()));
        }
        let m = finish(chain(self.seeds[0], sample) ^ self.seeds[1]).to_le_bytes();
        Ok([m[0], m[1], m[2], m[3], m[4]])
    }

    fn sample_len(&self) -> usize {
        self.sample_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::initial_keys;
    use crate::crypto::initial::tests::rfc_dcid;
    use crate::crypto::protect::{decrypt_payload, seal, unprotect_header};
    use crate::wire::{ConnectionId, Side, VERSION_1};

    const CK: PacketProtection = PacketProtection::Checksum;

    /// The client's and server's Initial keys for `dcid` (real AES-128-GCM keys), the
    /// client's sending keys and the server's receiving keys of one direction.
    fn pair(dcid: &ConnectionId) -> (Keys, Keys) {
        (
            initial_keys(VERSION_1, dcid, Side::Client),
            initial_keys(VERSION_1, dcid, Side::Server),
        )
    }

    /// A short-header packet (1-byte DCID, 2-byte packet number) with `payload` and tag
    /// space, sealed with `keys`; the header is 4 bytes.
    fn sealed(keys: &DirectionalKeys, pn: u64, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x41, 0xAB, (pn >> 8) as u8, pn as u8];
        p.extend_from_slice(payload);
        p.extend_from_slice(&[0; 16]);
        seal(keys.packet.as_ref(), keys.header.as_ref(), &mut p, 2, pn).unwrap();
        p
    }

    /// Removes header protection and opens `packet` with `keys`: the payload, or `None`.
    fn opened(keys: &DirectionalKeys, mut packet: Vec<u8>, pn: u64) -> Option<Vec<u8>> {
        let h = unprotect_header(keys.header.as_ref(), &mut packet, 2).ok()?;
        let full_pn = (pn & !0xffff) | h.truncated_pn;
        let range = decrypt_payload(keys.packet.as_ref(), &mut packet, 2 + h.pn_len, full_pn);
        Some(packet[range.ok()?].to_vec())
    }

    fn payload() -> Vec<u8> {
        (0..83u8).map(|i| i.wrapping_mul(7)).collect()
    }

    #[test]
    fn round_trip_leaves_the_payload_plaintext() {
        let (c, s) = pair(&rfc_dcid());
        let (c, s) = (keys(CK, c), keys(CK, s));
        let p = sealed(&c.local, 0x1234, &payload());
        assert_eq!(&p[4..4 + 83], &payload()[..], "plaintext on the wire");
        assert_eq!(opened(&s.remote, p, 0x1234), Some(payload()));
    }

    #[test]
    fn any_single_bit_flip_fails_to_open() {
        let (c, s) = pair(&rfc_dcid());
        let (c, s) = (keys(CK, c), keys(CK, s));
        let p = sealed(&c.local, 7, &payload());
        for bit in 0..p.len() * 8 {
            let mut q = p.clone();
            q[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(opened(&s.remote, q, 7), None, "bit {bit}");
        }
        // The packet key alone: header (associated data), payload and tag.
        let header = [0x41, 0xAB, 0x00, 0x07];
        let mut body = payload();
        let tag = c
            .local
            .packet
            .encrypt_in_place(7, &header, &mut body)
            .unwrap();
        body.extend_from_slice(tag.as_ref());
        for bit in 0..(header.len() + body.len()) * 8 {
            let (mut h, mut b) = (header, body.clone());
            let (i, m) = (bit / 8, 1u8 << (bit % 8));
            if i < h.len() {
                h[i] ^= m;
            } else {
                b[i - h.len()] ^= m;
            }
            let r = s.remote.packet.decrypt_in_place(7, &h, &mut b);
            assert!(matches!(r, Err(rustls::Error::DecryptError)), "bit {bit}");
        }
        let mut b = body.clone();
        assert_eq!(
            s.remote
                .packet
                .decrypt_in_place(7, &header, &mut b)
                .unwrap(),
            &payload()[..]
        );
    }

    #[test]
    fn wrong_packet_number_path_or_key_fails() {
        let (c, s) = pair(&rfc_dcid());
        let other = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let (_, s_other) = pair(&other);
        let (c, s, s_other) = (keys(CK, c), keys(CK, s), keys(CK, s_other));
        let seal_with = |k: &dyn PacketKey, path: Option<u32>, pn: u64| {
            let mut b = payload();
            let t = match path {
                None => k.encrypt_in_place(pn, b"hdr", &mut b),
                Some(p) => k.encrypt_in_place_for_path(p, pn, b"hdr", &mut b),
            };
            b.extend_from_slice(t.unwrap().as_ref());
            b
        };
        let open_with = |k: &dyn PacketKey, path: Option<u32>, pn: u64, mut b: Vec<u8>| {
            match path {
                None => k.decrypt_in_place(pn, b"hdr", &mut b).map(|p| p.to_vec()),
                Some(p) => k
                    .decrypt_in_place_for_path(p, pn, b"hdr", &mut b)
                    .map(|p| p.to_vec()),
            }
            .ok()
        };
        let sent = seal_with(c.local.packet.as_ref(), None, 9);
        let remote = s.remote.packet.as_ref();
        assert_eq!(open_with(remote, None, 9, sent.clone()), Some(payload()));
        assert_eq!(
            open_with(remote, None, 10, sent.clone()),
            None,
            "packet number"
        );
        assert_eq!(
            open_with(remote, Some(0), 9, sent.clone()),
            None,
            "with a path"
        );
        let other = s_other.remote.packet.as_ref();
        assert_eq!(
            open_with(other, None, 9, sent.clone()),
            None,
            "another DCID's key"
        );
        // The other direction's key (the server's own sending key).
        let own = s.local.packet.as_ref();
        assert_eq!(open_with(own, None, 9, sent), None, "another direction");
        // Multipath: the path ID is part of what the tag covers.
        let on_1 = seal_with(c.local.packet.as_ref(), Some(1), 9);
        assert_eq!(open_with(remote, Some(1), 9, on_1.clone()), Some(payload()));
        assert_eq!(open_with(remote, Some(2), 9, on_1.clone()), None, "path");
        assert_eq!(open_with(remote, None, 9, on_1), None, "no path");
    }

    #[test]
    fn real_and_checksum_keys_do_not_open_each_others_packets() {
        let dcid = rfc_dcid();
        let (c_real, s_real) = pair(&dcid);
        let (c_ck, s_ck) = pair(&dcid);
        let (c_ck, s_ck) = (keys(CK, c_ck), keys(CK, s_ck));
        let real = sealed(&c_real.local, 3, &payload());
        let ck = sealed(&c_ck.local, 3, &payload());
        assert_eq!(opened(&s_real.remote, real.clone(), 3), Some(payload()));
        assert_eq!(opened(&s_ck.remote, real, 3), None, "checksum opening AEAD");
        assert_eq!(opened(&s_real.remote, ck, 3), None, "AEAD opening checksum");
    }

    #[test]
    fn aead_keeps_the_real_key_and_checksum_its_limits() {
        let (c, _) = pair(&rfc_dcid());
        let (limit_c, limit_i) = (
            c.local.packet.confidentiality_limit(),
            c.local.packet.integrity_limit(),
        );
        let real = sealed(&c.local, 1, &payload());
        let (c2, _) = pair(&rfc_dcid());
        let aead = keys(PacketProtection::Aead, c2);
        assert_eq!(sealed(&aead.local, 1, &payload()), real);
        let ck = keys(CK, pair(&rfc_dcid()).0);
        let k = ck.local.packet.as_ref();
        assert_eq!(
            (k.confidentiality_limit(), k.integrity_limit()),
            (limit_c, limit_i)
        );
        assert_eq!((k.tag_len(), ck.local.header.sample_len()), (16, 16));
    }

    #[test]
    fn header_protection_masks_only_the_rfc_bits_and_round_trips() {
        let (c, s) = pair(&rfc_dcid());
        let (c, s) = (keys(CK, c), keys(CK, s));
        let (mut seen_first, mut seen_pn) = (0u8, [0u8; 4]);
        for i in 0..64u8 {
            let sample = [i.wrapping_mul(37); 16];
            for (first, bits) in [(0xC3u8, 0x0fu8), (0x43, 0x1f)] {
                let (mut f, mut pn) = (first, [0x11, 0x22, 0x33, 0x44]);
                c.local
                    .header
                    .encrypt_in_place(&sample, &mut f, &mut pn)
                    .unwrap();
                assert_eq!(
                    f & !bits,
                    first & !bits,
                    "only the low bits of the first byte"
                );
                seen_first |= f ^ first;
                for (seen, (a, b)) in seen_pn
                    .iter_mut()
                    .zip(pn.iter().zip([0x11, 0x22, 0x33, 0x44]))
                {
                    *seen |= a ^ b;
                }
                s.remote
                    .header
                    .decrypt_in_place(&sample, &mut f, &mut pn)
                    .unwrap();
                assert_eq!((f, pn), (first, [0x11, 0x22, 0x33, 0x44]), "round trip");
            }
        }
        assert_eq!(
            seen_first, 0x1f,
            "every maskable first-byte bit is masked sometimes"
        );
        assert_eq!(
            seen_pn, [0xff; 4],
            "every packet number bit is masked sometimes"
        );
        // A 1-byte packet number (first byte's low bits 0 before masking): one byte masked.
        let (mut f, mut pn) = (0x40u8, [0u8; 4]);
        c.local
            .header
            .encrypt_in_place(&[9; 16], &mut f, &mut pn)
            .unwrap();
        assert_eq!(pn[1..], [0, 0, 0]);
        // Another header key's mask differs.
        let other = keys(CK, pair(&ConnectionId::new(&[9; 8]).unwrap()).0);
        let (mut f2, mut pn2) = (0x40u8, [0u8; 4]);
        other
            .local
            .header
            .encrypt_in_place(&[9; 16], &mut f2, &mut pn2)
            .unwrap();
        assert_ne!((f, pn[0]), (f2, pn2[0]));
        // Bad inputs: typed errors, nothing changed.
        let (mut f, mut pn) = (0x43u8, [0u8; 5]);
        assert!(c
            .local
            .header
            .encrypt_in_place(&[0; 15], &mut f, &mut pn[..4])
            .is_err());
        assert!(c
            .local
            .header
            .encrypt_in_place(&[0; 16], &mut f, &mut pn)
            .is_err());
        assert_eq!((f, pn), (0x43, [0; 5]));
    }
}
