//! Real TLS over a simulated TCP byte stream (`[flows.tls]`): rustls TLS 1.3 or 1.2
//! with the QUIC runs' certificate (the same seeded self-signed Ed25519 identity) and
//! quiclab-proto's seeded crypto provider, so a run stays a pure function of its seed.
//!
//! The layer sits between the TCP connection and the flow's application: ciphertext
//! read from TCP goes into rustls, plaintext written by the application leaves as TLS
//! records into TCP's send buffer. Memory is bounded: rustls holds at most
//! [`PLAINTEXT_LIMIT`] unsent plaintext, and ciphertext waits for the TCP send buffer
//! in a buffer of at most one such amount.
//!
//! Handshake times (from the SYN): TLS 1.3 completes at the client after 2 RTT (TCP
//! 1 RTT + ClientHello/ServerHello..Finished), TLS 1.2 after 3 RTT (two TLS round
//! trips). No session resumption, TFO or early data yet.

use quiclab_proto::crypto::cert::{self, Identity};
use quiclab_proto::crypto::choices::TlsChoices;
use quiclab_proto::crypto::provider::{provider_for, with_rng};
use quiclab_proto::rng::DetRng;
use quiclab_proto::time::Instant;
use quiclab_tcp::TcpConnection;
use rustls::crypto::CryptoProvider;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::sync::Arc;

/// Plaintext rustls buffers before encryption, and ciphertext waiting for TCP.
const PLAINTEXT_LIMIT: usize = 64 * 1024;
/// ALPN of TLS-over-TCP flows.
const ALPN: &[u8] = b"http/1.1";

/// A TCP flow's TLS settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    pub version: TlsVersion,
}

/// The TLS version both ends speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsVersion {
    #[serde(rename = "1.2")]
    Tls12,
    #[serde(rename = "1.3")]
    Tls13,
}

/// The provider: quiclab-proto's seeded TLS 1.3 provider plus ring's TLS 1.2 ECDHE
/// suites (ECDSA suites carry the Ed25519 certificate, RFC 8422 §5.1).
fn provider() -> Arc<CryptoProvider> {
    use rustls::crypto::ring::cipher_suite as cs;
    let base = provider_for(&TlsChoices::default());
    let mut p = (*base).clone();
    p.cipher_suites.extend([
        cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ]);
    Arc::new(p)
}

static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

fn versions(v: TlsVersion) -> &'static [&'static rustls::SupportedProtocolVersion] {
    match v {
        TlsVersion::Tls12 => &TLS12,
        TlsVersion::Tls13 => &TLS13,
    }
}

/// The client config: trusts `roots` (the servers' certificate), no resumption.
pub(crate) fn client_config(
    v: TlsVersion,
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    let mut store = rustls::RootCertStore::empty();
    store.add_parsable_certificates(roots);
    let mut c = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions(v))?
        .with_root_certificates(store)
        .with_no_client_auth();
    c.alpn_protocols = vec![ALPN.to_vec()];
    c.resumption = rustls::client::Resumption::disabled();
    if let Some(k) = key_log {
        c.key_log = k;
    }
    Ok(Arc::new(c))
}

/// The server config for `identity`, no tickets.
pub(crate) fn server_config(
    v: TlsVersion,
    identity: Identity,
) -> Result<Arc<rustls::ServerConfig>, rustls::Error> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions(v))?
        .with_no_client_auth();
    let mut c = match identity.signer {
        Some(signer) => builder.with_cert_resolver(Arc::new(FixedCert(Arc::new(
            rustls::sign::CertifiedKey::new(identity.chain, signer),
        )))),
        None => builder.with_single_cert(identity.chain, identity.key)?,
    };
    c.alpn_protocols = vec![ALPN.to_vec()];
    c.send_tls13_tickets = 0;
    Ok(Arc::new(c))
}

/// Serves one certificate with its deterministic signer.
#[derive(Debug)]
struct FixedCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::server::ResolvesServerCert for FixedCert {
    fn resolve(
        &self,
        _: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// The servers' identity, as the QUIC runs make it.
pub(crate) fn identity(seed: u64, padding: usize) -> Identity {
    cert::self_signed(&["localhost".to_string()], seed, padding)
}

/// One end's TLS session over its TCP connection.
pub(crate) struct TlsLayer {
    conn: rustls::Connection,
    rng: DetRng,
    /// Ciphertext not yet taken by TCP's send buffer.
    out: Vec<u8>,
    pub handshake_done_at: Option<Instant>,
    /// The application closed: close_notify then TCP FIN once everything left.
    closing: bool,
    fin_sent: bool,
    /// close_notify received (or the TCP stream ended).
    peer_closed: bool,
    pub error: Option<String>,
}

impl TlsLayer {
    pub fn new(conn: rustls::Connection, rng: DetRng) -> Self {
        TlsLayer {
            conn,
            rng,
            out: Vec::new(),
            handshake_done_at: None,
            closing: false,
            fin_sent: false,
            peer_closed: false,
            error: None,
        }
    }

    /// TCP -> rustls: feeds every readable byte and processes the records.
    pub fn pump_in(&mut self, now: Instant, tcp: &mut TcpConnection, buf: &mut [u8]) {
        loop {
            let n = tcp.read(buf);
            if n == 0 {
                break;
            }
            let mut slice = &buf[..n];
            while !slice.is_empty() && self.error.is_none() {
                let conn = &mut self.conn;
                let fed = with_rng(&mut self.rng, || conn.read_tls(&mut slice));
                if fed.is_err() || fed.is_ok_and(|k| k == 0) {
                    self.error = Some("TLS record buffer full".into());
                    break;
                }
                let conn = &mut self.conn;
                if let Err(e) = with_rng(&mut self.rng, || conn.process_new_packets()) {
                    self.error = Some(format!("TLS: {e}"));
                }
            }
        }
        if tcp.peer_finished() {
            self.peer_closed = true;
        }
        if self.handshake_done_at.is_none() && !self.conn.is_handshaking() {
            self.handshake_done_at = Some(now);
        }
    }

    /// rustls -> TCP: moves pending records into TCP's send buffer; sends the FIN
    /// once the application closed and everything left.
    pub fn pump_out(&mut self, tcp: &mut TcpConnection) {
        while self.conn.wants_write() && self.out.len() < PLAINTEXT_LIMIT {
            let conn = &mut self.conn;
            let out = &mut self.out;
            if with_rng(&mut self.rng, || conn.write_tls(out)).is_err() {
                break;
            }
        }
        let n = tcp.write(&self.out);
        self.out.drain(..n);
        if self.closing && self.out.is_empty() && !self.conn.wants_write() && !self.fin_sent {
            tcp.shutdown();
            self.fin_sent = true;
        }
    }

    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Plaintext from the application; returns how much was taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.closing || self.out.len() >= PLAINTEXT_LIMIT {
            return 0;
        }
        self.conn.set_buffer_limit(Some(PLAINTEXT_LIMIT));
        let conn = &mut self.conn;
        with_rng(&mut self.rng, || conn.writer().write(data)).unwrap_or(0)
    }

    /// Plaintext for the application.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        match self.conn.reader().read(buf) {
            Ok(0) if !buf.is_empty() => {
                self.peer_closed = true;
                0
            }
            Ok(n) => n,
            Err(_) => 0,
        }
    }

    pub fn shutdown(&mut self) {
        if !self.closing {
            self.closing = true;
            self.conn.send_close_notify();
        }
    }

    pub fn peer_finished(&self) -> bool {
        self.peer_closed
    }
}
