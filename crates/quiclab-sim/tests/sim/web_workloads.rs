//! The `search` and `video` workloads over QUIC and TLS/TCP (seed 003 §6): search
//! latency counts the round trips each transport needs, a loss on a multiplexed TCP
//! connection stalls the other streams (head-of-line blocking) while QUIC's streams do
//! not, a video rebuffers on a link slower than its bitrate and not on a faster one,
//! and the same seed gives the same results and object sizes.

use quiclab_sim::results::FlowResult;
use quiclab_sim::scenario::{ObjectSize, SizeDist};
use quiclab_sim::{Scenario, Simulation};

const QUIC: &str = "";
const TLS13: &str = "transport = \"tcp\"\ntls = { version = \"1.3\" }";
const POOL: &str =
    "transport = \"tcp\"\ntls = { version = \"1.3\" }\nhttp = { mode = \"pool\", pool_size = 6 }";

/// One flow `f` over a symmetric path: `one_way_ms` each way, `rate` (Mbit/s, "" for
/// unlimited; the return direction may differ), `ret_extra` more keys of the return
/// direction.
fn scenario(seed: u64, link: &str, ret: &str, transport: &str, workload: &str) -> String {
    format!(
        r#"
name = "web"
seed = {seed}
[stop]
time_s = 300
when_flows_done = true
[topology]
kind = "point_to_point"
forward = {{ {link} }}
return = {{ {link} {ret} }}
[[flows]]
name = "f"
{transport}
workload = {workload}
"#
    )
}

