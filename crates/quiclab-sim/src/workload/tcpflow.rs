//! A flow's endpoint when it runs over TCP (`transport = "tcp"`): a quiclab-tcp
//! connection and the workload's application on its byte stream, with the same
//! measurements as a QUIC flow (`AppMeasure`, `SideMetrics`).
//!
//! Workloads over one TCP byte stream:
//! - `bulk`: the client writes its bytes then sends a FIN; the server counts what it
//!   reads and is done at the FIN (the QUIC bulk flow's uni stream, same measure);
//! - `request`: HTTP/1.1-like, one request at a time: the client writes `GET /N\r\n`,
//!   the server answers N bytes; the response is complete when N bytes arrived.
//!   After the last response the client closes.
//!
//! Metrics mapping (flows.csv columns): every segment counts as a "tcp" packet (its
//! TCP header and data, like QUIC's packet sizes without UDP/IP), a segment without
//! data, SYN or FIN counts as an "ack" frame, a received data segment as
//! ack-eliciting; `packets_lost` are segments declared lost, `ptos` are RTOs plus tail
//! loss probes.

use crate::output::metrics::{MetricsSink, SideMetrics};
use crate::scenario::{TlsRecords, Workload};
use crate::workload::app::{AppMeasure, MeasureWindow};
use crate::workload::tcptls::TlsLayer;
use quiclab_proto::events::{Event as ProtoEvent, EventSink, RecoveryMetrics};
use quiclab_proto::{Ecn, Instant};
use quiclab_tcp::wire::{flags, Header};
use quiclab_tcp::{Event, TcpConfig, TcpConnection};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::{Arc, Mutex};

/// TCP Fast Open cookies a simulated client host holds, per (client, server) address
/// (RFC 7413 §4.1.3: cached per server IP), shared by the flows of one simulation.
pub(crate) type CookieCache = Arc<Mutex<BTreeMap<(Ipv4Addr, Ipv4Addr), Vec<u8>>>>;

/// The byte stream a flow's application uses: TCP itself, or TLS over it.
pub(crate) trait ByteStream {
    /// Takes up to `data.len()` bytes; returns how many.
    fn write(&mut self, data: &[u8]) -> usize;
    /// Reads into `buf`; 0 when nothing is readable.
    fn read(&mut self, buf: &mut [u8]) -> usize;
    /// No more writes: FIN (after TLS's close_notify).
    fn shutdown(&mut self);
    /// The peer closed its direction and everything before was read.
    fn peer_finished(&self) -> bool;
}

impl ByteStream for TcpConnection {
    fn write(&mut self, data: &[u8]) -> usize {
        TcpConnection::write(self, data)
    }
    fn read(&mut self, buf: &mut [u8]) -> usize {
        TcpConnection::read(self, buf)
    }
    fn shutdown(&mut self) {
        TcpConnection::shutdown(self);
    }
    fn peer_finished(&self) -> bool {
        TcpConnection::peer_finished(self)
    }
}

impl ByteStream for TlsLayer {
    fn write(&mut self, data: &[u8]) -> usize {
        TlsLayer::write(self, data)
    }
    fn read(&mut self, buf: &mut [u8]) -> usize {
        TlsLayer::read(self, buf)
    }
    fn shutdown(&mut self) {
        TlsLayer::shutdown(self);
    }
    fn peer_finished(&self) -> bool {
        TlsLayer::peer_finished(self)
    }
}

/// Zero bytes the senders write from.
static CHUNK: [u8; 64 * 1024] = [0u8; 64 * 1024];

/// One end of a TCP flow.
pub(crate) struct TcpHost {
    /// The client's connection exists from the flow's start; the server listens.
    pub conn: Option<TcpConnection>,
    /// TLS over the connection, when the flow has `[flows.tls]`.
    tls: Option<TlsLayer>,
    /// The client's TLS session and record sizing, installed when it connects.
    tls_client: Option<(Arc<rustls::ClientConfig>, u64, TlsRecords)>,
    setup_error: Option<String>,
    app: TcpApp,
    config: TcpConfig,
    local: SocketAddrV4,
    seed: u64,
    metrics: Arc<Mutex<SideMetrics>>,
    sink: MetricsSink,
    /// The client's TFO cookie cache (with `fast_open`).
    cookies: Option<CookieCache>,
}

