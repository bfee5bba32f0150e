//! Multipath on a client host with several interfaces (`sim/multipath.rs`,
//! draft-ietf-quic-multipath): both paths carry the download and its bytes add up;
//! multipath off leaves the flow on one path with no `paths` in its results; a backup
//! interface's path carries no stream data until the told client abandons Wi-Fi's path,
//! and then the rest of the download.

use quiclab_sim::{RunResult, Scenario, Simulation};

/// Two interfaces, `b` as given; a `size`-byte download; `extra` appended.
fn two_paths(b: &str, events: &str, multipath: bool, size: u64) -> String {
    format!(
        r#"
name = "mp"
seed = 1
[stop]
time_s = 30.0
when_flows_done = true
[topology]
kind = "point_to_point"
forward = {{ delay_ms = 5.0 }}
return = {{ delay_ms = 5.0 }}
[topology.client]
told = true
interfaces = [
  {{ name = "a", forward = {{ rate_mbps = 20.0, delay_ms = 10.0, queue = {{ discipline = "drop_tail", packets = 100 }} }}, return = {{ rate_mbps = 20.0, delay_ms = 10.0, queue = {{ discipline = "drop_tail", packets = 100 }} }} }},
  {{ name = "b", {b} forward = {{ rate_mbps = 10.0, delay_ms = 30.0, queue = {{ discipline = "drop_tail", packets = 100 }} }}, return = {{ rate_mbps = 10.0, delay_ms = 30.0, queue = {{ discipline = "drop_tail", packets = 100 }} }} }},
]
events = [{events}]
[client]
multipath = {{ enabled = {multipath} }}
[server]
multipath = {{ enabled = {multipath} }}
[[flows]]
name = "get"
workload = {{ kind = "request", size = {size} }}
"#
    )
}

fn run(text: &str) -> RunResult {
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn both_paths_carry_the_download() {
    let r = run(&two_paths("", "", true, 5_000_000));
    let f = &r.flows[0];
    assert!(f.ttlb_s.is_some(), "download completes");
    assert_eq!(f.paths.len(), 2, "{:?}", f.paths);
    assert_eq!((f.paths[0].path_id, f.paths[1].path_id), (0, 1));
    assert_eq!(f.paths[1].interface, "b");
    let rx: u64 = f.paths.iter().map(|p| p.bytes_rx).sum();
    assert!(rx > 5_000_000, "datagram bytes {rx} cover the download");
    // Each path's link (20 and 10 Mbit/s) carries a real share of it.
    assert!(f.paths[0].bytes_rx > 1_000_000, "{:?}", f.paths[0]);
    assert!(f.paths[1].bytes_rx > 1_000_000, "{:?}", f.paths[1]);
    // The client's recovery for path 1 has an RTT (its ACKs may come back on path 0,
    // §4.1, so it lies between the two paths' RTTs).
    let srtt = f.paths[1].srtt_s.unwrap_or(0.0);
    assert!((0.030..0.2).contains(&srtt), "path 1 srtt {srtt}");
    // Faster than the 20 Mbit/s path alone could carry it (2.0 s of payload).
    let single = run(&two_paths("", "", false, 5_000_000));
    assert!(single.flows[0].paths.is_empty());
    let (mp, sp) = (f.ttlb_s.unwrap(), single.flows[0].ttlb_s.unwrap());
    assert!(mp < sp * 0.85, "multipath {mp} s against one path {sp} s");
}

#[test]
fn backup_path_takes_over_when_told_down() {
    let events = r#"{ at_s = 1.0, kind = "down", interface = "a" }"#;
    let r = run(&two_paths("backup = true,", events, true, 5_000_000));
    let f = &r.flows[0];
    assert!(f.ttlb_s.is_some(), "download completes on the backup path");
    assert!(f.paths[1].backup && f.paths[0].abandoned, "{:?}", f.paths);
    // Before the down, the backup path carried acknowledgements and probes only.
    let e = &f.path_events[0];
    let resume = e.resume_s.unwrap();
    // One RTT of b (2 x 35 ms) plus a packet's serialization, and a little slack.
    assert!(resume < 0.075, "resumed {resume} s after the down");
    assert!(f.paths[1].bytes_rx > 2_000_000, "{:?}", f.paths[1]);
}

/// An upload's interface is its first hop: datagrams already past it when it goes
/// down still reach the server over the 5 ms core link, so the server's first delivery
/// after the down (`resume_s`) is one of theirs. Delivery that data on the new path
/// allowed (`new_path_resume_s`) is measured at the receiver, the server, from the
/// datagrams it gets from the client's backup interface: not before they cross b (35
/// ms one way). A download's old interface is its last hop: both measures agree.
#[test]
fn an_upload_resumes_on_the_new_path_at_the_server() {
    let events = r#"{ at_s = 1.0, kind = "down", interface = "a" }"#;
    let text = two_paths("backup = true,", events, true, 5_000_000);
    let upload = text.replace(
        r#"{ kind = "request", size = 5000000 }"#,
        r#"{ kind = "bulk", bytes = 5000000 }"#,
    );
    assert_ne!(upload, text);
    let r = run(&upload);
    let f = &r.flows[0];
    assert_eq!(
        (f.incomplete.as_deref(), f.goodput_bytes),
        (None, 5_000_000),
        "upload completes"
    );
    assert!(f.paths[1].bytes_tx > 2_000_000, "{:?}", f.paths[1]);
    let e = &f.path_events[0];
    let (resume, new) = (e.resume_s.unwrap(), e.new_path_resume_s.unwrap());
    assert!(resume < 0.005, "old-path datagrams in the core: {e:?}");
    assert!(new > 0.035, "b's one-way delay is a floor: {e:?}");
    let stall = e.new_path_stall_s.unwrap();
    assert!(stall > 0.030 && stall <= new, "{e:?}");
    let d = run(&text);
    let e = &d.flows[0].path_events[0];
    assert_eq!(e.new_path_resume_s, e.resume_s, "{e:?}");
    assert_eq!(e.new_path_stall_s, e.stall_s, "{e:?}");
}
