//! Packet keys for a QUIC version other than the one a TLS session was created with
//! (compatible version negotiation, RFC 9368 §2.3).
//!
//! rustls fixes a session's QUIC version, and with it the labels of its packet-key
//! derivation ("quic key" or "quicv2 key", RFC 9369 §3.3.2), when the session is
//! created. A client whose connection a server moved to another compatible version
//! (v1 -> v2, or v2 -> v1) derives its Handshake and 1-RTT keys here instead:
//! [`SecretLog`] captures the session's TLS traffic secrets through rustls's key log,
//! and [`keys`] / [`one_rtt`] expand them with the version's labels (HKDF-Expand-Label
//! with the suite's hash, RFC 8446 §7.1, RFC 9001 §5.1), key updates included
//! ([`VersionSecrets`], RFC 9001 §6.1).
//!
//! The AEAD and header-protection keys are ring's, built here rather than through the
//! suite's `rustls::quic::Algorithm`: its `packet_key` takes an `AeadKey`, which
//! rustls's public API only builds at 32 bytes (AES-128-GCM needs 16). The limits are
//! rustls's for the same suites (RFC 9001 §6.6), so a rederived key behaves as rustls's.

use super::checksum_keys;
use super::header_mask::{MaskSource, MaskedHeaderKey};
use crate::config::PacketProtection;
use crate::wire::VERSION_2;
use ring::aead;
use rustls::crypto::tls13::{Hkdf, OkmBlock};
use rustls::quic::{DirectionalKeys, Keys, PacketKeySet, Secrets, Tag};
use rustls::{CipherSuite, KeyLog, Tls13CipherSuite};
use std::sync::{Arc, Mutex};

/// The HKDF labels of a QUIC version's packet protection (RFC 9001 §5.1, §5.4, §6.1;
/// RFC 9369 §3.3.2).
struct Labels {
    key: &'static [u8],
    iv: &'static [u8],
    hp: &'static [u8],
    ku: &'static [u8],
}

/// [`VERSION_2`]'s labels, or QUIC v1's for anything else (no other version gets here).
fn labels(version: u32) -> Labels {
    if version == VERSION_2 {
        Labels {
            key: b"quicv2 key",
            iv: b"quicv2 iv",
            hp: b"quicv2 hp",
            ku: b"quicv2 ku",
        }
    } else {
        Labels {
            key: b"quic key",
            iv: b"quic iv",
            hp: b"quic hp",
            ku: b"quic ku",
        }
    }
}

/// HKDF-Expand-Label(secret, label, "", out.len()) with the suite's hash (RFC 8446
/// §7.1): the HkdfLabel is the length (u16), "tls13 " + label (u8-prefixed) and an
/// empty context.
fn expand_label(hkdf: &dyn Hkdf, secret: &[u8], label: &[u8], out: &mut [u8]) {
    const PREFIX: &[u8] = b"tls13 ";
    // Our outputs are at most 64 bytes and our labels a dozen: no truncation.
    let length = (out.len() as u16).to_be_bytes();
    let label_len = [(PREFIX.len() + label.len()) as u8];
    let info: [&[u8]; 5] = [&length, &label_len, PREFIX, label, &[0]];
    hkdf.expander_for_okm(&OkmBlock::new(secret))
        .expand_slice(&info, out)
        .expect("HKDF-Expand output of at most 255 hash lengths");
}

/// The next key phase's secret: HKDF-Expand-Label(secret, ku label, "", Hash.length)
/// (RFC 9001 §6.1; "quicv2 ku" in v2).
pub(crate) fn update_secret(suite: &Tls13CipherSuite, version: u32, secret: &[u8]) -> OkmBlock {
    let mut out = [0u8; OkmBlock::MAX_LEN];
    let out = &mut out[..secret.len()];
    expand_label(suite.hkdf_provider, secret, labels(version).ku, out);
    OkmBlock::new(out)
}

/// ring's AEAD and header protection for a TLS 1.3 suite QUIC may use (RFC 9001
/// §5.3), with rustls's confidentiality and integrity limits for it (§6.6).
#[derive(Clone, Copy)]
struct Aead {
    packet: &'static aead::Algorithm,
    header: &'static aead::quic::Algorithm,
    confidentiality_limit: u64,
    integrity_limit: u64,
}

