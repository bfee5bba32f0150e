//! Writes the seed corpora of the structured targets from real traffic: a seeded
//! `testing` pair runs a handshake and a transfer, and its captured datagrams are
//! decrypted into each target's input format. Run from `fuzz/`:
//! `cargo run --release --example seeds` (writes `seeds/<target>/`).

use quiclab_fuzz::initial::{InitialFrame, Step};
use quiclab_fuzz::input::Writer;
use quiclab_proto::crypto::initial::initial_keys;
use quiclab_proto::crypto::protect::{decrypt_payload, unprotect_header};
use quiclab_proto::wire::header::{decode_packet_number, parse_header};
use quiclab_proto::wire::{decode_frames, Frame, PacketType, Side};
use std::fs;
use std::path::Path;

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("seeds").join(target);
    fs::create_dir_all(&dir).expect("create the seed directory");
    fs::write(dir.join(name), bytes).expect("write a seed");
}

/// The plaintext payloads of the client's Initial packets in `datagrams`.
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

/// The ClientHello's CRYPTO frame as two frames in two packets, the second half first.
fn split_hello(payload: &[u8]) -> Vec<Step> {
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
        InitialFrame::Raw(out)
    };
    let packet = |pn, f| Step::Initial {
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

fn endpoint_initial() {
    let mut pair = quiclab_fuzz::quic::capturing_pair();
    pair.run_until(quiclab_proto::Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .expect("handshake");
    let c2s: Vec<Vec<u8>> = (pair.capture.take().unwrap_or_default())
        .into_iter()
        .filter(|(_, to_server, _)| *to_server)
        .map(|(_, _, d)| d)
        .collect();
    let payloads = client_initial_payloads(&c2s);
    assert!(!payloads.is_empty(), "the client sent Initials");
    let hello = payloads[0].clone();
    let initial = |client, pn, repeat, frames| Step::Initial {
        client,
        v2: false,
        pn,
        repeat,
        frames,
    };
    let seeds: Vec<(&str, Vec<Step>)> = vec![
        (
            "client_hello",
            vec![initial(0, 0, 0, vec![InitialFrame::Raw(hello.clone())])],
        ),
        (
            "client_initials",
            payloads
                .iter()
                .enumerate()
                .map(|(i, p)| initial(0, i as u16, 0, vec![InitialFrame::Raw(p.clone())]))
                .collect(),
        ),
        (
            "hello_then_time",
            vec![
                initial(1, 0, 0, vec![InitialFrame::Raw(hello.clone())]),
                Step::Advance { ms: 1000 },
                initial(1, 1, 0, vec![InitialFrame::Ack(0), InitialFrame::Ping]),
                Step::Advance { ms: 30_000 },
            ],
        ),
        (
            "hello_two_clients",
            vec![
                initial(2, 0, 0, vec![InitialFrame::Raw(hello.clone())]),
                initial(3, 0, 0, vec![InitialFrame::Raw(hello.clone())]),
                initial(2, 1, 0, vec![InitialFrame::Close(0x0a)]),
            ],
        ),
        // A ClientHello split over two packets that arrive out of order (as a large,
        // e.g. post-quantum, ClientHello is).
        ("split_hello", split_hello(&hello)),
    ];
    for (name, steps) in seeds {
        let mut w = Writer::default();
        for s in &steps {
            s.write(&mut w);
        }
        write("endpoint_initial", name, &w.out);
    }
}

fn main() {
    endpoint_initial();
    println!("seed corpora written under seeds/");
}
