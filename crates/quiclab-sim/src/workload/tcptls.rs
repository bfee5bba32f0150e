//! Real TLS over a simulated TCP byte stream (`[flows.tls]`): rustls TLS 1.3 or 1.2
//! with the QUIC runs' certificate (the same seeded self-signed identity, of the
//! scenario's `certificate_type`), the flow's TLS choices (`scenario/tls.rs`: the
//! cipher suites as TLS 1.3 suites or the matching TLS 1.2 ECDHE suites, the key
//! exchange groups for both) and quiclab-proto's seeded crypto provider, so a run stays
//! a pure function of its seed (but for RSA-PSS salts, see `scenario/tls.rs`).
//!
//! The layer sits between the TCP connection and the flow's application: ciphertext
//! read from TCP goes into rustls, plaintext written by the application leaves as TLS
//! records into TCP's send buffer. Memory is bounded: rustls holds at most
//! `PLAINTEXT_LIMIT` (64 KiB) of unsent plaintext, and ciphertext waits for the TCP
//! send buffer in a buffer of at most one such amount.
//!
//! Handshake times (from the SYN): TLS 1.3 completes at the client after 2 RTT (TCP
//! 1 RTT + ClientHello/ServerHello..Finished), TLS 1.2 after 3 RTT (two TLS round
//! trips).
//!
//! Resumption and early data (the flow's `session_from`, `early_data`): flows linked by
//! `session_from` share a client session store and a server session cache (stateful
//! TLS 1.3 tickets, RFC 8446 §2.2 / §4.6.1), so a flow resumes with the ticket an
//! earlier flow of the same client received. With `early_data` the resuming client
//! sends its first bytes as 0-RTT data (RFC 8446 §2.3, §4.2.10) and the server answers
//! with half-RTT data after its Finished; over TFO (`[flows.tcp] fast_open`) the
//! ClientHello and the early data ride in the SYN, so the response arrives after one
//! round trip. Tickets need a clock: these configs read a fixed time (2026-01-01), so
//! ticket ages are 0 and runs reproduce. Rejected early data is written again after
//! the handshake (RFC 8446 §4.2.10: the client must resend it).

use crate::scenario::{TlsRecords, TlsVersion};
use crate::workload::tls_records::{record_overhead, RecordSizer};
use quiclab_proto::tls::{provider_for, with_rng, CertType, CipherSuite, Identity, TlsChoices};
use quiclab_proto::{DetRng, Instant};
use quiclab_tcp::TcpConnection;
use rustls::crypto::CryptoProvider;
use std::io::{Read, Write};
use std::sync::Arc;

/// Plaintext rustls buffers before encryption, and ciphertext waiting for TCP.
const PLAINTEXT_LIMIT: usize = 64 * 1024;
/// ALPN of TLS-over-TCP flows.
const ALPN: &[u8] = b"http/1.1";

/// Session resumption shared by the flows of one `session_from` chain.
#[derive(Debug)]
pub(crate) struct Resumption {
    pub client: Arc<dyn rustls::client::ClientSessionStore>,
    pub server: Arc<dyn rustls::server::StoresServerSessions>,
    /// Some flow of the chain sends early data: tickets allow it, servers accept it.
    pub early_data: bool,
    /// The chain's one client config: rustls resumes a ticket only with the verifier
    /// and client-auth resolver (compared by pointer) of the config that received it.
    config: std::sync::OnceLock<Arc<rustls::ClientConfig>>,
}

impl Resumption {
    pub fn new(early_data: bool) -> Self {
        Resumption {
            client: Arc::new(rustls::client::ClientSessionMemoryCache::new(8)),
            server: rustls::server::ServerSessionMemoryCache::new(8),
            early_data,
            config: std::sync::OnceLock::new(),
        }
    }
}

/// Most early data a ticket allows (RFC 8446 §4.6.1 max_early_data_size).
const MAX_EARLY_DATA: u32 = 16 * 1024;

/// The clock of resuming configs: fixed, so ticket ages (and bytes) reproduce.
#[derive(Debug)]
struct FixedTime;