fn aead_for(suite: &Tls13CipherSuite) -> Option<Aead> {
    let (packet, header, confidentiality_limit, integrity_limit) = match suite.common.suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => {
            (&aead::AES_128_GCM, &aead::quic::AES_128, 1 << 23, 1 << 52)
        }
        CipherSuite::TLS13_AES_256_GCM_SHA384 => {
            (&aead::AES_256_GCM, &aead::quic::AES_256, 1 << 23, 1 << 52)
        }
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => (
            &aead::CHACHA20_POLY1305,
            &aead::quic::CHACHA20,
            u64::MAX,
            1 << 36,
        ),
        _ => return None,
    };
    Some(Aead {
        packet,
        header,
        confidentiality_limit,
        integrity_limit,
    })
}

/// AEAD packet protection (RFC 9001 §5.3).
struct PacketKey {
    key: aead::LessSafeKey,
    iv: [u8; aead::NONCE_LEN],
    confidentiality_limit: u64,
    integrity_limit: u64,
}

impl PacketKey {
    /// RFC 9001 §5.3: the IV XORed with the packet number, left-padded to its length.
    fn nonce(&self, pn: u64) -> aead::Nonce {
        let mut nonce = self.iv;
        for (n, p) in nonce[aead::NONCE_LEN - 8..]
            .iter_mut()
            .zip(pn.to_be_bytes())
        {
            *n ^= p;
        }
        aead::Nonce::assume_unique_for_key(nonce)
    }

    /// draft-ietf-quic-multipath §2.4: the nonce with the path ID.
    fn path_nonce(&self, path_id: u32, pn: u64) -> aead::Nonce {
        aead::Nonce::assume_unique_for_key(super::path_nonce::path_nonce(&self.iv, path_id, pn))
    }
}

impl rustls::quic::PacketKey for PacketKey {
    fn encrypt_in_place(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        let tag = self
            .key
            .seal_in_place_separate_tag(self.nonce(packet_number), aead::Aad::from(header), payload)
            .map_err(|_| rustls::Error::EncryptError)?;
        Ok(Tag::from(tag.as_ref()))
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        let plain = self
            .key
            .open_in_place(self.nonce(packet_number), aead::Aad::from(header), payload)
            .map_err(|_| rustls::Error::DecryptError)?;
        Ok(plain)
    }

    fn encrypt_in_place_for_path(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        let nonce = self.path_nonce(path_id, packet_number);
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce, aead::Aad::from(header), payload)
            .map_err(|_| rustls::Error::EncryptError)?;
        Ok(Tag::from(tag.as_ref()))
    }

    fn decrypt_in_place_for_path<'a>(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        let nonce = self.path_nonce(path_id, packet_number);
        self.key
            .open_in_place(nonce, aead::Aad::from(header), payload)
            .map_err(|_| rustls::Error::DecryptError)
            .map(|p| &*p)
    }

    fn tag_len(&self) -> usize {
        self.key.algorithm().tag_len()
    }

    fn confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
    }

    fn integrity_limit(&self) -> u64 {
        self.integrity_limit
    }
}

/// Header protection (RFC 9001 §5.4): ring's AES or ChaCha20 mask.
struct RingMask(aead::quic::HeaderProtectionKey);

impl MaskSource for RingMask {
    fn mask(&self, sample: &[u8]) -> Result<[u8; 5], rustls::Error> {
        (self.0.new_mask(sample))
            .map_err(|_| rustls::Error::General("sample of invalid length".into()))
    }

    fn sample_len(&self) -> usize {
        self.0.algorithm().sample_len()
    }
}

/// The packet key of `version` from a traffic secret: "quic key" / "quic iv" (v1) or
/// "quicv2 key" / "quicv2 iv" (v2).
fn packet_key(
    suite: &Tls13CipherSuite,
    alg: Aead,
    version: u32,
    secret: &[u8],
) -> Box<dyn rustls::quic::PacketKey> {
    let l = labels(version);
    let mut key = [0u8; 32];
    let key = &mut key[..alg.packet.key_len()];
    expand_label(suite.hkdf_provider, secret, l.key, key);
    let mut iv = [0u8; aead::NONCE_LEN];
    expand_label(suite.hkdf_provider, secret, l.iv, &mut iv);
    let key = aead::UnboundKey::new(alg.packet, key).expect("a key of the AEAD's length");
    Box::new(PacketKey {
        key: aead::LessSafeKey::new(key),
        iv,
        confidentiality_limit: alg.confidentiality_limit,
        integrity_limit: alg.integrity_limit,
    })
}