fn run(text: &str) -> FlowResult {
    let s = Scenario::parse(text, "web.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r = Simulation::new(s, "web.toml", None).unwrap().run().unwrap();
    let f = r.flows.into_iter().next().unwrap();
    assert_eq!(f.incomplete, None, "{text}");
    f
}

const SMALL_PAGE: &str =
    r#"{ kind = "search", html_size = 2000, objects = 4, object_size = 2000 }"#;

/// On a loss-free path without a rate limit and a page that fits one initial window:
/// - QUIC: 1 RTT handshake, the HTML (request and response: 1 RTT), the objects
///   (1 RTT) = 3 RTT;
/// - TLS 1.3 over TCP (multiplexed): 1 RTT TCP handshake + 1 RTT TLS, then the same
///   2 RTT = 4 RTT, one more than QUIC;
/// - a pool of 6 TLS 1.3/TCP connections: the HTML by 3 RTT, then three of the four
///   objects need new connections (2 RTT handshakes, 1 RTT request) = 6 RTT.
///
/// With 100 ms RTT; allowing 5 ms for processing and serialization of a few packets.
#[test]
fn search_latency_counts_round_trips() {
    let link = "delay_ms = 50.0";
    let quic = run(&scenario(1, link, "", QUIC, SMALL_PAGE));
    let tcp = run(&scenario(1, link, "", TLS13, SMALL_PAGE));
    let pool = run(&scenario(1, link, "", POOL, SMALL_PAGE));
    let near = |v: Option<f64>, want: f64| {
        let v = v.expect("measured");
        assert!((v - want).abs() < 0.005, "{v} s, expected about {want} s");
    };
    near(quic.search_latency_s, 0.3);
    near(tcp.search_latency_s, 0.4);
    near(pool.search_latency_s, 0.6);
    // The HTML's time to first byte: 2 RTT over QUIC, 3 over TLS 1.3/TCP.
    near(quic.ttfb_s, 0.2);
    near(tcp.ttfb_s, 0.3);
    for f in [&quic, &tcp, &pool] {
        assert_eq!(f.workload, "search");
        assert_eq!(f.goodput_bytes, 2000 + 4 * 2000);
        assert_eq!(f.ttlb_s, f.search_latency_s);
        assert_eq!(f.fetch_done_s.as_ref().map(Vec::len), Some(5));
    }
}

/// Objects delayed by more than half an RTT by a drop, against the loss-free run.
fn delayed(lossy: &FlowResult, clean: &FlowResult) -> usize {
    let (l, c) = (
        lossy.fetch_done_s.as_ref().unwrap(),
        clean.fetch_done_s.as_ref().unwrap(),
    );
    l.iter()
        .zip(c)
        .skip(1)
        .filter(|(a, b)| a.unwrap() - b.unwrap() > 0.05)
        .count()
}

/// Head-of-line blocking: 8 objects of 1000 bytes all fit in one flight of the
/// server. Dropping one datagram of that flight (each datagram index in turn, keeping
/// those that leave the HTML on time but delay an object) delays over TCP every
/// object whose bytes follow the hole in the byte stream, whichever stream they are
/// on; over QUIC only the objects with data in the dropped datagram.
#[test]
fn one_loss_stalls_every_multiplexed_tcp_stream_but_one_quic_stream() {
    let page = r#"{ kind = "search", html_size = 1000, objects = 8, object_size = 1000 }"#;
    let link = "delay_ms = 50.0, rate_mbps = 50.0";
    let worst = |transport: &str| {
        let clean = run(&scenario(1, link, "", transport, page));
        let html = clean.fetch_done_s.as_ref().unwrap()[0];
        let mut most = 0;
        let mut hits = 0;
        for d in 1..=40 {
            let drop = format!(", impairments = {{ drops = [{{ datagrams = [{d}] }}] }}");
            let lossy = run(&scenario(1, link, &drop, transport, page));
            if lossy.fetch_done_s.as_ref().unwrap()[0] != html {
                continue; // a handshake or HTML datagram: everything is later
            }
            let n = delayed(&lossy, &clean);
            if n > 0 {
                hits += 1;
                most = most.max(n);
            }
        }
        assert!(hits > 0, "no drop hit an object over {transport:?}");
        most
    };
    let tcp = worst(TLS13);
    let quic = worst(QUIC);
    println!("objects delayed by one drop: TCP {tcp}, QUIC {quic}");
    assert!(
        tcp >= 6,
        "TCP: at most {tcp} of 8 objects delayed by one drop"
    );
    assert!(quic <= 2, "QUIC: {quic} of 8 objects delayed by one drop");
}

const VIDEO: &str = r#"{ kind = "video", duration_s = 20.0, bitrate_mbps = 2.5, chunk_s = 2.0, startup_s = 2.0, buffer_target_s = 8.0 }"#;

/// A 2.5 Mbit/s video (plus 128 kbit/s audio) on a 2 Mbit/s link rebuffers; on a
/// 5 Mbit/s link (nearly twice the media rate) it plays without a stall, over both
/// transports (two connections over TCP, two streams over QUIC).
#[test]
fn video_rebuffers_below_its_bitrate_only() {
    for transport in [QUIC, TLS13] {
        let slow = run(&scenario(
            1,
            "delay_ms = 40.0, rate_mbps = 2.0",
            "",
            transport,
            VIDEO,
        ));
        let fast = run(&scenario(
            1,
            "delay_ms = 40.0, rate_mbps = 5.0",
            "",
            transport,
            VIDEO,
        ));
        println!(
            "{transport:?}: slow {:?} stalls, rate {:?}; fast {:?}, startup {:?}",
            slow.rebuffer_count, slow.rebuffer_rate, fast.rebuffer_count, fast.video_startup_s
        );
        assert_eq!(slow.workload, "video");
        // The link brings 2 / 2.628 of the media rate: once the buffer ran dry, about a
        // quarter of the watch time (1 - 2 / 2.628 = 0.24, more with the protocols'
        // overhead) is spent rebuffering. The exact figures are regression values of
        // these deterministic runs (recorded at commit c2a54c2), within 1%: a change
        // that moves them changes the simulated transports and says why.
        let (stalls, rate, startup) = match transport {
            QUIC => (9, 0.2678, 1.4862),
            _ => (9, 0.2552, 1.4830),
        };
        assert_eq!(slow.rebuffer_count, Some(stalls), "{transport:?}: stalls");
        near(
            slow.rebuffer_rate.unwrap(),
            rate,
            "rebuffer rate",
            transport,
        );
        assert_eq!(slow.play_s, Some(20.0));
        assert_eq!(fast.rebuffer_count, Some(0));
        assert_eq!(fast.rebuffer_rate, Some(0.0));
        assert_eq!(fast.play_s, Some(20.0));
        // Startup: the first 2 s chunk (625 kB + 32 kB) at 5 Mbit/s is about 1.05 s,
        // plus handshakes and slow start.
        near(
            fast.video_startup_s.unwrap(),
            startup,
            "startup (s)",
            transport,
        );
    }
}

/// `actual` within 1% of the regression value `expected`.
fn near(actual: f64, expected: f64, what: &str, transport: &str) {
    assert!(
        (actual - expected).abs() <= 0.01 * expected,
        "{transport:?}: {what} {actual}, regression value {expected} +-1%"
    );
}

/// Same seed, same results (and the same drawn object sizes on both transports);
/// another seed draws other sizes.
#[test]
fn same_seed_same_search() {
    let page = r#"{ kind = "search", html_size = 30000, objects = 12, object_size = { dist = "lognormal", median = 8000, sigma = 1.0 } }"#;
    let link = "delay_ms = 30.0, rate_mbps = 10.0, impairments = { loss = { model = \"bernoulli\", p = 0.02 } }";
    let text = scenario(7, link, "", POOL, page);
    let run_all = |t: &str| {
        let s = Scenario::parse(t, "web.toml").unwrap();
        Simulation::new(s, "web.toml", None).unwrap().run().unwrap()
    };
    assert_eq!(run_all(&text), run_all(&text));
    let dist = ObjectSize::Dist(SizeDist::Lognormal {
        median: 8000.0,
        sigma: 1.0,
    });
    let sizes = quiclab_sim::workload::webapp::object_sizes(7, "f", 12, &dist);
    assert_eq!(
        sizes,
        quiclab_sim::workload::webapp::object_sizes(7, "f", 12, &dist)
    );
    assert_ne!(
        sizes,
        quiclab_sim::workload::webapp::object_sizes(8, "f", 12, &dist)
    );
    assert!(sizes.windows(2).any(|w| w[0] != w[1]), "{sizes:?}");
    let total = 30_000 + sizes.iter().sum::<u64>();
    for transport in [QUIC, TLS13, POOL] {
        let f = run(&scenario(7, link, "", transport, page));
        assert_eq!(f.goodput_bytes, total, "{transport:?}");
    }
}

/// Bad web and video keys are errors naming the key (never a panic or a default).
#[test]
fn bad_web_keys_are_named_errors() {
    let err = |transport: &str, workload: &str| -> String {
        let text = scenario(1, "delay_ms = 10.0", "", transport, workload);
        match Scenario::parse(&text, "web.toml") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {workload} {transport}"),
        }
    };
    let video = |k: &str| {
        format!("{{ kind = \"video\", duration_s = 20.0, bitrate_mbps = 2.5, chunk_s = 2.0, startup_s = 2.0, buffer_target_s = 8.0, {k} }}")
    };
    let cases = [
        (
            QUIC,
            video("bitrate_mbps = 0.0").replacen("bitrate_mbps = 2.5, ", "", 1),
            "bitrate_mbps",
        ),
        (QUIC, video("audio_kbps = -1.0"), "audio_kbps"),
        (
            QUIC,
            VIDEO.replace("startup_s = 2.0", "startup_s = -1.0"),
            "startup_s",
        ),
        (
            QUIC,
            VIDEO.replace("buffer_target_s = 8.0", "buffer_target_s = 1.0"),
            "buffer_target_s",
        ),
        (
            QUIC,
            VIDEO.replace("chunk_s = 2.0", "chunk_s = 0.0"),
            "chunk_s",
        ),
        (
            QUIC,
            VIDEO.replace("duration_s = 20.0", "duration_s = -5.0"),
            "duration_s",
        ),
        (QUIC, video("parallel = 2"), "parallel"),
        (
            QUIC,
            SMALL_PAGE.replace("html_size = 2000", "html_size = 0"),
            "html_size",
        ),
        (
            QUIC,
            SMALL_PAGE.replace("html_size = 2000", "html_size = -1"),
            "html_size",
        ),
        (
            QUIC,
            SMALL_PAGE.replace("object_size = 2000", "object_size = 0"),
            "object_size",
        ),
        (
            QUIC,
            SMALL_PAGE.replace(
                "object_size = 2000",
                "object_size = { dist = \"lognormal\", median = 5000, sigma = -1 }",
            ),
            "sigma",
        ),
        (
            QUIC,
            SMALL_PAGE.replace("objects = 4", "objects = 100000"),
            "objects",
        ),
        ("http = { mode = \"pool\" }", SMALL_PAGE.to_string(), "http"),
        (
            "transport = \"tcp\"\nhttp = { mode = \"pool\", pool_size = 0 }",
            SMALL_PAGE.to_string(),
            "pool_size",
        ),
        (
            "transport = \"tcp\"\nhttp = { pool_size = 4 }",
            SMALL_PAGE.to_string(),
            "pool_size",
        ),
        (
            "transport = \"tcp\"\nhttp = { mode = \"pool\", connections = 4 }",
            SMALL_PAGE.to_string(),
            "connections",
        ),
        (
            "transport = \"tcp\"\nhttp = { mode = \"pipelined\" }",
            SMALL_PAGE.to_string(),
            "pipelined",
        ),
    ];
    for (transport, workload, key) in cases {
        let e = err(transport, &workload);
        println!("{e}");
        assert!(e.contains(key), "{key}: {e}");
    }
}