enum TcpApp {
    Client(ClientState),
    Server(ServerState),
}

struct ClientState {
    workload: Workload,
    stop_at: Option<Instant>,
    sent: u64,
    issued: u64,
    /// The request being answered: (index, response bytes still due).
    pending: Option<(usize, u64)>,
    next_request_at: Option<Instant>,
    closed: bool,
}

struct ServerState {
    /// A bulk flow's receiver (else a responder).
    bulk: bool,
    request: Vec<u8>,
    respond: u64,
    closed: bool,
}

fn lock(m: &Mutex<SideMetrics>) -> std::sync::MutexGuard<'_, SideMetrics> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TcpHost {
    pub fn client(
        workload: &Workload,
        config: TcpConfig,
        local: SocketAddrV4,
        seed: u64,
        metrics: Arc<Mutex<SideMetrics>>,
        traces: bool,
    ) -> Self {
        let stop_at = match workload {
            Workload::Bulk { stop_s, .. } => {
                stop_s.map(|s| Instant::ZERO + crate::net::engine::saturating_secs(s))
            }
            _ => None,
        };
        TcpHost {
            conn: None,
            tls: None,
            tls_client: None,
            setup_error: None,
            app: TcpApp::Client(ClientState {
                workload: workload.clone(),
                stop_at,
                sent: 0,
                issued: 0,
                pending: None,
                next_request_at: None,
                closed: false,
            }),
            config,
            local,
            seed,
            sink: MetricsSink {
                metrics: metrics.clone(),
                traces,
            },
            metrics,
            cookies: None,
        }
    }

    pub fn server(
        workload: &Workload,
        config: TcpConfig,
        local: SocketAddrV4,
        seed: u64,
        metrics: Arc<Mutex<SideMetrics>>,
        traces: bool,
    ) -> Self {
        let conn = TcpConnection::listen(config.clone(), local, iss(seed), seed);
        TcpHost {
            conn: Some(conn),
            tls: None,
            tls_client: None,
            setup_error: None,
            app: TcpApp::Server(ServerState {
                bulk: matches!(workload, Workload::Bulk { .. }),
                request: Vec::new(),
                respond: 0,
                closed: false,
            }),
            config,
            local,
            seed,
            sink: MetricsSink {
                metrics: metrics.clone(),
                traces,
            },
            metrics,
            cookies: None,
        }
    }

    /// A client's TFO cookie cache (RFC 7413 §4.1.3).
    pub fn with_cookie_cache(mut self, cache: CookieCache) -> Self {
        self.cookies = Some(cache);
        self
    }

    /// A server's TFO cookie secret (one per server host).
    pub fn with_fast_open_key(mut self, key: u64) -> Self {
        if let Some(c) = self.conn.as_mut() {
            c.set_fast_open_key(key);
        }
        self
    }

    fn cookie_key(&self, remote: SocketAddrV4) -> (Ipv4Addr, Ipv4Addr) {
        (*self.local.ip(), *remote.ip())
    }

    /// Runs TLS as the client with `config` and `records` (the session starts at
    /// `connect`).
    pub fn with_tls_client(
        mut self,
        config: Arc<rustls::ClientConfig>,
        records: TlsRecords,
    ) -> Self {
        self.tls_client = Some((config, self.seed, records));
        self
    }

    /// Runs TLS as the server with `config` and `records`.
    pub fn with_tls_server(
        mut self,
        config: Arc<rustls::ServerConfig>,
        records: TlsRecords,
    ) -> Result<Self, rustls::Error> {
        let mut rng = quiclab_proto::DetRng::new(self.seed ^ 0x7715);
        let conn =
            quiclab_proto::tls::with_rng(&mut rng, || rustls::ServerConnection::new(config))?;
        self.tls = Some(TlsLayer::new(conn.into(), rng, records));
        Ok(self)
    }

    /// The client opens its connection (sends the SYN on the next poll).
    pub fn connect(&mut self, remote: SocketAddrV4) {
        if let Some((config, seed, records)) = self.tls_client.take() {
            let mut rng = quiclab_proto::DetRng::new(seed ^ 0x7715);
            let name = rustls::pki_types::ServerName::try_from("localhost").expect("a valid name");
            let conn = quiclab_proto::tls::with_rng(&mut rng, || {
                rustls::ClientConnection::new(config, name)
            });
            match conn {
                Ok(c) => self.tls = Some(TlsLayer::new(c.into(), rng, records)),
                Err(e) => self.setup_error = Some(format!("TLS client: {e}")),
            }
        }
        let mut conn = TcpConnection::connect(
            self.config.clone(),
            self.local,
            remote,
            iss(self.seed),
            self.seed,
        );
        if let Some(cache) = &self.cookies {
            let cached = cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&self.cookie_key(remote))
                .cloned();
            conn.set_fast_open_cookie(cached);
        }
        self.conn = Some(conn);
    }

    /// Keeps a cookie the server issued for the next connection to it.
    fn cache_cookie(&self) {
        let (Some(cache), Some(conn)) = (&self.cookies, &self.conn) else {
            return;
        };
        let (Some(c), Some(remote)) = (conn.fast_open_cookie_received(), conn.remote()) else {
            return;
        };
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache
            .get(&self.cookie_key(remote))
            .is_none_or(|old| old != c)
        {
            cache.insert(self.cookie_key(remote), c.to_vec());
        }
    }

    /// A segment arrived from `src` with IP ECN codepoint `ecn`; a malformed one is
    /// counted and dropped.
    pub fn handle_segment(&mut self, now: Instant, src: SocketAddrV4, ecn: Ecn, seg: &[u8]) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let data = Header::decode_unchecked(seg).is_ok_and(|(_, off)| seg.len() > off);
        if conn.handle_segment_ecn(now, src, ecn, seg).is_err() {
            return;
        }
        self.cache_cookie();
        let Some(conn) = self.conn.as_ref() else {
            return;
        };
        {
            let mut m = lock(&self.metrics);
            let c = m.received_by_packet_type.entry("tcp".into()).or_default();
            c.packets += 1;
            c.bytes += seg.len() as u64;
            if data {
                m.ack_eliciting_received += 1;
            }
        }
        let rtt = conn.rtt();
        let update = RecoveryMetrics {
            min_rtt: Some(rtt.min()),
            smoothed_rtt: Some(rtt.smoothed()),
            latest_rtt: rtt.has_sample().then(|| rtt.latest()),
            rtt_variance: Some(rtt.rttvar()),
            congestion_window: Some(conn.congestion_window()),
            bytes_in_flight: Some(conn.bytes_in_flight()),
            ..RecoveryMetrics::default()
        };
        self.sink.event(now, &ProtoEvent::MetricsUpdated(update));
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(c) = self.conn.as_mut() {
            c.handle_timeout(now);
        }
    }

    /// The next segment to send into `buf`: where, and its IP ECN codepoint.
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(SocketAddrV4, Ecn)> {
        let t = self.conn.as_mut()?.poll_transmit(now, buf)?;
        let mut m = lock(&self.metrics);
        m.sent.packets += 1;
        m.sent.bytes += t.size as u64;
        let c = m.sent_by_packet_type.entry("tcp".into()).or_default();
        c.packets += 1;
        c.bytes += t.size as u64;
        if let Ok((h, off)) = Header::decode_unchecked(buf) {
            if buf.len() == off && h.flags & (flags::SYN | flags::FIN) == 0 {
                let a = m.sent_by_frame_type.entry("ack".into()).or_default();
                a.packets += 1;
                a.bytes += off as u64;
            }
        }
        Some((t.destination, t.ecn))
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conn.as_ref()?.poll_timeout()
    }

    /// When the application next needs to act without network input.
    pub fn wakeup(&self) -> Option<Instant> {
        match &self.app {
            TcpApp::Client(c) if !c.closed => c.stop_at.or(c.next_request_at),
            _ => None,
        }
    }

    /// Runs the application at `now`.
    pub fn drive(&mut self, now: Instant, m: &mut AppMeasure, w: &MeasureWindow, buf: &mut [u8]) {
        let app = &mut self.app;
        run_stream(
            (&mut self.conn, &mut self.tls, &self.setup_error),
            now,
            m,
            buf,
            &mut |stream, m, buf| drive_app(app, now, stream, m, w, buf),
        );
    }

    /// Runs `f` on the connection's byte stream (TLS's when the flow has TLS) once the
    /// application may use it, for an application outside this host (`tcpweb.rs`).
    pub fn with_stream(
        &mut self,
        now: Instant,
        m: &mut AppMeasure,
        buf: &mut [u8],
        f: &mut StreamFn<'_>,
    ) {
        run_stream(
            (&mut self.conn, &mut self.tls, &self.setup_error),
            now,
            m,
            buf,
            f,
        );
    }

    /// Segments lost and timer expiries (RTOs plus TLPs), for the results.
    pub fn finish_metrics(&self) {
        if let Some(c) = &self.conn {
            let s = c.stats();
            let mut m = lock(&self.metrics);
            m.packets_lost = s.lost_segments;
            m.pto_expirations = s.rto_count + s.tlp_count;
        }
    }

    /// TLS's handshake completion over TLS, else TCP's.
    pub fn handshake_completed_at(&self) -> Option<Instant> {
        match &self.tls {
            Some(t) => t.handshake_done_at,
            None => self.conn.as_ref()?.stats().handshake_completed_at,
        }
    }

    pub fn close_reason(&self) -> Option<String> {
        Some(format!("{:?}", self.conn.as_ref()?.close_reason()?))
    }
}

