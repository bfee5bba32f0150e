//! The interop runner's network conditions in the simulator (issue 38 item 4): datagram
//! corruption (`impairments.corrupt`) and blackholes (`impairments.blackhole`) on the
//! runner's link (10 Mbit/s, 15 ms each way, a 25-packet queue). A corrupted datagram
//! never crashes or stalls either side: the endpoint discards what fails
//! authentication (RFC 9001 §5.3) and the rest of the datagram's packets are processed
//! as usual (RFC 9000 §12.2); the transfer completes, and every byte arrives as sent
//! (the receiving application checks each byte of the stream against what the sender
//! wrote, `workload/app.rs`).

use quiclab_sim::{RunResult, Scenario, Simulation};

/// The runner's link; `IMPAIR` is replaced with each direction's impairments.
const BASE: &str = r#"
name = "netcond"
seed = SEED
[stop]
time_s = 60.0
when_flows_done = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 10.0
delay_ms = 15.0
queue = { discipline = "drop_tail", packets = 25 }
impairments = IMPAIR
[topology.return]
rate_mbps = 10.0
delay_ms = 15.0
queue = { discipline = "drop_tail", packets = 25 }
impairments = IMPAIR
"#;

fn run(impair: &str, flows: &str, seed: u64) -> RunResult {
    let text = BASE
        .replace("IMPAIR", impair)
        .replace("SEED", &seed.to_string())
        + flows;
    let s = Scenario::parse(&text, "netcond.toml").unwrap();
    Simulation::new(s, "netcond.toml", None)
        .unwrap()
        .run()
        .unwrap()
}

/// Every flow finished with all its bytes (no abort, no mismatch, no timeout).
fn assert_complete(r: &RunResult, what: &str) {
    for f in &r.flows {
        assert!(
            f.incomplete.is_none() && f.ttlb_s.is_some(),
            "{what}: flow {} incomplete: {:?} (close {:?})",
            f.name,
            f.incomplete,
            f.close
        );
    }
}

/// The runner's transfercorruption: 2 MB at 2 % corruption both ways (its model: one
/// byte among the first 51), several seeds.
#[test]
fn transfer_completes_byte_exact_under_corruption() {
    let impair = "{ corrupt = { p = 0.02, bytes = 1, within_bytes = 51 } }";
    let flow = "[[flows]]\nname = \"get\"\nworkload = { kind = \"request\", size = 2097152 }\n";
    let clean = run("{}", flow, 1);
    for seed in 1..=3 {
        let r = run(impair, flow, seed);
        assert_complete(&r, &format!("seed {seed}"));
        let corrupted: Vec<u64> = r.links.iter().map(|l| l.corrupted_packets).collect();
        // About 2 % of ~1,500 data and ~750 ACK datagrams.
        assert!(corrupted[0] > 2 && corrupted[1] > 10, "{corrupted:?}");
        assert!(r.flows[0].ttlb_s >= clean.flows[0].ttlb_s);
    }
    // Whole-datagram corruption (8 bytes anywhere) at 10 %.
    let r = run("{ corrupt = { p = 0.1, bytes = 8 } }", flow, 4);
    assert_complete(&r, "8 bytes at 10 %");
    assert!(r.links[1].corrupted_packets > 100);
}

/// The runner's handshakecorruption: 1 KB files, one connection each, at 30 %
/// corruption both ways (the runner runs 50; 12 here).
#[test]
fn handshakes_complete_under_heavy_corruption() {
    let impair = "{ corrupt = { p = 0.3, bytes = 1, within_bytes = 51 } }";
    let flows: String = (0..12)
        .map(|i| {
            format!(
                "[[flows]]\nname = \"c{i}\"\nstart_s = {}\nworkload = {{ kind = \"request\", size = 1024 }}\n",
                i as f64 * 0.5
            )
        })
        .collect();
    let r = run(impair, &flows, 7);
    assert_complete(&r, "30 % corruption");
    assert!(r.links.iter().all(|l| l.corrupted_packets > 5));
    // Corruption is deterministic: the same seed corrupts the same bytes.
    let again = run(impair, &flows, 7);
    let ttlbs = |r: &RunResult| r.flows.iter().map(|f| f.ttlb_s).collect::<Vec<_>>();
    assert_eq!(ttlbs(&r), ttlbs(&again));
}

/// The runner's blackhole: both directions drop everything for 2 s after 5 s of
/// traffic (`--on=5s --off=2s`); a 10 MB transfer (about 8.5 s at 10 Mbit/s) crosses
/// it and completes after it.
#[test]
fn transfer_completes_across_a_blackhole() {
    let flow = "[[flows]]\nname = \"get\"\nworkload = { kind = \"request\", size = 10485760 }\n";
    let clean = run("{}", flow, 2);
    let r = run("{ blackhole = [{ from_s = 5.0, to_s = 7.0 }] }", flow, 2);
    assert_complete(&r, "blackhole");
    let (t0, t) = (clean.flows[0].ttlb_s.unwrap(), r.flows[0].ttlb_s.unwrap());
    assert!(t0 > 7.0 && t > t0 + 2.0, "clean {t0} s, blackholed {t} s");
    assert!(r.links.iter().all(|l| l.impairment_drops > 0));
}
