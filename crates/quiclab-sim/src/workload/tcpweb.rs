//! The `search` and `video` workloads over TCP (`[flows.http]`, `scenario/web.rs`):
//! a flow's end that holds one or more TCP(+TLS) connections ([`TcpHost`]s used as
//! byte streams) and the web client (`webapp.rs`) or its server on top.
//!
//! - `multiplex`: one connection, every fetch a stream of the HTTP/2-style framing of
//!   `h2mux.rs`; the server interleaves responses round robin, so a lost segment
//!   stalls every stream behind it (TCP's head-of-line blocking).
//! - `pool`: HTTP/1.1-style, like a browser's connection pool: up to `pool_size`
//!   connections, one request in flight on each (`GET /N\r\n`, N bytes back). A new
//!   fetch goes to the first idle connection (in opening order); while fetches wait
//!   and every connection is busy, the client opens another connection (each with its
//!   own TCP and TLS handshakes) until `pool_size` are open or opening.
//!
//! Connection k of flow i uses client port 40000 + i for k = 0 and ports from
//! `scenario::EXTRA_PORTS` for the others; the server demultiplexes them by the
//! client's address. Every connection's segments count in the flow's metrics.

use crate::net::topology::derive_seed;
use crate::output::metrics::SideMetrics;
use crate::scenario::{TcpHttp, TlsRecords, Workload};
use crate::workload::app::{AppMeasure, MeasureWindow};
use crate::workload::h2mux::{self, Frame, Parser, Sender};
use crate::workload::tcpflow::{ByteStream, CookieCache, TcpHost};
use crate::workload::webapp::WebClient;
use quiclab_proto::{Ecn, Instant};
use quiclab_tcp::TcpConfig;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};

/// Zero bytes HTTP/1.1-style responses are written from.
static CHUNK: [u8; 64 * 1024] = [0u8; 64 * 1024];

/// Most requests a multiplexing server keeps open (a bound on its memory whatever the
/// client sends; a search has at most `MAX_OBJECTS` + 1).
const MAX_OPEN_STREAMS: usize = 100_000;

/// What makes the connections of one side of a web flow.
pub(crate) struct Spec {
    pub workload: Workload,
    pub config: TcpConfig,
    pub seed: u64,
    pub metrics: Arc<Mutex<SideMetrics>>,
    pub traces: bool,
    pub mode: TcpHttp,
    /// Client: TFO cookie cache; server: TFO key.
    pub cookies: Option<CookieCache>,
    pub fast_open_key: Option<u64>,
    pub tls_client: Option<Arc<rustls::ClientConfig>>,
    pub tls_server: Option<Arc<rustls::ServerConfig>>,
    /// The TLS records' sizing (`[flows.tls] records`).
    pub tls_records: TlsRecords,
}

impl Spec {
    /// Connection `k`'s seed (the first keeps the flow's).
    fn seed(&self, k: usize) -> u64 {
        if k == 0 {
            self.seed
        } else {
            derive_seed(self.seed, &format!("conn:{k}"))
        }
    }
}

/// One end of a TCP flow: a single connection with its own application
/// (`tcpflow.rs`), or a web client or server over several. The simulator boxes it, so
/// the variants may differ in size.
#[allow(clippy::large_enum_variant)]
pub(crate) enum TcpEnd {
    One(TcpHost),
    WebClient(TcpWebClient),
    WebServer(TcpWebServer),
}

