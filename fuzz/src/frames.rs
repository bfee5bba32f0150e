//! `connection_frames`: a real handshake with the seeded `testing` pair, then packets of
//! arbitrary frames sealed with the client's 1-RTT keys into the server's established
//! connection. After every step it asserts the server's buffers stay within their
//! bounds ([`check`]) and that a connection the server closed for a violation carries
//! a transport error code.
//!
//! Input: steps ([`Step`]): raw frame bytes, typed frames encoded by the crate's own
//! encoder (so the fuzzer reaches deep stream and connection-ID states), the passing of
//! time, and the server application reading what it has.

use crate::input::{Reader, Writer};
use crate::quic::Recorded;
use quiclab_proto::events::Owner;
use quiclab_proto::raw::{
    AckFrame, AckFrequencyFrame, ConnectionCloseFrame, Frame, NewConnectionIdFrame, SpaceId,
    StreamFrame,
};
use quiclab_proto::testing::Pair;
use quiclab_proto::{
    CloseReason, Connection, ConnectionEvent, ConnectionId, Dir, Footprint, Side, StreamEvent,
    StreamId, TransportConfig, MAX_QUEUED_DATAGRAMS,
};
use std::collections::BTreeSet;
use std::time::Duration;

/// The largest packet payload the target seals.
pub const MAX_PAYLOAD: usize = 1400;
/// The first packet number of the input's packets (above the handshake's).
const FIRST_PN: u64 = 1_000;

/// A frame built from a few fields: the fuzzer picks kinds and numbers, the crate's
/// encoder writes valid syntax.
#[derive(Clone, Debug, PartialEq)]
pub enum Typed {
    Stream {
        stream: u16,
        offset: u32,
        len: u16,
        fin: bool,
        fill: u8,
    },
    Reset {
        stream: u16,
        code: u16,
        final_size: u32,
    },
    StopSending {
        stream: u16,
        code: u16,
    },
    Crypto {
        offset: u32,
        len: u16,
        fill: u8,
    },
    MaxData(u64),
    MaxStreamData {
        stream: u16,
        max: u64,
    },
    MaxStreams {
        uni: bool,
        max: u64,
    },
    Blocked {
        kind: u8,
        stream: u16,
        limit: u64,
    },
    NewCid {
        sequence: u16,
        retire_prior_to: u16,
        len: u8,
        fill: u8,
    },
    RetireCid(u16),
    PathChallenge(u64),
    PathResponse(u64),
    Ack {
        largest: u32,
        first: u16,
        gaps: Vec<(u8, u8)>,
    },
    Close {
        code: u16,
        app: bool,
    },
    Datagram {
        len: u16,
        fill: u8,
    },
    AckFrequency {
        sequence: u16,
        threshold: u16,
        delay_us: u32,
        reordering: u8,
    },
    NewToken {
        len: u8,
    },
    Simple(u8),
}

/// One step of an input.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A packet with this payload, as it is.
    Raw(Vec<u8>),
    /// A packet of typed frames.
    Frames(Vec<Typed>),
    /// Time passes; timers fire; what the server sends is lost.
    Advance { ms: u16 },
    /// The server application reads every readable stream and DATAGRAM.
    Read,
}

/// Stream IDs from a selector: its low 2 bits are the type (RFC 9000 §2.1), the rest
/// the index.
pub fn stream_id(sel: u16) -> StreamId {
    let initiator = if sel & 1 == 0 {
        Side::Client
    } else {
        Side::Server
    };
    let dir = if sel & 2 == 0 { Dir::Bi } else { Dir::Uni };
    StreamId::new(initiator, dir, u64::from(sel >> 2))
}

