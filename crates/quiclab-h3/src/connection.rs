//! The HTTP/3 connection (RFC 9114): state shared by the client and server roles,
//! the application API, and connection/stream error handling. Request streams live
//! in [`crate::request`], unidirectional streams (control, QPACK) in [`crate::uni`].
//!
//! Call contract: the application owns the QUIC [`Connection`]. For every
//! [`ConnectionEvent`] it polls from it, it calls [`H3Connection::handle_event`];
//! after a batch of events (and after sending), it calls [`H3Connection::poll`], then
//! drains [`H3Connection::poll_event`]. All writes go through the `send_*` methods.
//! Push is never enabled (no MAX_PUSH_ID is sent), so every push is refused.

use crate::error::{code, H3Error};
use crate::frame::{self, ty, Frame};
use crate::log::{fields_info, FrameInfo, H3LogEvent, H3Sink, Owner};
use crate::qpack::{Decoder, Encoder, Field};
use crate::settings::Settings;
use crate::streams::{LocalStreams, Request, Uni};
use quiclab_proto::{Connection, ConnectionEvent, Dir, Instant, Side, StreamError, StreamId};
use std::collections::{BTreeMap, VecDeque};

/// HTTP/3 knobs of one endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct H3Config {
    /// Dynamic table capacity we allow the peer's encoder and use in ours (the lower
    /// of this and the peer's); 0 = static table only.
    pub qpack_max_table_capacity: u64,
    /// SETTINGS_QPACK_BLOCKED_STREAMS we advertise.
    pub qpack_blocked_streams: u64,
    /// SETTINGS_MAX_FIELD_SECTION_SIZE we advertise and enforce.
    pub max_field_section_size: u64,
}

impl Default for H3Config {
    fn default() -> Self {
        H3Config {
            qpack_max_table_capacity: 4096,
            qpack_blocked_streams: 16,
            max_field_section_size: 64 * 1024,
        }
    }
}

/// What happened, for the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum H3Event {
    /// A request head (server), response head (client; 1xx included) or trailers.
    Headers {
        stream: StreamId,
        fields: Vec<Field>,
    },
    /// Body bytes.
    Data { stream: StreamId, data: Vec<u8> },
    /// The peer's side of the stream ended cleanly.
    Finished { stream: StreamId },
    /// The stream ended abnormally: the peer reset it or stopped it, or we reset it
    /// after a stream error (code says which error).
    Reset { stream: StreamId, code: u64 },
    /// The peer sent GOAWAY with this stream (from a server) or push (from a client) ID.
    GoAway { id: u64 },
    /// The connection failed with an HTTP/3 error (it is being closed with that code).
    ConnectionError(H3Error),
}

/// Byte counts, to measure compression and overhead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct H3Stats {
    /// HEADERS frame payload bytes sent (encoded field sections).
    pub header_bytes_sent: u64,
    /// Encoder stream bytes sent (QPACK inserts).
    pub encoder_bytes_sent: u64,
    pub header_bytes_received: u64,
    pub requests: u64,
}

/// Largest buffered-but-unwritten request stream data; `send_data` takes no more.
pub(crate) const SEND_BUF: usize = 64 * 1024;

/// One HTTP/3 connection's state.
pub struct H3Connection {
    pub(crate) side: Side,
    pub(crate) config: H3Config,
    pub(crate) encoder: Encoder,
    pub(crate) decoder: Decoder,
    pub(crate) local: LocalStreams,
    pub(crate) peer_settings: Option<Settings>,
    pub(crate) uni: BTreeMap<StreamId, Uni>,
    pub(crate) requests: BTreeMap<StreamId, Request>,
    pub(crate) events: VecDeque<H3Event>,
    pub(crate) goaway_received: Option<u64>,
    pub(crate) goaway_sent: Option<u64>,
    /// Server: the next client bidi stream ID not yet accepted.
    pub(crate) next_request: u64,
    pub(crate) error: Option<H3Error>,
    pub(crate) stats: H3Stats,
    pub(crate) sink: Option<Box<dyn H3Sink>>,
}