/// One direction's keys of `version` from a traffic secret (the header key from
/// "quic hp" / "quicv2 hp").
fn directional(
    suite: &Tls13CipherSuite,
    alg: Aead,
    version: u32,
    secret: &[u8],
) -> DirectionalKeys {
    let mut hp = [0u8; 32];
    let hp = &mut hp[..alg.header.key_len()];
    expand_label(suite.hkdf_provider, secret, labels(version).hp, hp);
    let header = aead::quic::HeaderProtectionKey::new(alg.header, hp)
        .expect("a header key of the algorithm's length");
    DirectionalKeys {
        header: Box::new(MaskedHeaderKey(RingMask(header))),
        packet: packet_key(suite, alg, version, secret),
    }
}

/// Packet keys of QUIC `version` for both directions from TLS traffic secrets of
/// `suite` (ours and the peer's). `None` for a suite QUIC does not use.
pub fn keys(suite: &Tls13CipherSuite, version: u32, local: &[u8], remote: &[u8]) -> Option<Keys> {
    let alg = aead_for(suite)?;
    Some(Keys {
        local: directional(suite, alg, version, local),
        remote: directional(suite, alg, version, remote),
    })
}

/// The 1-RTT secrets of the next key phases in a version other than the TLS
/// session's: what rustls's [`Secrets`] are for its own (RFC 9001 §6.1).
#[derive(Clone)]
pub struct VersionSecrets {
    suite: &'static Tls13CipherSuite,
    alg: Aead,
    version: u32,
    local: OkmBlock,
    remote: OkmBlock,
}

impl VersionSecrets {
    /// Packet keys from the current secrets, then the secrets move one phase on.
    pub fn next_packet_keys(&mut self) -> PacketKeySet {
        let keys = PacketKeySet {
            local: packet_key(self.suite, self.alg, self.version, self.local.as_ref()),
            remote: packet_key(self.suite, self.alg, self.version, self.remote.as_ref()),
        };
        self.local = update_secret(self.suite, self.version, self.local.as_ref());
        self.remote = update_secret(self.suite, self.version, self.remote.as_ref());
        keys
    }
}

/// The 1-RTT keys of key phase 0 from the first application traffic secrets, and the
/// secrets of phase 1 onwards (as rustls hands them over in `KeyChange::OneRtt`).
pub fn one_rtt(
    suite: &'static Tls13CipherSuite,
    version: u32,
    local: &[u8],
    remote: &[u8],
) -> Option<(Keys, VersionSecrets)> {
    let keys = keys(suite, version, local, remote)?;
    let next = VersionSecrets {
        suite,
        alg: aead_for(suite)?,
        version,
        local: update_secret(suite, version, local),
        remote: update_secret(suite, version, remote),
    };
    Some((keys, next))
}

/// The secrets 1-RTT key updates come from (RFC 9001 §6): rustls's, for the version
/// its session was created with, or ours for another one; `Checksum`: those of the
/// inner secrets, their keys wrapped for `PacketProtection::Checksum`.
#[derive(Clone)]
pub enum NextSecrets {
    Tls(Secrets),
    Version(VersionSecrets),
    Checksum(Box<NextSecrets>),
}

impl NextSecrets {
    /// Packet keys for the next key phase; each call moves one phase on.
    pub fn next_packet_keys(&mut self) -> PacketKeySet {
        match self {
            NextSecrets::Tls(s) => s.next_packet_keys(),
            NextSecrets::Version(s) => s.next_packet_keys(),
            NextSecrets::Checksum(s) => {
                checksum_keys::packet_key_set(PacketProtection::Checksum, s.next_packet_keys())
            }
        }
    }

    /// These secrets, their later keys protecting packets as `protection` says.
    pub fn with_packet_protection(self, protection: PacketProtection) -> NextSecrets {
        match (protection, self) {
            (PacketProtection::Aead, s) => s,
            (PacketProtection::Checksum, s @ NextSecrets::Checksum(_)) => s,
            (PacketProtection::Checksum, s) => NextSecrets::Checksum(Box::new(s)),
        }
    }
}

/// A TLS 1.3 traffic secret a [`SecretLog`] keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    ClientHandshake,
    ServerHandshake,
    Client0,
    Server0,
}

impl Traffic {
    const ALL: [Traffic; 4] = [
        Traffic::ClientHandshake,
        Traffic::ServerHandshake,
        Traffic::Client0,
        Traffic::Server0,
    ];

