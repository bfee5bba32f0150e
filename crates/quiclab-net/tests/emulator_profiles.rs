//! A link profile (issue 38: `trace = { profile = ... }`, crates/quiclab-link/src/profile/)
//! realised in the emulator, as the simulator realises it: a GEO-model profile with a
//! 40 ms round trip and 12 Mbit/s each way. Lone datagrams arrive after the profile's
//! one-way delay (20 ms, from its delay trace, not the scenario's `delay_ms`), and a
//! backlog drains at the profile's capacity (its Mahimahi delivery trace), both measured
//! with the real receiver's clock.

use quiclab_net::emulate::{self, Emulator, EmulatorConfig};
use quiclab_proto::Ecn;
use std::time::{Duration, Instant};

const PROFILE: &str = "model = \"geo\"\nrtt_ms = 40.0\ndown_mbps = 12.0\nup_mbps = 12.0\n";

fn socket() -> quiclab_net::Socket {
    quiclab_net::Socket::bind("127.0.0.1:0".parse().unwrap(), 4 << 20).unwrap()
}

#[test]
fn a_profile_sets_the_emulated_delay_and_rate() {
    let dir = std::env::temp_dir().join(format!("quiclab-net-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("geo-short.toml"), PROFILE).unwrap();
    let path = dir.join("profile.toml");
    // The scenario's own delay (5 ms) is what the profile's delay trace replaces.
    std::fs::write(
        &path,
        "name = \"profile\"\nseed = 3\n[stop]\ntime_s = 1.0\n[topology]\n\
        kind = \"point_to_point\"\n[topology.forward]\ndelay_ms = 5.0\n\
        queue = { discipline = \"drop_tail\", packets = 5000 }\n\
        trace = { profile = \"geo-short.toml\", seconds = 10 }\n\
        [topology.return]\ndelay_ms = 5.0\n",
    )
    .unwrap();
    let (scenario, duplex) = emulate::load(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let server = socket();
    let config = EmulatorConfig::new("127.0.0.1:0".parse().unwrap(), server.local_addr().unwrap());
    let mut emulator = Emulator::bind(scenario, duplex, &config).unwrap();
    let front = emulator.listen_addr().unwrap();
    const LONE: usize = 5;
    const N: usize = LONE + 600;
    let sink = std::thread::spawn(move || {
        let mut arrivals = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(4);
        // Room for a GRO batch: deliveries due together leave the relay as one GSO
        // send (emulate/batch.rs), and this socket has GRO on; each datagram of a
        // batch arrives at the batch's time.
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
        // Lone datagrams 30 ms apart first, once the emulator's loop runs (a datagram
        // sent before waits in the socket until the loop reads it), then the backlog.
        std::thread::sleep(Duration::from_millis(100));
        let mut lone = Vec::new();
        for _ in 0..LONE {
            lone.push(Instant::now());
            client.send(front, Ecn::NotEct, &[1; 100], 100).unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
        std::thread::sleep(Duration::from_millis(30));
        for i in 1..=N - LONE {
            client.send(front, Ecn::NotEct, &[1; 1472], 1472).unwrap();
            if i % 100 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        lone
    });
    emulator
        .run(Some(Duration::from_millis(1100)), &|| false)
        .unwrap();
    let lone_sent = client.join().unwrap();
    let arrivals = sink.join().unwrap();
    assert_eq!(arrivals.len(), N, "every datagram delivered");
    let one_way: Vec<f64> = (0..LONE)
        .map(|i| (arrivals[i] - lone_sent[i]).as_secs_f64() * 1e3)
        .collect();
    println!("emulated profile: lone datagrams after {one_way:.2?} ms");
    // The profile's 20 ms is a floor (the scenario's 5 ms would show below it); above
    // it, at most one 1 ms delivery opportunity and the relay's own latency (about
    // 1 ms here, more on a busy machine, so the least of five is judged).
    let least = one_way.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        one_way.iter().all(|&d| d >= 19.9),
        "one-way delays {one_way:?} ms"
    );
    assert!(least < 24.0, "one-way delays {one_way:?} ms");
    // 500 datagrams of 1500 wire bytes between the 51st and the 551st of the backlog.
    let span = arrivals[LONE + 550] - arrivals[LONE + 50];
    let bps = 500.0 * 1500.0 * 8.0 / span.as_secs_f64();
    println!("emulated profile: {:.3} Mbit/s", bps / 1e6);
    assert!((bps / 12e6 - 1.0).abs() < 0.05, "{bps}");
}