impl H3Connection {
    /// An HTTP/3 connection for the `side` of a QUIC connection.
    pub fn new(side: Side, config: H3Config) -> Self {
        let max = usize::try_from(config.max_field_section_size).unwrap_or(usize::MAX);
        H3Connection {
            side,
            encoder: Encoder::new(config.qpack_max_table_capacity),
            decoder: Decoder::new(
                config.qpack_max_table_capacity,
                config.qpack_blocked_streams,
                max,
            ),
            config,
            local: LocalStreams::default(),
            peer_settings: None,
            uni: BTreeMap::new(),
            requests: BTreeMap::new(),
            events: VecDeque::new(),
            goaway_received: None,
            goaway_sent: None,
            next_request: 0,
            error: None,
            stats: H3Stats::default(),
            sink: None,
        }
    }

    /// Sends HTTP/3 events to `sink` (qlog) from now on.
    pub fn set_sink(&mut self, sink: Box<dyn H3Sink>) {
        self.sink = Some(sink);
    }
    pub fn take_sink(&mut self) -> Option<Box<dyn H3Sink>> {
        self.sink.take()
    }
    pub(crate) fn log(&mut self, now: Instant, ev: impl FnOnce() -> H3LogEvent) {
        if let Some(s) = self.sink.as_mut() {
            s.event(now, &ev());
        }
    }

    pub fn stats(&self) -> H3Stats {
        self.stats
    }
    pub fn peer_settings(&self) -> Option<&Settings> {
        self.peer_settings.as_ref()
    }
    /// The error the connection failed with, if any.
    pub fn error(&self) -> Option<&H3Error> {
        self.error.as_ref()
    }
    pub fn goaway_received(&self) -> Option<u64> {
        self.goaway_received
    }
    /// QPACK state, for measurements and tests.
    pub fn qpack(&self) -> (&Encoder, &Decoder) {
        (&self.encoder, &self.decoder)
    }

    /// The next application event.
    pub fn poll_event(&mut self) -> Option<H3Event> {
        self.events.pop_front()
    }

    /// Reacts to one event of the QUIC connection.
    pub fn handle_event(&mut self, conn: &mut Connection, now: Instant, ev: &ConnectionEvent) {
        if self.error.is_some() {
            return;
        }
        match ev {
            ConnectionEvent::Stream(quiclab_proto::StreamEvent::Readable { id }) => {
                self.accept(conn, now);
                self.readable(conn, now, *id);
            }
            ConnectionEvent::Stream(quiclab_proto::StreamEvent::Opened { .. }) => {
                self.accept(conn, now);
            }
            ConnectionEvent::Stream(quiclab_proto::StreamEvent::Writable { id }) => {
                self.flush_stream(conn, *id);
            }
            ConnectionEvent::Stream(quiclab_proto::StreamEvent::Stopped { id, error_code }) => {
                self.stopped(conn, now, *id, *error_code)
            }
            _ => {}
        }
        self.flush(conn, now);
    }

    /// Opens our control and QPACK streams once possible, accepts the peer's streams
    /// and writes whatever is buffered. Call after each batch of events.
    pub fn poll(&mut self, conn: &mut Connection, now: Instant) {
        if self.error.is_some() || conn.is_closed() || !conn.is_handshake_complete() {
            return;
        }
        self.open_local(conn, now);
        self.accept(conn, now);
        self.flush(conn, now);
    }

    fn readable(&mut self, conn: &mut Connection, now: Instant, id: StreamId) {
        if self.requests.contains_key(&id) {
            self.process_request(conn, now, id);
        } else if self.uni.contains_key(&id) {
            self.process_uni(conn, now, id);
        }
    }

    /// Accepts streams the peer opened.
    fn accept(&mut self, conn: &mut Connection, now: Instant) {
        while let Some(id) = conn.accept_stream(Dir::Uni) {
            self.uni.insert(id, Uni::Typing(Vec::new()));
            self.process_uni(conn, now, id);
        }
        while let Some(id) = conn.accept_stream(Dir::Bi) {
            if self.side == Side::Client {
                // RFC 9114 §6.1: servers open no bidirectional streams.
                self.fail(
                    conn,
                    now,
                    code::H3_STREAM_CREATION_ERROR,
                    "server bidi stream",
                );
                return;
            }
            self.next_request = self.next_request.max(id.0 + 4);
            if self.goaway_sent.is_some_and(|g| id.0 >= g) {
                // RFC 9114 §5.2: requests past our GOAWAY are rejected.
                let _ = conn.reset_stream(id, code::H3_REQUEST_REJECTED);
                let _ = conn.stop_sending(id, code::H3_REQUEST_REJECTED);
                continue;
            }
            self.log(now, || H3LogEvent::StreamTypeSet {
                owner: Owner::Remote,
                stream: id.0,
                stream_type: "request",
            });
            self.requests
                .insert(id, Request::new(self.config.max_field_section_size));
            self.stats.requests += 1;
            self.process_request(conn, now, id);
        }
    }