    /// Its NSS key log label.
    fn label(self) -> &'static str {
        match self {
            Traffic::ClientHandshake => "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            Traffic::ServerHandshake => "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            Traffic::Client0 => "CLIENT_TRAFFIC_SECRET_0",
            Traffic::Server0 => "SERVER_TRAFFIC_SECRET_0",
        }
    }

    fn of(label: &str) -> Option<Traffic> {
        Traffic::ALL.into_iter().find(|t| t.label() == label)
    }
}

/// One TLS session's key log: keeps the session's handshake and first application
/// traffic secrets (to derive packet keys for another QUIC version) and passes every
/// secret on to the key log the config had (the user's SSLKEYLOGFILE, say), as that
/// one would have been called without this one.
pub struct SecretLog {
    user: Arc<dyn KeyLog>,
    secrets: Mutex<[Option<OkmBlock>; 4]>,
}

impl std::fmt::Debug for SecretLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets themselves.
        f.debug_struct("SecretLog")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl SecretLog {
    /// `config` with a fresh log of its own that tees to `config`'s key log.
    pub fn wrap(config: &rustls::ClientConfig) -> (Arc<rustls::ClientConfig>, Arc<SecretLog>) {
        let log = Arc::new(SecretLog {
            user: config.key_log.clone(),
            secrets: Mutex::new(Default::default()),
        });
        let mut config = config.clone();
        config.key_log = log.clone();
        (Arc::new(config), log)
    }

    /// The secret logged under `which`'s label, once TLS derived it.
    pub fn get(&self, which: Traffic) -> Option<OkmBlock> {
        let secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        secrets[which as usize].clone()
    }
}