/// The application callback of [`run_stream`] and [`TcpHost::with_stream`].
pub(crate) type StreamFn<'a> = dyn FnMut(&mut dyn ByteStream, &mut AppMeasure, &mut [u8]) + 'a;

/// Takes the connection's events, then runs `f` on its byte stream when the
/// application may use it: once established (or early, with TFO), over TLS once its
/// handshake is done (or early data is open).
fn run_stream(
    (conn, tls, setup_error): (
        &mut Option<TcpConnection>,
        &mut Option<TlsLayer>,
        &Option<String>,
    ),
    now: Instant,
    m: &mut AppMeasure,
    buf: &mut [u8],
    f: &mut StreamFn<'_>,
) {
    let Some(conn) = conn.as_mut() else {
        return;
    };
    while let Some(e) = conn.poll_event() {
        if let Event::Closed(why) = e {
            if why != quiclab_tcp::CloseReason::Finished && m.done_at.is_none() {
                m.aborted
                    .get_or_insert(format!("TCP connection closed: {why:?}"));
            }
        }
    }
    // With TFO the client writes before its SYN leaves (the data rides in it) and
    // a server that accepted SYN data answers before the handshake completes.
    let early = conn.may_write_before_syn()
        || (conn.fast_open_accepted() && conn.state() == quiclab_tcp::State::SynReceived);
    if !conn.is_established() && !early {
        return;
    }
    if let Some(e) = setup_error {
        m.aborted.get_or_insert(e.clone());
        return;
    }
    let Some(tls) = tls.as_mut() else {
        f(conn, m, buf);
        return;
    };
    // Feed TLS, let the application read, again while ciphertext waits that rustls
    // could not take before the plaintext was read (`TlsLayer::pending_in`), as long as
    // rustls takes some. Progress is what rustls took, not whether less waits: one pass
    // can feed the waiting bytes and refill them from TCP, and stopping then left them
    // waiting for a packet that might never come (tests/sim/tls_tcp_read_stall.rs).
    loop {
        let taken = tls.pump_in(now, conn, buf);
        if let Some(e) = &tls.error {
            m.aborted.get_or_insert(e.clone());
        }
        if !tls.is_handshaking() || tls.early_data_open() {
            f(tls, m, buf);
        }
        if tls.pending_in() == 0 || taken == 0 || tls.error.is_some() {
            break;
        }
    }
    tls.pump_out(conn);
}