impl TcpEnd {
    fn hosts(&self) -> Box<dyn Iterator<Item = &TcpHost> + '_> {
        match self {
            TcpEnd::One(h) => Box::new(std::iter::once(h)),
            TcpEnd::WebClient(c) => Box::new(c.chans.iter().map(|c| &c.host)),
            TcpEnd::WebServer(s) => Box::new(s.chans.values().map(|c| &c.host)),
        }
    }

    fn hosts_mut(&mut self) -> Box<dyn Iterator<Item = &mut TcpHost> + '_> {
        match self {
            TcpEnd::One(h) => Box::new(std::iter::once(h)),
            TcpEnd::WebClient(c) => Box::new(c.chans.iter_mut().map(|c| &mut c.host)),
            TcpEnd::WebServer(s) => Box::new(s.chans.values_mut().map(|c| &mut c.host)),
        }
    }

    /// The client starts (a web client opens its first connection).
    pub fn connect(&mut self, remote: SocketAddrV4) {
        match self {
            TcpEnd::One(h) => h.connect(remote),
            TcpEnd::WebClient(c) => c.start(remote),
            TcpEnd::WebServer(_) => {}
        }
    }

    /// A segment from `src` that arrived with IP ECN codepoint `ecn`.
    pub fn handle_segment(&mut self, now: Instant, src: SocketAddrV4, ecn: Ecn, seg: &[u8]) {
        match self {
            TcpEnd::One(h) => h.handle_segment(now, src, ecn, seg),
            TcpEnd::WebClient(c) => {
                // Every connection's local port is distinct; the segment names it.
                let port = quiclab_tcp::wire::Header::decode_unchecked(seg)
                    .map(|(h, _)| h.dst_port)
                    .ok();
                if let Some(ch) = c.chans.iter_mut().find(|ch| Some(ch.local.port()) == port) {
                    ch.host.handle_segment(now, src, ecn, seg);
                }
            }
            TcpEnd::WebServer(s) => s.handle_segment(now, src, ecn, seg),
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        for h in self.hosts_mut() {
            h.handle_timeout(now);
        }
    }

    /// The next segment of any connection, taking the connections in turn: its
    /// destination, its source when that is not the end's own address (a web
    /// client's second and later connections), and its IP ECN codepoint.
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(SocketAddrV4, Option<SocketAddrV4>, Ecn)> {
        let (rr, n) = match self {
            TcpEnd::One(h) => return h.poll_transmit(now, buf).map(|(d, e)| (d, None, e)),
            TcpEnd::WebClient(c) => (&mut c.rr, c.chans.len()),
            TcpEnd::WebServer(s) => (&mut s.rr, s.chans.len()),
        };
        let start = *rr;
        let mut found = None;
        for i in 0..n {
            let k = (start + i) % n.max(1);
            let host = match self {
                TcpEnd::WebClient(c) => &mut c.chans[k].host,
                TcpEnd::WebServer(s) => &mut s.chans.values_mut().nth(k).expect("k < len").host,
                TcpEnd::One(_) => unreachable!("returned above"),
            };
            if let Some(d) = host.poll_transmit(now, buf) {
                found = Some((k, d));
                break;
            }
        }
        let (k, (d, e)) = found?;
        match self {
            TcpEnd::WebClient(c) => {
                c.rr = k + 1;
                Some((d, Some(c.chans[k].local), e))
            }
            TcpEnd::WebServer(s) => {
                s.rr = k + 1;
                Some((d, None, e))
            }
            TcpEnd::One(_) => Some((d, None, e)),
        }
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.hosts().filter_map(TcpHost::poll_timeout).min()
    }

    pub fn wakeup(&self) -> Option<Instant> {
        match self {
            TcpEnd::One(h) => h.wakeup(),
            TcpEnd::WebClient(c) => (!c.web.is_done()).then(|| c.web.wakeup()).flatten(),
            TcpEnd::WebServer(_) => None,
        }
    }

    pub fn drive(&mut self, now: Instant, m: &mut AppMeasure, w: &MeasureWindow, buf: &mut [u8]) {
        match self {
            TcpEnd::One(h) => h.drive(now, m, w, buf),
            TcpEnd::WebClient(c) => c.drive(now, m, w, buf),
            TcpEnd::WebServer(s) => s.drive(now, m, buf),
        }
    }

    /// Lost segments and timer expiries of all connections, for the results.
    pub fn finish_metrics(&self) {
        let metrics = match self {
            TcpEnd::One(h) => return h.finish_metrics(),
            TcpEnd::WebClient(c) => &c.spec.metrics,
            TcpEnd::WebServer(s) => &s.spec.metrics,
        };
        let (mut lost, mut timers) = (0, 0);
        for h in self.hosts() {
            if let Some(c) = &h.conn {
                let s = c.stats();
                lost += s.lost_segments;
                timers += s.rto_count + s.tlp_count;
            }
        }
        let mut m = metrics.lock().unwrap_or_else(|e| e.into_inner());
        m.packets_lost = lost;
        m.pto_expirations = timers;
    }

    /// The first connection's handshake completion.
    pub fn handshake_completed_at(&self) -> Option<Instant> {
        self.hosts().next()?.handshake_completed_at()
    }

    pub fn close_reason(&self) -> Option<String> {
        self.hosts().next()?.close_reason()
    }
}

