//! Core benchmarks: bulk transfer and handshakes in the pair harness (no delay, no
//! loss), and the cost of sealing one packet (the crypto floor a transfer cannot beat).
//!
//! Run: `cargo bench -p quiclab-proto --bench core`. Figures go in docs/PERFORMANCE.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use quiclab_proto::raw::{initial_keys, seal, write_short_header};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{ConnectionId, Dir, Instant, Side, StreamError, TransportConfig, VERSION_1};
use std::time::Duration;

/// Moves `bytes` from client to server on one stream; returns the virtual time taken.
fn bulk(bytes: usize) -> Instant {
    let config = TransportConfig::default();
    let mut pair = Pair::new(
        config.clone(),
        config,
        [LinkConfig::default(), LinkConfig::default()],
        3,
    );
    let limit = Instant::from_millis(600_000);
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .expect("handshake");
    let id = pair.client_conn().open_stream(Dir::Uni).expect("stream");
    let chunk = vec![0x5au8; 64 * 1024];
    let mut written = 0usize;
    let mut received = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    let mut server_stream = None;
    pair.run_until(limit, |p| {
        let c = p.client_conn();
        while written < bytes {
            let n = (bytes - written).min(chunk.len());
            match c.write(id, &chunk[..n]) {
                Ok(k) => written += k,
                Err(StreamError::Blocked) => break,
                Err(e) => panic!("{e}"),
            }
            if written == bytes {
                c.finish(id).expect("finish");
            }
        }
        let s = p.server_conn().expect("server");
        if server_stream.is_none() {
            server_stream = s.accept_stream(Dir::Uni);
        }
        if let Some(sid) = server_stream.filter(|_| received < bytes) {
            loop {
                match s.read(sid, &mut buf) {
                    Ok(r) => {
                        received += r.bytes;
                        if r.fin || r.bytes == 0 {
                            break;
                        }
                    }
                    Err(StreamError::Blocked) => break,
                    Err(e) => panic!("{e}"),
                }
            }
        }
        while s.poll_event().is_some() {}
        while p.client_conn().poll_event().is_some() {}
        received == bytes
    })
    .expect("transfer");
    pair.now
}

fn handshake() {
    let config = TransportConfig::default();
    let d = LinkConfig::delay(Duration::from_millis(1));
    let mut pair = Pair::new(config.clone(), config, [d.clone(), d], 5);
    pair.run_until(Instant::from_millis(10_000), |p| {
        p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
            && p.client_conn().is_handshake_complete()
    })
    .expect("handshake");
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("bulk");
    g.sample_size(10);
    for mb in [16usize, 64] {
        let bytes = mb << 20;
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_with_input(
            BenchmarkId::new("pair_no_delay", format!("{mb}MiB")),
            &bytes,
            |b, &n| b.iter(|| bulk(n)),
        );
    }
    g.finish();

    let mut g = c.benchmark_group("handshake");
    g.throughput(Throughput::Elements(1));
    g.bench_function("pair_1ms", |b| b.iter(handshake));
    g.finish();

    let keys = initial_keys(
        VERSION_1,
        &ConnectionId::new(&[1; 8]).unwrap(),
        Side::Client,
    );
    let mut g = c.benchmark_group("seal");
    g.throughput(Throughput::Bytes(1200));
    g.bench_function("aes128gcm_1200B", |b| {
        let mut pkt = Vec::with_capacity(1300);
        let mut pn = 0u64;
        b.iter(|| {
            pkt.clear();
            let pn_offset = write_short_header(
                &mut pkt,
                &ConnectionId::new(&[2; 8]).unwrap(),
                false,
                false,
                pn,
                4,
            );
            pkt.resize(1200, 0);
            seal(
                &*keys.local.packet,
                &*keys.local.header,
                &mut pkt,
                pn_offset,
                pn,
            )
            .unwrap();
            pn += 1;
        })
    });
    g.finish();
}

criterion_group!(core, benches);
criterion_main!(core);
