//! `h3_connection`: a server [`H3Connection`] over the established connection of a
//! replayed handshake (`quic::Recorded`); the client side writes arbitrary bytes on
//! streams of its choosing, sealed as STREAM, RESET_STREAM and STOP_SENDING frames with
//! the client's 1-RTT keys: control, QPACK encoder and decoder streams, request
//! streams, unknown stream types, resets. The fuzzer owns every client stream (a client
//! `H3Connection` would own the control and QPACK streams); the seeds are what a real
//! client `H3Connection` wrote (`examples/seeds.rs`). After every step it asserts
//! that the server's stream maps and buffers stay within their bounds and that an
//! HTTP/3 connection error closes the QUIC connection with its code.

use crate::input::{Reader, Writer};
use crate::quic::Recorded;
use quiclab_h3::{Field, H3Config, H3Connection, H3Event};
use quiclab_proto::events::Owner;
use quiclab_proto::raw::{Frame, SpaceId, StreamFrame};
use quiclab_proto::testing::Pair;
use quiclab_proto::{CloseReason, Connection, Dir, Side, StreamId, TransportConfig};
use std::collections::BTreeMap;
use std::time::Duration;

/// The largest stream chunk one step writes.
pub const MAX_CHUNK: usize = 1200;
const FIRST_PN: u64 = 1_000;

/// One step of an input.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `bytes` appended to client stream `stream` (see [`client_stream`]), and to the
    /// `repeat` streams of the same kind after it; FIN after them when `fin`.
    Write {
        stream: u8,
        repeat: u8,
        fin: bool,
        bytes: Vec<u8>,
    },
    /// RESET_STREAM on the stream and the `repeat` after it, at the offsets written.
    Reset { stream: u8, repeat: u8, code: u16 },
    /// STOP_SENDING on the stream and the `repeat` after it.
    Stop { stream: u8, repeat: u8, code: u16 },
    /// Time passes; timers fire; what the server sends is lost.
    Advance { ms: u16 },
    /// The server application answers every request whose head arrived.
    Respond,
    /// The server application sends GOAWAY.
    GoAway,
}

/// Client stream IDs from a selector: bit 0 picks unidirectional, the rest the index
/// (client-initiated, RFC 9000 §2.1).
pub fn client_stream(sel: u8) -> StreamId {
    let dir = if sel & 1 == 1 { Dir::Uni } else { Dir::Bi };
    StreamId::new(Side::Client, dir, u64::from(sel >> 1))
}

/// The stream `sel` names and the `repeat % 32` streams of the same kind after it.
fn streams(sel: u8, repeat: u8) -> impl Iterator<Item = StreamId> {
    let first = client_stream(sel);
    (0..=u64::from(repeat % 32)).map(move |k| StreamId(first.0 + 4 * k))
}

impl Step {
    pub fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 6 {
            0 => {
                let (stream, repeat, fin) = (r.u8(), r.u8(), r.bool());
                Step::Write {
                    stream,
                    repeat,
                    fin,
                    bytes: r.bytes(MAX_CHUNK).to_vec(),
                }
            }
            1 => Step::Reset {
                stream: r.u8(),
                repeat: r.u8(),
                code: r.u16(),
            },
            2 => Step::Stop {
                stream: r.u8(),
                repeat: r.u8(),
                code: r.u16(),
            },
            3 => Step::Advance { ms: r.u16() },
            4 => Step::Respond,
            _ => Step::GoAway,
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Step::Write {
                stream,
                repeat,
                fin,
                bytes,
            } => w
                .u8(0)
                .u8(*stream)
                .u8(*repeat)
                .u8(u8::from(*fin))
                .bytes(bytes),
            Step::Reset {
                stream,
                repeat,
                code,
            } => w.u8(1).u8(*stream).u8(*repeat).u16(*code),
            Step::Stop {
                stream,
                repeat,
                code,
            } => w.u8(2).u8(*stream).u8(*repeat).u16(*code),
            Step::Advance { ms } => w.u8(3).u16(*ms),
            Step::Respond => w.u8(4),
            Step::GoAway => w.u8(5),
        };
    }
}

/// The client side: seals frames with the recorded client's keys, tracking each
/// stream's next offset.
struct Client<'a> {
    conn: &'a Connection,
    pn: u64,
    offsets: BTreeMap<StreamId, u64>,
}

impl Client<'_> {
    /// Seals `frames` into one packet and hands it to the server.
    fn send(&mut self, pair: &mut Pair, frames: &[Frame<'_>]) {
        let mut payload = vec![];
        for f in frames {
            f.encode(&mut payload);
        }
        let mut d = vec![];
        assert!(self
            .conn
            .seal_for_fuzzing(SpaceId::Data, self.pn, &payload, &mut d));
        self.pn += 1;
        let (now, addr) = (pair.now, pair.client_addr);
        let _ = pair.server.handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut d);
    }

    fn write(&mut self, pair: &mut Pair, id: StreamId, bytes: &[u8], fin: bool) {
        let offset = self.offsets.entry(id).or_default();
        let f = StreamFrame {
            id,
            offset: *offset,
            fin,
            data: bytes,
        };
        *offset += bytes.len() as u64;
        self.send(pair, &[Frame::Stream(f)]);
    }
}

/// The server: its HTTP/3 connection and the requests whose head it saw.
struct Server {
    h3: H3Connection,
    heads: Vec<StreamId>,
}