impl rustls::time_provider::TimeProvider for FixedTime {
    fn current_time(&self) -> Option<rustls::pki_types::UnixTime> {
        Some(rustls::pki_types::UnixTime::since_unix_epoch(
            std::time::Duration::from_secs(1_767_225_600),
        ))
    }
}

/// The provider: quiclab-proto's seeded TLS 1.3 provider for `choices` plus the TLS
/// 1.2 ECDHE suites with the same AEADs, in the same order: ECDHE_ECDSA for Ed25519 and
/// ECDSA certificates (RFC 8422 §5.1), ECDHE_RSA for RSA.
fn provider(choices: &TlsChoices, cert: CertType) -> Arc<CryptoProvider> {
    use rustls::crypto::ring::cipher_suite as cs;
    let base = provider_for(choices);
    let mut p = (*base).clone();
    let rsa = cert == CertType::Rsa2048;
    p.cipher_suites
        .extend(choices.cipher_suites.iter().map(|s| match (s, rsa) {
            (CipherSuite::Aes128Gcm, false) => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            (CipherSuite::Aes256Gcm, false) => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            (CipherSuite::Chacha20Poly1305, false) => {
                cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
            }
            (CipherSuite::Aes128Gcm, true) => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            (CipherSuite::Aes256Gcm, true) => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            (CipherSuite::Chacha20Poly1305, true) => {
                cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
            }
        }));
    Arc::new(p)
}

/// What both ends of a TLS-over-TCP flow use: the version, each side's choices (client,
/// server) and the certificate type.
#[derive(Clone, Debug)]
pub(crate) struct TlsSetup {
    pub version: TlsVersion,
    pub choices: (TlsChoices, TlsChoices),
    pub cert: CertType,
}

static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];

fn versions(v: TlsVersion) -> &'static [&'static rustls::SupportedProtocolVersion] {
    match v {
        TlsVersion::Tls12 => &TLS12,
        TlsVersion::Tls13 => &TLS13,
    }
}

/// The client config: trusts `roots` (the servers' certificate); resumes through
/// `resume`'s store when given, else never.
pub(crate) fn client_config(
    setup: &TlsSetup,
    roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    key_log: Option<Arc<dyn rustls::KeyLog>>,
    resume: Option<&Resumption>,
) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    if let Some(c) = resume.and_then(|r| r.config.get()) {
        return Ok(c.clone());
    }
    let mut store = rustls::RootCertStore::empty();
    store.add_parsable_certificates(roots);
    let provider = provider(&setup.choices.0, setup.cert);
    let builder = match resume {
        Some(_) => rustls::ClientConfig::builder_with_details(provider, Arc::new(FixedTime)),
        None => rustls::ClientConfig::builder_with_provider(provider),
    };
    let mut c = builder
        .with_protocol_versions(versions(setup.version))?
        .with_root_certificates(store)
        .with_no_client_auth();
    c.alpn_protocols = vec![ALPN.to_vec()];
    c.resumption = match resume {
        Some(r) => rustls::client::Resumption::store(r.client.clone()),
        None => rustls::client::Resumption::disabled(),
    };
    c.enable_early_data = resume.is_some_and(|r| r.early_data);
    if let Some(k) = key_log {
        c.key_log = k;
    }
    let c = Arc::new(c);
    if let Some(r) = resume {
        let _ = r.config.set(c.clone());
    }
    Ok(c)
}

