//! Request streams (RFC 9114 §4.1, §6.1): receiving frames in the order a message
//! allows (HEADERS, DATA*, optional trailing HEADERS), QPACK-blocked heads, body
//! length checks, and the stream's send buffer.

use crate::connection::{H3Connection, H3Event};
use crate::error::{code, H3Error};
use crate::frame::{Decoded, Frame};
use crate::log::{fields_info, FrameInfo, H3LogEvent};
use crate::message;
use crate::qpack::decoder::Decoded as Qpack;
use crate::streams::{Phase, Request};
use quiclab_proto::{Connection, Instant, Side, StreamError, StreamId};

/// What handling one decoded item led to.
enum Step {
    Go,
    /// QPACK-blocked: stop reading this stream until inserts arrive.
    Blocked,
    Stream(u64),
    Conn(H3Error),
}

const READ_CHUNK: usize = 16 * 1024;
/// Most bytes read ahead from a QPACK-blocked stream (to notice a reset; bounded).
const BLOCKED_READ_AHEAD: usize = 64 * 1024;

impl H3Connection {
    /// Reads and processes what arrived on request stream `id`.
    pub(crate) fn process_request(&mut self, conn: &mut Connection, now: Instant, id: StreamId) {
        let Some(mut req) = self.requests.remove(&id) else {
            return;
        };
        let step = self.drive_request(conn, now, id, &mut req);
        match step {
            Step::Go | Step::Blocked => {
                if !(req.recv_done && req.send_done) {
                    self.requests.insert(id, req);
                }
            }
            Step::Stream(c) => {
                self.requests.insert(id, req);
                self.stream_error(conn, id, c);
            }
            Step::Conn(e) => {
                self.requests.insert(id, req);
                self.fail(conn, now, e.code, &e.reason);
            }
        }
    }