impl KeyLog for SecretLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        if self.user.will_log(label) {
            self.user.log(label, client_random, secret);
        }
        if let Some(t) = Traffic::of(label) {
            let mut secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
            secrets[t as usize] = Some(OkmBlock::new(secret));
        }
    }

    fn will_log(&self, label: &str) -> bool {
        Traffic::of(label).is_some() || self.user.will_log(label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::tests::hex;
    use crate::crypto::protect::{decrypt_payload, seal, unprotect_header};
    use crate::wire::VERSION_1;

    fn suite(s: CipherSuite) -> &'static Tls13CipherSuite {
        use rustls::crypto::ring::cipher_suite as cs;
        let s = match s {
            CipherSuite::TLS13_AES_128_GCM_SHA256 => cs::TLS13_AES_128_GCM_SHA256,
            CipherSuite::TLS13_AES_256_GCM_SHA384 => cs::TLS13_AES_256_GCM_SHA384,
            _ => cs::TLS13_CHACHA20_POLY1305_SHA256,
        };
        s.tls13().unwrap()
    }

    /// RFC 9001 Appendix A.5 (v1 labels) and RFC 9369 Appendix A.5 (v2 labels): the
    /// server's ChaCha20-Poly1305 short-header packet, byte for byte, and the ku
    /// secret of the next key phase.
    #[test]
    fn chacha20_short_header_vectors() {
        let secret = hex("9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b");
        let cases = [
            (
                VERSION_1,
                "4cfe4189655e5cd55c41f69080575d7999c25a5bfb",
                "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9",
            ),
            (
                VERSION_2,
                "5558b1c60ae7b6b932bc27d786f4bc2bb20f2162ba",
                "c69374c49e3d2a9466fa689e49d476db5d0dfbc87d32ceeaa6343fd0ae4c7d88",
            ),
        ];
        let s = suite(CipherSuite::TLS13_CHACHA20_POLY1305_SHA256);
        for (version, packet, ku) in cases {
            let k = keys(s, version, &secret, &secret).unwrap();
            // Unprotected header 4200bff4 (pn 654360564, 3 bytes), PING, tag space.
            let mut p = hex("4200bff4");
            p.push(0x01);
            p.extend_from_slice(&[0; 16]);
            seal(&*k.local.packet, &*k.local.header, &mut p, 1, 654_360_564).unwrap();
            assert_eq!(p, hex(packet), "{version:#x}");
            let h = unprotect_header(&*k.remote.header, &mut p, 1).unwrap();
            assert_eq!((h.pn_len, h.truncated_pn), (3, 0xbff4));
            let r = decrypt_payload(&*k.remote.packet, &mut p, 4, 654_360_564).unwrap();
            assert_eq!(&p[r], &[0x01]);
            let next = update_secret(s, version, &secret);
            assert_eq!(next.as_ref(), hex(ku).as_slice(), "{version:#x} ku");
        }
    }

    /// Our derivation with v1 labels is rustls's own (Initial keys are TLS 1.3 keys of
    /// a known secret, RFC 9001 §5.2), for both directions, header keys included.
    #[test]
    fn v1_and_v2_keys_match_rustls_initial_keys() {
        use crate::crypto::initial::{initial_keys, initial_secrets};
        use crate::wire::{ConnectionId, Side};
        let dcid = ConnectionId::new(&[7; 8]).unwrap();
        let s = suite(CipherSuite::TLS13_AES_128_GCM_SHA256);
        for version in [VERSION_1, VERSION_2] {
            let secrets = initial_secrets(version, &dcid);
            let ours = keys(s, version, &secrets.client, &secrets.server).unwrap();
            let theirs = initial_keys(version, &dcid, Side::Server);
            let mut p = vec![0xc0, 1, 2, 3, 4, 5, 9];
            p.extend_from_slice(&[0x01; 40]);
            p.extend_from_slice(&[0; 16]);
            seal(&*ours.local.packet, &*ours.local.header, &mut p, 6, 9).unwrap();
            let h = unprotect_header(&*theirs.remote.header, &mut p, 6).unwrap();
            assert_eq!(h.truncated_pn, 9);
            let r = decrypt_payload(&*theirs.remote.packet, &mut p, 7, 9).unwrap();
            assert_eq!(&p[r], &[0x01; 40]);
        }
    }

    /// draft-ietf-quic-multipath §2.4: our keys and rustls's agree on the nonce with a
    /// path ID (sealed by one, opened by the other), path 0's protection is RFC 9001's
    /// byte for byte, and another path's nonce does not open it.
    #[test]
    fn path_nonce_matches_rustls_and_path_zero_is_rfc9001() {
        use crate::crypto::initial::{initial_keys, initial_secrets};
        use crate::crypto::protect::{decrypt_payload_on_path, seal_on_path};
        use crate::wire::{ConnectionId, PathId, Side};
        let dcid = ConnectionId::new(&[7; 8]).unwrap();
        let s = suite(CipherSuite::TLS13_AES_128_GCM_SHA256);
        let secrets = initial_secrets(VERSION_1, &dcid);
        let ours = keys(s, VERSION_1, &secrets.client, &secrets.server).unwrap();
        let theirs = initial_keys(VERSION_1, &dcid, Side::Server);
        let packet = || {
            let mut p = vec![0x40, 1, 2, 3, 4, 5, 9];
            p.extend_from_slice(&[0x01; 40]);
            p.extend_from_slice(&[0; 16]);
            p
        };
        let sealed = |path: Option<PathId>| {
            let mut p = packet();
            seal_on_path(
                &*ours.local.packet,
                &*ours.local.header,
                &mut p,
                6,
                54321,
                path,
            )
            .unwrap();
            p
        };
        assert_eq!(sealed(Some(PathId(0))), sealed(None));
        assert_ne!(sealed(Some(PathId(3))), sealed(None));
        for path in [PathId(0), PathId(3), PathId(u32::MAX)] {
            let mut p = sealed(Some(path));
            unprotect_header(&*theirs.remote.header, &mut p, 6).unwrap();
            let mut wrong = p.clone();
            let r = decrypt_payload_on_path(&*theirs.remote.packet, &mut p, 7, 54321, Some(path))
                .unwrap();
            assert_eq!(&p[r], &[0x01; 40], "{path:?}");
            if path != PathId(0) {
                let other = Some(PathId(path.0 ^ 1));
                assert!(decrypt_payload_on_path(
                    &*theirs.remote.packet,
                    &mut wrong,
                    7,
                    54321,
                    other
                )
                .is_err());
            }
        }
    }

    /// Hands `from`'s handshake output to `to`; keeps `from`'s 1-RTT secrets.
    fn pump(
        from: &mut crate::crypto::tls::TlsSession,
        to: &mut crate::crypto::tls::TlsSession,
        next: &mut Option<NextSecrets>,
    ) {
        use crate::crypto::tls::KeyChange;
        let now = crate::time::Instant::ZERO;
        loop {
            let mut buf = Vec::new();
            let change = from.write_handshake(&mut buf, now).unwrap();
            if !buf.is_empty() {
                to.read_handshake(&buf, now).unwrap();
            }
            match change {
                Some(KeyChange::OneRtt { next: n, .. }) => *next = Some(n),
                Some(KeyChange::Handshake { .. }) => {}
                None if buf.is_empty() => return,
                None => {}
            }
        }
    }

    /// Key updates: our secrets give the same keys as rustls's for the version rustls
    /// was created with, phase after phase, for each suite (SHA-384 included).
    #[test]
    fn key_phases_match_rustls_secrets() {
        use crate::crypto::cert::ServerVerification;
        use crate::crypto::cert::{client_config_with, self_signed, server_config_with};
        use crate::crypto::choices::{CipherSuite as Choice, TlsChoices};
        use crate::crypto::tls::TlsSession;
        use crate::rng::DetRng;
        use crate::time::Instant;
        for (choice, version) in [
            (Choice::Aes128Gcm, VERSION_2),
            (Choice::Aes256Gcm, VERSION_1),
            (Choice::Chacha20Poly1305, VERSION_2),
        ] {
            let choices = TlsChoices::only_suite(choice);
            let alpn = [b"x".to_vec()];
            let id = self_signed(&["localhost".into()], 1, 0);
            let cc = client_config_with(ServerVerification::Insecure, &alpn, None, &choices);
            let sc = server_config_with(id, &alpn, None, &choices).unwrap();
            let (rng, now) = (DetRng::new(1), Instant::ZERO);
            let mut c =
                TlsSession::client(cc, "localhost", vec![], version, true, rng, now).unwrap();
            let mut s = TlsSession::server(sc, vec![], version, DetRng::new(2)).unwrap();
            let (mut c_next, mut s_next) = (None, None);
            for _ in 0..4 {
                pump(&mut c, &mut s, &mut c_next);
                pump(&mut s, &mut c, &mut s_next);
            }
            let (mut tls, mut server) = (c_next.unwrap(), s_next.unwrap());
            let log = c.secret_log().unwrap();
            let suite = c.cipher_suite().unwrap().tls13().unwrap();
            let (c0, s0) = (
                log.get(Traffic::Client0).unwrap(),
                log.get(Traffic::Server0).unwrap(),
            );
            let (_, mut ours) = one_rtt(suite, version, c0.as_ref(), s0.as_ref()).unwrap();
            for phase in 1..4 {
                let (a, b, srv) = (
                    tls.next_packet_keys(),
                    ours.next_packet_keys(),
                    server.next_packet_keys(),
                );
                for sealer in [&a.local, &b.local] {
                    let mut p = b"payload".to_vec();
                    let tag = sealer.encrypt_in_place(phase, b"hdr", &mut p).unwrap();
                    p.extend_from_slice(tag.as_ref());
                    let plain = srv.remote.decrypt_in_place(phase, b"hdr", &mut p).unwrap();
                    assert_eq!(plain, b"payload", "{choice:?} phase {phase}");
                }
            }
        }
    }

    #[test]
    fn secret_log_keeps_traffic_secrets_and_tees_everything() {
        use crate::crypto::cert::MemoryKeyLog;
        let user = Arc::new(MemoryKeyLog::default());
        let config = crate::crypto::cert::client_config(
            crate::crypto::cert::ServerVerification::Insecure,
            &[],
            Some(user.clone()),
        );
        let (wrapped, log) = SecretLog::wrap(&config);
        assert!(wrapped.key_log.will_log("EXPORTER_SECRET"));
        wrapped
            .key_log
            .log("CLIENT_TRAFFIC_SECRET_0", &[1; 32], &[2; 32]);
        wrapped.key_log.log("EXPORTER_SECRET", &[1; 32], &[3; 32]);
        assert_eq!(log.get(Traffic::Client0).unwrap().as_ref(), &[2; 32]);
        assert!(log.get(Traffic::Server0).is_none());
        assert_eq!(user.lines.lock().unwrap().len(), 2);
        // Without a user key log, only the four traffic secrets are asked for.
        let plain = crate::crypto::cert::client_config(
            crate::crypto::cert::ServerVerification::Insecure,
            &[],
            None,
        );
        let (wrapped, _) = SecretLog::wrap(&plain);
        assert!(wrapped.key_log.will_log("SERVER_HANDSHAKE_TRAFFIC_SECRET"));
        assert!(!wrapped.key_log.will_log("EXPORTER_SECRET"));
        assert!(format!("{:?}", wrapped.key_log).starts_with("SecretLog"));
    }
}
