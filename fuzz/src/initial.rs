//! `endpoint_initial`: correctly protected client Initial packets (keys derived from
//! each packet's Destination Connection ID, RFC 9001 §5.2) carrying arbitrary frames,
//! from up to [`CLIENTS`] clients, to a server [`Endpoint`]. After every step it
//! asserts that no connection buffers more than [`CRYPTO_BOUND`] CRYPTO bytes and the
//! endpoint no more than `max_handshaking` times that.
//!
//! Input: a sequence of steps, each a tag byte and its fields ([`Step`]). A datagram
//! step may repeat itself (packet numbers and CRYPTO offsets advancing by a stride):
//! what a flooding peer does, written in a few bytes.

use crate::input::{Reader, Writer};
use quiclab_proto::raw::{initial_keys, seal, write_crypto_header, write_long_header, TAG_LEN};
use quiclab_proto::{
    varint, ConnectionId, Endpoint, Instant, PacketType, Side, TransportConfig, VERSION_1,
    VERSION_2,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Distinct clients (connection IDs and addresses) an input can use.
pub const CLIENTS: u8 = 8;
/// Connections the server lets handshake at once (below `CLIENTS`, so the limit bites).
pub const MAX_HANDSHAKING: usize = 4;
/// The largest datagram the target sends: UDP carries up to 64 KiB (IP fragments), and
/// a long-header packet up to 16 KiB (its 2-byte Length field as we write it).
pub const MAX_DATAGRAM: usize = 16 * 1024;
/// RFC 9000 §7.5: out-of-order CRYPTO data a connection may buffer (64 KiB), plus one
/// datagram whose frame may straddle the limit.
pub const CRYPTO_BOUND: usize = 64 * 1024 + MAX_DATAGRAM;

/// One frame of an Initial packet.
#[derive(Clone, Debug, PartialEq)]
pub enum InitialFrame {
    /// Frame bytes as they are (e.g. a real ClientHello's CRYPTO frame).
    Raw(Vec<u8>),
    /// CRYPTO at `offset` (+ `stride` per repetition) with `len` bytes of `fill`.
    Crypto {
        offset: u32,
        len: u16,
        fill: u8,
        stride: u16,
    },
    Padding(u16),
    Ping,
    /// ACK of packet numbers `0..=largest`.
    Ack(u16),
    /// CONNECTION_CLOSE (transport) with this error code.
    Close(u8),
}

/// One step of an input.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `repeat + 1` datagrams from client `client`, each one Initial packet numbered
    /// `pn`, `pn + 1`, ...; QUIC v2 when `v2`.
    Initial {
        client: u8,
        v2: bool,
        pn: u16,
        repeat: u8,
        frames: Vec<InitialFrame>,
    },
    /// Time passes; timers fire.
    Advance { ms: u16 },
    /// An unprotected datagram from client `client`.
    Junk { client: u8, bytes: Vec<u8> },
}

impl InitialFrame {
    fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 6 {
            0 => InitialFrame::Raw(r.bytes(MAX_DATAGRAM).to_vec()),
            1 => InitialFrame::Crypto {
                offset: r.u32(),
                len: r.u16(),
                fill: r.u8(),
                stride: r.u16(),
            },
            2 => InitialFrame::Padding(r.u16()),
            3 => InitialFrame::Ping,
            4 => InitialFrame::Ack(r.u16()),
            _ => InitialFrame::Close(r.u8()),
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            InitialFrame::Raw(b) => w.u8(0).bytes(b),
            InitialFrame::Crypto {
                offset,
                len,
                fill,
                stride,
            } => w.u8(1).u32(*offset).u16(*len).u8(*fill).u16(*stride),
            InitialFrame::Padding(n) => w.u8(2).u16(*n),
            InitialFrame::Ping => w.u8(3),
            InitialFrame::Ack(l) => w.u8(4).u16(*l),
            InitialFrame::Close(c) => w.u8(5).u8(*c),
        };
    }

    /// Appends the frame as the `k`-th repetition sends it.
    fn encode(&self, k: u64, out: &mut Vec<u8>) {
        match self {
            InitialFrame::Raw(b) => out.extend_from_slice(b),
            InitialFrame::Crypto {
                offset,
                len,
                fill,
                stride,
            } => {
                let len = usize::from(*len) % MAX_DATAGRAM;
                write_crypto_header(out, u64::from(*offset) + k * u64::from(*stride), len);
                out.resize(out.len() + len, *fill);
            }
            InitialFrame::Padding(n) => out.resize(out.len() + usize::from(*n) % MAX_DATAGRAM, 0),
            InitialFrame::Ping => out.push(0x01),
            InitialFrame::Ack(largest) => {
                // RFC 9000 §19.3: largest, delay, range count, first range.
                out.push(0x02);
                for v in [u64::from(*largest), 0, 0, u64::from(*largest)] {
                    varint::write(out, v);
                }
            }
            InitialFrame::Close(code) => {
                out.push(0x1c);
                for v in [u64::from(*code), 0, 0] {
                    varint::write(out, v);
                }
            }
        }
    }
}

