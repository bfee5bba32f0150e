//! The hq-interop client: one connection per authority, one bidirectional stream per
//! URL, opening more streams as earlier ones finish when the peer's limit is reached.

use crate::app::setup::QlogDir;
use crate::app::url::Url;
use crate::error::{NetError, Result};
use crate::{AppError, Application};
use quiclab_proto::{
    CloseReason, Connection, ConnectionEvent, ConnectionHandle, Dir, Endpoint, Instant,
    StreamError, StreamEvent, StreamId, TransportErrorCode,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a body goes.
#[derive(Clone, Debug)]
pub enum Output {
    Stdout,
    File(PathBuf),
    /// Checked, not saved (load tests; see [`super::Check`]).
    Check,
}

/// One URL to fetch.
#[derive(Clone, Debug)]
pub struct Fetch {
    pub url: Url,
    pub output: Output,
}

/// Fetches URLs over one connection per authority.
pub struct Client {
    conns: BTreeMap<ConnectionHandle, Conn>,
    failures: usize,
    /// Idle-connection load test: keep connections open after their fetches, until
    /// a stop signal (see [`Client::hold`]).
    hold: bool,
    /// Whether "all connections established" was printed.
    announced: bool,
    /// Connections not opened yet: at most [`MAX_HANDSHAKING`] handshakes run at once.
    waiting: VecDeque<(SocketAddr, String, Vec<Fetch>)>,
    /// Opened connections whose handshake has neither completed nor failed (kept so
    /// a turn need not count them over every connection).
    handshaking: BTreeSet<ConnectionHandle>,
    /// Connections whose handshake completed.
    established: usize,
    tls: Arc<rustls::ClientConfig>,
    qlog: QlogDir,
    /// Open a connection only when the previous ones are closed (the resumption test
    /// cases: the next connection resumes the previous one's session).
    one_at_a_time: bool,
}

/// Handshakes in flight at once in a load test: 10,000 simultaneous Initials (12 MB)
/// and the servers' replies (~3x that) overflow any socket buffer, and the lost
/// handshakes then wait out exponential PTO backoff (RFC 9002 §6.2.1).
const MAX_HANDSHAKING: usize = 256;

/// The hq-interop side of one connection (also driven by the ALPN-dispatching client
/// in [`crate::app::h3::client`]).
pub(crate) struct Conn {
    queue: VecDeque<Fetch>,
    active: BTreeMap<StreamId, Active>,
    closing: bool,
    /// Stay open when the fetches are done (idle-connection load tests).
    hold: bool,
    /// Body bytes of the fetches that completed without error.
    completed_bytes: u64,
}

/// A request in flight.
struct Active {
    fetch: Fetch,
    out: Box<dyn Write>,
    request: Vec<u8>,
    /// Bytes of `request` written; FIN follows the last.
    written: usize,
    bytes: u64,
    started: Instant,
}

/// A fetch ended: `Ok(())` or why it failed.
type Outcome = std::result::Result<(), String>;

impl Client {
    /// Connects to each authority (to `addr`, as `server_name`) for its fetches; with
    /// `one_at_a_time`, each connection after the previous one closed.
    pub fn start(
        endpoint: &mut Endpoint,
        now: Instant,
        tls: Arc<rustls::ClientConfig>,
        qlog: &QlogDir,
        groups: Vec<(SocketAddr, String, Vec<Fetch>)>,
        one_at_a_time: bool,
    ) -> Result<Client> {
        let mut client = Client {
            conns: BTreeMap::new(),
            failures: 0,
            hold: false,
            announced: false,
            waiting: groups.into(),
            handshaking: BTreeSet::new(),
            established: 0,
            tls,
            qlog: qlog.clone(),
            one_at_a_time,
        };
        client.open_more(endpoint, now)?;
        Ok(client)
    }

    /// Opens waiting connections while fewer than [`MAX_HANDSHAKING`] handshakes run.
    fn open_more(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<()> {
        if self.one_at_a_time
            && self
                .conns
                .keys()
                .any(|&h| endpoint.connection(h).is_some_and(|c| !c.is_closed()))
        {
            return Ok(());
        }
        let max = if self.one_at_a_time {
            1
        } else {
            MAX_HANDSHAKING
        };
        for _ in self.handshaking.len()..max {
            let Some((addr, server_name, fetches)) = self.waiting.pop_front() else {
                break;
            };
            let h = endpoint
                .connect(now, self.tls.clone(), &server_name, addr)
                .map_err(|e| NetError::Connect {
                    to: format!("{server_name} ({addr})"),
                    why: e.to_string(),
                })?;
            let mut state = Conn::new(fetches);
            state.hold = self.hold;
            if let Some(conn) = endpoint.connection_mut(h) {
                self.qlog.attach(conn, now);
                // A resuming client writes its requests now, before its first Initial
                // leaves, so they go in 0-RTT (RFC 9001 §4.6.1).
                if conn.is_zero_rtt_sending() {
                    self.failures += state.drive(conn, now);
                }
            }
            self.conns.insert(h, state);
            self.handshaking.insert(h);
        }
        Ok(())
    }

    /// Keeps every connection open once its fetches are done, prints "all N
    /// connections established" once every handshake completed, and closes them all
    /// on SIGINT/SIGTERM (memory per idle connection: scripts/bench-udp.sh idle).
    pub fn hold(&mut self) {
        self.hold = true;
        for c in self.conns.values_mut() {
            c.hold = true;
        }
    }

    /// Whether fetches wait or run (connections not opened yet included).
    pub fn fetches_pending(&self) -> bool {
        !self.waiting.is_empty()
            || self
                .conns
                .values()
                .any(|c| !c.queue.is_empty() || !c.active.is_empty())
    }

    /// Fetches and connections that failed.
    pub fn failures(&self) -> usize {
        self.failures
    }

    /// Connections whose handshake completed.
    pub fn established(&self) -> usize {
        self.established
    }

    /// Body bytes of the fetches that completed without error (checked bodies: the
    /// bytes that passed the check).
    pub fn completed_bytes(&self) -> u64 {
        self.conns.values().map(|c| c.completed_bytes).sum()
    }
}

impl Application for Client {
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError> {
        // Only connections the endpoint touched can have new events or room to send
        // more (O(active), not O(connections), per turn).
        for h in endpoint.take_touched() {
            let Some(state) = self.conns.get_mut(&h) else {
                continue;
            };
            let Some(conn) = endpoint.connection_mut(h) else {
                continue;
            };
            self.failures += state.drive(conn, now);
            if (conn.is_handshake_complete() || conn.is_closed()) && self.handshaking.remove(&h) {
                self.established += usize::from(conn.is_handshake_complete());
            }
        }
        self.open_more(endpoint, now)?;
        let up = self.waiting.is_empty() && self.established == self.conns.len();
        if self.hold && !self.announced && up {
            note!("all {} connections established", self.conns.len());
            self.announced = true;
        }
        Ok(())
    }

    fn shutdown(&mut self, endpoint: &mut Endpoint, now: Instant) {
        self.waiting.clear();
        for (&h, state) in self.conns.iter_mut() {
            state.hold = false;
            if let Some(conn) = endpoint.connection_mut(h) {
                conn.close(now, 0, "done");
                state.closing = true;
            }
        }
    }

    fn finished(&self, endpoint: &Endpoint) -> bool {
        self.waiting.is_empty()
            && self
                .conns
                .keys()
                .all(|&h| endpoint.connection(h).is_none_or(|c| c.is_closed()))
    }
}

impl Conn {
    pub(crate) fn new(fetches: Vec<Fetch>) -> Self {
        Conn {
            queue: fetches.into(),
            active: BTreeMap::new(),
            closing: false,
            hold: false,
            completed_bytes: 0,
        }
    }

    /// Handles events, opens and writes requests, reads bodies; returns new failures.
    pub(crate) fn drive(&mut self, conn: &mut Connection, now: Instant) -> usize {
        let mut failures = 0;
        while let Some(ev) = conn.poll_event() {
            match ev {
                ConnectionEvent::Stream(StreamEvent::Readable { id }) => {
                    if let Some(outcome) = self.read_body(conn, id, now) {
                        failures += self.complete(id, outcome);
                    }
                }
                ConnectionEvent::Closed(reason) => {
                    failures += self.on_closed(&reason, conn.remote_address())
                }
                _ => {}
            }
        }
        // A resuming client with 0-RTT keys sends its requests before completion.
        let may_send = conn.is_handshake_complete() || conn.is_zero_rtt_sending();
        if conn.is_closed() || !may_send {
            return failures;
        }
        failures += self.open_streams(conn, now);
        for (&id, a) in self.active.iter_mut() {
            send_request(conn, id, a);
        }
        if self.queue.is_empty() && self.active.is_empty() && !self.closing && !self.hold {
            conn.close(now, 0, "done");
            self.closing = true;
        }
        failures
    }

    /// Opens a stream per queued fetch while the peer's stream limit allows; returns
    /// how many fetches failed (their output file could not be created).
    fn open_streams(&mut self, conn: &mut Connection, now: Instant) -> usize {
        let mut failures = 0;
        while !self.queue.is_empty() {
            let Some(id) = conn.open_stream(Dir::Bi) else {
                break;
            };
            let fetch = self.queue.pop_front().expect("not empty");
            let out: Box<dyn Write> = match &fetch.output {
                Output::Stdout => Box::new(BufWriter::new(std::io::stdout())),
                Output::Check => Box::new(super::Check::for_path(&fetch.url.path)),
                Output::File(p) => match File::create(p) {
                    Ok(f) => Box::new(BufWriter::new(f)),
                    Err(e) => {
                        report(&fetch, &Err(format!("creating {}: {e}", p.display())));
                        let _ = conn.reset_stream(id, 0);
                        let _ = conn.stop_sending(id, 0);
                        failures += 1;
                        continue;
                    }
                },
            };
            let request = super::request(&fetch.url.path);
            let active = Active {
                fetch,
                out,
                request,
                written: 0,
                bytes: 0,
                started: now,
            };
            self.active.insert(id, active);
        }
        failures
    }

    /// Reads what arrived on a response stream; `Some` when the fetch ended.
    fn read_body(&mut self, conn: &mut Connection, id: StreamId, now: Instant) -> Option<Outcome> {
        let a = self.active.get_mut(&id)?;
        let mut buf = [0u8; 16 * 1024];
        loop {
            match conn.read(id, &mut buf) {
                Ok(r) => {
                    if let Err(e) = a.out.write_all(&buf[..r.bytes]) {
                        let _ = conn.stop_sending(id, 0);
                        return Some(Err(format!("writing body: {e}")));
                    }
                    a.bytes += r.bytes as u64;
                    if r.fin {
                        let flushed = a.out.flush().map_err(|e| format!("writing body: {e}"));
                        let secs = now.saturating_duration_since(a.started).as_secs_f64();
                        note!(
                            "{}: {} bytes in {secs:.3} s ({:.2} Mbit/s)",
                            a.fetch.url.path,
                            a.bytes,
                            a.bytes as f64 * 8.0 / secs.max(1e-9) / 1e6
                        );
                        return Some(flushed);
                    }
                    if r.bytes == 0 {
                        return None;
                    }
                }
                Err(StreamError::Blocked) => return None,
                Err(e) => return Some(Err(e.to_string())),
            }
        }
    }

    /// Retires a finished fetch; returns 1 if it failed.
    fn complete(&mut self, id: StreamId, outcome: Outcome) -> usize {
        let Some(a) = self.active.remove(&id) else {
            return 0;
        };
        if outcome.is_err() {
            report(&a.fetch, &outcome);
        } else {
            self.completed_bytes += a.bytes;
        }
        usize::from(outcome.is_err())
    }

    /// Fails everything left; a close with an error code counts as a failure too.
    fn on_closed(&mut self, reason: &CloseReason, remote: SocketAddr) -> usize {
        let why = close_message(reason, remote);
        let mut failures = 0;
        for a in std::mem::take(&mut self.active).into_values() {
            report(&a.fetch, &Err(why.clone()));
            failures += 1;
        }
        for f in std::mem::take(&mut self.queue) {
            report(&f, &Err(why.clone()));
            failures += 1;
        }
        let error = match reason {
            CloseReason::Transport { error, .. } => error.code != TransportErrorCode::NO_ERROR,
            CloseReason::Application { code, .. } => *code != 0,
            CloseReason::IdleTimeout => false,
            CloseReason::HandshakeTimeout | CloseReason::PortUnreachable => true,
        };
        if error {
            note!("error: {why}");
            failures += 1;
        }
        failures
    }
}

/// Why a client's connection to `remote` ended, for its error messages.
pub(crate) fn close_message(reason: &CloseReason, remote: SocketAddr) -> String {
    match reason {
        CloseReason::PortUnreachable => {
            format!("connection refused: nothing listens on {remote} (ICMP port unreachable)")
        }
        CloseReason::HandshakeTimeout => {
            format!("handshake timeout: no handshake with {remote} within handshake_timeout_ms")
        }
        _ => format!("connection closed: {reason:?}"),
    }
}

/// Writes the rest of a request, then FIN.
fn send_request(conn: &mut Connection, id: StreamId, a: &mut Active) {
    while a.written < a.request.len() {
        match conn.write(id, &a.request[a.written..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => a.written += n,
        }
    }
    if a.written == a.request.len() {
        let _ = conn.finish(id);
        // FIN is queued once; mark it by moving past the end.
        a.written += 1;
    }
}

fn report(fetch: &Fetch, outcome: &Outcome) {
    if let Err(why) = outcome {
        note!("FAILED {}: {why}", fetch.url.path);
    }
}
