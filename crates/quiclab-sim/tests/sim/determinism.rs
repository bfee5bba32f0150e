//! A run is a pure function of the scenario and its seed: the same lossy, jittery,
//! reordering scenario run twice gives equal results and byte-identical qlog, pcap and
//! key log files; another seed gives another loss pattern; and random streams are keyed
//! by component name, so adding a flow leaves another flow's randomness untouched.

use crate::common;
use crate::common::{files, run};

use common::TempDir;
use quiclab_sim::{RunResult, Scenario, Simulation};

/// Point-to-point, 20 ms RTT, 10 Mbit/s, 1% Bernoulli loss and 2 ms jitter with
/// reordering both ways; a 2 MB bulk flow and a request flow.
const LOSSY: &str = r#"
name = "determinism"
seed = 7

[stop]
time_s = 30.0
when_flows_done = true

[measure]
qlog = true
pcap = true
traces = true

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 10.0
delay_ms = 10.0
queue = { discipline = "drop_tail", packets = 100 }
impairments = { loss = { model = "bernoulli", p = 0.01 }, jitter = { max_ms = 2.0, reorder = true } }

[topology.return]
rate_mbps = 10.0
delay_ms = 10.0
queue = { discipline = "drop_tail", packets = 100 }
impairments = { loss = { model = "bernoulli", p = 0.01 }, jitter = { max_ms = 2.0, reorder = true } }

[[flows]]
name = "bulk"
workload = { kind = "bulk", bytes = 2000000 }

[[flows]]
name = "get"
start_s = 0.1
workload = { kind = "request", size = 50000, count = 3 }
"#;

fn json(r: &RunResult) -> String {
    serde_json::to_string_pretty(r).expect("results serialize")
}

#[test]
fn same_seed_same_bytes() {
    let (a, b) = (TempDir::new("det-a"), TempDir::new("det-b"));
    let ra = run(LOSSY, a.path());
    let rb = run(LOSSY, b.path());
    // The scenario exercises what it should: losses both ways, both flows done.
    for l in &ra.links {
        assert!(l.impairment_drops > 0, "{}: no losses", l.name);
    }
    for f in &ra.flows {
        assert!(f.ttlb_s.is_some() || f.goodput_bytes >= 2_000_000, "{f:?}");
    }
    assert_eq!(
        json(&ra),
        json(&rb),
        "results differ between identical runs"
    );

    let (fa, fb) = (files(a.path()), files(b.path()));
    let expected = [
        "pcap/forward.pcap",
        "pcap/return.pcap",
        "pcap/keys.log",
        "qlog/bulk_client.sqlog",
        "qlog/bulk_server.sqlog",
        "qlog/get_client.sqlog",
        "qlog/get_server.sqlog",
    ];
    for name in expected {
        let bytes = fa.get(name).unwrap_or_else(|| panic!("{name} not written"));
        assert!(!bytes.is_empty(), "{name} is empty");
    }
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "the runs wrote different files"
    );
    for (name, bytes) in &fa {
        assert!(bytes == &fb[name], "{name} differs between identical runs");
    }
    println!(
        "identical: {} events, {} files, drops {:?}",
        ra.events,
        fa.len(),
        ra.links
            .iter()
            .map(|l| l.impairment_drops)
            .collect::<Vec<_>>()
    );
}

#[test]
fn other_seed_other_losses() {
    let (a, b) = (TempDir::new("det-seed-a"), TempDir::new("det-seed-b"));
    let ra = run(LOSSY, a.path());
    let rb = run(&LOSSY.replace("seed = 7", "seed = 8"), b.path());
    let drops = |r: &RunResult| {
        r.links
            .iter()
            .map(|l| (l.delivered_packets, l.impairment_drops))
            .collect::<Vec<_>>()
    };
    assert_ne!(drops(&ra), drops(&rb), "the loss pattern ignores the seed");
    let (fa, fb) = (files(a.path()), files(b.path()));
    for name in [
        "qlog/bulk_client.sqlog",
        "pcap/forward.pcap",
        "pcap/keys.log",
    ] {
        assert!(
            fa[name] != fb[name],
            "{name} is the same under another seed"
        );
    }
}

