//! The client: one connection per authority offering the ALPNs asked for (h3 first by
//! default); once TLS picked one, the connection's fetches run over HTTP/3 here or
//! over hq-interop in [`crate::app::hq::client`].

use super::{attach_qlog, ALPN_H3, H3_NO_ERROR};
use crate::app::hq::client::{Conn as HqConn, Fetch, Output};
use crate::app::setup::QlogDir;
use crate::error::{NetError, Result};
use crate::{AppError, Application};
use quiclab_h3::message::{get, get_request};
use quiclab_h3::{code, Field, H3Config, H3Connection, H3Event};
use quiclab_proto::{
    CloseReason, Connection, ConnectionEvent, ConnectionHandle, Endpoint, Instant, Side, StreamId,
};
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::sync::Arc;

/// Fetches URLs over one connection per authority, h3 or hq-interop.
pub struct Client {
    conns: BTreeMap<ConnectionHandle, Proto>,
    config: H3Config,
    qlog: QlogDir,
    failures: usize,
}

/// A connection's application protocol, known after the handshake.
enum Proto {
    Pending {
        fetches: Vec<Fetch>,
        authority: String,
    },
    Hq(HqConn),
    H3(Box<H3Client>),
}

/// The HTTP/3 side of one connection.
struct H3Client {
    h3: H3Connection,
    authority: String,
    queue: VecDeque<Fetch>,
    active: BTreeMap<StreamId, Active>,
    closing: bool,
}

struct Active {
    fetch: Fetch,
    out: Box<dyn Write>,
    bytes: u64,
    started: Instant,
    status: Option<String>,
}

impl Client {
    /// Connects to each authority (to `addr`, as `server_name`, `:authority` =
    /// `authority`) for its fetches.
    pub fn start(
        endpoint: &mut Endpoint,
        now: Instant,
        tls: Arc<rustls::ClientConfig>,
        qlog: QlogDir,
        config: H3Config,
        groups: Vec<(SocketAddr, String, String, Vec<Fetch>)>,
    ) -> Result<Client> {
        let mut conns = BTreeMap::new();
        for (addr, server_name, authority, fetches) in groups {
            let h = endpoint
                .connect(now, tls.clone(), &server_name, addr)
                .map_err(|e| NetError::Connect {
                    to: format!("{server_name} ({addr})"),
                    why: e.to_string(),
                })?;
            if let Some(conn) = endpoint.connection_mut(h) {
                qlog.attach(conn, now);
            }
            conns.insert(h, Proto::Pending { fetches, authority });
        }
        Ok(Client {
            conns,
            config,
            qlog,
            failures: 0,
        })
    }

    pub fn failures(&self) -> usize {
        self.failures
    }
}

impl Application for Client {
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError> {
        // Only connections the endpoint touched can have new events or room to send.
        for h in endpoint.take_touched() {
            let Some(proto) = self.conns.get_mut(&h) else {
                continue;
            };
            let Some(conn) = endpoint.connection_mut(h) else {
                continue;
            };
            if let Proto::Pending { fetches, authority } = proto {
                let fetches = std::mem::take(fetches);
                let authority = std::mem::take(authority);
                *proto = match conn.alpn() {
                    Some(ALPN_H3) if conn.is_handshake_complete() => {
                        note!("{authority}: h3");
                        let mut h3 = H3Connection::new(Side::Client, self.config.clone());
                        attach_qlog(&self.qlog, conn, &mut h3);
                        Proto::H3(Box::new(H3Client {
                            h3,
                            authority,
                            queue: fetches.into(),
                            active: BTreeMap::new(),
                            closing: false,
                        }))
                    }
                    Some(_) if conn.is_handshake_complete() => {
                        note!("{authority}: hq-interop");
                        Proto::Hq(HqConn::new(fetches))
                    }
                    // A handshake failure: the hq logic reports the fetches as failed.
                    _ if conn.is_closed() => Proto::Hq(HqConn::new(fetches)),
                    _ => Proto::Pending { fetches, authority },
                };
            }
            self.failures += match proto {
                Proto::Pending { .. } => 0,
                Proto::Hq(c) => c.drive(conn, now),
                Proto::H3(c) => c.drive(conn, now),
            };
        }
        Ok(())
    }

    fn finished(&self, endpoint: &Endpoint) -> bool {
        self.conns
            .keys()
            .all(|&h| endpoint.connection(h).is_none_or(|c| c.is_closed()))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        for p in self.conns.values_mut() {
            if let Proto::H3(c) = p {
                drop(c.h3.take_sink());
            }
        }
    }
}

impl H3Client {
    /// Handles events, sends requests, writes bodies; returns new failures.
    fn drive(&mut self, conn: &mut Connection, now: Instant) -> usize {
        let mut failures = 0;
        while let Some(ev) = conn.poll_event() {
            if let ConnectionEvent::Closed(reason) = &ev {
                failures += self.on_closed(reason, conn.remote_address());
            }
            self.h3.handle_event(conn, now, &ev);
        }
        self.h3.poll(conn, now);
        while let Some(ev) = self.h3.poll_event() {
            failures += self.on_event(conn, now, ev);
        }
        if conn.is_closed() {
            return failures;
        }
        failures += self.open_requests(conn, now);
        if self.queue.is_empty() && self.active.is_empty() && !self.closing {
            conn.close(now, H3_NO_ERROR, "done");
            self.closing = true;
        }
        failures
    }

