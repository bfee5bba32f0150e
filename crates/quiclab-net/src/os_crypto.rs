//! TLS randomness on a real host (`quiclab server|client --tls-random seeded|os`).
//!
//! The core's provider (`quiclab_proto::tls::provider_for`) draws client/server randoms
//! and key shares from the connection's seeded generator, and the self-signed ECDSA
//! certificate signs with RFC 6979 nonces, so a run is repeatable byte for byte: the
//! simulator needs that, a real server or client pays for it in handshake CPU (portable
//! x25519/p256 arithmetic instead of ring's) and should use OS randomness anyway. The
//! OS-random provider built here is ring's (its SystemRandom, its X25519 and P-256 key
//! exchange, its signers) limited to the same cipher suites and groups, in the same
//! order, as the seeded one; it is injected into the core through
//! `quiclab_proto::tls::server_config_on` and `client_config_on`, so the core itself
//! never reads the OS.

use quiclab_proto::tls::{self, CertError, Identity, KxGroup, ServerVerification, TlsChoices};
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Where a server's or client's TLS randomness comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsRandom {
    /// The connection's seeded generator (the default): repeatable handshake bytes.
    #[default]
    Seeded,
    /// The operating system (ring's SystemRandom), with ring's key exchange and
    /// signers: cheaper handshakes, different bytes on every run.
    Os,
}

impl FromStr for TlsRandom {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "seeded" => Ok(TlsRandom::Seeded),
            "os" => Ok(TlsRandom::Os),
            _ => Err(format!(
                "unknown TLS random source {s:?} (expected seeded or os)"
            )),
        }
    }
}

impl fmt::Display for TlsRandom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsRandom::Seeded => "seeded",
            TlsRandom::Os => "os",
        })
    }
}

/// ring's provider with OS randomness, offering exactly `choices`' cipher suites and
/// key exchange groups (RFC 8446 §4.2.7), in their order.
pub fn os_provider(choices: &TlsChoices) -> Arc<CryptoProvider> {
    use rustls::crypto::ring::{default_provider, kx_group};
    let kx_groups = choices
        .kx_groups
        .iter()
        .map(|g| -> &'static dyn SupportedKxGroup {
            match g {
                KxGroup::X25519 => kx_group::X25519,
                KxGroup::P256 => kx_group::SECP256R1,
            }
        })
        .collect();
    Arc::new(CryptoProvider {
        cipher_suites: tls::cipher_suites_for(choices),
        kx_groups,
        ..default_provider()
    })
}

/// The server's TLS config with randomness from `random`. With [`TlsRandom::Os`] the
/// identity's deterministic signer is dropped, so ring loads the key and signs
/// (ECDSA with OS-random nonces).
pub fn server_config(
    random: TlsRandom,
    mut identity: Identity,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    choices: &TlsChoices,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    match random {
        TlsRandom::Seeded => tls::server_config_with(identity, alpn, key_log, choices),
        TlsRandom::Os => {
            identity.signer = None;
            tls::server_config_on(os_provider(choices), identity, alpn, key_log, choices)
        }
    }
}

/// The client's TLS config with randomness from `random`: with [`TlsRandom::Os`] the
/// client random and the key shares (X25519 or P-256) come from ring and the OS, not
/// from the connection's seeded generator.
pub fn client_config(
    random: TlsRandom,
    verify: ServerVerification,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    choices: &TlsChoices,
) -> Arc<rustls::ClientConfig> {
    match random {
        TlsRandom::Seeded => tls::client_config_with(verify, alpn, key_log, choices),
        TlsRandom::Os => tls::client_config_on(os_provider(choices), verify, alpn, key_log),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiclab_proto::tls::{CertType, CipherSuite};

    #[test]
    fn parses_and_prints() {
        for r in [TlsRandom::Seeded, TlsRandom::Os] {
            assert_eq!(r.to_string().parse::<TlsRandom>(), Ok(r));
        }
        assert!("dev-urandom".parse::<TlsRandom>().is_err());
    }

    #[test]
    fn os_provider_follows_choices() {
        let choices = TlsChoices {
            cipher_suites: vec![CipherSuite::Chacha20Poly1305, CipherSuite::Aes128Gcm],
            kx_groups: vec![KxGroup::P256, KxGroup::X25519],
        };
        let p = os_provider(&choices);
        let suites: Vec<_> = p.cipher_suites.iter().map(|s| s.suite()).collect();
        assert_eq!(
            suites,
            [
                rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
                rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
            ]
        );
        let groups: Vec<_> = p.kx_groups.iter().map(|g| g.name()).collect();
        assert_eq!(
            groups,
            [rustls::NamedGroup::secp256r1, rustls::NamedGroup::X25519]
        );
        let mut buf = [0u8; 32];
        p.secure_random.fill(&mut buf).unwrap();
        assert_ne!(buf, [0u8; 32], "OS randomness, no generator installed");
    }

    #[test]
    fn every_certificate_type_loads_into_ring() {
        let names = ["localhost".to_string()];
        for ty in [CertType::Ed25519, CertType::EcdsaP256, CertType::Rsa2048] {
            let id = tls::self_signed_as(&names, 7, 0, ty);
            let alpn = [b"hq-interop".to_vec()];
            let c = server_config(TlsRandom::Os, id, &alpn, None, &TlsChoices::default());
            assert!(c.is_ok(), "{ty:?}: {:?}", c.err());
        }
        let bad = TlsChoices {
            kx_groups: vec![],
            ..TlsChoices::default()
        };
        let id = tls::self_signed(&names, 7, 0);
        assert!(server_config(TlsRandom::Os, id, &[], None, &bad).is_err());
    }

    #[test]
    fn client_config_draws_from_the_chosen_source() {
        let choices = TlsChoices {
            kx_groups: vec![KxGroup::P256, KxGroup::X25519],
            ..TlsChoices::default()
        };
        let alpn = [b"hq-interop".to_vec()];
        let groups = |r: TlsRandom| -> Vec<_> {
            let c = client_config(r, ServerVerification::Insecure, &alpn, None, &choices);
            assert_eq!(c.alpn_protocols, alpn);
            let p = c.crypto_provider();
            p.kx_groups.iter().map(|g| g.name()).collect()
        };
        for r in [TlsRandom::Seeded, TlsRandom::Os] {
            assert_eq!(
                groups(r),
                [rustls::NamedGroup::secp256r1, rustls::NamedGroup::X25519]
            );
        }
        // Outside a connection no seeded generator is installed: the seeded provider
        // refuses to draw, the OS one draws.
        let fill = |r: TlsRandom| {
            let c = client_config(r, ServerVerification::Insecure, &alpn, None, &choices);
            let mut buf = [0u8; 32];
            c.crypto_provider()
                .secure_random
                .fill(&mut buf)
                .map(|()| buf)
        };
        assert!(fill(TlsRandom::Seeded).is_err());
        assert_ne!(fill(TlsRandom::Os).unwrap(), [0u8; 32]);
    }
}
