//! A rustls `CryptoProvider` built on ring whose randomness (client/server random,
//! X25519 key shares) comes from a seeded generator installed per TLS call.
//!
//! Why a thread-local: rustls asks its provider for randomness through a `&'static dyn
//! SecureRandom` with no connection context, so the connection's generator is parked in
//! a thread-local slot by [`with_rng`] for the duration of each rustls call.
//!
//! If no generator is installed, randomness requests fail with rustls's
//! `GetRandomFailed` (the handshake fails with an internal error) instead of silently
//! falling back to the OS: a silent fallback would break reproducibility unnoticed.
//!
//! Key exchange is X25519 or P-256, both implemented here with private keys drawn from
//! the seeded generator (ring's groups draw their ephemeral keys from the OS, which
//! would make key shares irreproducible). Signatures are deterministic with the
//! Ed25519 and seeded ECDSA certificates (`cert.rs`); keys loaded from PEM sign with
//! ring, whose ECDSA nonces and RSA-PSS salts are OS-random.

use super::choices::{CipherSuite, KxGroup, TlsChoices};
use crate::rng::DetRng;
use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, GetRandomFailed, SecureRandom, SharedSecret,
    SupportedKxGroup,
};
use rustls::{NamedGroup, PeerMisbehaved};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};
use x25519_dalek::{PublicKey, StaticSecret};

thread_local! {
    /// The generator of the connection whose rustls call is running on this thread.
    static CURRENT: RefCell<Option<DetRng>> = const { RefCell::new(None) };
}

/// Fills `buf` from the installed generator, or fails if none is installed.
fn draw(buf: &mut [u8]) -> Result<(), GetRandomFailed> {
    CURRENT.with(|slot| match slot.try_borrow_mut() {
        Ok(mut slot) => match slot.as_mut() {
            Some(rng) => {
                rng.fill(buf);
                Ok(())
            }
            None => Err(GetRandomFailed),
        },
        Err(_) => Err(GetRandomFailed),
    })
}

/// The provider every quiclab TLS config uses by default: ring's TLS 1.3 cipher suites
/// (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305), a seeded X25519 key exchange, ring's
/// signature verification, and the thread-local seeded random source.
pub fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| provider_for(&TlsChoices::default()))
        .clone()
}

/// A provider offering exactly `choices`' cipher suites and key exchange groups, in
/// their order (seeded key shares for both X25519 and P-256).
pub fn provider_for(choices: &TlsChoices) -> Arc<CryptoProvider> {
    let ring = rustls::crypto::ring::default_provider();
    let cipher_suites = cipher_suites_for(choices);
    let kx_groups = choices
        .kx_groups
        .iter()
        .map(|g| -> &'static dyn SupportedKxGroup {
            match g {
                KxGroup::X25519 => &SeededX25519,
                KxGroup::P256 => &SeededP256,
            }
        })
        .collect();
    Arc::new(CryptoProvider {
        cipher_suites,
        kx_groups,
        signature_verification_algorithms: ring.signature_verification_algorithms,
        secure_random: &SeededRandom,
        key_provider: ring.key_provider,
    })
}

/// ring's implementations of `choices`' cipher suites, in their order (shared with
/// providers built outside the core, such as the real-host OS-random one).
pub fn cipher_suites_for(choices: &TlsChoices) -> Vec<rustls::SupportedCipherSuite> {
    use rustls::crypto::ring::cipher_suite;
    choices
        .cipher_suites
        .iter()
        .map(|s| match s {
            CipherSuite::Aes128Gcm => cipher_suite::TLS13_AES_128_GCM_SHA256,
            CipherSuite::Aes256Gcm => cipher_suite::TLS13_AES_256_GCM_SHA384,
            CipherSuite::Chacha20Poly1305 => cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        })
        .collect()
}

/// Runs `f` with `rng` as the random source of every rustls call `f` makes on this
/// thread; restores the previous source afterwards (nesting is allowed).
///
/// The generator is moved into the slot (as a copy) and its advanced state is written
/// back into `rng` when `f` returns or unwinds, by a guard.
pub fn with_rng<R>(rng: &mut DetRng, f: impl FnOnce() -> R) -> R {
    /// Puts the previous generator back and hands the advanced state to the caller.
    struct Restore<'a> {
        rng: &'a mut DetRng,
        previous: Option<DetRng>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let previous = self.previous.take();
            // try_with: the slot may already be gone if this runs during thread teardown.
            if let Ok(Some(advanced)) = CURRENT.try_with(|slot| slot.replace(previous)) {
                *self.rng = advanced;
            }
        }
    }
    let previous = CURRENT.with(|slot| slot.replace(Some(rng.clone())));
    let _restore = Restore { rng, previous };
    f()
}

/// rustls's random source: the installed [`DetRng`].
#[derive(Debug)]
struct SeededRandom;

impl SecureRandom for SeededRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        draw(buf)
    }
}

/// X25519 (RFC 7748) with the private key drawn from the installed [`DetRng`].
#[derive(Debug)]
struct SeededX25519;

impl SupportedKxGroup for SeededX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        let mut private = [0u8; 32];
        draw(&mut private)?;
        let secret = StaticSecret::from(private);
        let public = PublicKey::from(&secret).to_bytes();
        Ok(Box::new(X25519Exchange { secret, public }))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

struct X25519Exchange {
    secret: StaticSecret,
    public: [u8; 32],
}