/// The server config for `identity`: no tickets, or with `resume` one stateful
/// ticket per connection (and early data when the chain uses it).
pub(crate) fn server_config(
    setup: &TlsSetup,
    identity: Identity,
    resume: Option<&Resumption>,
) -> Result<Arc<rustls::ServerConfig>, rustls::Error> {
    let provider = provider(&setup.choices.1, setup.cert);
    let builder = match resume {
        Some(_) => rustls::ServerConfig::builder_with_details(provider, Arc::new(FixedTime)),
        None => rustls::ServerConfig::builder_with_provider(provider),
    };
    let builder = builder
        .with_protocol_versions(versions(setup.version))?
        .with_no_client_auth();
    let mut c = match identity.signer {
        Some(signer) => builder.with_cert_resolver(Arc::new(FixedCert(Arc::new(
            rustls::sign::CertifiedKey::new(identity.chain, signer),
        )))),
        None => builder.with_single_cert(identity.chain, identity.key)?,
    };
    c.alpn_protocols = vec![ALPN.to_vec()];
    c.send_tls13_tickets = 0;
    if let Some(r) = resume {
        c.session_storage = r.server.clone();
        c.send_tls13_tickets = 1;
        if r.early_data {
            c.max_early_data_size = MAX_EARLY_DATA;
            // RFC 8446 §2.3: the response may leave right after the server's Finished.
            c.send_half_rtt_data = true;
        }
    }
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
    /// Client: plaintext sent as early data (written again if the server rejects it).
    early_sent: Vec<u8>,
    /// Server: early data received, not yet read by the application.
    early_in: Vec<u8>,
    /// Ciphertext read from TCP that rustls could not take yet (its received-plaintext
    /// buffer was full: after a loss is repaired, a whole window becomes readable at
    /// once). At most one read buffer: TCP is not read again until it is fed.
    pending_in: Vec<u8>,
    /// Dynamic record sizing's state (`None`: rustls's full-size records).
    sizer: Option<RecordSizer>,
    /// The time and TCP's data bytes per segment at the last `pump_in`, which the
    /// application's writes follow (`run_stream`).
    now: Instant,
    smss: u64,
}

impl TlsLayer {
    pub fn new(conn: rustls::Connection, rng: DetRng, records: TlsRecords) -> Self {
        TlsLayer {
            sizer: (records == TlsRecords::Dynamic).then(RecordSizer::default),
            now: Instant::ZERO,
            smss: 0,
            conn,
            rng,
            out: Vec::new(),
            handshake_done_at: None,
            closing: false,
            fin_sent: false,
            peer_closed: false,
            error: None,
            early_sent: Vec::new(),
            early_in: Vec::new(),
            pending_in: Vec::new(),
        }
    }

    /// Ciphertext bytes waiting for rustls to take them (see `pending_in`).
    pub fn pending_in(&self) -> usize {
        self.pending_in.len()
    }

    /// TCP -> rustls: feeds readable bytes and processes the records, until rustls's
    /// received-plaintext buffer is full; the rest of that read waits in `pending_in`
    /// (and TCP's receive buffer, whose window then closes) until the application read
    /// the plaintext and this is called again. Returns the ciphertext bytes rustls took
    /// (0: no progress until the application reads).
    pub fn pump_in(&mut self, now: Instant, tcp: &mut TcpConnection, buf: &mut [u8]) -> usize {
        self.now = now;
        self.smss = tcp.smss();
        let mut taken = 0;
        let mut pending = std::mem::take(&mut self.pending_in);
        if !pending.is_empty() {
            let left = self.feed(&pending);
            taken += pending.len() - left;
            pending.drain(..pending.len() - left);
            self.pending_in = pending;
        }
        while self.pending_in.is_empty() && self.error.is_none() {
            let n = tcp.read(buf);
            if n == 0 {
                break;
            }
            let left = self.feed(&buf[..n]);
            taken += n - left;
            self.pending_in.extend_from_slice(&buf[n - left..n]);
        }
        if tcp.peer_finished() {
            self.peer_closed = true;
        }
        if self.handshake_done_at.is_none() && !self.conn.is_handshaking() {
            self.handshake_done_at = Some(now);
            self.resend_rejected_early_data();
        }
        taken
    }

    /// Feeds `data` to rustls and processes the records; returns how many bytes at the
    /// end it could not take (its plaintext buffer is full until the application reads).
    fn feed(&mut self, data: &[u8]) -> usize {
        let mut slice = data;
        while !slice.is_empty() && self.error.is_none() {
            let conn = &mut self.conn;
            match with_rng(&mut self.rng, || conn.read_tls(&mut slice)) {
                Ok(k) if k > 0 => {}
                // A full buffer: rustls takes nothing more before the plaintext is read.
                _ if self.conn.wants_read() || self.conn.is_handshaking() => {
                    self.error = Some("TLS record buffer full".into());
                    break;
                }
                _ => return slice.len(),
            }
            let conn = &mut self.conn;
            if let Err(e) = with_rng(&mut self.rng, || conn.process_new_packets()) {
                self.error = Some(format!("TLS: {e}"));
            }
            self.take_early_data();
        }
        slice.len()
    }

