//! The host model (`host/`, issue 37): a CPU slower than the arrivals drops at its
//! receive queue at the rate queueing arithmetic predicts, a full socket buffer drops
//! (counted), timer granularity and wake-up latency show in a paced flow's departures,
//! an application delay shows in the time to first byte, and a host table that is off
//! leaves the run's results byte-identical.

use quiclab_sim::host::HostStats;
use quiclab_sim::output::results::{FlowResult, RunResult};
use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

/// A client sending 2000 DATAGRAMs/s of 1000 bytes for 2 s (16 Mbit/s on a 100 Mbit/s
/// path) under a fixed window (no reaction to loss, so the offered rate stays known).
const BASE: &str = r#"
name = "hosts"
seed = 7

[stop]
time_s = 3.0

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 100.0
delay_ms = 10.0

[topology.return]
rate_mbps = 100.0
delay_ms = 10.0

[client]
max_datagram_frame_size = 65535
congestion_control = { algorithm = "fixed", window_packets = 1000 }
CLIENT

[server]
max_datagram_frame_size = 65535
SERVER

[[flows]]
name = "media"
workload = { kind = "datagram", rate_pps = RATE, size = 1000, duration_s = 2.0 }
"#;

fn scenario(rate: f64, client: &str, server: &str) -> String {
    BASE.replace("RATE", &format!("{rate:?}"))
        .replace("CLIENT", client)
        .replace("SERVER", server)
}

fn run_in(text: &str, out: Option<&Path>) -> RunResult {
    let s = Scenario::parse(text, "hosts.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "hosts.toml", out)
        .unwrap()
        .run()
        .unwrap()
}

fn flow(text: &str) -> FlowResult {
    run_in(text, None).flows[0].clone()
}

fn server_host(f: &FlowResult) -> HostStats {
    f.server_host.clone().expect("the server has a host")
}

#[test]
fn a_saturated_receive_queue_drops_what_the_cpu_cannot_serve() {
    // Arrival rate λ = 2000 datagrams/s, service time s = 1 ms (recv_cost_us = 1000):
    // ρ = λ·s = 2. Once the 8-datagram queue fills (after ~8 ms) the CPU serves at most
    // 1/s = 1000/s, so the fraction dropped is 1 - 1/(λ·s) = 0.5 (deterministic arrivals
    // and service: no M/D/1 variability, only the queue's first 8 ms differ).
    let f = flow(&scenario(
        2000.0,
        "",
        "host = { recv_cost_us = 1000, rx_queue_packets = 8 }",
    ));
    let h = server_host(&f);
    let arrivals = h.rx_packets + h.rx_queue_drops;
    let dropped = h.rx_queue_drops as f64 / arrivals as f64;
    assert!(arrivals >= 4000, "{h:?}");
    assert!((dropped - 0.5).abs() < 0.01, "dropped {dropped}: {h:?}");
    assert_eq!(h.socket_drops, 0);
    assert_eq!(h.max_rx_waiting, 8);
    // Served: the CPU's 1 ms per datagram, busy from the first arrival until the queue
    // drains: about 2 s of 1000/s (the handshake's few datagrams besides).
    assert!((2000..2030).contains(&h.rx_packets), "{h:?}");
    assert!(
        (h.busy_s - h.rx_packets as f64 * 1e-3).abs() < 1e-6,
        "{h:?}"
    );
    let d = f.datagrams.unwrap();
    assert!(
        (d.delivered as f64 / d.frames_sent as f64 - 0.5).abs() < 0.01,
        "{d:?}"
    );
    // Below saturation (ρ = 0.5) nothing is dropped.
    let f = flow(&scenario(
        500.0,
        "",
        "host = { recv_cost_us = 1000, rx_queue_packets = 8 }",
    ));
    assert_eq!(server_host(&f).rx_queue_drops, 0);
    assert_eq!(f.datagrams.unwrap().lost, 0);
}

#[test]
fn a_full_socket_receive_buffer_drops_and_counts() {
    // The same saturated CPU with an unbounded queue but SO_RCVBUF = 3000 bytes: at most
    // three 1000-byte payloads (plus QUIC's overhead: two) wait, the rest is dropped
    // at the socket, again 1 - 1/(λ·s) = 0.5 of the arrivals.
    let f = flow(&scenario(
        2000.0,
        "",
        "host = { recv_cost_us = 1000, socket_rcvbuf = 3000 }",
    ));
    let h = server_host(&f);
    assert_eq!(h.rx_queue_drops, 0);
    let arrivals = h.rx_packets + h.socket_drops;
    let dropped = h.socket_drops as f64 / arrivals as f64;
    assert!((dropped - 0.5).abs() < 0.01, "{h:?}");
    assert!((1..=3).contains(&h.max_rx_waiting), "{h:?}");
}

/// Departure times (µs) of the UDP datagrams from `port` in a pcap written by quiclab.
fn departures(pcap: &[u8], port: u16) -> Vec<u64> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let word = |o: usize| u32::from_le_bytes(pcap[at + o..at + o + 4].try_into().unwrap());
        let t = u64::from(word(0)) * 1_000_000 + u64::from(word(4));
        let len = word(8) as usize;
        let ip = &pcap[at + 16..at + 16 + len];
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        if ip[9] == 17 && u16::from_be_bytes([ip[ihl], ip[ihl + 1]]) == port {
            out.push(t);
        }
        at += 16 + len;
    }
    out
}

