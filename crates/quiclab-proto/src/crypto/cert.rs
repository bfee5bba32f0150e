//! Certificates and TLS configs: seeded self-signed Ed25519 certificates (rcgen) by
//! default, PEM files on request, and the client/server rustls configs QUIC needs.

use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;

/// A certificate chain and its private key.
#[derive(Debug)]
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
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

/// A self-signed Ed25519 certificate for `names`, identical for the same `seed`.
/// `padding` adds that many bytes of an extra, non-critical extension, for experiments
/// that vary certificate size.
pub fn self_signed(names: &[String], seed: u64, padding: usize) -> Identity {
    let _ = (names, seed, padding);
    todo!("H2")
}

/// A chain and key from PEM files (the key: PKCS#8, PKCS#1 or SEC1).
pub fn load_pem(cert: &Path, key: &Path) -> Result<Identity, CertError> {
    let _ = (cert, key);
    todo!("H2")
}

/// How a client checks the server's certificate.
pub enum ServerVerification {
    /// Trust these roots (for example the server's self-signed certificate).
    Roots(Vec<CertificateDer<'static>>),
    /// Accept any certificate (signatures are still checked), for test servers.
    Insecure,
}

/// A TLS 1.3-only client config for QUIC with the given ALPN list and optional key log.
pub fn client_config(
    verify: ServerVerification,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Arc<rustls::ClientConfig> {
    let _ = (verify, alpn, key_log);
    todo!("H2")
}

/// A TLS 1.3-only server config for QUIC (no session tickets, no early data yet).
pub fn server_config(
    identity: Identity,
    alpn: &[Vec<u8>],
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Result<Arc<rustls::ServerConfig>, CertError> {
    let _ = (identity, alpn, key_log);
    todo!("H2")
}

/// A key log that keeps NSS key-log lines in memory (SSLKEYLOGFILE format), in order,
/// so a simulator can write them next to its pcap deterministically.
#[derive(Debug, Default)]
pub struct MemoryKeyLog {
    pub lines: std::sync::Mutex<Vec<String>>,
}

impl rustls::KeyLog for MemoryKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let _ = (label, client_random, secret);
        todo!("H2")
    }
}
