//! A simulated pcap is decryptable: an hq-interop-like exchange in the pair harness,
//! captured with a client key log, written as pcap + NSS key log, and read back by
//! tshark, which must decrypt every QUIC packet and see the stream data.
//!
//! Needs `tshark` (Wireshark 3.x or later). Without it the test fails after
//! scripts/setup-tests.sh (`QUICLAB_TEST_SETUP`) or under `CI`, and otherwise skips,
//! recorded in the skip list (tests/skip.rs).

use crate::common;

use common::{tshark_available, tshark_decrypt_all, TempDir};
use quiclab_proto::testing::{drain_stream, Captured, LinkConfig, Pair};
use quiclab_proto::tls::MemoryKeyLog;
use quiclab_proto::{Connection, Dir, Instant, StreamId, TransportConfig};
use quiclab_sim::output::pcap::{write_key_log, PcapWriter};
use std::net::{SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const RESPONSE_LEN: usize = 1000;

/// Writes all of `data` and FIN (the windows are far larger than these messages).
fn send_all(conn: &mut Connection, id: StreamId, data: &[u8]) {
    let mut sent = 0;
    while sent < data.len() {
        sent += conn.write(id, &data[sent..]).expect("write");
    }
    conn.finish(id).expect("finish");
}

fn v4(addr: SocketAddr) -> SocketAddrV4 {
    match addr {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(a) => panic!("the pair uses IPv4 addresses, got {a}"),
    }
}

/// Runs the exchange; returns the captured datagrams, the key log lines and the pair's
/// addresses (client, server).
fn run_exchange() -> (Vec<Captured>, Vec<String>, SocketAddrV4, SocketAddrV4) {
    let key_log = Arc::new(MemoryKeyLog::default());
    let d = Duration::from_millis(10);
    let mut pair = Pair::with_options(
        TransportConfig::default(),
        TransportConfig::default(),
        [LinkConfig::delay(d), LinkConfig::delay(d)],
        7,
        0,
        Some(key_log.clone()),
    );
    pair.capture = Some(Vec::new());
    let limit = Instant::from_millis(5_000);
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .expect("handshake");
    let id = pair.client_conn().open_stream(Dir::Bi).expect("stream");
    send_all(pair.client_conn(), id, b"GET /1000\r\n");

    let mut requests = std::collections::BTreeMap::<StreamId, Vec<u8>>::new();
    let mut response = Vec::new();
    pair.run_until(limit, |p| {
        if let Some(s) = p.server_conn() {
            while let Some(sid) = s.accept_stream(Dir::Bi) {
                requests.insert(sid, Vec::new());
            }
            for (&sid, req) in requests.iter_mut() {
                if !req.ends_with(b"\r\n") && drain_stream(s, sid, req) {
                    assert_eq!(req.as_slice(), b"GET /1000\r\n");
                    send_all(s, sid, &[b'x'; RESPONSE_LEN]);
                }
            }
        }
        drain_stream(p.client_conn(), id, &mut response)
    })
    .expect("response");
    assert_eq!(response.len(), RESPONSE_LEN);
    // Let the last ACKs cross, then close, so the capture also holds CONNECTION_CLOSE.
    // Stop before an event past the window, rather than jumping to a far timer.
    let quiet_until =
        |until: Instant| move |p: &mut Pair| p.next_event_time().is_none_or(|t| t > until);
    let settle = pair.now + 4 * d;
    pair.run_until(limit, quiet_until(settle)).expect("settle");
    let now = pair.now;
    pair.client_conn().close(now, 0, "done");
    pair.flush();
    pair.run_until(limit, quiet_until(now + 4 * d))
        .expect("close");

    let captured = pair.capture.take().expect("capture enabled");
    let lines = key_log.lines.lock().expect("key log lock").clone();
    (captured, lines, v4(pair.client_addr), v4(pair.server_addr))
}

fn write_files(dir: &Path) -> (PathBuf, PathBuf, usize) {
    let (captured, lines, client, server) = run_exchange();
    assert!(!lines.is_empty(), "the client logged TLS secrets");
    let pcap = dir.join("exchange.pcap");
    let keys = dir.join("exchange.keys");
    let file = std::fs::File::create(&pcap).expect("create pcap");
    let mut w = PcapWriter::new(std::io::BufWriter::new(file)).expect("pcap header");
    for (at, to_server, bytes) in &captured {
        let (src, dst) = if *to_server {
            (client, server)
        } else {
            (server, client)
        };
        w.write_udp(*at, src, dst, quiclab_proto::Ecn::NotEct, bytes)
            .expect("pcap record");
    }
    w.into_inner().into_inner().expect("flush pcap");
    write_key_log(
        std::fs::File::create(&keys).expect("create key log"),
        &lines,
    )
    .expect("key log");
    (pcap, keys, captured.len())
}

#[test]
fn tshark_decrypts_every_packet() {
    if !tshark_available("tshark_decrypts_every_packet") {
        return;
    }
    let dir = TempDir::new("pcap-decrypt");
    let (pcap, keys, datagrams) = write_files(dir.path());
    let d = tshark_decrypt_all(&pcap, &keys, &[443]);
    assert_eq!(d.frames, datagrams, "one pcap record per datagram");
    let request = b"GET /1000\r\n";
    assert!(
        d.stream_data.windows(request.len()).any(|w| w == request),
        "the request is visible in the decrypted STREAM frames"
    );
    let body = d.stream_data.iter().filter(|&&b| b == b'x').count();
    assert_eq!(body, RESPONSE_LEN, "the response body is visible");
    println!(
        "tshark decrypted all {} QUIC packets in {datagrams} datagrams ({})",
        d.quic_packets,
        pcap.display()
    );
}