    fn on_event(&mut self, conn: &mut Connection, now: Instant, ev: H3Event) -> usize {
        match ev {
            H3Event::Headers { stream, fields } => {
                let Some(a) = self.active.get_mut(&stream) else {
                    return 0;
                };
                let status = String::from_utf8_lossy(get(&fields, ":status").unwrap_or_default());
                if status.starts_with('1') || a.status.is_some() {
                    return 0; // informational head or trailers
                }
                a.status = Some(status.to_string());
                if status != "200" {
                    self.h3.cancel(conn, stream, code::H3_REQUEST_CANCELLED);
                    return self.complete(stream, now, Err(format!("status {status}")));
                }
                0
            }
            H3Event::Data { stream, data } => {
                let Some(a) = self.active.get_mut(&stream) else {
                    return 0;
                };
                a.bytes += data.len() as u64;
                if let Err(e) = a.out.write_all(&data) {
                    self.h3.cancel(conn, stream, code::H3_REQUEST_CANCELLED);
                    return self.complete(stream, now, Err(format!("writing body: {e}")));
                }
                0
            }
            H3Event::Finished { stream } => self.complete(stream, now, Ok(())),
            H3Event::Reset { stream, code } => self.complete(
                stream,
                now,
                Err(format!(
                    "stream reset ({})",
                    quiclab_h3::error::code_name(code)
                )),
            ),
            H3Event::ConnectionError(e) => {
                note!("error: h3: {e}");
                1
            }
            H3Event::GoAway { id } => {
                note!("server sent GOAWAY ({id})");
                0
            }
        }
    }

    /// Sends queued requests while streams are available.
    fn open_requests(&mut self, conn: &mut Connection, now: Instant) -> usize {
        let mut failures = 0;
        while let Some(fetch) = self.queue.front() {
            let fields = get_request(
                &self.authority,
                &fetch.url.path,
                &[Field::new("user-agent", "quiclab")],
            );
            let Some(id) = self.h3.send_request(conn, now, &fields, true) else {
                break;
            };
            let fetch = self.queue.pop_front().expect("front exists");
            let out: Box<dyn Write> = match &fetch.output {
                Output::Stdout => Box::new(BufWriter::new(std::io::stdout())),
                Output::Check => Box::new(crate::app::hq::Check::for_path(&fetch.url.path)),
                Output::File(p) => match File::create(p) {
                    Ok(f) => Box::new(BufWriter::new(f)),
                    Err(e) => {
                        note!("FAILED {}: creating {}: {e}", fetch.url.path, p.display());
                        self.h3.cancel(conn, id, code::H3_REQUEST_CANCELLED);
                        failures += 1;
                        continue;
                    }
                },
            };
            let active = Active {
                fetch,
                out,
                bytes: 0,
                started: now,
                status: None,
            };
            self.active.insert(id, active);
        }
        failures
    }

    /// Retires a fetch; returns 1 if it failed.
    fn complete(&mut self, id: StreamId, now: Instant, outcome: Result<(), String>) -> usize {
        let Some(mut a) = self.active.remove(&id) else {
            return 0;
        };
        let outcome = outcome.and_then(|()| match a.status.as_deref() {
            Some("200") => a.out.flush().map_err(|e| format!("writing body: {e}")),
            other => Err(format!("no final status ({other:?})")),
        });
        match &outcome {
            Ok(()) => {
                let secs = now.saturating_duration_since(a.started).as_secs_f64();
                note!(
                    "{}: {} bytes in {secs:.3} s ({:.2} Mbit/s) over h3",
                    a.fetch.url.path,
                    a.bytes,
                    a.bytes as f64 * 8.0 / secs.max(1e-9) / 1e6
                );
                0
            }
            Err(why) => {
                note!("FAILED {}: {why}", a.fetch.url.path);
                1
            }
        }
    }

    /// Fails everything left; a close with an error code counts as a failure too.
    fn on_closed(&mut self, reason: &CloseReason, remote: std::net::SocketAddr) -> usize {
        let why = crate::app::hq::client::close_message(reason, remote);
        let mut failures = 0;
        for a in std::mem::take(&mut self.active).into_values() {
            note!("FAILED {}: {why}", a.fetch.url.path);
            failures += 1;
        }
        for f in std::mem::take(&mut self.queue) {
            note!("FAILED {}: {why}", f.url.path);
            failures += 1;
        }
        let error = match reason {
            CloseReason::Transport { error, .. } => {
                error.code != quiclab_proto::TransportErrorCode::NO_ERROR
            }
            CloseReason::Application { code, .. } => *code != H3_NO_ERROR && *code != 0,
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