/// A client connection and what runs on it.
struct ClientChan {
    host: TcpHost,
    local: SocketAddrV4,
    /// The stream was usable once (handshakes done).
    ready: bool,
    shut: bool,
    proto: ClientProto,
}

enum ClientProto {
    /// The fetch in flight: (index, response bytes still due).
    Pool(Option<(usize, u64)>),
    Mux {
        parser: Parser,
        /// Stream id -> fetch index.
        streams: BTreeMap<u32, usize>,
        next_stream: u32,
    },
}

/// The client end of a web flow over TCP.
pub(crate) struct TcpWebClient {
    spec: Spec,
    web: WebClient,
    /// Client addresses of the connections, in opening order.
    locals: Vec<SocketAddrV4>,
    remote: Option<SocketAddrV4>,
    chans: Vec<ClientChan>,
    /// Fetches not yet written: (index, bytes).
    queue: VecDeque<(usize, u64)>,
    rr: usize,
}

impl TcpWebClient {
    /// `locals` has one address per connection the mode may open.
    pub fn new(spec: Spec, web: WebClient, locals: Vec<SocketAddrV4>) -> Self {
        TcpWebClient {
            spec,
            web,
            locals,
            remote: None,
            chans: Vec::new(),
            queue: VecDeque::new(),
            rr: 0,
        }
    }

    fn start(&mut self, remote: SocketAddrV4) {
        self.remote = Some(remote);
        self.open();
    }

    /// Opens the next connection.
    fn open(&mut self) {
        let (Some(remote), Some(&local)) = (self.remote, self.locals.get(self.chans.len())) else {
            return;
        };
        let s = &self.spec;
        let mut host = TcpHost::client(
            &s.workload,
            s.config.clone(),
            local,
            s.seed(self.chans.len()),
            s.metrics.clone(),
            s.traces,
        );
        if let Some(c) = &s.cookies {
            host = host.with_cookie_cache(c.clone());
        }
        if let Some(t) = &s.tls_client {
            host = host.with_tls_client(t.clone(), s.tls_records);
        }
        host.connect(remote);
        let proto = match s.mode {
            TcpHttp::Multiplex => ClientProto::Mux {
                parser: Parser::default(),
                streams: BTreeMap::new(),
                next_stream: 1,
            },
            TcpHttp::Pool(_) => ClientProto::Pool(None),
        };
        self.chans.push(ClientChan {
            host,
            local,
            ready: false,
            shut: false,
            proto,
        });
    }

    fn drive(&mut self, now: Instant, m: &mut AppMeasure, w: &MeasureWindow, buf: &mut [u8]) {
        if self.remote.is_none() {
            return;
        }
        let TcpWebClient {
            web, chans, queue, ..
        } = self;
        // Responses first (a completed HTML releases the objects' fetches) ...
        for ch in chans.iter_mut() {
            let (proto, ready) = (&mut ch.proto, &mut ch.ready);
            ch.host.with_stream(now, m, buf, &mut |s, m, buf| {
                *ready = true;
                read_responses(now, proto, s, web, m, w, buf);
            });
        }
        if !web.is_done() {
            queue.extend(web.poll_fetches(now, m));
        }
        // ... then new requests, to the first idle connection (all on one if multiplexed).
        let done = web.is_done();
        for ch in chans.iter_mut() {
            let (proto, shut) = (&mut ch.proto, &mut ch.shut);
            ch.host.with_stream(now, m, buf, &mut |s, _, _| {
                write_requests(proto, s, queue);
                if done && !*shut {
                    s.shutdown();
                    *shut = true;
                }
            });
        }
        let connecting = chans.iter().filter(|c| !c.ready).count();
        let waiting = queue.len();
        if waiting > connecting && self.chans.len() < self.locals.len() && !done {
            let more = (waiting - connecting).min(self.locals.len() - self.chans.len());
            for _ in 0..more {
                self.open();
            }
        }
    }
}

