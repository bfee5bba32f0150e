//! The emulator as a library, in-process: a scenario's 20 ms + 20 ms of link delay
//! between a UDP client and an echo server on loopback.

use quiclab_net::emulate::{self, Emulator, EmulatorConfig};
use quiclab_proto::Ecn;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

const SCENARIO: &str = "name = \"lib\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\n\
    kind = \"point_to_point\"\n[topology.forward]\nrate_mbps = 10.0\ndelay_ms = 20.0\n\
    [topology.return]\ndelay_ms = 20.0\n";

#[test]
fn relays_through_the_scenarios_delay() {
    let echo = UdpSocket::bind("127.0.0.1:0").unwrap();
    let upstream = echo.local_addr().unwrap();
    let (scenario, duplex) = emulate::parse(SCENARIO, "lib.toml").unwrap();
    let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), upstream);
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    assert_ne!(front.port(), 0);
    let server = std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        echo.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (n, from) = echo.recv_from(&mut buf).unwrap();
        echo.send_to(&buf[..n], from).unwrap();
    });
    let client = std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let start = Instant::now();
        s.send_to(b"ping", front).unwrap();
        let mut buf = [0u8; 16];
        let (n, _) = s.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ping");
        start.elapsed()
    });
    let end = emulator
        .run(Some(Duration::from_millis(400)), &|| false)
        .unwrap();
    assert!(end.as_secs_f64() >= 0.4, "stopped early: {end:?}");
    let rtt = client.join().unwrap();
    server.join().unwrap();
    // Both directions' delay, and the wall clock never runs ahead of the model.
    assert!(rtt >= Duration::from_millis(40), "rtt {rtt:?}");
    let c = emulator.counters();
    assert_eq!((c.from_client, c.to_server), (1, 1));
    assert_eq!((c.from_server, c.to_client), (1, 1));
    let out = std::env::temp_dir().join(format!("quiclab-net-emu-{}", std::process::id()));
    emulator.finish(&out, end, None).unwrap();
    let links = std::fs::read_to_string(out.join("links.csv")).unwrap();
    assert_eq!(links.lines().count(), 3, "{links}");
    // links.json: the same two directions as results.json's links, in link order, with
    // the datagram each one carried.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("links.json")).unwrap()).unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["forward", "return"], "{json}");
    assert_eq!(json[0]["delivered_packets"], 1, "{json}");
    assert_eq!(json[1]["delivered_packets"], 1, "{json}");
    // Each direction's lateness over the measurement window (here the whole run): one
    // delivery each, sent at or after its due time.
    for l in json.as_array().unwrap() {
        assert_eq!(l["send_lateness"]["datagrams"], 1, "{json}");
        assert!(
            l["send_lateness"]["max_us"].as_f64().unwrap() >= 0.0,
            "{json}"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn mixed_families_are_refused() {
    let (scenario, duplex) = emulate::parse(SCENARIO, "lib.toml").unwrap();
    let config = EmulatorConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        "[::1]:4433".parse().unwrap(),
    );
    let e = Emulator::bind(scenario, duplex, &config)
        .err()
        .expect("refused");
    assert!(matches!(e, quiclab_net::NetError::MixedFamilies), "{e}");
}

/// Reads datagrams from `s` until `n` arrived or 3 s passed: (first byte, codepoint,
/// sender).
fn recv_codepoints(s: &quiclab_net::Socket, n: usize) -> Vec<(u8, Ecn, SocketAddr)> {
    use quinn_udp::{EcnCodepoint, RecvMeta};
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    while got.len() < n && Instant::now() < deadline {
        // Room for GRO batches (the relay sends deliveries due together as one).
        let mut bufs: Vec<Vec<u8>> = vec![vec![0u8; 65_536]; 8];
        let mut slices: [std::io::IoSliceMut<'_>; 8] =
            std::array::from_fn(|_| std::io::IoSliceMut::new(&mut []));
        for (s, b) in slices.iter_mut().zip(bufs.iter_mut()) {
            *s = std::io::IoSliceMut::new(b);
        }
        let mut meta = [RecvMeta::default(); 8];
        match s.recv(&mut slices, &mut meta) {
            Ok(k) => {
                for (m, b) in meta[..k].iter().zip(slices.iter()) {
                    let ecn = match m.ecn {
                        None => Ecn::NotEct,
                        Some(EcnCodepoint::Ect0) => Ecn::Ect0,
                        Some(EcnCodepoint::Ect1) => Ecn::Ect1,
                        Some(EcnCodepoint::Ce) => Ecn::Ce,
                    };
                    for d in b[..m.len].chunks(m.stride.max(1)) {
                        got.push((d[0], ecn, m.addr));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(e) => panic!("recv: {e}"),
        }
    }
    got
}

fn socket() -> quiclab_net::Socket {
    quiclab_net::Socket::bind("127.0.0.1:0".parse().unwrap(), 4 << 20).unwrap()
}

fn codepoints(got: &[(u8, Ecn, SocketAddr)]) -> Vec<(u8, Ecn)> {
    got.iter().map(|&(b, e, _)| (b, e)).collect()
}

/// The `ecn` impairments rewrite real codepoints: ECT(0) sent is re-marked ECT(1) on the
/// way to the server, and the server's ECT(0) reply arrives CE; not-ECT stays not-ECT
/// both ways.
#[test]
fn ecn_impairments_rewrite_codepoints() {
    let scenario = "name = \"ecn\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\n\
        kind = \"point_to_point\"\n[topology.forward]\ndelay_ms = 5.0\n\
        [topology.forward.impairments]\necn = \"remark_ect1\"\n\
        [topology.return]\ndelay_ms = 5.0\n[topology.return.impairments]\n\
        ecn = \"mark_all_ce\"\n";
    let server = socket();
    let (scenario, duplex) = emulate::parse(scenario, "ecn.toml").unwrap();
    let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), server.local_addr().unwrap());
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    let echo = std::thread::spawn(move || {
        let got = recv_codepoints(&server, 2);
        for &(b, e, from) in &got {
            // Reply ECT(0) to ECN-capable datagrams, not-ECT to the others.
            let reply = if e.is_ect() { Ecn::Ect0 } else { Ecn::NotEct };
            server.send(from, reply, &[b; 100], 100).unwrap();
        }
        codepoints(&got)
    });
    let client = std::thread::spawn(move || {
        let client = socket();
        client.send(front, Ecn::Ect0, &[1; 100], 100).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        client.send(front, Ecn::NotEct, &[2; 100], 100).unwrap();
        codepoints(&recv_codepoints(&client, 2))
    });
    emulator
        .run(Some(Duration::from_millis(300)), &|| false)
        .unwrap();
    assert_eq!(echo.join().unwrap(), vec![(1, Ecn::Ect1), (2, Ecn::NotEct)]);
    assert_eq!(client.join().unwrap(), vec![(1, Ecn::Ce), (2, Ecn::NotEct)]);
    let c = emulator.counters();
    assert_eq!((c.ect_received, c.ce_sent), (2, 1));
}

/// A CoDel queue with marking on a 10 Mbit/s link: a burst of 300 ECT(0) datagrams
/// (~250 ms of backlog) is delivered whole, some CE-marked, as many as the link counts.
#[test]
fn emulated_codel_marks_real_datagrams() {
    let scenario = "name = \"ecn\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\n\
        kind = \"point_to_point\"\n[topology.forward]\nrate_mbps = 10.0\ndelay_ms = 1.0\n\
        [topology.forward.queue]\ndiscipline = \"codel\"\npackets = 1000\n\
        interval_ms = 20.0\necn = true\n[topology.return]\ndelay_ms = 1.0\n";
    let server = socket();
    let (scenario, duplex) = emulate::parse(scenario, "ecn.toml").unwrap();
    let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), server.local_addr().unwrap());
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    let sink = std::thread::spawn(move || codepoints(&recv_codepoints(&server, 300)));
    let client = std::thread::spawn(move || {
        let client = socket();
        for i in 0..300u32 {
            client
                .send(front, Ecn::Ect0, &[i as u8; 1000], 1000)
                .unwrap();
        }
    });
    emulator
        .run(Some(Duration::from_millis(700)), &|| false)
        .unwrap();
    client.join().unwrap();
    let got = sink.join().unwrap();
    assert_eq!(
        got.len(),
        300,
        "every datagram delivered: marked, not dropped"
    );
    let ce = got.iter().filter(|(_, e)| *e == Ecn::Ce).count() as u64;
    assert!(ce > 0 && got.iter().all(|(_, e)| matches!(e, Ecn::Ect0 | Ecn::Ce)));
    assert_eq!(emulator.counters().ce_sent, ce);
    assert_eq!(emulator.ecn_marks(), [Some(ce), None]);
}

/// A Mahimahi trace through the emulator (issue 38): the forward link is a one-line
/// trace `1` (1504 bytes per ms, 12.032 Mbit/s, in a file next to the scenario, named
/// by a relative path). A backlog of 1200 datagrams of 1500 wire bytes drains at the
/// trace's rate, measured by the real receiver's clock: within 5%.
#[test]
fn mahimahi_trace_paces_real_datagrams() {
    let dir = std::env::temp_dir().join(format!("quiclab-net-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("one.trace"), "1\n").unwrap();
    let path = dir.join("trace.toml");
    std::fs::write(
        &path,
        "name = \"trace\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\n\
        kind = \"point_to_point\"\n[topology.forward]\ndelay_ms = 1.0\n\
        queue = { discipline = \"drop_tail\", packets = 5000 }\n\
        trace = { mahimahi = \"one.trace\" }\n[topology.return]\ndelay_ms = 1.0\n",
    )
    .unwrap();
    let (scenario, duplex) = emulate::load(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let server = socket();
    let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), server.local_addr().unwrap());
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    const N: usize = 1200;
    let sink = std::thread::spawn(move || {
        let mut arrivals = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(4);
        // Room for a GRO batch: deliveries due together leave the relay as one GSO
        // send (emulate/batch.rs); each datagram of a batch arrives at its time.
        let mut buf = vec![0u8; 65_536];
        while arrivals.len() < N && Instant::now() < deadline {
            let mut slices = [std::io::IoSliceMut::new(&mut buf)];
            let mut meta = [quinn_udp::RecvMeta::default()];
            if let Ok(k) = server.recv(&mut slices, &mut meta) {
                let now = Instant::now();
                for m in &meta[..k] {
                    let datagrams = m.len.div_ceil(m.stride.max(1));
                    arrivals.extend(std::iter::repeat_n(now, datagrams));
                }
            }
        }
        arrivals
    });
    let client = std::thread::spawn(move || {
        let client = socket();
        for i in 0..N {
            client.send(front, Ecn::NotEct, &[1; 1472], 1472).unwrap();
            // 100 datagrams per 5 ms: far above the link's rate, gentle on buffers.
            if i % 100 == 99 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    });
    emulator
        .run(Some(Duration::from_millis(1600)), &|| false)
        .unwrap();
    client.join().unwrap();
    let arrivals = sink.join().unwrap();
    assert_eq!(arrivals.len(), N, "every datagram delivered");
    // 1000 datagrams between the 100th and the 1100th arrival.
    let span = arrivals[1100] - arrivals[100];
    let bps = 1000.0 * 1500.0 * 8.0 / span.as_secs_f64();
    println!("emulated trace: {:.3} Mbit/s", bps / 1e6);
    assert!((bps / 12.032e6 - 1.0).abs() < 0.05, "{bps}");
}
