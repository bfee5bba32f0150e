//! Certificates and TLS configs: seeded self-signed Ed25519 certificates (rcgen) by
//! default, PEM files on request, and the client/server rustls configs QUIC needs.

use super::choices::{CertType, TlsChoices};
use super::provider::{provider, provider_for};
use crate::rng::DetRng;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

/// A certificate chain and its private key.
#[derive(Debug)]
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    /// A deterministic signer for `key`, used instead of ring's (whose ECDSA nonces
    /// come from the OS) when present.
    pub signer: Option<Arc<dyn rustls::sign::SigningKey>>,
}

/// Loading certificates failed.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("reading {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {what}")]
    Invalid { path: String, what: String },
}

/// The OID of the padding extension: a made-up arc under the private-enterprise
/// branch (1.3.6.1.4.1); it is non-critical, so verifiers ignore it.
const PADDING_OID: &[u64] = &[1, 3, 6, 1, 4, 1, 57264, 1, 1];

/// PKCS#8 v1 (RFC 5208 / RFC 8410 §7) prefix of an Ed25519 private key: SEQUENCE {
/// version 0, AlgorithmIdentifier { id-Ed25519 }, OCTET STRING { OCTET STRING (32) } }.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// A self-signed Ed25519 certificate for `names`, identical for the same `seed`.
/// `padding` adds that many bytes of an extra, non-critical extension, for experiments
/// that vary certificate size. See [`self_signed_as`].
pub fn self_signed(names: &[String], seed: u64, padding: usize) -> Identity {
    self_signed_as(names, seed, padding, CertType::Ed25519)
}

/// A self-signed certificate of type `ty` for `names`, identical for the same `seed`.
///
/// Determinism: the key comes from `DetRng::new(seed)` (Ed25519 and P-256: 32 bytes;
/// RSA-2048: prime search driven by the generator), the validity dates and serial
/// number are fixed, and the certificate signature is deterministic (Ed25519, ECDSA
/// with RFC 6979 nonces, RSA PKCS#1 v1.5). Names that are neither an IP address nor a
/// valid DNS name are left out of the certificate (so a client asking for them fails
/// verification, rather than this function panicking).
pub fn self_signed_as(names: &[String], seed: u64, padding: usize, ty: CertType) -> Identity {
    let mut rng = DetRng::new(seed);
    let (key_pair, pkcs8, signer) = match ty {
        CertType::Ed25519 => {
            let mut seed_bytes = [0u8; 32];
            rng.fill(&mut seed_bytes);
            let mut pkcs8 = ED25519_PKCS8_PREFIX.to_vec();
            pkcs8.extend_from_slice(&seed_bytes);
            let kp = rcgen::KeyPair::try_from(pkcs8.as_slice())
                .expect("a well-formed Ed25519 PKCS#8 document");
            (kp, pkcs8, None)
        }
        CertType::EcdsaP256 => {
            let key = DetEcdsaP256::from_rng(&mut rng);
            let pkcs8 = key.pkcs8();
            let signer: Arc<dyn rustls::sign::SigningKey> = Arc::new(key.clone());
            let kp = rcgen::KeyPair::from_remote(Box::new(key)).expect("a P-256 key");
            (kp, pkcs8, Some(signer))
        }
        CertType::Rsa2048 => {
            use rsa::pkcs8::EncodePrivateKey;
            let key = rsa::RsaPrivateKey::new(&mut RngAdapter(&mut rng), 2048)
                .expect("RSA-2048 key generation");
            let pkcs8 = key.to_pkcs8_der().expect("RSA PKCS#8").as_bytes().to_vec();
            let kp = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(
                &PrivatePkcs8KeyDer::from(pkcs8.clone()),
                &rcgen::PKCS_RSA_SHA256,
            )
            .expect("ring accepts a 2048-bit RSA key");
            (kp, pkcs8, None)
        }
    };
    let mut params = rcgen::CertificateParams::default();
    params.subject_alt_names = names
        .iter()
        .filter_map(|name| match name.parse::<std::net::IpAddr>() {
            Ok(ip) => Some(rcgen::SanType::IpAddress(ip)),
            Err(_) => name.clone().try_into().ok().map(rcgen::SanType::DnsName),
        })
        .collect();
    let mut dn = rcgen::DistinguishedName::new();
    dn.push(
        rcgen::DnType::CommonName,
        names.first().map_or("quiclab", String::as_str),
    );
    params.distinguished_name = dn;
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(4096, 1, 1);
    params.serial_number = Some(rcgen::SerialNumber::from(seed.max(1)));
    if padding > 0 {
        params
            .custom_extensions
            .push(rcgen::CustomExtension::from_oid_content(
                PADDING_OID,
                vec![0; padding],
            ));
    }
    let cert = params
        .self_signed(&key_pair)
        .expect("rcgen signs with an in-memory key");
    Identity {
        chain: vec![cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8)),
        signer,
    }
}