fn drive_app(
    app: &mut TcpApp,
    now: Instant,
    stream: &mut dyn ByteStream,
    m: &mut AppMeasure,
    w: &MeasureWindow,
    buf: &mut [u8],
) {
    match app {
        TcpApp::Client(c) => c.drive(now, stream, m, w, buf),
        TcpApp::Server(s) => s.drive(now, stream, m, w, buf),
    }
}

/// The initial sequence number: from the endpoint's seed (RFC 9293 §3.4.1 wants it
/// unpredictable; a seeded value keeps runs reproducible).
fn iss(seed: u64) -> u32 {
    (seed ^ (seed >> 32)) as u32
}

/// Reads everything readable; returns the bytes read.
fn drain(conn: &mut dyn ByteStream, buf: &mut [u8]) -> u64 {
    let mut total = 0;
    loop {
        let n = conn.read(buf);
        if n == 0 {
            return total;
        }
        total += n as u64;
    }
}

/// Writes up to `remaining` zero bytes; returns how many the send buffer took.
fn push(conn: &mut dyn ByteStream, remaining: u64) -> u64 {
    let mut sent = 0;
    while sent < remaining {
        let n = (remaining - sent).min(CHUNK.len() as u64) as usize;
        let k = conn.write(&CHUNK[..n]);
        if k == 0 {
            break;
        }
        sent += k as u64;
    }
    sent
}