/// Reads what arrived on a connection and reports it to the web client.
fn read_responses(
    now: Instant,
    proto: &mut ClientProto,
    s: &mut dyn ByteStream,
    web: &mut WebClient,
    m: &mut AppMeasure,
    w: &MeasureWindow,
    buf: &mut [u8],
) {
    let mut frames = Vec::new();
    loop {
        let n = s.read(buf);
        if n == 0 {
            return;
        }
        match proto {
            ClientProto::Pool(busy) => {
                let Some((idx, left)) = busy.as_mut() else {
                    continue; // nothing was asked: not a response
                };
                let take = (n as u64).min(*left);
                *left -= take;
                web.on_bytes(now, *idx, take, m, w);
                if *left == 0 {
                    web.on_complete(now, *idx, m);
                    *busy = None;
                }
            }
            ClientProto::Mux {
                parser, streams, ..
            } => {
                frames.clear();
                if let Err(e) = parser.feed(&buf[..n], &mut frames) {
                    m.aborted
                        .get_or_insert(format!("multiplexed response: {e}"));
                    return;
                }
                for f in &frames {
                    match *f {
                        Frame::Data { stream, bytes } => {
                            if let Some(&idx) = streams.get(&stream) {
                                web.on_bytes(now, idx, bytes as u64, m, w);
                            }
                        }
                        Frame::End { stream } => {
                            if let Some(idx) = streams.remove(&stream) {
                                web.on_complete(now, idx, m);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Writes queued requests on a usable connection: one if it is an idle pooled
/// connection, all if it is the multiplexed one.
fn write_requests(
    proto: &mut ClientProto,
    s: &mut dyn ByteStream,
    queue: &mut VecDeque<(usize, u64)>,
) {
    match proto {
        ClientProto::Pool(busy) => {
            if busy.is_some() {
                return;
            }
            let Some(&(idx, size)) = queue.front() else {
                return;
            };
            let req = format!("GET /{size}\r\n");
            if s.write(req.as_bytes()) == req.len() {
                queue.pop_front();
                *busy = Some((idx, size));
            }
        }
        ClientProto::Mux {
            streams,
            next_stream,
            ..
        } => {
            while let Some(&(idx, size)) = queue.front() {
                let req = h2mux::request(*next_stream, size);
                if s.write(&req) != req.len() {
                    return;
                }
                queue.pop_front();
                streams.insert(*next_stream, idx);
                // RFC 9113 §5.1.1: client streams are odd.
                *next_stream += 2;
            }
        }
    }
}

/// A server connection and what runs on it.
struct ServerChan {
    host: TcpHost,
    shut: bool,
    proto: ServerProto,
}

enum ServerProto {
    /// The request line being read and the response bytes still to write.
    Pool {
        request: Vec<u8>,
        respond: VecDeque<u64>,
    },
    Mux {
        parser: Parser,
        sender: Sender,
        open: usize,
    },
}

/// The server end of a web flow over TCP: a listening connection per client address.
pub(crate) struct TcpWebServer {
    spec: Spec,
    local: SocketAddrV4,
    chans: BTreeMap<SocketAddrV4, ServerChan>,
    rr: usize,
    setup_error: Option<String>,
}

impl TcpWebServer {
    pub fn new(spec: Spec, local: SocketAddrV4) -> Self {
        TcpWebServer {
            spec,
            local,
            chans: BTreeMap::new(),
            rr: 0,
            setup_error: None,
        }
    }

    fn handle_segment(&mut self, now: Instant, src: SocketAddrV4, ecn: Ecn, seg: &[u8]) {
        if !self.chans.contains_key(&src) {
            // At most the client's connections (memory bounded whatever arrives).
            if self.chans.len() >= self.spec.mode.connections() as usize {
                return;
            }
            let s = &self.spec;
            let k = self.chans.len();
            let mut host = TcpHost::server(
                &s.workload,
                s.config.clone(),
                self.local,
                s.seed(k),
                s.metrics.clone(),
                s.traces,
            );
            if let Some(key) = s.fast_open_key {
                host = host.with_fast_open_key(key);
            }
            if let Some(t) = &s.tls_server {
                match host.with_tls_server(t.clone(), s.tls_records) {
                    Ok(h) => host = h,
                    Err(e) => {
                        self.setup_error.get_or_insert(format!("TLS server: {e}"));
                        return;
                    }
                }
            }
            let proto = match s.mode {
                TcpHttp::Multiplex => ServerProto::Mux {
                    parser: Parser::default(),
                    sender: Sender::default(),
                    open: 0,
                },
                TcpHttp::Pool(_) => ServerProto::Pool {
                    request: Vec::new(),
                    respond: VecDeque::new(),
                },
            };
            self.chans.insert(
                src,
                ServerChan {
                    host,
                    shut: false,
                    proto,
                },
            );
        }
        if let Some(ch) = self.chans.get_mut(&src) {
            ch.host.handle_segment(now, src, ecn, seg);
        }
    }

    fn drive(&mut self, now: Instant, m: &mut AppMeasure, buf: &mut [u8]) {
        if let Some(e) = &self.setup_error {
            m.aborted.get_or_insert(e.clone());
        }
        for ch in self.chans.values_mut() {
            let (proto, shut) = (&mut ch.proto, &mut ch.shut);
            ch.host.with_stream(now, m, buf, &mut |s, m, buf| {
                serve(proto, s, m, buf);
                let idle = match proto {
                    ServerProto::Pool { respond, .. } => respond.is_empty(),
                    ServerProto::Mux { sender, .. } => sender.is_idle(),
                };
                if s.peer_finished() && idle && !*shut {
                    s.shutdown();
                    *shut = true;
                }
            });
        }
    }
}

/// Reads requests and writes responses on one server connection.
fn serve(proto: &mut ServerProto, s: &mut dyn ByteStream, m: &mut AppMeasure, buf: &mut [u8]) {
    match proto {
        ServerProto::Pool { request, respond } => {
            loop {
                let n = s.read(buf);
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
                // Bounded: a request line is short; anything else is discarded.
                if request.len() > 4096 {
                    request.clear();
                }
            }
            while let Some(end) = request.windows(2).position(|x| x == b"\r\n") {
                let line: Vec<u8> = request.drain(..end + 2).collect();
                if let Some(size) = parse_get(&line) {
                    if respond.len() < MAX_OPEN_STREAMS {
                        respond.push_back(size);
                    }
                }
            }
            while let Some(left) = respond.front_mut() {
                let mut wrote = 0;
                while wrote < *left {
                    let k = s.write(&CHUNK[..(*left - wrote).min(CHUNK.len() as u64) as usize]);
                    if k == 0 {
                        break;
                    }
                    wrote += k as u64;
                }
                *left -= wrote;
                if *left > 0 {
                    return;
                }
                respond.pop_front();
            }
        }
        ServerProto::Mux {
            parser,
            sender,
            open,
        } => {
            let mut reqs = Vec::new();
            loop {
                let n = s.read(buf);
                if n == 0 {
                    break;
                }
                if let Err(e) = parser.feed_requests(&buf[..n], &mut reqs) {
                    m.aborted.get_or_insert(format!("multiplexed request: {e}"));
                    return;
                }
            }
            for (stream, size) in reqs {
                if *open < MAX_OPEN_STREAMS {
                    *open += 1;
                    sender.respond(stream, size);
                }
            }
            sender.pump(&mut |b| s.write(b));
        }
    }
}

/// `GET /N\r\n` -> N.
fn parse_get(req: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(req).ok()?;
    s.strip_prefix("GET /")?.trim_end().parse().ok()
}