    /// Server: moves accepted early data (RFC 8446 §4.2.10) to the application's queue.
    fn take_early_data(&mut self) {
        if let rustls::Connection::Server(s) = &mut self.conn {
            if let Some(mut ed) = s.early_data() {
                let _ = ed.read_to_end(&mut self.early_in);
            }
        }
    }

    /// Client: early data the server did not accept goes again as ordinary data.
    fn resend_rejected_early_data(&mut self) {
        let rustls::Connection::Client(c) = &mut self.conn else {
            return;
        };
        if self.early_sent.is_empty() || c.is_early_data_accepted() {
            return;
        }
        let data = std::mem::take(&mut self.early_sent);
        let _ = with_rng(&mut self.rng, || c.writer().write_all(&data));
    }

    /// Whether the application may run during the handshake: the client can still
    /// write early data, or the server has early data to read.
    pub fn early_data_open(&mut self) -> bool {
        match &mut self.conn {
            rustls::Connection::Client(c) => c.early_data().is_some(),
            rustls::Connection::Server(_) => !self.early_in.is_empty(),
        }
    }

    /// rustls -> TCP: moves pending records into TCP's send buffer; sends the FIN
    /// once the application closed and everything left.
    pub fn pump_out(&mut self, tcp: &mut TcpConnection) {
        self.drain_records(PLAINTEXT_LIMIT);
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
        if let rustls::Connection::Client(c) = &mut self.conn {
            if c.is_handshaking() {
                if let Some(mut ed) = c.early_data() {
                    // RFC 8446 §2.3: 0-RTT data, up to the ticket's max_early_data_size.
                    let n = with_rng(&mut self.rng, || ed.write(data)).unwrap_or(0);
                    self.early_sent.extend_from_slice(&data[..n]);
                    if n > 0 {
                        return n;
                    }
                }
            }
        }
        self.conn.set_buffer_limit(Some(PLAINTEXT_LIMIT));
        if self.sizer.is_some() {
            return self.write_sized(data);
        }
        let conn = &mut self.conn;
        with_rng(&mut self.rng, || conn.writer().write(data)).unwrap_or(0)
    }

    /// Dynamic record sizing (`tls_records.rs`): one record per write to rustls, each
    /// moved to `out` at once so rustls's buffer limit never cuts a record short. `out`
    /// may pass `PLAINTEXT_LIMIT` by one record.
    fn write_sized(&mut self, data: &[u8]) -> usize {
        let mut taken = 0;
        while taken < data.len() && self.out.len() < PLAINTEXT_LIMIT {
            let overhead = record_overhead(self.conn.negotiated_cipher_suite());
            let Some(sizer) = self.sizer.as_mut() else {
                break;
            };
            let len = sizer
                .next_record(self.now, self.smss, overhead)
                .min(data.len() - taken);
            let conn = &mut self.conn;
            let chunk = &data[taken..taken + len];
            let n = with_rng(&mut self.rng, || conn.writer().write(chunk)).unwrap_or(0);
            sizer.on_written(self.now, n);
            taken += n;
            self.drain_records(usize::MAX);
            if n < len {
                break;
            }
        }
        taken
    }

    /// Moves rustls's pending records into `out` while it holds less than `limit`.
    fn drain_records(&mut self, limit: usize) {
        while self.conn.wants_write() && self.out.len() < limit {
            let conn = &mut self.conn;
            let out = &mut self.out;
            if with_rng(&mut self.rng, || conn.write_tls(out)).is_err() {
                break;
            }
        }
    }

    /// Plaintext for the application (early data first).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        if !self.early_in.is_empty() {
            let n = buf.len().min(self.early_in.len());
            buf[..n].copy_from_slice(&self.early_in[..n]);
            self.early_in.drain(..n);
            return n;
        }
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
