//! Every cipher suite, key exchange group and certificate type handshakes and moves
//! data (RFC 9001 §5.3), and the negotiated suite is the one chosen.

use crate::common;

use common::{config, fetch};
use quiclab_proto::events::Owner;
use quiclab_proto::testing::{LinkConfig, Pair, PairTls};
use quiclab_proto::tls::{CertType, CipherSuite, KxGroup, TlsChoices};
use quiclab_proto::{CloseReason, TransportErrorCode};
use std::time::Duration;

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(5));
    [l.clone(), l]
}

fn pair(suite: CipherSuite, kx: KxGroup, cert: CertType, seed: u64) -> Pair {
    let choices = TlsChoices {
        cipher_suites: vec![suite],
        kx_groups: vec![kx],
    };
    let tls = PairTls {
        client: choices.clone(),
        server: TlsChoices::default(),
        cert,
        ..PairTls::default()
    };
    let mut tls = tls;
    tls.server.kx_groups = vec![KxGroup::X25519, KxGroup::P256];
    Pair::with_tls(config(), config(), links(), seed, tls)
}

#[test]
fn every_combination_handshakes_and_transfers() {
    let suites = [
        CipherSuite::Aes128Gcm,
        CipherSuite::Aes256Gcm,
        CipherSuite::Chacha20Poly1305,
    ];
    let mut seed = 0;
    for cert in [CertType::Ed25519, CertType::EcdsaP256, CertType::Rsa2048] {
        for suite in suites {
            for kx in [KxGroup::X25519, KxGroup::P256] {
                seed += 1;
                let mut p = pair(suite, kx, cert, seed);
                fetch(&mut p, 30_000).unwrap_or_else(|e| panic!("{cert:?} {suite:?} {kx:?}: {e}"));
                let name = format!("{:?}", p.client_conn().cipher_suite().unwrap());
                let expect = match suite {
                    CipherSuite::Aes128Gcm => "TLS13_AES_128_GCM_SHA256",
                    CipherSuite::Aes256Gcm => "TLS13_AES_256_GCM_SHA384",
                    CipherSuite::Chacha20Poly1305 => "TLS13_CHACHA20_POLY1305_SHA256",
                };
                assert_eq!(name, expect);
            }
        }
    }
}

#[test]
fn no_common_suite_fails_the_handshake() {
    let tls = PairTls {
        client: TlsChoices::only_suite(CipherSuite::Chacha20Poly1305),
        server: TlsChoices::only_suite(CipherSuite::Aes128Gcm),
        ..PairTls::default()
    };
    let mut p = Pair::with_tls(config(), config(), links(), 1, tls);
    let err = fetch(&mut p, 1_000).unwrap_err();
    // The server finds no common suite and closes with CRYPTO_ERROR carrying the
    // handshake_failure alert, 0x0100 + 40 (RFC 9001 §4.8, RFC 8446 §4.1.1); the client
    // gets that code from its peer, not some other crypto error of its own.
    let handshake_failure = TransportErrorCode::crypto(40);
    assert_eq!(handshake_failure, TransportErrorCode(0x128));
    match p.client_conn().close_reason() {
        Some(CloseReason::Transport { owner, error }) => {
            assert_eq!(*owner, Owner::Remote, "{err}");
            assert_eq!(error.code, handshake_failure, "{err}");
        }
        other => panic!("client closed with {other:?}: {err}"),
    }
}

#[test]
fn certificates_are_deterministic_per_seed() {
    use quiclab_proto::tls::self_signed_as;
    let names = ["localhost".to_string()];
    for ty in [CertType::Ed25519, CertType::EcdsaP256, CertType::Rsa2048] {
        let a = self_signed_as(&names, 5, 0, ty);
        let b = self_signed_as(&names, 5, 0, ty);
        let c = self_signed_as(&names, 6, 0, ty);
        assert_eq!(a.chain, b.chain, "{ty:?}");
        assert_ne!(a.chain, c.chain, "{ty:?}");
    }
    let rsa = self_signed_as(&names, 5, 0, CertType::Rsa2048);
    let ed = self_signed_as(&names, 5, 0, CertType::Ed25519);
    assert!(rsa.chain[0].len() > ed.chain[0].len() + 200);
}