impl Server {
    /// Feeds the QUIC events to HTTP/3, polls it, collects its events, and sends what
    /// it wrote (lost: the client only seals).
    fn pump(&mut self, pair: &mut Pair) {
        let now = pair.now;
        let conn = pair.server_conn().expect("accepted");
        while let Some(ev) = conn.poll_event() {
            self.h3.handle_event(conn, now, &ev);
        }
        self.h3.poll(conn, now);
        while let Some(ev) = self.h3.poll_event() {
            if let H3Event::Headers { stream, .. } = ev {
                self.heads.push(stream);
            }
        }
        let mut buf = vec![];
        while pair.server.poll_transmit(now, &mut buf).is_some() {
            buf.clear();
        }
    }

    fn respond(&mut self, pair: &mut Pair) {
        let now = pair.now;
        let conn = pair.server_conn().expect("accepted");
        let head = [
            Field::new(":status", "200"),
            Field::new("content-length", "4"),
        ];
        for id in std::mem::take(&mut self.heads) {
            if self.h3.send_response(conn, now, id, &head, false) {
                self.h3.send_data(conn, now, id, b"body");
                self.h3.finish(conn, id);
            }
        }
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    crate::quic::with_recorded(|config, recorded| run_from(config, recorded, data));
}

fn run_from(config: &TransportConfig, recorded: &Recorded, data: &[u8]) {
    let mut pair = recorded.replay(config);
    let conn = recorded
        .client
        .client
        .connection(recorded.client.client_conn);
    let mut client = Client {
        conn: conn.expect("recorded client"),
        pn: FIRST_PN,
        offsets: BTreeMap::new(),
    };
    let h3_config = H3Config::default();
    let mut server = Server {
        h3: H3Connection::new(Side::Server, h3_config.clone()),
        heads: vec![],
    };
    server.pump(&mut pair);
    let mut r = Reader::new(data);
    while !r.is_empty() {
        match Step::read(&mut r) {
            Step::Write {
                stream,
                repeat,
                fin,
                bytes,
            } => {
                for id in streams(stream, repeat) {
                    client.write(&mut pair, id, &bytes, fin);
                    server.pump(&mut pair);
                    check(&pair, &server.h3, config, &h3_config);
                }
            }
            Step::Reset {
                stream,
                repeat,
                code,
            } => {
                for id in streams(stream, repeat) {
                    let final_size = client.offsets.get(&id).copied().unwrap_or(0);
                    let f = Frame::ResetStream {
                        id,
                        error_code: u64::from(code),
                        final_size,
                    };
                    client.send(&mut pair, &[f]);
                    server.pump(&mut pair);
                    check(&pair, &server.h3, config, &h3_config);
                }
            }
            Step::Stop {
                stream,
                repeat,
                code,
            } => {
                for id in streams(stream, repeat) {
                    let f = Frame::StopSending {
                        id,
                        error_code: u64::from(code),
                    };
                    client.send(&mut pair, &[f]);
                }
            }
            Step::Advance { ms } => {
                pair.now += Duration::from_millis(u64::from(ms));
                pair.server.handle_timeout(pair.now);
            }
            Step::Respond => server.respond(&mut pair),
            Step::GoAway => {
                let now = pair.now;
                let conn = pair.server_conn().expect("accepted");
                server.h3.send_goaway(conn, now);
            }
        }
        server.pump(&mut pair);
        check(&pair, &server.h3, config, &h3_config);
    }
}

/// The bounds a peer must not push the server past.
fn check(pair: &Pair, h3: &H3Connection, quic: &TransportConfig, config: &H3Config) {
    let f = h3.footprint();
    let bound = |what: &str, value: usize, max: u64| {
        assert!(value as u64 <= max, "{what}: {value} > {max} ({f:?})");
    };
    // The peer opens at most the QUIC stream limits at once; closed streams must leave
    // the maps (their credit goes back to the peer).
    bound("peer uni streams", f.uni_streams, quic.flow.max_streams_uni);
    bound("requests", f.requests, quic.flow.max_streams_bidi);
    // Stream flow control bounds what one stream can make us hold; QPACK the blocked head.
    let window = quic
        .flow
        .initial_max_stream_data
        .max(quic.flow.max_stream_receive_window);
    bound(
        "request backlog",
        f.max_request_backlog,
        window + config.max_field_section_size,
    );
    bound("stream type bytes", f.max_typing, 8);
    let (_, decoder) = h3.qpack();
    bound(
        "QPACK table",
        decoder.table_size(),
        config.qpack_max_table_capacity,
    );
    bound(
        "QPACK blocked streams",
        decoder.blocked_streams(),
        config.qpack_blocked_streams,
    );
    // An HTTP/3 connection error closes QUIC with its code (RFC 9114 §8).
    if let Some(e) = h3.error() {
        let conn = pair
            .server
            .connection(pair.server_conn.expect("accepted"))
            .expect("held");
        match conn.close_reason() {
            Some(CloseReason::Application {
                owner: Owner::Local,
                code,
                ..
            }) => {
                assert_eq!(*code, e.code, "closed with another code than the error's")
            }
            // The peer or the transport closed first.
            Some(_) => {}
            None => panic!("HTTP/3 error {e:?} but the connection is open"),
        }
    }
}
