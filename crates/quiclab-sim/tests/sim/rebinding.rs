//! Scripted NAT rebindings (`[[flows.rebinds]]`): the client's datagrams take a new
//! public port or address mid-transfer, which its endpoint never learns; the server
//! follows (RFC 9000 §9.3), validates the new address and challenges the old one
//! (§9.3.3), and the download completes.

use crate::common;

use common::TempDir;
use quiclab_sim::{RunResult, Scenario, Simulation};

/// A 2 MB download over 10 Mbit/s and 30 ms RTT (about 1.7 s), with `rebinds`.
fn run(name: &str, rebinds: &str) -> (RunResult, String) {
    let text = format!(
        r#"
name = "{name}"
seed = 3
[stop]
time_s = 20.0
when_flows_done = true
[measure]
qlog = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 10.0
delay_ms = 15.0
[topology.return]
rate_mbps = 10.0
delay_ms = 15.0
[[flows]]
name = "get"
workload = {{ kind = "request", size = 2000000 }}
{rebinds}
"#
    );
    let s = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
    let dir = TempDir::new(name);
    let r = Simulation::new(s, "inline", Some(dir.path()))
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let qlog = std::fs::read_to_string(dir.path().join("qlog/get_server.sqlog")).unwrap();
    (r, qlog)
}

fn count(qlog: &str, needle: &str) -> usize {
    qlog.matches(needle).count()
}

#[test]
fn the_server_follows_a_port_and_an_address_rebinding() {
    let (base, base_qlog) = run("rebind-none", "");
    let base_ttlb = base.flows[0].ttlb_s.expect("baseline completes");
    assert_eq!(count(&base_qlog, "migration_complete"), 0);
    let rebinds = r#"rebinds = [
  { at_s = 0.5, kind = "port" },
  { at_s = 1.0, kind = "addr", expire_old = true },
]"#;
    let (r, qlog) = run("rebind-two", rebinds);
    let f = &r.flows[0];
    let ttlb = f
        .ttlb_s
        .expect("the download completes across both rebindings");
    println!("ttlb {ttlb:.3} s (without rebinding {base_ttlb:.3} s)");
    // One migration per rebinding, each validated (§8.2), toward the new public
    // addresses: the scenario's rebinding n takes port 20000 + n or address 10.3.0.n+1
    // (the port it has).
    assert_eq!(count(&qlog, r#""new":"migration_started""#), 2);
    assert_eq!(count(&qlog, r#""new":"migration_complete""#), 2);
    assert!(qlog.contains(r#""tuple_remote":{"ip_v4":"10.0.0.1","port_v4":20000}"#));
    assert!(qlog.contains(r#""tuple_remote":{"ip_v4":"10.3.0.2","port_v4":20000}"#));
    // §9.3.3: the old path is challenged each time; the first answers (the old port's
    // mapping stays), the second never can (its mapping expired; the run ends before
    // its 3-PTO timeout).
    assert_eq!(count(&qlog, r#""new":"probing_started""#), 2);
    let answered = r#""new":"probing_successful","tuple_remote":{"ip_v4":"10.0.0.1","port_v4":"#;
    assert_eq!(count(&qlog, &format!("{answered}40000}}")), 1);
    assert_eq!(count(&qlog, &format!("{answered}20000}}")), 0);
    // The address change resets the congestion controller (§9.4): it costs time.
    assert!(ttlb > base_ttlb, "{ttlb} vs {base_ttlb}");
}

#[test]
fn rebindings_are_for_quic_flows_at_valid_times() {
    let base = r#"
name = "bad"
seed = 1
[stop]
time_s = 5.0
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 10.0
[topology.return]
delay_ms = 10.0
[[flows]]
name = "get"
workload = { kind = "request", size = 1000 }
"#;
    for (extra, key) in [
        (
            "transport = \"tcp\"\nrebinds = [{ at_s = 1.0, kind = \"port\" }]",
            "flows[0].rebinds",
        ),
        (
            "rebinds = [{ at_s = -1.0, kind = \"port\" }]",
            "flows[0].rebinds[0].at_s",
        ),
        ("rebinds = [{ at_s = 1.0, kind = \"ip\" }]", "kind"),
    ] {
        let err = Scenario::parse(&format!("{base}{extra}\n"), "bad.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted: {extra}"))
            .to_string();
        assert!(err.contains(key), "{err}");
    }
}