impl Step {
    pub fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 3 {
            0 => {
                let (client, flags, pn, repeat) = (r.u8(), r.u8(), r.u16(), r.u8());
                let n = r.u8() % 8;
                let frames = (0..n).map(|_| InitialFrame::read(r)).collect();
                Step::Initial {
                    client,
                    v2: flags & 1 == 1,
                    pn,
                    repeat,
                    frames,
                }
            }
            1 => Step::Advance { ms: r.u16() },
            _ => Step::Junk {
                client: r.u8(),
                bytes: r.bytes(MAX_DATAGRAM).to_vec(),
            },
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Step::Initial {
                client,
                v2,
                pn,
                repeat,
                frames,
            } => {
                w.u8(0).u8(*client).u8(u8::from(*v2)).u16(*pn).u8(*repeat);
                w.u8(frames.len() as u8);
                for f in frames {
                    f.write(w);
                }
            }
            Step::Advance { ms } => {
                w.u8(1).u16(*ms);
            }
            Step::Junk { client, bytes } => {
                w.u8(2).u8(*client).bytes(bytes);
            }
        }
    }
}

/// Client `i`'s address and connection IDs (8 bytes, the least a server accepts).
pub fn client(i: u8) -> (SocketAddr, ConnectionId, ConnectionId) {
    let i = i % CLIENTS;
    let addr = SocketAddr::from(([10, 0, 0, 1 + i], 40_000));
    let dcid = ConnectionId::new(&[0xd0 | i, 1, 2, 3, 4, 5, 6, 7]).expect("8 bytes");
    let scid = ConnectionId::new(&[0x50 | i, 7, 6, 5, 4, 3, 2, 1]).expect("8 bytes");
    (addr, dcid, scid)
}

/// A client Initial datagram: `payload` (cut to fit) in one packet protected with the
/// client Initial keys of `dcid`, padded to 1200 bytes (RFC 9000 §14.1).
pub fn initial_datagram(
    version: u32,
    dcid: &ConnectionId,
    scid: &ConnectionId,
    pn: u64,
    payload: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    let pn_len = 4;
    let o = write_long_header(
        &mut out,
        PacketType::Initial,
        version,
        dcid,
        scid,
        &[],
        pn,
        pn_len,
    );
    let room = MAX_DATAGRAM - out.len() - TAG_LEN;
    out.extend_from_slice(&payload[..payload.len().min(room)]);
    let min = 1200 - TAG_LEN;
    if out.len() < min {
        out.resize(min, 0);
    }
    let len = out.len() + TAG_LEN - o.pn_offset;
    varint::patch_u14(&mut out, o.length_offset, len as u64);
    out.resize(out.len() + TAG_LEN, 0);
    let keys = initial_keys(version, dcid, Side::Client);
    seal(
        &*keys.local.packet,
        &*keys.local.header,
        &mut out,
        o.pn_offset,
        pn,
    )
    .expect("a padded packet has room for the sample and tag");
    out
}

/// The server under test: a small `max_handshaking`, everything else default.
pub fn server() -> Endpoint {
    let mut config = TransportConfig::default();
    config.admission.max_handshaking = MAX_HANDSHAKING;
    config.validate().expect("valid config");
    let (_, tls) = crate::quic::tls_configs();
    Endpoint::new(Arc::new(config), Some(tls), 1)
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let mut ep = server();
    let mut now = Instant::ZERO;
    let mut r = Reader::new(data);
    let mut buf = Vec::new();
    let mut payload = Vec::new();
    while !r.is_empty() {
        match Step::read(&mut r) {
            Step::Initial {
                client: c,
                v2,
                pn,
                repeat,
                frames,
            } => {
                let (addr, dcid, scid) = client(c);
                let version = if v2 { VERSION_2 } else { VERSION_1 };
                for k in 0..=u64::from(repeat % 64) {
                    payload.clear();
                    for f in &frames {
                        f.encode(k, &mut payload);
                    }
                    let mut d =
                        initial_datagram(version, &dcid, &scid, u64::from(pn) + k, &payload);
                    let _ = ep.handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut d);
                    check(&mut ep);
                }
            }
            Step::Advance { ms } => {
                now += Duration::from_millis(u64::from(ms));
                ep.handle_timeout(now);
            }
            Step::Junk { client: c, bytes } => {
                let mut d = bytes.clone();
                let _ = ep.handle_datagram(now, client(c).0, quiclab_proto::Ecn::NotEct, &mut d);
            }
        }
        // The application: send what the server wants to, drop drained connections.
        buf.clear();
        while ep.poll_transmit(now, &mut buf).is_some() {
            buf.clear();
        }
        while ep.accept().is_some() {}
        let handles: Vec<_> = ep.handles().collect();
        for h in handles {
            let conn = ep.connection_mut(h).expect("listed");
            while conn.poll_event().is_some() {}
            if conn.is_drained() {
                ep.remove(h);
            }
        }
        check(&mut ep);
    }
}

/// The bounds: per connection, and for the endpoint.
fn check(ep: &mut Endpoint) {
    let mut total = 0;
    for h in ep.handles() {
        let conn = ep.connection(h).expect("listed");
        let crypto = conn.footprint().crypto_buffered;
        assert!(
            crypto <= CRYPTO_BOUND,
            "connection {h:?} buffers {crypto} CRYPTO bytes"
        );
        total += crypto;
    }
    let bound = MAX_HANDSHAKING * CRYPTO_BOUND;
    assert!(
        total <= bound,
        "the endpoint buffers {total} CRYPTO bytes (bound {bound})"
    );
}