    /// The peer sent STOP_SENDING.
    fn stopped(&mut self, conn: &mut Connection, now: Instant, id: StreamId, err: u64) {
        if self.local.is_critical(id) {
            self.fail(
                conn,
                now,
                code::H3_CLOSED_CRITICAL_STREAM,
                "critical stream stopped",
            );
            return;
        }
        if let Some(req) = self.requests.get_mut(&id).filter(|r| !r.send_done) {
            let _ = conn.reset_stream(id, err);
            req.send.clear();
            req.send_done = true;
            if req.recv_done {
                self.requests.remove(&id);
            }
            self.events.push_back(H3Event::Reset {
                stream: id,
                code: err,
            });
        }
    }

    /// Closes the connection with an HTTP/3 error (RFC 9114 §8).
    pub(crate) fn fail(&mut self, conn: &mut Connection, now: Instant, code: u64, why: &str) {
        if self.error.is_some() {
            return;
        }
        let e = H3Error::new(code, why);
        conn.close(now, code, why);
        self.events.push_back(H3Event::ConnectionError(e.clone()));
        self.error = Some(e);
    }

    /// A stream error: reset and stop the stream with `code` (RFC 9114 §8).
    pub(crate) fn stream_error(&mut self, conn: &mut Connection, id: StreamId, code: u64) {
        let _ = conn.reset_stream(id, code);
        let _ = conn.stop_sending(id, code);
        if let Some(req) = self.requests.remove(&id) {
            if !req.head_done || req.blocked.is_some() {
                self.decoder.cancel_stream(id.0);
            }
        }
        self.events.push_back(H3Event::Reset { stream: id, code });
    }

    // ----- application API -----

    /// Client: opens a request stream and sends its head (HEADERS; FIN if `end`).
    /// `None` when no stream can be opened now (the peer's limit, a GOAWAY covering
    /// it, or a failed connection): retry after the next events.
    pub fn send_request(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        fields: &[Field],
        end: bool,
    ) -> Option<StreamId> {
        if self.error.is_some() || self.side != Side::Client || !conn.is_handshake_complete() {
            return None;
        }
        self.open_local(conn, now);
        let goaway = self.goaway_received;
        let id = conn.open_stream(Dir::Bi)?;
        if goaway.is_some_and(|g| id.0 >= g) {
            // Opened past the server's GOAWAY: give it back.
            let _ = conn.reset_stream(id, code::H3_REQUEST_CANCELLED);
            return None;
        }
        self.log(now, || H3LogEvent::StreamTypeSet {
            owner: Owner::Local,
            stream: id.0,
            stream_type: "request",
        });
        let mut req = Request::new(self.config.max_field_section_size);
        self.write_headers(now, id, &mut req, fields);
        req.fin_requested = end;
        self.requests.insert(id, req);
        self.stats.requests += 1;
        self.flush(conn, now);
        Some(id)
    }

    /// Server: sends the response head on request stream `id`; `false` if the stream
    /// is gone.
    pub fn send_response(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        fields: &[Field],
        end: bool,
    ) -> bool {
        let Some(mut req) = self.requests.remove(&id) else {
            return false;
        };
        self.write_headers(now, id, &mut req, fields);
        req.fin_requested = end;
        self.requests.insert(id, req);
        self.flush(conn, now);
        true
    }

    /// QPACK-encodes `fields` into a HEADERS frame on `req`'s send buffer.
    fn write_headers(&mut self, now: Instant, id: StreamId, req: &mut Request, fields: &[Field]) {
        let block = self.encoder.encode(id.0, fields);
        let ins = self.encoder.take_instructions();
        self.stats.encoder_bytes_sent += ins.len() as u64;
        self.local.encoder_buf.extend_from_slice(&ins);
        self.stats.header_bytes_sent += block.len() as u64;
        let len = block.len() as u64;
        self.log(now, || H3LogEvent::FrameCreated {
            stream: id.0,
            length: len,
            frame: fields_info(fields),
        });
        frame::encode(&mut req.send, &Frame::Headers(block));
    }