impl Typed {
    fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 18 {
            0 => Typed::Stream {
                stream: r.u16(),
                offset: r.u32(),
                len: r.u16(),
                fin: r.bool(),
                fill: r.u8(),
            },
            1 => Typed::Reset {
                stream: r.u16(),
                code: r.u16(),
                final_size: r.u32(),
            },
            2 => Typed::StopSending {
                stream: r.u16(),
                code: r.u16(),
            },
            3 => Typed::Crypto {
                offset: r.u32(),
                len: r.u16(),
                fill: r.u8(),
            },
            4 => Typed::MaxData(r.u64()),
            5 => Typed::MaxStreamData {
                stream: r.u16(),
                max: r.u64(),
            },
            6 => Typed::MaxStreams {
                uni: r.bool(),
                max: r.u64(),
            },
            7 => Typed::Blocked {
                kind: r.u8(),
                stream: r.u16(),
                limit: r.u64(),
            },
            8 => Typed::NewCid {
                sequence: r.u16(),
                retire_prior_to: r.u16(),
                len: r.u8(),
                fill: r.u8(),
            },
            9 => Typed::RetireCid(r.u16()),
            10 => Typed::PathChallenge(r.u64()),
            11 => Typed::PathResponse(r.u64()),
            12 => {
                let (largest, first) = (r.u32(), r.u16());
                let gaps = (0..r.u8() % 4).map(|_| (r.u8(), r.u8())).collect();
                Typed::Ack {
                    largest,
                    first,
                    gaps,
                }
            }
            13 => Typed::Close {
                code: r.u16(),
                app: r.bool(),
            },
            14 => Typed::Datagram {
                len: r.u16(),
                fill: r.u8(),
            },
            15 => Typed::AckFrequency {
                sequence: r.u16(),
                threshold: r.u16(),
                delay_us: r.u32(),
                reordering: r.u8(),
            },
            16 => Typed::NewToken { len: r.u8() },
            _ => Typed::Simple(r.u8()),
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Typed::Stream {
                stream,
                offset,
                len,
                fin,
                fill,
            } => w
                .u8(0)
                .u16(*stream)
                .u32(*offset)
                .u16(*len)
                .u8(u8::from(*fin))
                .u8(*fill),
            Typed::Reset {
                stream,
                code,
                final_size,
            } => w.u8(1).u16(*stream).u16(*code).u32(*final_size),
            Typed::StopSending { stream, code } => w.u8(2).u16(*stream).u16(*code),
            Typed::Crypto { offset, len, fill } => w.u8(3).u32(*offset).u16(*len).u8(*fill),
            Typed::MaxData(m) => w.u8(4).u64(*m),
            Typed::MaxStreamData { stream, max } => w.u8(5).u16(*stream).u64(*max),
            Typed::MaxStreams { uni, max } => w.u8(6).u8(u8::from(*uni)).u64(*max),
            Typed::Blocked {
                kind,
                stream,
                limit,
            } => w.u8(7).u8(*kind).u16(*stream).u64(*limit),
            Typed::NewCid {
                sequence,
                retire_prior_to,
                len,
                fill,
            } => w
                .u8(8)
                .u16(*sequence)
                .u16(*retire_prior_to)
                .u8(*len)
                .u8(*fill),
            Typed::RetireCid(s) => w.u8(9).u16(*s),
            Typed::PathChallenge(d) => w.u8(10).u64(*d),
            Typed::PathResponse(d) => w.u8(11).u64(*d),
            Typed::Ack {
                largest,
                first,
                gaps,
            } => {
                w.u8(12).u32(*largest).u16(*first).u8(gaps.len() as u8);
                for (g, l) in gaps {
                    w.u8(*g).u8(*l);
                }
                w
            }
            Typed::Close { code, app } => w.u8(13).u16(*code).u8(u8::from(*app)),
            Typed::Datagram { len, fill } => w.u8(14).u16(*len).u8(*fill),
            Typed::AckFrequency {
                sequence,
                threshold,
                delay_us,
                reordering,
            } => w
                .u8(15)
                .u16(*sequence)
                .u16(*threshold)
                .u32(*delay_us)
                .u8(*reordering),
            Typed::NewToken { len } => w.u8(16).u8(*len),
            Typed::Simple(k) => w.u8(17).u8(*k),
        };
    }

    /// Appends the frame with the crate's encoder.
    fn encode(&self, out: &mut Vec<u8>) {
        let fill = |len: usize, b: u8| vec![b; len % MAX_PAYLOAD];
        match self {
            Typed::Stream {
                stream,
                offset,
                len,
                fin,
                fill: b,
            } => {
                let data = fill(usize::from(*len), *b);
                let f = StreamFrame {
                    id: stream_id(*stream),
                    offset: u64::from(*offset),
                    fin: *fin,
                    data: &data,
                };
                Frame::Stream(f).encode(out);
            }
            Typed::Reset {
                stream,
                code,
                final_size,
            } => Frame::ResetStream {
                id: stream_id(*stream),
                error_code: u64::from(*code),
                final_size: u64::from(*final_size),
            }
            .encode(out),
            Typed::StopSending { stream, code } => Frame::StopSending {
                id: stream_id(*stream),
                error_code: u64::from(*code),
            }
            .encode(out),
            Typed::Crypto {
                offset,
                len,
                fill: b,
            } => {
                let data = fill(usize::from(*len), *b);
                Frame::Crypto {
                    offset: u64::from(*offset),
                    data: &data,
                }
                .encode(out);
            }
            Typed::MaxData(m) => Frame::MaxData(varint(*m)).encode(out),
            Typed::MaxStreamData { stream, max } => Frame::MaxStreamData {
                id: stream_id(*stream),
                max: varint(*max),
            }
            .encode(out),
            Typed::MaxStreams { uni, max } => {
                let dir = if *uni { Dir::Uni } else { Dir::Bi };
                Frame::MaxStreams {
                    dir,
                    max: varint(*max),
                }
                .encode(out)
            }
            Typed::Blocked {
                kind,
                stream,
                limit,
            } => {
                let limit = varint(*limit);
                match kind % 4 {
                    0 => Frame::DataBlocked { limit },
                    1 => Frame::StreamDataBlocked {
                        id: stream_id(*stream),
                        limit,
                    },
                    2 => Frame::StreamsBlocked {
                        dir: Dir::Bi,
                        limit,
                    },
                    _ => Frame::StreamsBlocked {
                        dir: Dir::Uni,
                        limit,
                    },
                }
                .encode(out)
            }
            Typed::NewCid {
                sequence,
                retire_prior_to,
                len,
                fill: b,
            } => {
                let bytes = [*b; 20];
                let id =
                    ConnectionId::new(&bytes[..usize::from(len % 21)]).expect("at most 20 bytes");
                let f = NewConnectionIdFrame {
                    sequence: u64::from(*sequence),
                    retire_prior_to: u64::from(*retire_prior_to),
                    id,
                    reset_token: [*b; 16],
                };
                Frame::NewConnectionId(f).encode(out);
            }
            Typed::RetireCid(s) => Frame::RetireConnectionId {
                sequence: u64::from(*s),
            }
            .encode(out),
            Typed::PathChallenge(d) => Frame::PathChallenge(d.to_be_bytes()).encode(out),
            Typed::PathResponse(d) => Frame::PathResponse(d.to_be_bytes()).encode(out),
            Typed::Ack {
                largest,
                first,
                gaps,
            } => {
                // Ranges from the top: [largest - first, largest], then gap/length pairs
                // (RFC 9000 §19.3.1), as far as they stay above zero.
                let mut hi = u64::from(*largest);
                let mut ranges = vec![hi.saturating_sub(u64::from(*first))..=hi];
                let mut lo = *ranges[0].start();
                for (g, l) in gaps {
                    let Some(h) = lo.checked_sub(u64::from(*g) + 2) else {
                        break;
                    };
                    hi = h;
                    lo = hi.saturating_sub(u64::from(*l));
                    ranges.push(lo..=hi);
                }
                Frame::Ack(AckFrame {
                    ack_delay: 0,
                    ranges,
                    ecn: None,
                })
                .encode(out);
            }
            Typed::Close { code, app } => {
                let f = ConnectionCloseFrame {
                    error_code: u64::from(*code),
                    frame_type: (!*app).then_some(0),
                    reason: b"fuzz",
                };
                Frame::ConnectionClose(f).encode(out);
            }
            Typed::Datagram { len, fill: b } => {
                let data = fill(usize::from(*len), *b);
                Frame::Datagram { data: &data }.encode(out);
            }
            Typed::AckFrequency {
                sequence,
                threshold,
                delay_us,
                reordering,
            } => {
                let f = AckFrequencyFrame {
                    sequence: u64::from(*sequence),
                    ack_eliciting_threshold: u64::from(*threshold),
                    request_max_ack_delay: u64::from(*delay_us),
                    reordering_threshold: u64::from(*reordering),
                };
                Frame::AckFrequency(f).encode(out);
            }
            Typed::NewToken { len } => Frame::NewToken {
                token: &[7; 255][..usize::from(*len)],
            }
            .encode(out),
            Typed::Simple(k) => match k % 5 {
                0 => Frame::Ping,
                1 => Frame::Padding {
                    len: usize::from(k / 5) + 1,
                },
                2 => Frame::HandshakeDone,
                3 => Frame::ImmediateAck,
                _ => Frame::Crypto {
                    offset: 0,
                    data: &[],
                },
            }
            .encode(out),
        }
    }
}