impl ActiveKeyExchange for X25519Exchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, rustls::Error> {
        let peer: [u8; 32] = peer_pub_key
            .try_into()
            .map_err(|_| PeerMisbehaved::InvalidKeyShare)?;
        let shared = self.secret.diffie_hellman(&PublicKey::from(peer));
        // RFC 8446 §7.4.2 / RFC 7748 §6.1: reject an all-zero shared secret.
        if !shared.was_contributory() {
            return Err(PeerMisbehaved::InvalidKeyShare.into());
        }
        Ok(SharedSecret::from(&shared.as_bytes()[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.public
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

/// P-256 ECDHE (RFC 8446 §4.2.8.2: uncompressed points) with the private key drawn
/// from the installed [`DetRng`].
#[derive(Debug)]
struct SeededP256;

impl SupportedKxGroup for SeededP256 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        // A scalar of 0 or >= n has probability ~2^-32: draw again.
        loop {
            let mut private = [0u8; 32];
            draw(&mut private)?;
            if let Ok(secret) = p256::SecretKey::from_slice(&private) {
                let public = secret
                    .public_key()
                    .to_encoded_point(false)
                    .as_bytes()
                    .to_vec();
                return Ok(Box::new(P256Exchange { secret, public }));
            }
        }
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::secp256r1
    }
}

struct P256Exchange {
    secret: p256::SecretKey,
    public: Vec<u8>,
}

impl ActiveKeyExchange for P256Exchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, rustls::Error> {
        // RFC 8446 §4.2.8.2: the share is an uncompressed point; it must be on the curve.
        if peer_pub_key.len() != 65 || peer_pub_key[0] != 4 {
            return Err(PeerMisbehaved::InvalidKeyShare.into());
        }
        let peer = p256::PublicKey::from_sec1_bytes(peer_pub_key)
            .map_err(|_| PeerMisbehaved::InvalidKeyShare)?;
        let shared = p256::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), peer.as_affine());
        Ok(SharedSecret::from(&shared.raw_secret_bytes()[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.public
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::secp256r1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_rng_nests_restores_and_advances() {
        let mut outer = DetRng::new(1);
        let mut inner = DetRng::new(2);
        let mut a = [0u8; 8];
        let mut b = [0u8; 8];
        let mut c = [0u8; 8];
        assert!(draw(&mut a).is_err(), "no generator installed");
        with_rng(&mut outer, || {
            draw(&mut a).unwrap();
            with_rng(&mut inner, || draw(&mut b).unwrap());
            draw(&mut c).unwrap();
        });
        assert!(draw(&mut a).is_err(), "restored to none");
        let mut expect_outer = DetRng::new(1);
        let mut e = [0u8; 8];
        expect_outer.fill(&mut e);
        assert_eq!(a, e);
        expect_outer.fill(&mut e);
        assert_eq!(c, e);
        // Both callers' generators advanced past what was drawn.
        assert_eq!(outer.next_u64(), expect_outer.next_u64());
        let mut expect_inner = DetRng::new(2);
        expect_inner.fill(&mut e);
        assert_eq!(b, e);
        assert_eq!(inner.next_u64(), expect_inner.next_u64());
    }

    #[test]
    fn with_rng_restores_on_panic() {
        let mut rng = DetRng::new(3);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_rng(&mut rng, || panic!("inside"))
        }));
        assert!(r.is_err());
        assert!(draw(&mut [0u8; 4]).is_err());
    }

    #[test]
    fn x25519_agrees_and_rejects_bad_shares() {
        let mut r1 = DetRng::new(10);
        let mut r2 = DetRng::new(11);
        let a = with_rng(&mut r1, || SeededX25519.start()).unwrap();
        let b = with_rng(&mut r2, || SeededX25519.start()).unwrap();
        let (pa, pb) = (a.pub_key().to_vec(), b.pub_key().to_vec());
        let sa = a.complete(&pb).unwrap();
        let sb = b.complete(&pa).unwrap();
        assert_eq!(sa.secret_bytes(), sb.secret_bytes());
        let c = with_rng(&mut DetRng::new(12), || SeededX25519.start()).unwrap();
        assert!(c.complete(&[1, 2, 3]).is_err());
        let d = with_rng(&mut DetRng::new(12), || SeededX25519.start()).unwrap();
        assert!(d.complete(&[0; 32]).is_err(), "low-order point");
        assert!(SeededX25519.start().is_err(), "no generator installed");
    }

    #[test]
    fn p256_agrees_and_rejects_bad_shares() {
        let a = with_rng(&mut DetRng::new(20), || SeededP256.start()).unwrap();
        let b = with_rng(&mut DetRng::new(21), || SeededP256.start()).unwrap();
        let (pa, pb) = (a.pub_key().to_vec(), b.pub_key().to_vec());
        assert_eq!(pa.len(), 65);
        let sa = a.complete(&pb).unwrap();
        let sb = b.complete(&pa).unwrap();
        assert_eq!(sa.secret_bytes(), sb.secret_bytes());
        let again = with_rng(&mut DetRng::new(20), || SeededP256.start()).unwrap();
        assert_eq!(again.pub_key(), &pa[..], "same seed, same share");
        let mut off_curve = pb.clone();
        off_curve[64] ^= 1;
        assert!(again.complete(&off_curve).is_err());
    }
}