/// [`DetRng`] as a `rand_core` generator, for RSA key generation.
struct RngAdapter<'a>(&'a mut DetRng);

impl rand_core::RngCore for RngAdapter<'_> {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill(dest);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0.fill(dest);
        Ok(())
    }
}

/// Only for key generation from a seeded generator, which is the point here.
impl rand_core::CryptoRng for RngAdapter<'_> {}

/// An ECDSA P-256 key with deterministic (RFC 6979) signatures, for both the
/// certificate (rcgen) and CertificateVerify (rustls), so server flights are
/// reproducible byte for byte.
#[derive(Clone, Debug)]
struct DetEcdsaP256 {
    key: p256::ecdsa::SigningKey,
    public: Vec<u8>,
}

impl DetEcdsaP256 {
    fn from_rng(rng: &mut DetRng) -> Self {
        loop {
            let mut bytes = [0u8; 32];
            rng.fill(&mut bytes);
            if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
                let public = key
                    .verifying_key()
                    .to_encoded_point(false)
                    .as_bytes()
                    .to_vec();
                return DetEcdsaP256 { key, public };
            }
        }
    }

    fn pkcs8(&self) -> Vec<u8> {
        use p256::pkcs8::EncodePrivateKey;
        let secret = p256::SecretKey::from(&self.key);
        secret
            .to_pkcs8_der()
            .expect("P-256 PKCS#8")
            .as_bytes()
            .to_vec()
    }

    fn sign_der(&self, msg: &[u8]) -> Vec<u8> {
        use p256::ecdsa::signature::Signer as _;
        let sig: p256::ecdsa::Signature = self.key.sign(msg);
        sig.to_der().as_bytes().to_vec()
    }
}

impl rcgen::RemoteKeyPair for DetEcdsaP256 {
    fn public_key(&self) -> &[u8] {
        &self.public
    }
    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, rcgen::Error> {
        Ok(self.sign_der(msg))
    }
    fn algorithm(&self) -> &'static rcgen::SignatureAlgorithm {
        &rcgen::PKCS_ECDSA_P256_SHA256
    }
}

impl rustls::sign::SigningKey for DetEcdsaP256 {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn rustls::sign::Signer>> {
        offered
            .contains(&SignatureScheme::ECDSA_NISTP256_SHA256)
            .then(|| Box::new(self.clone()) as Box<dyn rustls::sign::Signer>)
    }
    fn algorithm(&self) -> rustls::SignatureAlgorithm {
        rustls::SignatureAlgorithm::ECDSA
    }
}

impl rustls::sign::Signer for DetEcdsaP256 {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        Ok(self.sign_der(message))
    }
    fn scheme(&self) -> SignatureScheme {
        SignatureScheme::ECDSA_NISTP256_SHA256
    }
}

/// Serves one certified key to every client.
#[derive(Debug)]
struct FixedCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::server::ResolvesServerCert for FixedCert {
    fn resolve(
        &self,
        _hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// A chain and key from PEM files (the key: PKCS#8, PKCS#1 or SEC1).
pub fn load_pem(cert: &Path, key: &Path) -> Result<Identity, CertError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| CertError::Io {
            path: path.display().to_string(),
            source,
        })
    };
    let invalid = |path: &Path, what: String| CertError::Invalid {
        path: path.display().to_string(),
        what,
    };
    let cert_pem = read(cert)?;
    let chain = rustls_pemfile::certs(&mut cert_pem.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(invalid(cert, "no certificate found".into()));
    }
    let key_pem = read(key)?;
    let key_der = rustls_pemfile::private_key(&mut key_pem.as_slice())
        .map_err(|e| invalid(key, e.to_string()))?
        .ok_or_else(|| invalid(key, "no private key found".into()))?;
    Ok(Identity {
        chain,
        key: key_der,
        signer: None,
    })
}