impl ClientState {
    fn drive(
        &mut self,
        now: Instant,
        conn: &mut dyn ByteStream,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
    ) {
        if self.closed {
            return;
        }
        match self.workload.clone() {
            Workload::Bulk { bytes, .. } => {
                let stop = self.stop_at.is_some_and(|t| now >= t);
                let limit = bytes.unwrap_or(u64::MAX);
                if !stop {
                    self.sent += push(conn, limit - self.sent);
                }
                if stop || self.sent >= limit {
                    conn.shutdown();
                    self.closed = true;
                }
            }
            Workload::Request {
                size,
                count,
                think_ms,
                ..
            } => self.drive_requests(now, conn, m, w, buf, (size, count, think_ms)),
            // Page is QUIC-only; search and video flows run `tcpweb.rs`.
            _ => {}
        }
    }

    fn drive_requests(
        &mut self,
        now: Instant,
        conn: &mut dyn ByteStream,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
        (size, count, think_ms): (u64, u64, f64),
    ) {
        if let Some((idx, left)) = self.pending {
            let n = drain(conn, buf);
            m.record(now, n, w);
            let r = &mut m.requests[idx];
            if n > 0 && r.1.is_none() {
                r.1 = Some(now);
            }
            let left = left.saturating_sub(n);
            self.pending = Some((idx, left));
            if left == 0 {
                r.2 = Some(now);
                self.pending = None;
                if think_ms > 0.0 {
                    self.next_request_at =
                        Some(now + crate::net::engine::saturating_secs(think_ms / 1000.0));
                }
            }
        }
        let thinking = self.next_request_at.is_some_and(|t| now < t);
        if !thinking && self.pending.is_none() && self.issued < count {
            let req = format!("GET /{size}\r\n");
            if conn.write(req.as_bytes()) == req.len() {
                self.pending = Some((m.requests.len(), size));
                m.requests.push((now, None, None));
                self.issued += 1;
            }
        }
        if !thinking {
            self.next_request_at = None;
        }
        if self.issued == count && self.pending.is_none() {
            m.done_at.get_or_insert(now);
            conn.shutdown();
            self.closed = true;
        }
    }
}

impl ServerState {
    fn drive(
        &mut self,
        now: Instant,
        conn: &mut dyn ByteStream,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
    ) {
        loop {
            let n = conn.read(buf);
            if n == 0 {
                break;
            }
            if self.bulk {
                // Bulk data: counted as goodput, discarded.
                m.record(now, n as u64, w);
                continue;
            }
            self.request.extend_from_slice(&buf[..n]);
            // Bounded: a request line is short; anything else is discarded as data.
            if self.request.len() > 4096 {
                self.request.clear();
            }
        }
        while let Some(end) = self.request.windows(2).position(|x| x == b"\r\n") {
            let line: Vec<u8> = self.request.drain(..end + 2).collect();
            self.respond += parse_get(&line).unwrap_or(0);
        }
        if self.respond > 0 {
            self.respond -= push(conn, self.respond);
        }
        if conn.peer_finished() && self.respond == 0 && !self.closed {
            if self.bulk {
                m.done_at.get_or_insert(now);
            }
            conn.shutdown();
            self.closed = true;
        }
    }
}

/// `GET /N\r\n` -> N.
fn parse_get(req: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(req).ok()?;
    s.strip_prefix("GET /")?.trim_end().parse().ok()
}
