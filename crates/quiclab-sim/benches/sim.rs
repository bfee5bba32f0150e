//! Simulator benchmarks: wall time of whole simulated runs (real TLS, real packet
//! protection), timed with `std::time::Instant` because one run takes seconds, which
//! criterion's sampling handles badly. Each case runs a few times; the median is shown.
//!
//! Run: `cargo bench -p quiclab-sim --bench sim [-- FILTER] [--reps N] [--series]
//! [--scenario-out DIR]`.
//! FILTER selects the cases whose name contains it; ending it in `$` names one case
//! exactly (`dumbbell/10$`). `--series` adds the first flow's goodput per simulated
//! second and its losses. `--scenario-out DIR` runs nothing: it writes each selected
//! case's scenario to `DIR/<name>.toml` (`/` in the name as `_`), so the very run can be
//! profiled with `quiclab sim run` (under callgrind, docs/PERFORMANCE.md "Simulator").
//! Figures go in docs/PERFORMANCE.md ("Simulator (quiclab-sim)").
//!
//! - `gib_1gbps_40ms/<payload>`: 1 GiB bulk over a point-to-point 1 Gbit/s link each
//!   way, 20 ms one way, a 1.5x BDP drop-tail queue, no loss, 64 MiB windows.
//! - `gib_1gbps_40ms_checksum/1452`: the same with `packet_protection = "checksum"`
//!   (payloads left plaintext under a keyed checksum tag: the AES work of packet
//!   protection skipped, results identical).
//! - `dumbbell/<N>`: N sender/receiver pairs, one 1 MiB bulk flow each, all starting at
//!   0, over one 1 Gbit/s, 10 ms bottleneck. Work grows with N, so the cost per packet
//!   should not: one flow per pair (the usual dumbbell) also exercises the per-host,
//!   per-route and per-link structures, which grow with N. From N = 100 the 2500-packet
//!   queue overflows (4-6% of packets dropped), so these runs also pay for loss recovery.
//! - `dumbbell_lossfree/<N>`: the same N flows without losses, so the cost per datagram
//!   against N carries no loss recovery: each flow's stream window is capped at
//!   64 KiB (no autotuning) and the bottleneck queues hold `64 N + 1000` packets, more
//!   than all N windows together (a 64 KiB window is at most 47 full-size packets), so
//!   nothing can drop. Every N runs the same per-flow pattern (window-limited).
//! - `dumbbell_fixed_inflight/<N>`: the loss-free dumbbell with one budget in flight
//!   for all flows together, 8 MiB (each flow's window is 8 MiB / N), so only the number
//!   of connections changes with N. In `dumbbell_lossfree` the bytes in flight grow with
//!   N too (64 MB of datagrams wait in the queue at N = 1000, far beyond any cache),
//!   and reading them back for decryption is a cost per queued byte, not per connection.
//!   The datagram mix does change: 8 KiB windows at N = 1000 mean more flow-control and
//!   ACK datagrams per byte (2.1 M datagrams against 1.15 M in `dumbbell_lossfree/1000`).
//! - `conns/10000`: 10,000 concurrent pairs with a 64 KiB flow each; prints the peak
//!   resident memory per connection (run it alone: `-- conns/10000`).

use quiclab_sim::{RunResult, Scenario, Simulation};
use std::time::Instant;

/// Transport keys shared by every case: windows well above the BDP (the 4 MiB default
/// send buffer is below 1 Gbit/s x 40 ms).
const TRANSPORT: &str =
    "flow = { initial_max_data = 67108864, initial_max_stream_data = 67108864, \
    max_receive_window = 67108864, max_stream_receive_window = 67108864, \
    send_buffer = 67108864, autotune = true }";

fn gib(payload: u32) -> String {
    // BDP = 1 Gbit/s x 40 ms = 5 MB = 3334 packets of 1500 bytes; the queue is 1.5x.
    format!(
        r#"
name = "gib_1gbps_40ms"
seed = 1
stop = {{ time_s = 60.0, when_flows_done = true }}
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 1000.0
delay_ms = 20.0
mtu = 1500
queue = {{ discipline = "drop_tail", packets = 5000 }}
[topology.return]
rate_mbps = 1000.0
delay_ms = 20.0
mtu = 1500
queue = {{ discipline = "drop_tail", packets = 5000 }}
[client]
max_udp_payload_size = {payload}
{TRANSPORT}
[server]
max_udp_payload_size = {payload}
{TRANSPORT}
[[flows]]
name = "bulk"
workload = {{ kind = "bulk", bytes = 1073741824 }}
"#
    )
}

fn dumbbell(n: usize) -> String {
    dumbbell_sized(n, 1_048_576)
}

/// Transport keys of the loss-free series: a fixed 64 KiB stream window per flow.
const TRANSPORT_CAPPED: &str =
    "flow = { initial_max_data = 67108864, initial_max_stream_data = 65536, \
    max_receive_window = 67108864, max_stream_receive_window = 65536, \
    send_buffer = 67108864, autotune = false }";

