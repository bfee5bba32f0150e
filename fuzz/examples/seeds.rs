//! Writes the seed corpora (`seeds/<target>/`) from real traffic: seeded `testing`
//! pairs run a QUIC handshake and transfer, an HTTP/3 exchange between two
//! `H3Connection`s, and a TCP transfer with losses; their captured datagrams and
//! segments are decrypted and written in each target's input format. Deterministic.
//! Run from `fuzz/`: `cargo run --release --example seeds`.

use quiclab_fuzz::input::Writer;
use quiclab_fuzz::{frames, h3, initial, qpack, quic, tcp};
use quiclab_h3::message::get_request;
use quiclab_h3::{Field, H3Config, H3Connection, H3Event};
use quiclab_proto::raw::{
    decode_frames, decode_packet_number, decrypt_payload, initial_keys, parse_header,
    unprotect_header, Frame, SpaceId,
};
use quiclab_proto::testing::Pair;
use quiclab_proto::varint::Reader as VarReader;
use quiclab_proto::{Dir, Instant, PacketType, Side};
use quiclab_tcp::wire::Header;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("seeds").join(target);
    fs::create_dir_all(&dir).expect("create the seed directory");
    fs::write(dir.join(name), bytes).expect("write a seed");
}

fn steps<S>(steps: &[S], write: impl Fn(&S, &mut Writer)) -> Vec<u8> {
    let mut w = Writer::default();
    for s in steps {
        write(s, &mut w);
    }
    w.out
}

/// The client-to-server datagrams a pair captured, from `from` on.
fn client_datagrams(pair: &Pair, from: usize) -> Vec<Vec<u8>> {
    let capture = pair.capture.as_ref().expect("capturing");
    (capture[from..].iter())
        .filter(|(_, to_server, _)| *to_server)
        .map(|(_, _, d)| d.clone())
        .collect()
}

/// The plaintext payloads of the client's Initial packets.
fn client_initial_payloads(datagrams: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = vec![];
    for d in datagrams {
        let mut d = d.clone();
        let Ok(h) = parse_header(&d, 8) else { continue };
        if h.ty != PacketType::Initial {
            continue;
        }
        let (pn_offset, len, version, dcid) = (h.pn_offset, h.packet_len, h.version, h.dcid);
        let keys = initial_keys(version, &dcid, Side::Server);
        let packet = &mut d[..len];
        let Ok(u) = unprotect_header(&*keys.remote.header, packet, pn_offset) else {
            continue;
        };
        let pn = decode_packet_number(None, u.truncated_pn, u.pn_len);
        if let Ok(r) = decrypt_payload(&*keys.remote.packet, packet, pn_offset + u.pn_len, pn) {
            out.push(packet[r].to_vec());
        }
    }
    out
}

/// The plaintext payloads of the client's 1-RTT packets, opened with the server's keys.
fn client_one_rtt_payloads(pair: &mut Pair, datagrams: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let server = pair.server_conn().expect("accepted");
    let mut out = vec![];
    for d in datagrams {
        let mut d = d.clone();
        if let Some(r) = server.open_for_fuzzing(SpaceId::Data, &mut d) {
            out.push(d[r].to_vec());
        }
    }
    out
}

/// The ClientHello's CRYPTO frame as two frames in two packets, the second half first.
fn split_hello(payload: &[u8]) -> Vec<initial::Step> {
    let Some(Ok(Frame::Crypto { offset: 0, data })) = decode_frames(payload).next() else {
        panic!("a client's first Initial starts with its ClientHello");
    };
    let mid = data.len() / 2;
    let frame = |offset: usize, data: &[u8]| {
        let mut out = vec![];
        Frame::Crypto {
            offset: offset as u64,
            data,
        }
        .encode(&mut out);
        initial::InitialFrame::Raw(out)
    };
    let packet = |pn, f| initial::Step::Initial {
        client: 4,
        v2: false,
        pn,
        repeat: 0,
        frames: vec![f],
    };
    vec![
        packet(0, frame(mid, &data[mid..])),
        packet(1, frame(0, &data[..mid])),
    ]
}

