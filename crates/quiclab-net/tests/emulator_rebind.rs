//! `--rebind` (the interop runner's NAT rebinding): after each rebind the upstream sees
//! the relay's datagrams from a new source port (or a new 127/8 address) and its
//! answers still reach the client, whose side of the relay does not change.

use quiclab_net::emulate::{self, Emulator, EmulatorConfig, Rebind, RebindKind};
use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SCENARIO: &str = "name = \"rebind\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\n\
    kind = \"point_to_point\"\n[topology.forward]\ndelay_ms = 5.0\n\
    [topology.return]\ndelay_ms = 5.0\n";

/// What the echo server saw (in order) and which sequence numbers the client got back.
struct Seen {
    sources: Vec<SocketAddr>,
    echoed: BTreeSet<u32>,
    sent: u32,
}

/// Relays for `run` with `kind` rebinds at 300 ms, 600 ms, 900 ms while a client
/// sends a numbered datagram every 10 ms to an echo server behind the relay.
fn relay_with_rebinds(kind: RebindKind, run: Duration) -> (Emulator, Seen) {
    let echo = UdpSocket::bind("127.0.0.1:0").unwrap();
    let upstream = echo.local_addr().unwrap();
    let (scenario, duplex) = emulate::parse(SCENARIO, "rebind.toml").unwrap();
    let mut config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), upstream);
    config.rebind = Some(Rebind {
        kind,
        first: Duration::from_millis(300),
        every: Some(Duration::from_millis(300)),
    });
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let sources = Arc::new(Mutex::new(Vec::new()));
    let (stop2, sources2) = (stop.clone(), sources.clone());
    let server = std::thread::spawn(move || {
        echo.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut buf = [0u8; 64];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok((n, from)) = echo.recv_from(&mut buf) {
                sources2.lock().unwrap().push(from);
                let _ = echo.send_to(&buf[..n], from);
            }
        }
    });
    let stop3 = stop.clone();
    let client = std::thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_nonblocking(true).unwrap();
        let (mut sent, mut echoed) = (0u32, BTreeSet::new());
        let mut buf = [0u8; 64];
        while !stop3.load(Ordering::Relaxed) {
            s.send_to(&sent.to_be_bytes(), front).unwrap();
            sent += 1;
            std::thread::sleep(Duration::from_millis(10));
            while let Ok((n, _)) = s.recv_from(&mut buf) {
                assert_eq!(n, 4);
                echoed.insert(u32::from_be_bytes(buf[..4].try_into().unwrap()));
            }
        }
        (sent, echoed)
    });
    emulator.run(Some(run), &|| false).unwrap();
    stop.store(true, Ordering::Relaxed);
    let (sent, echoed) = client.join().unwrap();
    server.join().unwrap();
    let sources = Arc::try_unwrap(sources).unwrap().into_inner().unwrap();
    (
        emulator,
        Seen {
            sources,
            echoed,
            sent,
        },
    )
}

/// The distinct source addresses in the order the echo server first saw them.
fn distinct(sources: &[SocketAddr]) -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = Vec::new();
    for s in sources {
        if out.last() != Some(s) {
            assert!(!out.contains(s), "an old address came back: {sources:?}");
            out.push(*s);
        }
    }
    out
}

fn check(kind: RebindKind) -> Vec<SocketAddr> {
    let (emulator, seen) = relay_with_rebinds(kind, Duration::from_millis(1050));
    let records = emulator.rebinds().to_vec();
    let counters = emulator.counters();
    assert_eq!(counters.rebinds, 3, "{records:?}");
    assert_eq!(counters.rebind_failures, 0);
    // Each at its time (the relay's turn may come a little late, never early).
    for (r, due) in records.iter().zip([0.3, 0.6, 0.9]) {
        assert!(r.at_s >= due && r.at_s < due + 0.1, "{r:?}");
        assert_ne!(r.from, r.to);
    }
    // The upstream saw the relay's four addresses, in order: the first socket's,
    // then each rebind's.
    let addrs = distinct(&seen.sources);
    assert_eq!(addrs.len(), 4, "{addrs:?}");
    for (a, r) in addrs[1..].iter().zip(&records) {
        assert_eq!(a.port(), r.to.port(), "{addrs:?} {records:?}");
    }
    // Forwarding both ways went on: echoes of datagrams sent after the last rebind
    // (at 0.9 s; one every 10 ms) came back, and all but a few around each rebind did.
    let late = seen.echoed.iter().filter(|&&n| n >= 95).count();
    assert!(
        late > 0,
        "nothing came back after the last rebind: {:?}",
        seen.echoed
    );
    let lost = seen.sent as usize - seen.echoed.len();
    assert!(lost <= 3 * 3 + 3, "{lost} of {} lost", seen.sent);
    addrs
}

#[test]
fn port_rebinding_changes_the_source_port_only() {
    let addrs = check(RebindKind::Port);
    let ips: BTreeSet<_> = addrs.iter().map(|a| a.ip()).collect();
    assert_eq!(ips.len(), 1, "{addrs:?}");
}

#[test]
fn address_rebinding_moves_through_127_0_0_n() {
    let addrs = check(RebindKind::Addr);
    let ips: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
    assert_eq!(ips, ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]);
}

#[test]
fn rebinds_are_listed_in_emulate_json() {
    let (mut emulator, _) = relay_with_rebinds(RebindKind::Port, Duration::from_millis(400));
    let out = std::env::temp_dir().join(format!("quiclab-rebind-{}", std::process::id()));
    emulator.finish(&out, emulate_end(), None).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("emulate.json")).unwrap()).unwrap();
    assert_eq!(json["relay"]["rebinds"], 1);
    let list = json["rebinds"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert!(list[0]["at_s"].as_f64().unwrap() >= 0.3);
    let _ = std::fs::remove_dir_all(&out);
}

fn emulate_end() -> quiclab_proto::Instant {
    quiclab_proto::Instant::from_millis(400)
}

#[test]
fn without_rebinds_emulate_json_has_no_rebind_keys() {
    let (scenario, duplex) = emulate::parse(SCENARIO, "rebind.toml").unwrap();
    let config = EmulatorConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        "127.0.0.1:9".parse().unwrap(),
    );
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let end = emulator
        .run(Some(Duration::from_millis(50)), &|| false)
        .unwrap();
    let out = std::env::temp_dir().join(format!("quiclab-norebind-{}", std::process::id()));
    emulator.finish(&out, end, None).unwrap();
    let text = std::fs::read_to_string(out.join("emulate.json")).unwrap();
    assert!(
        !text.contains("\"rebinds\"") && !text.contains("rebind_failures"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
