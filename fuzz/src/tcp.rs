//! `tcp_segments`: a quiclab-tcp server connection, established with a real client and
//! with data of its own in flight, then arbitrary segments from the client's address
//! (sequence and acknowledgement numbers relative to the connection's, so the fuzzer
//! lands in the window; SACK blocks and timestamps; floods of segments). After every
//! segment it asserts that the out-of-order queue, the readable bytes, the send buffer
//! and the scoreboard stay within their bounds.

use crate::input::{Reader, Writer};
use quiclab_proto::Instant;
use quiclab_tcp::wire::{checksum, Header, Options};
use quiclab_tcp::{TcpConfig, TcpConnection};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

pub const CLIENT: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 40_000);
pub const SERVER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(10, 0, 1, 1), 443);
/// Initial sequence numbers (the server's near the wrap, to exercise it).
pub const CLIENT_ISS: u32 = 1_000;
pub const SERVER_ISS: u32 = u32::MAX - 5;
/// What the server application writes once connected.
pub const SERVER_DATA: usize = 64 * 1024;

/// A segment from the client, its numbers relative to the client's first data byte
/// (`seq`) and the server's (`ack`, SACK blocks).
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub timestamps: Option<(u32, u32)>,
    /// (start, length) relative to the server's first data byte.
    pub sack: Vec<(u32, u16)>,
    pub payload: Vec<u8>,
    /// Sent `repeat + 1` times, `seq` advancing by `stride` each time.
    pub repeat: u8,
    pub stride: u16,
}

/// One step of an input.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Segment(Segment),
    /// `len` bytes of `fill` as the payload (a compact data segment).
    Fill {
        seg: Segment,
        len: u16,
        fill: u8,
    },
    /// Time passes; timers fire; what the server sends is lost.
    Advance {
        ms: u16,
    },
    /// The server application reads everything readable.
    Read,
    /// The server application writes `len` more bytes.
    Write {
        len: u16,
    },
    /// The server application closes its side.
    Shutdown,
    /// A raw segment (its checksum fixed so it is not dropped for that alone).
    Raw(Vec<u8>),
}

impl Segment {
    fn read(r: &mut Reader<'_>) -> Self {
        let (seq, ack, flags, window) = (r.u32(), r.u32(), r.u8(), r.u16());
        let opts = r.u8();
        let timestamps = (opts & 1 == 1).then(|| (r.u32(), r.u32()));
        // RFC 2018 §3: 4 blocks fit in the option space, 3 beside timestamps.
        let max = if timestamps.is_some() { 4 } else { 5 };
        let sack = (0..(opts >> 1) % max).map(|_| (r.u32(), r.u16())).collect();
        let payload = r.bytes(1460).to_vec();
        Segment {
            seq,
            ack,
            flags,
            window,
            timestamps,
            sack,
            payload,
            repeat: r.u8(),
            stride: r.u16(),
        }
    }

    fn write(&self, w: &mut Writer) {
        w.u32(self.seq)
            .u32(self.ack)
            .u8(self.flags)
            .u16(self.window);
        w.u8(u8::from(self.timestamps.is_some()) | (self.sack.len() as u8) << 1);
        if let Some((a, b)) = self.timestamps {
            w.u32(a).u32(b);
        }
        for (s, l) in &self.sack {
            w.u32(*s).u16(*l);
        }
        w.bytes(&self.payload).u8(self.repeat).u16(self.stride);
    }

    /// The `k`-th repetition's bytes, on the wire.
    fn encode(&self, k: u32, payload: &[u8], out: &mut Vec<u8>) {
        let base = SERVER_ISS.wrapping_add(1);
        let h = Header {
            src_port: CLIENT.port(),
            dst_port: SERVER.port(),
            seq: CLIENT_ISS
                .wrapping_add(1)
                .wrapping_add(self.seq)
                .wrapping_add(k * u32::from(self.stride)),
            ack: base.wrapping_add(self.ack),
            flags: self.flags,
            ae: false,
            window: self.window,
            options: Options {
                timestamps: self.timestamps,
                sack: (self.sack.iter())
                    .map(|&(s, l)| {
                        (
                            base.wrapping_add(s),
                            base.wrapping_add(s).wrapping_add(u32::from(l)),
                        )
                    })
                    .collect(),
                ..Options::default()
            },
        };
        h.encode(payload, CLIENT, SERVER, out)
            .expect("at most 4 SACK blocks and timestamps fit");
    }
}

impl Step {
    pub fn read(r: &mut Reader<'_>) -> Self {
        match r.u8() % 7 {
            0 => Step::Segment(Segment::read(r)),
            1 => Step::Fill {
                seg: Segment::read(r),
                len: r.u16(),
                fill: r.u8(),
            },
            2 => Step::Advance { ms: r.u16() },
            3 => Step::Read,
            4 => Step::Write { len: r.u16() },
            5 => Step::Shutdown,
            _ => Step::Raw(r.bytes(1500).to_vec()),
        }
    }