/// A handshake and a transfer: the client sends on three bidirectional streams and
/// one unidirectional stream; the server reads. Seeds `endpoint_initial`,
/// `connection_frames`, `header`, `frames` and `transport_params`.
fn quic_traffic() {
    use initial::{InitialFrame as IF, Step as IS};
    let mut pair = quic::capturing_pair();
    pair.run_until(Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
    let handshake_end = pair.capture.as_ref().expect("capturing").len();
    let handshake = client_datagrams(&pair, 0);
    let initials = client_initial_payloads(&handshake);
    let hello = initials[0].clone();
    let init = |client, pn, frames| IS::Initial {
        client,
        v2: false,
        pn,
        repeat: 0,
        frames,
    };
    let seeds: Vec<(&str, Vec<IS>)> = vec![
        (
            "client_hello",
            vec![init(0, 0, vec![IF::Raw(hello.clone())])],
        ),
        (
            "client_initials",
            (initials.iter().enumerate())
                .map(|(i, p)| init(0, i as u16, vec![IF::Raw(p.clone())]))
                .collect(),
        ),
        (
            "hello_then_time",
            vec![
                init(1, 0, vec![IF::Raw(hello.clone())]),
                IS::Advance { ms: 1000 },
                init(1, 1, vec![IF::Ack(0), IF::Ping]),
                IS::Advance { ms: 30_000 },
            ],
        ),
        (
            "hello_two_clients",
            vec![
                init(2, 0, vec![IF::Raw(hello.clone())]),
                init(3, 0, vec![IF::Raw(hello.clone())]),
                init(2, 1, vec![IF::Close(0x0a)]),
            ],
        ),
        ("split_hello", split_hello(&hello)),
        // The compact kinds real traffic does not show, once each with plausible
        // values, so the fuzzer starts with every kind in its corpus.
        (
            "every_kind",
            vec![
                IS::Initial {
                    client: 5,
                    v2: false,
                    pn: 0,
                    repeat: 1,
                    frames: vec![
                        IF::Crypto {
                            offset: 0,
                            len: 300,
                            fill: 0x16,
                            stride: 300,
                        },
                        IF::Padding(100),
                        IF::Ping,
                        IF::Ack(0),
                    ],
                },
                IS::Initial {
                    client: 5,
                    v2: true,
                    pn: 2,
                    repeat: 0,
                    frames: vec![IF::Close(0x0a)],
                },
                IS::Advance { ms: 200 },
                IS::Junk {
                    client: 6,
                    bytes: vec![0x40; 40],
                },
            ],
        ),
    ];
    for (name, s) in seeds {
        write("endpoint_initial", name, &steps(&s, initial::Step::write));
    }

    // The transfer.
    let mut ids = vec![];
    for (dir, n) in [(Dir::Bi, 3), (Dir::Uni, 1)] {
        for _ in 0..n {
            let id = pair.client_conn().open_stream(dir).expect("stream credit");
            let body: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
            pair.client_conn().write(id, &body).expect("writable");
            pair.client_conn().finish(id).expect("finishable");
            ids.push(id);
        }
    }
    let limit = pair.now + Duration::from_secs(5);
    let mut buf = vec![0; 65536];
    let mut done = std::collections::BTreeSet::new();
    pair.run_until(limit, |p| {
        let s = p.server_conn().expect("accepted");
        for &id in &ids {
            while let Ok(o) = s.read(id, &mut buf) {
                if o.fin {
                    done.insert(id);
                }
                if o.bytes == 0 || o.fin {
                    break;
                }
            }
        }
        done.len() == ids.len() && p.client_conn().bytes_in_flight() == 0
    })
    .expect("the transfer completes");
    let datagrams = client_datagrams(&pair, handshake_end);
    let payloads = client_one_rtt_payloads(&mut pair, &datagrams);
    assert!(payloads.len() >= 4, "the transfer sent 1-RTT packets");
    let mut transfer = vec![];
    for p in payloads.iter().take(40) {
        transfer.push(frames::Step::Raw(p.clone()));
        transfer.push(frames::Step::Read);
    }
    write(
        "connection_frames",
        "transfer",
        &steps(&transfer, frames::Step::write),
    );
    for (i, p) in payloads.iter().take(6).enumerate() {
        write(
            "connection_frames",
            &format!("packet_{i}"),
            &steps(&[frames::Step::Raw(p.clone())], frames::Step::write),
        );
        write("frames", &format!("client_1rtt_{i}"), p);
    }
    for (i, p) in initials.iter().enumerate() {
        write("frames", &format!("client_initial_{i}"), p);
    }
    write(
        "connection_frames",
        "every_typed_frame",
        &steps(
            &[frames::Step::Frames(every_typed_frame())],
            frames::Step::write,
        ),
    );

    // Headers: every captured datagram, with the selector byte for 8-byte CIDs.
    let all = pair.capture.as_ref().expect("capturing");
    for (i, (_, _, d)) in all.iter().enumerate().step_by((all.len() / 12).max(1)) {
        let mut seed = vec![8];
        seed.extend_from_slice(d);
        write("header", &format!("datagram_{i}"), &seed);
    }
    // Transport parameters as each side sent them.
    let mut tp = vec![];
    pair.client_conn()
        .peer_params()
        .expect("server's")
        .encode(&mut tp);
    write("transport_params", "server", &tp);
    tp.clear();
    pair.server_conn()
        .expect("accepted")
        .peer_params()
        .expect("client's")
        .encode(&mut tp);
    write("transport_params", "client", &tp);
}

/// One frame of every typed kind, with values a real peer would send.
fn every_typed_frame() -> Vec<frames::Typed> {
    use frames::Typed as T;
    vec![
        T::Stream {
            stream: 0,
            offset: 0,
            len: 100,
            fin: false,
            fill: 0x61,
        },
        T::Stream {
            stream: 2,
            offset: 0,
            len: 10,
            fin: true,
            fill: 0x62,
        },
        T::Reset {
            stream: 4,
            code: 1,
            final_size: 0,
        },
        T::StopSending { stream: 1, code: 2 },
        T::Crypto {
            offset: 0,
            len: 0,
            fill: 0,
        },
        T::MaxData(2 << 20),
        T::MaxStreamData {
            stream: 1,
            max: 1 << 20,
        },
        T::MaxStreams {
            uni: false,
            max: 200,
        },
        T::Blocked {
            kind: 0,
            stream: 0,
            limit: 1 << 20,
        },
        T::NewCid {
            sequence: 4,
            retire_prior_to: 1,
            len: 8,
            fill: 0x33,
        },
        T::RetireCid(1),
        T::PathChallenge(0x0102_0304_0506_0708),
        T::Ack {
            largest: 3,
            first: 3,
            gaps: vec![],
        },
        T::Datagram {
            len: 50,
            fill: 0x64,
        },
        T::AckFrequency {
            sequence: 1,
            threshold: 10,
            delay_us: 25_000,
            reordering: 1,
        },
        T::Simple(0),
        T::Close {
            code: 0,
            app: false,
        },
    ]
}

/// An HTTP/3 exchange between two `H3Connection`s over a pair: the client's stream
/// bytes seed `h3_connection`, its QPACK encoder stream and field sections `qpack`, its
/// request and control streams `h3_frames`.
fn h3_traffic() {
    let mut pair = quic::capturing_pair();
    let config = H3Config::default();
    let mut client = H3Connection::new(Side::Client, config.clone());
    let mut server = H3Connection::new(Side::Server, config);
    let mut sent = false;
    let mut answered = vec![];
    let mut finished = 0;
    let limit = Instant::from_millis(10_000);
    while finished < 3 && pair.now < limit {
        let now = pair.now;
        let c = pair.client_conn();
        while let Some(ev) = c.poll_event() {
            client.handle_event(c, now, &ev);
        }
        client.poll(c, now);
        if !sent && client.peer_settings().is_some() {
            for i in 0..3 {
                let extra = [Field::new("x-request", format!("value {}", i % 2))];
                let fields = get_request("localhost", &format!("/item/{i}"), &extra);
                client
                    .send_request(c, now, &fields, true)
                    .expect("stream credit");
            }
            sent = true;
        }
        while let Some(ev) = client.poll_event() {
            if let H3Event::Finished { .. } = ev {
                finished += 1;
            }
        }
        if let Some(s) = pair.server_conn() {
            while let Some(ev) = s.poll_event() {
                server.handle_event(s, now, &ev);
            }
            server.poll(s, now);
            while let Some(ev) = server.poll_event() {
                if let H3Event::Headers { stream, .. } = ev {
                    answered.push(stream);
                }
            }
            for id in answered.drain(..) {
                let head = [
                    Field::new(":status", "200"),
                    Field::new("content-length", "4"),
                ];
                server.send_response(s, now, id, &head, false);
                server.send_data(s, now, id, b"body");
                server.finish(s, id);
            }
        }
        if !pair.step() {
            break;
        }
    }
    assert_eq!(finished, 3, "the three requests completed");
    // The client's stream bytes, frame by frame, from its 1-RTT packets.
    let datagrams = client_datagrams(&pair, 0);
    let payloads = client_one_rtt_payloads(&mut pair, &datagrams);
    let mut writes = vec![];
    let mut streams: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for p in &payloads {
        for f in decode_frames(p).filter_map(Result::ok) {
            if let Frame::Stream(s) = f {
                let sel = ((s.id.0 >> 2) << 1) as u8 | u8::from(s.id.0 & 2 != 0);
                writes.push(h3::Step::Write {
                    stream: sel,
                    repeat: 0,
                    fin: s.fin,
                    bytes: s.data.to_vec(),
                });
                streams.entry(s.id.0).or_default().extend_from_slice(s.data);
            }
        }
    }
    assert!(!writes.is_empty(), "the client wrote streams");
    write(
        "h3_connection",
        "get_three",
        &steps(&writes, h3::Step::write),
    );
    let mut with_time = writes.clone();
    with_time.insert(writes.len() / 2, h3::Step::Advance { ms: 50 });
    with_time.extend([
        h3::Step::Respond,
        h3::Step::GoAway,
        h3::Step::Reset {
            stream: 4,
            repeat: 0,
            code: 0x10c,
        },
    ]);
    write(
        "h3_connection",
        "get_respond_goaway",
        &steps(&with_time, h3::Step::write),
    );
    let uni_only: Vec<_> = writes
        .iter()
        .filter(|w| matches!(w, h3::Step::Write { stream, .. } if stream & 1 == 1))
        .cloned()
        .collect();
    write(
        "h3_connection",
        "control_and_qpack",
        &steps(&uni_only, h3::Step::write),
    );

    // QPACK: the encoder stream and the request streams' field sections.
    let mut qsteps = vec![];
    for (id, bytes) in &streams {
        let mut r = VarReader::new(bytes);
        if id & 2 != 0 {
            // A unidirectional stream: its type, then its bytes.
            if r.varint() == Ok(quiclab_h3::stream_type::QPACK_ENCODER) {
                qsteps.push(qpack::Step::Encoder(
                    bytes[bytes.len() - r.remaining()..].to_vec(),
                ));
            } else {
                write(
                    "h3_frames",
                    &format!("uni_{id}"),
                    &[&[7u8][..], &bytes[bytes.len() - r.remaining()..]].concat(),
                );
            }
            continue;
        }
        write(
            "h3_frames",
            &format!("request_{id}"),
            &[&[3u8][..], bytes].concat(),
        );
        // A HEADERS frame first: type 1, length, the section.
        if let (Ok(1), Ok(len)) = (r.varint(), r.varint()) {
            let at = bytes.len() - r.remaining();
            let section = bytes[at..at + len as usize].to_vec();
            qsteps.push(qpack::Step::Section {
                stream: (id / 4) as u8,
                bytes: section,
            });
        }
    }
    write(
        "qpack",
        "client_encoder_and_sections",
        &steps(&qsteps, qpack::Step::write),
    );
    let sections_first: Vec<_> = qsteps.iter().rev().cloned().collect();
    write(
        "qpack",
        "sections_before_inserts",
        &steps(&sections_first, qpack::Step::write),
    );
}

/// A TCP transfer in both directions, one server segment in seven lost: the client's
/// segments (ACKs with SACK blocks, data) seed `tcp_segments`.
fn tcp_traffic() {
    let (mut client, mut server, mut now) = tcp::established();
    let mut recorded = vec![];
    let mut buf = Vec::new();
    let mut n = 0u64;
    let mut read = vec![0; 65536];
    client.write(&[0x77; 20_000]);
    for _ in 0..200 {
        buf.clear();
        while client.poll_transmit(now, &mut buf).is_some() {
            recorded.push(buf.clone());
            let _ = server.handle_segment(now, tcp::CLIENT, &buf);
            buf.clear();
        }
        while server.poll_transmit(now, &mut buf).is_some() {
            n += 1;
            if n % 7 != 3 {
                let _ = client.handle_segment(now, tcp::SERVER, &buf);
            }
            buf.clear();
        }
        while client.read(&mut read) > 0 {}
        while server.read(&mut read) > 0 {}
        let next = [client.poll_timeout(), server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = next else { break };
        now = now.max(t);
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    let rel = |seg: &[u8]| -> tcp::Segment {
        let (h, off) = Header::decode_unchecked(seg).expect("our own segment");
        let base = tcp::SERVER_ISS.wrapping_add(1);
        tcp::Segment {
            seq: h.seq.wrapping_sub(tcp::CLIENT_ISS.wrapping_add(1)),
            ack: h.ack.wrapping_sub(base),
            flags: h.flags,
            window: h.window,
            timestamps: h.options.timestamps,
            sack: h
                .options
                .sack
                .iter()
                .map(|&(l, r)| (l.wrapping_sub(base), r.wrapping_sub(l) as u16))
                .collect(),
            payload: seg[off..].to_vec(),
            repeat: 0,
            stride: 0,
        }
    };
    let all: Vec<tcp::Step> = recorded
        .iter()
        .map(|s| tcp::Step::Segment(rel(s)))
        .collect();
    assert!(all.len() > 10, "the client sent segments");
    write(
        "tcp_segments",
        "transfer",
        &steps(&all[..all.len().min(60)], tcp::Step::write),
    );
    let sacks: Vec<_> = all
        .iter()
        .filter(|s| matches!(s, tcp::Step::Segment(g) if !g.sack.is_empty()))
        .cloned()
        .collect();
    write(
        "tcp_segments",
        "sack_acks",
        &steps(&sacks[..sacks.len().min(20)], tcp::Step::write),
    );
    let data: Vec<_> = all
        .iter()
        .filter(|s| matches!(s, tcp::Step::Segment(g) if !g.payload.is_empty()))
        .cloned()
        .collect();
    let mut ooo: Vec<_> = data.iter().take(8).cloned().collect();
    ooo.reverse();
    ooo.extend([
        tcp::Step::Read,
        tcp::Step::Advance { ms: 300 },
        tcp::Step::Write { len: 4000 },
        tcp::Step::Shutdown,
    ]);
    write(
        "tcp_segments",
        "data_reversed_then_app",
        &steps(&ooo, tcp::Step::write),
    );
}

fn main() {
    let _ = fs::remove_dir_all("seeds");
    quic_traffic();
    h3_traffic();
    tcp_traffic();
    println!("seed corpora written under seeds/");
}