/// N flows whose stream windows are capped at `window` bytes each, over bottleneck
/// queues that hold all the windows together (a `window` is at most `window / 1024`
/// full-size packets), so nothing drops.
fn dumbbell_lossfree(n: usize, window: usize) -> String {
    let queue = window / 1024 * n + 1000;
    dumbbell_sized(n, 1_048_576)
        .replace("packets = 2500 }", &format!("packets = {queue} }}"))
        .replace(
            TRANSPORT,
            &TRANSPORT_CAPPED.replace("65536", &window.to_string()),
        )
}

/// What the `dumbbell_fixed_inflight` series keeps in flight, all flows together.
const FIXED_INFLIGHT: usize = 8 << 20;

fn dumbbell_sized(n: usize, bytes: u64) -> String {
    let mut s = format!(
        r#"
name = "dumbbell_{n}"
seed = 1
stop = {{ time_s = 120.0, when_flows_done = true }}
[topology]
kind = "dumbbell"
pairs = {n}
[topology.forward]
rate_mbps = 1000.0
delay_ms = 10.0
mtu = 1500
queue = {{ discipline = "drop_tail", packets = 2500 }}
[topology.return]
rate_mbps = 1000.0
delay_ms = 10.0
mtu = 1500
queue = {{ discipline = "drop_tail", packets = 2500 }}
[client]
max_udp_payload_size = 1452
{TRANSPORT}
[server]
max_udp_payload_size = 1452
{TRANSPORT}
"#
    );
    for i in 0..n {
        s += &format!(
            "[[flows]]\nname = \"f{i}\"\npair = {i}\nworkload = {{ kind = \"bulk\", bytes = {bytes} }}\n"
        );
    }
    s
}

/// CPU time this thread has run, in seconds (Linux `/proc/thread-self/schedstat`), if
/// known. On a shared machine wall time counts other jobs' time slices too; on-CPU time
/// of the (single-threaded) simulation does not, so it is the steadier figure there.
fn cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// One timed run (scenario parsing and setup included; they are small): wall and CPU
/// seconds.
fn run_once(text: &str) -> (f64, f64, RunResult) {
    let scenario = Scenario::parse(text, "bench").expect("scenario");
    let (start, cpu0) = (Instant::now(), cpu_s().unwrap_or(0.0));
    let sim = Simulation::new(scenario, "bench", None).expect("setup");
    let result = sim.run().expect("run");
    let cpu = cpu_s().unwrap_or(0.0) - cpu0;
    (start.elapsed().as_secs_f64(), cpu, result)
}

/// This process's resident set size in bytes (Linux `/proc/self/status` VmRSS), if known.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `conns/<N>`: N concurrent pairs (2N connections: client and server) of a 64 KiB bulk
/// flow each, all starting at 0, over the dumbbell. Prints the wall time and the peak
/// resident memory above the level before setup, per pair and per connection, sampled
/// every 20,000 events (run it alone, e.g. `-- conns/10000`, so earlier cases' freed
/// heap does not hide part of the growth).
fn bench_memory(n: usize) {
    let scenario = Scenario::parse(&dumbbell_sized(n, 65_536), "bench").expect("scenario");
    let before = rss_bytes().unwrap_or(0);
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(before));
    let start = Instant::now();
    let mut sim = Simulation::new(scenario, "bench", None).expect("setup");
    let p = peak.clone();
    sim.set_progress_hook(
        20_000,
        Box::new(move |_| {
            p.fetch_max(
                rss_bytes().unwrap_or(0),
                std::sync::atomic::Ordering::Relaxed,
            );
        }),
    );
    let r = sim.run().expect("run");
    let wall = start.elapsed().as_secs_f64();
    let grown = peak
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(before);
    let done = r.flows.iter().filter(|f| f.incomplete.is_none()).count();
    let datagrams: u64 = r.links[..2].iter().map(|l| l.delivered_packets).sum();
    println!(
        "conns/{n:<18} wall {wall:7.3} s  sim {:6.3} s  datagrams {datagrams:>8}  \
         {:6.3} us/datagram  flows done {done}/{}  peak RSS +{:.1} MiB = {:.1} KiB per pair, \
         {:.1} KiB per connection",
        r.end_s,
        wall * 1e6 / datagrams.max(1) as f64,
        r.flows.len(),
        grown as f64 / (1 << 20) as f64,
        grown as f64 / 1024.0 / n as f64,
        grown as f64 / 1024.0 / (2 * n) as f64,
    );
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Writes the case's scenario to `dir/<name>.toml` (`/` as `_`).
fn write_scenario(dir: &std::path::Path, name: &str, text: &str) {
    let path = dir.join(format!("{}.toml", name.replace('/', "_")));
    std::fs::write(&path, text).expect("write the scenario");
    println!("{name:<24} scenario written to {}", path.display());
}