/// How a client checks the server's certificate.
pub enum ServerVerification {
    /// Trust these roots (for example the server's self-signed certificate).
    Roots(Vec<CertificateDer<'static>>),
    /// Accept any certificate (signatures are still checked), for test servers.
    Insecure,
}

/// A TLS 1.3-only client config for QUIC with the given ALPN list and optional key log.
///
/// Session resumption is disabled: quiclab has no 0-RTT yet, and a ticket cache shared
/// between connections would make a ClientHello depend on earlier runs.
pub fn client_config(
    verify: ServerVerification,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Arc<rustls::ClientConfig> {
    client_config_with(verify, alpn, key_log, &TlsChoices::default())
}

/// [`client_config`] offering only `choices`' cipher suites and groups, in order.
pub fn client_config_with(
    verify: ServerVerification,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    choices: &TlsChoices,
) -> Arc<rustls::ClientConfig> {
    client_config_on(provider_for(choices), verify, alpn, key_log)
}

/// [`client_config_with`] on a caller-given `provider` instead of the seeded one, for
/// drivers on a real host that inject an OS-random provider (the core itself never
/// reads OS randomness: whatever randomness `provider` draws, for the client random and
/// the key shares, is the caller's choice). `provider` must offer at least one TLS 1.3
/// cipher suite and key exchange group (validated [`TlsChoices`] give that).
pub fn client_config_on(
    provider: Arc<rustls::crypto::CryptoProvider>,
    verify: ServerVerification,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Arc<rustls::ClientConfig> {
    // RFC 9001 §4.2: QUIC requires TLS 1.3.
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("the provider has TLS 1.3 suites and groups");
    let mut config = match verify {
        ServerVerification::Roots(roots) => {
            let mut store = rustls::RootCertStore::empty();
            // Unparsable roots are skipped; verification then fails with UnknownIssuer.
            store.add_parsable_certificates(roots);
            builder.with_root_certificates(store).with_no_client_auth()
        }
        ServerVerification::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert))
            .with_no_client_auth(),
    };
    config.alpn_protocols = alpn.to_vec();
    config.resumption = rustls::client::Resumption::disabled();
    if let Some(key_log) = key_log {
        config.key_log = key_log;
    }
    Arc::new(config)
}

/// A TLS 1.3-only server config for QUIC (no session tickets, no early data yet).
pub fn server_config(
    identity: Identity,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    server_config_with(identity, alpn, key_log, &TlsChoices::default())
}

/// [`server_config`] accepting only `choices`' cipher suites and groups (the first
/// suite in this order that the client offers wins).
pub fn server_config_with(
    identity: Identity,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    choices: &TlsChoices,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    server_config_on(provider_for(choices), identity, alpn, key_log, choices)
}

/// [`server_config_with`] on a caller-given `provider` instead of the seeded one, for
/// drivers on a real host that inject an OS-random provider (the core itself never
/// reads OS randomness: whatever randomness `provider` draws is the caller's choice).
/// `choices` are validated here; the provider should offer exactly them. A deterministic
/// `identity.signer` still signs; without one, `provider`'s key provider loads the key.
pub fn server_config_on(
    provider: Arc<rustls::crypto::CryptoProvider>,
    identity: Identity,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    choices: &TlsChoices,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    let invalid = |what: String| CertError::Invalid {
        path: "<identity>".into(),
        what,
    };
    choices.validate().map_err(|e| invalid(e.to_string()))?;
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("our provider has TLS 1.3 suites and groups")
        .with_no_client_auth();
    let mut config = match identity.signer {
        Some(signer) => builder.with_cert_resolver(Arc::new(FixedCert(Arc::new(
            rustls::sign::CertifiedKey::new(identity.chain, signer),
        )))),
        None => builder
            .with_single_cert(identity.chain, identity.key)
            .map_err(|e| invalid(e.to_string()))?,
    };
    config.alpn_protocols = alpn.to_vec();
    config.max_early_data_size = 0;
    config.send_tls13_tickets = 0;
    if let Some(key_log) = key_log {
        config.key_log = key_log;
    }
    Ok(Arc::new(config))
}

/// [`ServerVerification::Insecure`]: accepts any certificate chain and name, but still
/// checks the CertificateVerify signature with the provider's algorithms, so the peer
/// must hold the key of the certificate it sent.
#[derive(Debug)]
struct AcceptAnyCert;

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        // Unreachable with a TLS 1.3-only config; checked anyway rather than accepted.
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &provider().signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &provider().signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A key log that keeps NSS key-log lines in memory (SSLKEYLOGFILE format), in order,
/// so a simulator can write them next to its pcap deterministically.
#[derive(Debug, Default)]
pub struct MemoryKeyLog {
    pub lines: std::sync::Mutex<Vec<String>>,
}

impl rustls::KeyLog for MemoryKeyLog {
    /// Appends `LABEL <client_random hex> <secret hex>` (NSS key log format).
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let mut line = String::with_capacity(label.len() + 2 + 2 * (32 + secret.len()));
        line.push_str(label);
        line.push(' ');
        for b in client_random {
            let _ = write!(line, "{b:02x}");
        }
        line.push(' ');
        for b in secret {
            let _ = write!(line, "{b:02x}");
        }
        // A poisoned lock still holds valid lines: keep logging.
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::KeyLog;