    pub fn write(&self, w: &mut Writer) {
        match self {
            Step::Segment(s) => s.write(w.u8(0)),
            Step::Fill { seg, len, fill } => {
                seg.write(w.u8(1));
                w.u16(*len).u8(*fill);
            }
            Step::Advance { ms } => {
                w.u8(2).u16(*ms);
            }
            Step::Read => {
                w.u8(3);
            }
            Step::Write { len } => {
                w.u8(4).u16(*len);
            }
            Step::Shutdown => {
                w.u8(5);
            }
            Step::Raw(b) => {
                w.u8(6).bytes(b);
            }
        }
    }
}

/// Both sides' config: small buffers, so the bounds are tight and reachable.
pub fn config() -> TcpConfig {
    TcpConfig {
        receive_buffer: 128 * 1024,
        send_buffer: 128 * 1024,
        ..TcpConfig::default()
    }
}

/// A client and a server exchanging segments with no delay until both are connected;
/// the server then has [`SERVER_DATA`] written and its first flight sent (and lost).
pub fn established() -> (TcpConnection, TcpConnection, Instant) {
    let mut client = TcpConnection::connect(config(), CLIENT, SERVER, CLIENT_ISS, 1);
    let mut server = TcpConnection::listen(config(), SERVER, SERVER_ISS, 2);
    let mut now = Instant::ZERO;
    let mut buf = Vec::new();
    for _ in 0..10 {
        buf.clear();
        while client.poll_transmit(now, &mut buf).is_some() {
            let _ = server.handle_segment(now, CLIENT, &buf);
            buf.clear();
        }
        while server.poll_transmit(now, &mut buf).is_some() {
            let _ = client.handle_segment(now, SERVER, &buf);
            buf.clear();
        }
        if client.is_established() && server.is_established() {
            break;
        }
        now += Duration::from_millis(1);
    }
    assert!(server.is_established(), "the handshake completes");
    assert_eq!(server.write(&[0x5a; SERVER_DATA]), SERVER_DATA);
    drain(&mut server, now);
    (client, server, now)
}

/// What the server sends is lost; its events are read.
fn drain(server: &mut TcpConnection, now: Instant) {
    let mut buf = Vec::new();
    while server.poll_transmit(now, &mut buf).is_some() {
        buf.clear();
    }
    while server.poll_event().is_some() {}
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let (_, mut server, mut now) = established();
    let mut r = Reader::new(data);
    let mut out = Vec::new();
    let mut read_buf = vec![0; 64 * 1024];
    while !r.is_empty() {
        match Step::read(&mut r) {
            Step::Segment(seg) => send(&mut server, now, &seg, &seg.payload, &mut out),
            Step::Fill { seg, len, fill } => {
                let payload = vec![fill; usize::from(len) % 1461];
                send(&mut server, now, &seg, &payload, &mut out);
            }
            Step::Advance { ms } => {
                now += Duration::from_millis(u64::from(ms));
                server.handle_timeout(now);
            }
            Step::Read => while server.read(&mut read_buf) > 0 {},
            Step::Write { len } => {
                server.write(&vec![0xa5; usize::from(len)]);
            }
            Step::Shutdown => server.shutdown(),
            Step::Raw(mut bytes) => {
                if bytes.len() >= 18 {
                    bytes[16..18].fill(0);
                    let sum = checksum(CLIENT, SERVER, &bytes);
                    bytes[16..18].copy_from_slice(&sum.to_be_bytes());
                }
                let _ = server.handle_segment(now, CLIENT, &bytes);
            }
        }
        drain(&mut server, now);
        check(&server);
    }
}

/// Sends every repetition of `seg` to the server, checking the bounds after each.
fn send(
    server: &mut TcpConnection,
    now: Instant,
    seg: &Segment,
    payload: &[u8],
    out: &mut Vec<u8>,
) {
    for k in 0..=u32::from(seg.repeat % 64) {
        out.clear();
        seg.encode(k, payload, out);
        let _ = server.handle_segment(now, CLIENT, out);
        drain(server, now);
        check(server);
    }
}

/// The bounds a peer must not push the connection past.
pub fn check(server: &TcpConnection) {
    let f = server.footprint();
    let c = server.config();
    let bound = |what: &str, value: u64, max: u64| {
        assert!(value <= max, "{what}: {value} > {max} ({f:?})");
    };
    bound("out-of-order bytes", f.ooo_bytes, c.receive_buffer);
    bound("out-of-order entries", f.ooo_segments as u64, f.ooo_bytes);
    bound(
        "out-of-order blocks",
        f.ooo_blocks as u64,
        f.ooo_segments as u64,
    );
    bound("readable bytes", f.readable as u64, c.receive_buffer);
    bound("send buffer", f.send_buffered, c.send_buffer);
    // Every scoreboard entry holds at least one byte, or the SYN or FIN.
    bound(
        "scoreboard entries",
        f.scoreboard_segments as u64,
        f.send_buffered + 2,
    );
    bound(
        "SACKed ranges",
        f.sacked_ranges as u64,
        f.scoreboard_segments as u64,
    );
}