    fn drive_request(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        id: StreamId,
        req: &mut Request,
    ) -> Step {
        if let Some(block) = req.blocked.take() {
            match self.on_headers(now, id, req, block) {
                Step::Go => {}
                Step::Blocked => return self.read_ahead(conn, id, req),
                other => return other,
            }
        }
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            if req.recv_done {
                return Step::Go;
            }
            let input = if !req.stash.is_empty() {
                std::mem::take(&mut req.stash)
            } else if req.recv_fin {
                Vec::new()
            } else {
                match conn.read(id, &mut buf) {
                    Ok(r) => {
                        req.recv_fin = r.fin;
                        if r.bytes == 0 && !r.fin {
                            return Step::Go;
                        }
                        buf[..r.bytes].to_vec()
                    }
                    Err(StreamError::Blocked) => return Step::Go,
                    Err(StreamError::Reset(c)) => return self.peer_reset(id, req, c),
                    Err(_) => {
                        req.recv_done = true;
                        return Step::Go;
                    }
                }
            };
            let mut pos = 0;
            while pos < input.len() {
                let (n, item) = match req.frames.decode(&input[pos..]) {
                    Ok(x) => x,
                    Err(e) => return Step::Conn(e),
                };
                pos += n;
                let step = match item {
                    None => Step::Go,
                    Some(item) => self.on_item(now, id, req, item),
                };
                match step {
                    Step::Go => {}
                    Step::Blocked => {
                        req.stash = input[pos..].to_vec();
                        return Step::Blocked;
                    }
                    other => return other,
                }
            }
            if req.recv_fin && req.stash.is_empty() {
                return self.on_fin(id, req);
            }
        }
    }

    /// While the head waits for QPACK inserts, reads a bounded amount ahead so that a
    /// reset of the stream is noticed (and answered with Stream Cancellation).
    fn read_ahead(&mut self, conn: &mut Connection, id: StreamId, req: &mut Request) -> Step {
        let mut buf = [0u8; 4096];
        while req.stash.len() < BLOCKED_READ_AHEAD && !req.recv_fin {
            match conn.read(id, &mut buf) {
                Ok(r) => {
                    req.stash.extend_from_slice(&buf[..r.bytes]);
                    req.recv_fin = r.fin;
                    if r.bytes == 0 {
                        break;
                    }
                }
                Err(StreamError::Reset(c)) => return self.peer_reset(id, req, c),
                Err(_) => break,
            }
        }
        Step::Blocked
    }

    /// The peer reset its side of the stream (RFC 9114 §4.1.1).
    fn peer_reset(&mut self, id: StreamId, req: &mut Request, c: u64) -> Step {
        if !req.head_done || req.blocked.is_some() {
            self.decoder.cancel_stream(id.0);
        }
        req.recv_done = true;
        req.send_done = true;
        self.events.push_back(H3Event::Reset {
            stream: id,
            code: c,
        });
        Step::Go
    }

    /// The stream ended cleanly: check the message is complete.
    fn on_fin(&mut self, id: StreamId, req: &mut Request) -> Step {
        if !req.frames.is_idle() {
            // RFC 9114 §7.1: a frame cut short by the end of the stream.
            return Step::Conn(H3Error::new(code::H3_FRAME_ERROR, "truncated frame"));
        }
        if req.phase == Phase::Head {
            return Step::Stream(code::H3_REQUEST_INCOMPLETE);
        }
        if req.content_length.is_some_and(|cl| cl != req.body) {
            return Step::Stream(code::H3_MESSAGE_ERROR);
        }
        req.recv_done = true;
        self.events.push_back(H3Event::Finished { stream: id });
        Step::Go
    }

    fn on_item(&mut self, now: Instant, id: StreamId, req: &mut Request, item: Decoded) -> Step {
        let frame = match item {
            Decoded::DataHeader(len) => {
                if req.phase != Phase::Body {
                    return Step::Conn(H3Error::new(
                        code::H3_FRAME_UNEXPECTED,
                        "DATA outside a message body",
                    ));
                }
                self.log(now, || H3LogEvent::FrameParsed {
                    stream: id.0,
                    length: len,
                    frame: FrameInfo::Data { length: len },
                });
                return Step::Go;
            }
            Decoded::Data(bytes) => {
                req.body += bytes.len() as u64;
                if req.content_length.is_some_and(|cl| req.body > cl) {
                    return Step::Stream(code::H3_MESSAGE_ERROR);
                }
                self.events.push_back(H3Event::Data {
                    stream: id,
                    data: bytes.to_vec(),
                });
                return Step::Go;
            }
            Decoded::Frame(f) => f,
        };
        let unexpected = |what: &str| {
            Step::Conn(H3Error::new(
                code::H3_FRAME_UNEXPECTED,
                format!("{what} on a request stream"),
            ))
        };
        match frame {
            Frame::Headers(block) => self.on_headers(now, id, req, block),
            Frame::Unknown(t) => {
                self.log(now, || H3LogEvent::FrameParsed {
                    stream: id.0,
                    length: 0,
                    frame: FrameInfo::Unknown { frame_type: t },
                });
                Step::Go
            }
            // RFC 9114 §7.2.5: we never sent MAX_PUSH_ID, so any push ID is too big.
            Frame::PushPromise(_) if self.side == Side::Client => Step::Conn(H3Error::new(
                code::H3_ID_ERROR,
                "PUSH_PROMISE without MAX_PUSH_ID",
            )),
            Frame::PushPromise(_) => unexpected("PUSH_PROMISE"),
            Frame::Settings(_) => unexpected("SETTINGS"),
            Frame::GoAway(_) => unexpected("GOAWAY"),
            Frame::CancelPush(_) => unexpected("CANCEL_PUSH"),
            Frame::MaxPushId(_) => unexpected("MAX_PUSH_ID"),
        }
    }

    /// A HEADERS frame: decode it (or block), check it, deliver it.
    fn on_headers(
        &mut self,
        now: Instant,
        id: StreamId,
        req: &mut Request,
        block: Vec<u8>,
    ) -> Step {
        if req.phase == Phase::Trailers {
            return Step::Conn(H3Error::new(
                code::H3_FRAME_UNEXPECTED,
                "HEADERS after trailers",
            ));
        }
        let len = block.len() as u64;
        let fields = match self.decoder.decode(id.0, &block) {
            Ok(Qpack::Fields(f)) => f,
            Ok(Qpack::Blocked(_)) => {
                req.blocked = Some(block);
                return Step::Blocked;
            }
            Err(e) if e.code == code::H3_EXCESSIVE_LOAD => return Step::Stream(e.code),
            Err(e) => return Step::Conn(e),
        };
        self.stats.header_bytes_received += len;
        self.log(now, || H3LogEvent::FrameParsed {
            stream: id.0,
            length: len,
            frame: fields_info(&fields),
        });
        let checked = match (req.phase, self.side) {
            (Phase::Body, _) => message::check_trailers(&fields).map(|_| Phase::Trailers),
            (Phase::Head, Side::Server) => message::check_request(&fields).map(|_| Phase::Body),
            (Phase::Head, Side::Client) => message::check_response(&fields).map(|status| {
                // RFC 9114 §4.1: informational (1xx) heads precede the final one.
                if status < 200 {
                    Phase::Head
                } else {
                    Phase::Body
                }
            }),
            (Phase::Trailers, _) => Err("HEADERS after trailers".to_string()),
        };
        let next = match checked {
            Ok(p) => p,
            Err(_) => return Step::Stream(code::H3_MESSAGE_ERROR),
        };
        if req.phase == Phase::Head && next == Phase::Body {
            req.head_done = true;
            match message::content_length(&fields) {
                Ok(cl) => req.content_length = cl,
                Err(_) => return Step::Stream(code::H3_MESSAGE_ERROR),
            }
        }
        req.phase = next;
        self.events
            .push_back(H3Event::Headers { stream: id, fields });
        Step::Go
    }

    /// Retries streams blocked on QPACK after the encoder stream delivered inserts.
    pub(crate) fn unblock(&mut self, conn: &mut Connection, now: Instant) {
        let ids: Vec<StreamId> = self
            .requests
            .iter()
            .filter(|(_, r)| r.blocked.is_some())
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            if self.error.is_some() {
                return;
            }
            self.process_request(conn, now, id);
        }
    }
}