    /// Sends body bytes as a DATA frame; returns how many were taken (0 when the
    /// stream's buffer is full: call again after the next events).
    pub fn send_data(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        data: &[u8],
    ) -> usize {
        let Some(req) = self.requests.get_mut(&id) else {
            return 0;
        };
        if req.fin_requested || req.send_done {
            return 0;
        }
        let room = SEND_BUF.saturating_sub(req.send.len());
        let n = data.len().min(room);
        if n == 0 {
            return 0;
        }
        frame::encode_header(&mut req.send, ty::DATA, n as u64);
        req.send.extend_from_slice(&data[..n]);
        self.log(now, || H3LogEvent::FrameCreated {
            stream: id.0,
            length: n as u64,
            frame: FrameInfo::Data { length: n as u64 },
        });
        self.flush_stream(conn, id);
        n
    }

    /// Ends our side of stream `id` once its buffered data is written.
    pub fn finish(&mut self, conn: &mut Connection, id: StreamId) {
        if let Some(req) = self.requests.get_mut(&id) {
            req.fin_requested = true;
        }
        self.flush_stream(conn, id);
    }

    /// Whether stream `id` can take more body bytes now.
    pub fn can_send(&self, id: StreamId) -> bool {
        self.requests
            .get(&id)
            .is_some_and(|r| !r.fin_requested && r.send.len() < SEND_BUF)
    }

    /// Abandons a request (client) or response (server): resets and stops the
    /// stream with H3_REQUEST_CANCELLED (client) or H3_REQUEST_REJECTED (server,
    /// when nothing was processed), RFC 9114 §4.1.1.
    pub fn cancel(&mut self, conn: &mut Connection, id: StreamId, code: u64) {
        if self.requests.contains_key(&id) {
            self.stream_error(conn, id, code);
        }
    }

    /// Starts a graceful shutdown (RFC 9114 §5.2): a server refuses requests from the
    /// next unaccepted stream on; a client announces it accepts no pushes.
    pub fn send_goaway(&mut self, conn: &mut Connection, now: Instant) {
        let id = match self.side {
            Side::Server => self.next_request,
            Side::Client => 0,
        };
        if self.goaway_sent.is_some_and(|g| g <= id) || self.error.is_some() {
            return;
        }
        self.goaway_sent = Some(id);
        self.open_local(conn, now);
        frame::encode(&mut self.local.control_buf, &Frame::GoAway(id));
        let stream = self.local.control.map_or(0, |s| s.0);
        self.log(now, || H3LogEvent::FrameCreated {
            stream,
            length: quiclab_proto::varint::len(id) as u64,
            frame: FrameInfo::GoAway { id },
        });
        self.flush(conn, now);
    }

    /// Streams with a request in progress.
    pub fn active_requests(&self) -> usize {
        self.requests.len()
    }

    /// Peer unidirectional streams still tracked: its control and QPACK streams, and
    /// others only while their type is being read (what a peer opening and resetting
    /// streams of unknown types cannot grow).
    pub fn peer_uni_streams(&self) -> usize {
        self.uni.len()
    }

    // ----- writing -----

    /// Writes every buffered byte the connection takes.
    pub(crate) fn flush(&mut self, conn: &mut Connection, now: Instant) {
        if self.error.is_some() {
            return;
        }
        let dec = self.decoder.take_instructions();
        self.local.decoder_buf.extend_from_slice(&dec);
        if let Err(e) = self.local.flush(conn) {
            self.fail(conn, now, code::H3_CLOSED_CRITICAL_STREAM, &e);
            return;
        }
        let ids: Vec<StreamId> = self
            .requests
            .iter()
            .filter(|(_, r)| !r.send.is_empty() || (r.fin_requested && !r.send_done))
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            self.flush_stream(conn, id);
        }
    }

    /// Writes one request stream's buffer, then FIN when asked for.
    pub(crate) fn flush_stream(&mut self, conn: &mut Connection, id: StreamId) {
        let Some(req) = self.requests.get_mut(&id) else {
            return;
        };
        while !req.send.is_empty() {
            match conn.write(id, &req.send) {
                Ok(0) | Err(StreamError::Blocked) => return,
                Ok(n) => {
                    req.send.drain(..n);
                }
                Err(e) => {
                    req.send.clear();
                    req.send_done = true;
                    if let StreamError::Stopped(code) = e {
                        // The peer's STOP_SENDING (its event may come later).
                        self.events.push_back(H3Event::Reset { stream: id, code });
                    }
                    break;
                }
            }
        }
        if req.fin_requested && !req.send_done {
            let _ = conn.finish(id);
            req.send_done = true;
        }
        if req.send_done && req.recv_done {
            self.requests.remove(&id);
        }
    }
}