/// A varint-range value (RFC 9000 §16): 62 bits.
fn varint(v: u64) -> u64 {
    v & ((1 << 62) - 1)
}

impl Step {
    pub fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 4 {
            0 => Step::Raw(r.bytes(MAX_PAYLOAD).to_vec()),
            1 => Step::Frames((0..r.u8() % 8).map(|_| Typed::read(r)).collect()),
            2 => Step::Advance { ms: r.u16() },
            _ => Step::Read,
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Step::Raw(b) => {
                w.u8(0).bytes(b);
            }
            Step::Frames(fs) => {
                w.u8(1).u8(fs.len() as u8);
                for f in fs {
                    f.write(w);
                }
            }
            Step::Advance { ms } => {
                w.u8(2).u16(*ms);
            }
            Step::Read => {
                w.u8(3);
            }
        }
    }
}

/// Runs one input.
pub fn run(data: &[u8]) {
    crate::quic::with_recorded(|config, recorded| run_from(config, recorded, data));
}

/// Runs one input from a replay of `recorded`, sealing with its client's keys.
fn run_from(config: &TransportConfig, recorded: &Recorded, data: &[u8]) {
    let mut pair = recorded.replay(config);
    let client = recorded
        .client
        .client
        .connection(recorded.client.client_conn)
        .expect("recorded client");
    let mut r = Reader::new(data);
    let mut pn = FIRST_PN;
    let mut payload = Vec::new();
    let mut datagram = Vec::new();
    let mut readable = BTreeSet::new();
    while !r.is_empty() {
        let step = Step::read(&mut r);
        let now = pair.now;
        let send = matches!(step, Step::Raw(_) | Step::Frames(_));
        match step {
            Step::Raw(bytes) => payload = bytes,
            Step::Frames(frames) => {
                payload.clear();
                for f in &frames {
                    f.encode(&mut payload);
                }
                payload.truncate(MAX_PAYLOAD);
            }
            Step::Advance { ms } => {
                pair.now += Duration::from_millis(u64::from(ms));
                pair.server.handle_timeout(pair.now);
            }
            Step::Read => read_all(pair.server_conn().expect("accepted"), &mut readable),
        }
        if send {
            datagram.clear();
            assert!(client.seal_for_fuzzing(SpaceId::Data, pn, &payload, &mut datagram));
            pn += 1;
            let addr = pair.client_addr;
            let _ = pair.server.handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut datagram);
        }
        drain(&mut pair, &mut readable);
        check(pair.server_conn().expect("accepted"), config);
    }
}