fn bench(name: &str, text: &str, reps: usize, series: bool) {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let (w, c, r) = if series {
            run_once(&text.replacen("[topology]", "[measure]\ntraces = true\n[topology]", 1))
        } else {
            run_once(text)
        };
        walls.push(w);
        cpus.push(c);
        last = Some(r);
    }
    let r = last.expect("at least one rep");
    let wall = median(&mut walls);
    let cpu = median(&mut cpus);
    let all_pkts: u64 = r.links.iter().map(|l| l.delivered_packets).sum();
    // Every datagram crosses the bottleneck (links 0 and 1) exactly once.
    let datagrams: u64 = r.links[..2].iter().map(|l| l.delivered_packets).sum();
    let bytes: u64 = r.flows.iter().map(|f| f.goodput_bytes).sum();
    let done = r.flows.iter().filter(|f| f.goodput_bytes > 0).count();
    let drops: u64 = r.links.iter().map(|l| l.queue_drops).sum();
    println!(
        "{name:<24} wall {wall:7.3} s (min {:.3}, {reps} reps)  sim {:6.3} s  \
         datagrams {datagrams:>8}  link pkts {all_pkts:>8}  {:6.2} M link pkts/s  \
         {:6.3} us/datagram  cpu {cpu:7.3} s = {:6.3} us/datagram  goodput {:7.1} Mbit/s  \
         drops {drops}  flows {done}/{}  events {}",
        walls[0],
        r.end_s,
        all_pkts as f64 / wall / 1e6,
        wall * 1e6 / datagrams as f64,
        cpu * 1e6 / datagrams as f64,
        bytes as f64 * 8.0 / r.end_s / 1e6,
        r.flows.len(),
        r.events,
    );
    if series {
        // Where the time goes in simulated terms: goodput per second and loss events.
        for f in r.flows.iter().take(1) {
            let s: Vec<String> = (f.goodput_series.iter())
                .map(|(t, bps)| format!("{t:.0}s:{:.0}", bps / 1e6))
                .collect();
            println!(
                "  {}: handshake {:?} s, client lost {} pto {}, Mbit/s per second: {}",
                f.name,
                f.handshake_done_s,
                f.client.packets_lost,
                f.client.pto_expirations,
                s.join(" ")
            );
            // cwnd and smoothed RTT at each simulated second (traces are on with --series).
            let at = |t: f64| {
                let c = f.client.cwnd.iter().rev().find(|c| c.0 <= t).map(|c| c.1);
                let r = f.client.rtt.iter().rev().find(|r| r.0 <= t).map(|r| r.1);
                format!("{t:.0}s:{:?}B/{:.1}ms", c.unwrap_or(0), r.unwrap_or(0.0))
            };
            let pts: Vec<String> = (1..=10).map(|t| at(t as f64)).collect();
            println!("  client cwnd/srtt: {}", pts.join(" "));
            let l = &r.links[0];
            let stream = f.client.sent_by_frame_type.get("stream");
            println!(
                "  forward link: {:.1} Mbit/s wire, max queue {} packets; client STREAM frames {:?}",
                l.throughput_bps / 1e6,
                l.max_queue_packets,
                stream
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = None;
    let mut filter = None;
    let mut series = false;
    let mut scenario_out: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|n| n.parse().ok()),
            "--series" => series = true,
            "--scenario-out" => scenario_out = it.next().map(Into::into),
            // cargo bench passes --bench; criterion-style flags are ignored.
            s if s.starts_with("--") => {}
            s => filter = Some(s.to_string()),
        }
    }
    // A filter ending in `$` names one case exactly (`dumbbell/10$` is not `dumbbell/100`).
    let selected = |name: &str| match filter.as_deref() {
        None => true,
        Some(f) => match f.strip_suffix('$') {
            Some(exact) => name == exact,
            None => name.contains(f),
        },
    };
    // Every case's (name, scenario, default reps); building the texts is cheap.
    let mut cases = Vec::new();
    for payload in [1452, 1200] {
        cases.push((format!("gib_1gbps_40ms/{payload}"), gib(payload), 3));
    }
    // The same run with checksum packet protection (no AES work; identical results).
    let checksum = gib(1452).replace("seed = 1\n", "seed = 1\npacket_protection = \"checksum\"\n");
    assert!(
        checksum.contains("packet_protection"),
        "the option reached the scenario"
    );
    cases.push(("gib_1gbps_40ms_checksum/1452".to_string(), checksum, 3));
    for n in [10, 100, 1000] {
        let reps = if n >= 1000 { 3 } else { 5 };
        cases.push((format!("dumbbell/{n}"), dumbbell(n), reps));
    }
    for n in [10, 100, 1000] {
        // N = 10 runs last ~50 ms, too short for a steady median from a few.
        let reps = match n {
            10 => 15,
            100 => 5,
            _ => 3,
        };
        let text = dumbbell_lossfree(n, 65_536);
        cases.push((format!("dumbbell_lossfree/{n}"), text, reps));
        let text = dumbbell_lossfree(n, FIXED_INFLIGHT / n);
        cases.push((format!("dumbbell_fixed_inflight/{n}"), text, reps));
    }
    for (name, text, default_reps) in cases.iter().filter(|c| selected(&c.0)) {
        match &scenario_out {
            Some(dir) => write_scenario(dir, name, text),
            None => bench(name, text, reps.unwrap_or(*default_reps), series),
        }
    }
    let name = "conns/10000";
    if selected(name) && scenario_out.is_none() {
        bench_memory(10_000);
    }
}
