//! The emulator as a library, in-process: a scenario's 20 ms + 20 ms of link delay
//! between a UDP client and an echo server on loopback.

use quiclab_net::emulate::{self, Emulator, EmulatorConfig};
use std::net::UdpSocket;
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