/// What the server sends is lost (the client is only the sealer); its events are
/// polled, readable streams noted.
fn drain(pair: &mut Pair, readable: &mut BTreeSet<StreamId>) {
    let mut buf = Vec::new();
    while pair.server.poll_transmit(pair.now, &mut buf).is_some() {
        buf.clear();
    }
    let conn = pair.server_conn().expect("accepted");
    while let Some(ev) = conn.poll_event() {
        if let ConnectionEvent::Stream(StreamEvent::Readable { id }) = ev {
            readable.insert(id);
        }
    }
}

/// The server application reads every stream that became readable, and the DATAGRAMs.
fn read_all(conn: &mut Connection, readable: &mut BTreeSet<StreamId>) {
    let mut buf = vec![0; 64 * 1024];
    for id in std::mem::take(readable) {
        while let Ok(o) = conn.read(id, &mut buf) {
            if o.bytes == 0 || o.fin {
                break;
            }
        }
    }
    while conn.recv_datagram().is_some() {}
}

/// The bounds a peer must not push the server's connection past.
pub fn check(conn: &Connection, config: &TransportConfig) {
    let f: Footprint = conn.footprint();
    let bound = |what: &str, value: usize, max: u64| {
        assert!(value as u64 <= max, "{what}: {value} > {max} ({f:?})");
    };
    bound("CRYPTO bytes buffered", f.crypto_buffered, 64 * 1024 + 1500);
    bound(
        "bytes held before use",
        f.handshake_buffered,
        64 * 1024 + 1500,
    );
    bound(
        "streams",
        f.streams,
        config.flow.max_streams_bidi + config.flow.max_streams_uni,
    );
    let window = config
        .flow
        .initial_max_data
        .max(config.flow.max_receive_window);
    bound("unread stream bytes", f.stream_recv_buffered, window);
    bound(
        "queued DATAGRAMs",
        f.datagrams_queued,
        MAX_QUEUED_DATAGRAMS as u64,
    );
    bound(
        "PATH_RESPONSEs owed",
        f.path_responses,
        quiclab_proto::raw::MAX_PATH_RESPONSES as u64,
    );
    let cids = config.active_connection_id_limit;
    bound("peer connection IDs", f.remote_cids, cids);
    bound("retirements owed", f.retire_pending, 5 * cids);
    // A connection we closed for a violation says which, with a transport error code.
    if let Some(CloseReason::Transport {
        owner: Owner::Local,
        error,
    }) = conn.close_reason()
    {
        let code = error.code.0;
        assert!(
            (0x01..=0x11).contains(&code) || (0x0100..=0x01ff).contains(&code),
            "closed with {error:?}"
        );
    }
}