/// Random streams are derived from the seed and a component's name, not drawn in
/// order from one shared generator: a flow listed *first* but starting after `get`
/// has finished leaves `get`'s run untouched, byte for byte (its connection IDs and TLS
/// randoms, and the link's loss and jitter draws for every datagram before the new flow
/// starts). Comparing whole links is not meaningful once the new flow's datagrams take
/// draws from the same link streams, so the check is on the flow that ran alone.
#[test]
fn adding_a_later_flow_leaves_an_earlier_one_alone() {
    let alone = LOSSY
        .replace("bytes = 2000000", "bytes = 300000")
        .replace("when_flows_done = true", "")
        .replace("time_s = 30.0", "time_s = 4.0");
    // Everything of `get` and `bulk` is over long before 3 s (checked below).
    let with_later = alone.replacen(
        "[[flows]]",
        "[[flows]]\nname = \"later\"\nstart_s = 3.0\n\
         workload = { kind = \"request\", size = 20000 }\n\n[[flows]]",
        1,
    );
    let (a, b) = (TempDir::new("det-alone"), TempDir::new("det-later"));
    let ra = run(&alone, a.path());
    let rb = run(&with_later, b.path());
    println!(
        "end: alone {} s, with the later flow {} s",
        ra.end_s, rb.end_s
    );
    let later = rb.flows.iter().find(|f| f.name == "later").expect("later");
    assert!(later.ttlb_s.is_some(), "the later flow ran: {later:?}");
    for name in ["get", "bulk"] {
        let fa = ra.flows.iter().find(|f| f.name == name).expect("flow");
        let fb = rb.flows.iter().find(|f| f.name == name).expect("flow");
        let done = fa.ttlb_s.map(|t| t + fa.start_s);
        assert!(
            name == "bulk" || done.is_some_and(|t| t < 2.5),
            "{name} finished before the later flow: {fa:?}"
        );
        assert_eq!(
            serde_json::to_string(fa).expect("json"),
            serde_json::to_string(fb).expect("json"),
            "{name}'s results changed"
        );
    }
    let (fa, fb) = (files(a.path()), files(b.path()));
    for name in [
        "qlog/get_client.sqlog",
        "qlog/get_server.sqlog",
        "qlog/bulk_client.sqlog",
        "qlog/bulk_server.sqlog",
    ] {
        assert!(fa[name] == fb[name], "{name} changed when a flow was added");
    }
}

/// A progress hook only observes: a run with one called on every event writes the same
/// results and files as a run without, and sees virtual time advance to the stop time.
#[test]
fn progress_hook_changes_nothing() {
    use quiclab_sim::Progress;
    use std::sync::{Arc, Mutex};
    let (a, b) = (TempDir::new("det-hook-a"), TempDir::new("det-hook-b"));
    let plain = run(LOSSY, a.path());
    let s = Scenario::parse(LOSSY, "inline").unwrap_or_else(|e| panic!("{e}"));
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let log = seen.clone();
    let mut sim = Simulation::new(s, "inline", Some(b.path())).unwrap_or_else(|e| panic!("{e}"));
    sim.set_progress_hook(1, Box::new(move |p| log.lock().expect("lock").push(p)));
    let hooked = sim.run().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json(&plain), json(&hooked), "the hook changed the results");
    assert_eq!(
        files(a.path()),
        files(b.path()),
        "the hook changed the files"
    );
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len() as u64, hooked.events, "one call per event");
    assert!(seen
        .windows(2)
        .all(|w| w[0].now <= w[1].now && w[0].events < w[1].events));
    assert!(seen.iter().all(|p| p.now <= p.stop));
}