    #[test]
    fn self_signed_is_deterministic_and_padding_grows_it() {
        let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        let a = self_signed(&names, 42, 0);
        let b = self_signed(&names, 42, 0);
        assert_eq!(a.chain, b.chain);
        assert_eq!(a.key.secret_der(), b.key.secret_der());
        let c = self_signed(&names, 43, 0);
        assert_ne!(a.chain, c.chain);
        let padded = self_signed(&names, 42, 1000);
        assert!(padded.chain[0].len() >= a.chain[0].len() + 1000);
        // rustls (ring) accepts the key and the server config builds.
        assert!(server_config(padded, &[b"h3".to_vec()], None).is_ok());
        // An invalid name is skipped, not a panic.
        let _ = self_signed(&["not a name!".to_string()], 1, 0);
    }

    #[test]
    fn pem_roundtrip_and_errors() {
        let dir = std::env::temp_dir().join(format!("quiclab-cert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let id = self_signed(&["localhost".to_string()], 5, 0);
        let pem = |label: &str, der: &[u8]| {
            use std::fmt::Write;
            let mut s = format!("-----BEGIN {label}-----\n");
            let b64 = base64(der);
            for chunk in b64.as_bytes().chunks(64) {
                let _ = writeln!(s, "{}", std::str::from_utf8(chunk).unwrap());
            }
            let _ = writeln!(s, "-----END {label}-----");
            s
        };
        let (cp, kp) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&cp, pem("CERTIFICATE", &id.chain[0])).unwrap();
        std::fs::write(&kp, pem("PRIVATE KEY", id.key.secret_der())).unwrap();
        let loaded = load_pem(&cp, &kp).unwrap();
        assert_eq!(loaded.chain, id.chain);
        assert_eq!(loaded.key.secret_der(), id.key.secret_der());
        assert!(matches!(
            load_pem(&dir.join("missing.pem"), &kp),
            Err(CertError::Io { .. })
        ));
        assert!(matches!(load_pem(&kp, &kp), Err(CertError::Invalid { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn base64(data: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in data.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn memory_key_log_lines() {
        let log = MemoryKeyLog::default();
        log.log("CLIENT_HANDSHAKE_TRAFFIC_SECRET", &[0xab; 2], &[0x01, 0xff]);
        assert_eq!(
            log.lines.lock().unwrap().as_slice(),
            ["CLIENT_HANDSHAKE_TRAFFIC_SECRET abab 01ff"]
        );
    }
}