/// The client's departure instants (distinct times, µs) with `host` on the client.
fn client_instants(host: &str, tag: &str) -> Vec<u64> {
    let text = scenario(1000.0, host, "").replace("[server]", "[measure]\npcap = true\n\n[server]");
    let dir = std::env::temp_dir().join(format!("quiclab-hosts-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run_in(&text, Some(&dir));
    let pcap = std::fs::read(dir.join("pcap").join("all.pcap")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut t = departures(&pcap, 40000);
    t.dedup();
    // The datagram phase only (the handshake's are few and unaligned).
    t.retain(|&t| (500_000..2_000_000).contains(&t));
    t
}

#[test]
fn timer_granularity_and_wakeup_latency_show_in_a_paced_flows_departures() {
    // The datagram sender paces itself by its timer: one datagram each 1 ms. With a
    // 4 ms timer granularity and a fixed 300 µs wake-up latency, a timer asked for t
    // fires at ceil(t / 4 ms)·4 ms + 300 µs, and every datagram due by then leaves at
    // once: departures at instants ≡ 300 µs (mod 4 ms), bursts of about 4, and gaps
    // between departure instants of 4 ms instead of 1 ms. (The server's ACKs wake the
    // client too, so a few datagrams leave on their arrival: the checks allow 15%.)
    let ideal = client_instants("", "ideal");
    let gaps = |t: &[u64]| {
        let mut g: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
        g.sort_unstable();
        g[g.len() / 2]
    };
    assert!((990..=1010).contains(&gaps(&ideal)), "{}", gaps(&ideal));
    let aligned =
        |t: &[u64]| t.iter().filter(|&&t| t % 4000 == 300).count() as f64 / t.len() as f64;
    assert!(aligned(&ideal) < 0.1, "{}", aligned(&ideal));
    let late = client_instants(
        "host = { timer_granularity_us = 4000, wakeup_latency = { dist = \"fixed\", us = 300 } }",
        "late",
    );
    assert!(aligned(&late) > 0.85, "{}", aligned(&late));
    assert!(gaps(&late) >= 3000, "{}", gaps(&late));
    // 1.5 s of departures: ~1500 instants without the host, ~375 (one per 4 ms) with it.
    assert!((1450..=1550).contains(&ideal.len()), "{}", ideal.len());
    assert!((370..=450).contains(&late.len()), "{}", late.len());
}

#[test]
fn timer_lateness_is_counted_and_seeded() {
    let host = "host = { wakeup_latency = { dist = \"uniform\", min_us = 20, max_us = 60 } }";
    let text = scenario(1000.0, host, "");
    let a = flow(&text);
    let h = a.client_host.clone().unwrap();
    // One wake-up per datagram (1000/s for 2 s), each late by a U(20, 60) µs draw: mean
    // 40 µs (standard error ~0.3 µs over ~2000 draws), never above 60 µs.
    assert!(h.timer_wakes > 1900, "{h:?}");
    assert!((h.timer_late_mean_us - 40.0).abs() < 1.5, "{h:?}");
    assert!((55.0..=60.0).contains(&h.timer_late_max_us), "{h:?}");
    // The same seed draws the same latencies; another draws others.
    assert_eq!(a, flow(&text));
    let other = flow(&text.replace("seed = 7", "seed = 8"));
    assert_ne!(a.client_host, other.client_host);
}

#[test]
fn send_costs_batches_and_the_send_buffer() {
    // 1000 datagrams/s, each send costing 300 µs of CPU: 30% busy; with GSO batches of
    // 4 the fixed cost is paid once per batch.
    let f = flow(&scenario(1000.0, "host = { send_cost_us = 300 }", ""));
    let h = f.client_host.unwrap();
    assert_eq!(h.tx_packets, h.tx_batches);
    assert!(
        (h.busy_s - h.tx_packets as f64 * 300e-6).abs() < 1e-6,
        "{h:?}"
    );
    // A send buffer smaller than a datagram: one at a time, the endpoint held back
    // while it waits, and still everything goes (the CPU keeps up).
    let f = flow(&scenario(
        2000.0,
        "host = { send_cost_us = 300, socket_sndbuf = 500 }",
        "",
    ));
    let h = f.client_host.unwrap();
    assert!(h.sndbuf_blocked > 0, "{h:?}");
    assert_eq!(f.datagrams.unwrap().lost, 0);
}

#[test]
fn an_app_delay_holds_the_response() {
    let text = scenario(1000.0, "", "").replace(
        "{ kind = \"datagram\", rate_pps = 1000.0, size = 1000, duration_s = 2.0 }",
        "{ kind = \"request\", size = 10000 }",
    );
    let plain = flow(&text);
    let held = flow(&text.replace(
        "max_datagram_frame_size = 65535\n\n",
        "max_datagram_frame_size = 65535\nhost = { app_delay_ms = 7 }\n\n",
    ));
    let d = held.ttfb_s.unwrap() - plain.ttfb_s.unwrap();
    assert!((d - 0.007).abs() < 1e-6, "{d}");
    assert_eq!(held.server_host.unwrap().app_delayed, 1);
    // Elsewhere it is not simulated: a typed error.
    let bad = scenario(1000.0, "host = { app_delay_ms = 7 }", "");
    let e = Scenario::parse(&bad, "x.toml").unwrap_err().to_string();
    assert!(e.contains("client.host.app_delay_ms"), "{e}");
}

#[test]
fn a_host_that_is_off_changes_nothing() {
    let plain = scenario(2000.0, "", "");
    let base = serde_json::to_string(&run_in(&plain, None)).unwrap();
    for host in ["host = {}", "host = { recv_cost_us = 0, gso_segments = 1 }"] {
        let text = scenario(2000.0, host, host);
        let r = run_in(&text, None);
        assert!(r.flows[0].client_host.is_none());
        assert_eq!(serde_json::to_string(&r).unwrap(), base, "{host}");
    }
}

#[test]
fn profiles_load_relative_to_the_scenario_and_keys_override_them() {
    let dir = std::env::temp_dir().join(format!("quiclab-hosts-prof-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("hosts")).unwrap();
    std::fs::write(
        dir.join("hosts/slow.toml"),
        "recv_cost_us = 1000\nrx_queue_packets = 100\nwakeup_latency = { dist = \"empirical\", file = \"wake.txt\" }\n",
    )
    .unwrap();
    std::fs::write(dir.join("hosts/wake.txt"), "# µs\n50\n70\n").unwrap();
    let text = scenario(
        2000.0,
        "",
        "host = { profile = \"hosts/slow.toml\", rx_queue_packets = 8 }",
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, &text).unwrap();
    let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let h = s.host(0, true, "s.toml").unwrap().unwrap();
    assert_eq!((h.recv_cost_us, h.rx_queue_packets), (1000.0, Some(8)));
    let r = Simulation::new(s, "s.toml", None).unwrap().run().unwrap();
    assert_eq!(r.flows[0].server_host.as_ref().unwrap().max_rx_waiting, 8);
    // Bad files and values are typed errors naming file and key.
    std::fs::write(dir.join("hosts/wake.txt"), "fast\n").unwrap();
    let e = Scenario::load(&path).unwrap_err().to_string();
    assert!(e.contains("wake.txt") && e.contains("line 1"), "{e}");
    std::fs::remove_file(dir.join("hosts/slow.toml")).unwrap();
    let e = Scenario::load(&path).unwrap_err().to_string();
    assert!(e.contains("slow.toml"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
    for (host, key) in [
        ("host = { recv_cost_us = -1 }", "server.host.recv_cost_us"),
        ("host = { cpu = 1 }", "server.host"),
        ("host = { gso_segments = 65 }", "server.host.gso_segments"),
        (
            "host = { rx_queue_packets = 0 }",
            "server.host.rx_queue_packets",
        ),
        ("host = 3", "server.host"),
    ] {
        let e = Scenario::parse(&scenario(2000.0, "", host), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{host}: {e}");
    }
}

/// An empirical latency file is bounded (`host/config.rs`): 1,000,000 samples load, one
/// more is a typed error at the line that passes the bound, and a file beyond 64 MiB is
/// refused before it is read whole.
#[test]
fn a_latency_file_is_bounded() {
    use quiclab_sim::host::config::{MAX_LATENCY_FILE_BYTES, MAX_SAMPLES};
    let dir = std::env::temp_dir().join(format!("quiclab-hosts-bound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    let host = "host = { wakeup_latency = { dist = \"empirical\", file = \"wake.txt\" } }";
    std::fs::write(&path, scenario(2000.0, "", host)).unwrap();
    let wake = dir.join("wake.txt");
    let load = || Scenario::load(&path).map(|s| s.host(0, true, "s.toml"));
    std::fs::write(&wake, "5\n".repeat(MAX_SAMPLES)).unwrap();
    let h = load().unwrap().unwrap().unwrap();
    match h.wakeup_latency {
        Some(quiclab_sim::host::Latency::Empirical { samples, .. }) => {
            assert_eq!(samples.len(), MAX_SAMPLES)
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(&wake, "5\n".repeat(MAX_SAMPLES + 1)).unwrap();
    let e = load().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("line 1000001") && e.contains("1,000,000"), "{e}");
    // A sparse file: its length passes the bound without its bytes on disk.
    let f = std::fs::File::create(&wake).unwrap();
    f.set_len(MAX_LATENCY_FILE_BYTES + 1).unwrap();
    let e = load().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("larger than"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
