//! The `datagram` workload (RFC 9221 DATAGRAM frames at a fixed rate): its counts add
//! up, a clean path delivers everything at the path's delay, a bulk flow's queue shows
//! in the delays, and bad settings name their key.

use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

const BASE: &str = r#"
name = "dgram"
seed = 1

[stop]
time_s = 3.0

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 10.0
delay_ms = 20.0
mtu = 1500

[topology.return]
rate_mbps = 10.0
delay_ms = 20.0
mtu = 1500

[[flows]]
name = "media"
workload = WORKLOAD
client = { max_datagram_frame_size = 65535 CLIENT }
server = { max_datagram_frame_size = SERVER }
"#;

fn scenario(workload: &str, client: &str, server: &str) -> String {
    BASE.replace("WORKLOAD", workload)
        .replace("CLIENT", client)
        .replace("SERVER", server)
}

const MEDIA: &str = r#"{ kind = "datagram", rate_pps = 100.0, size = 500, duration_s = 2.0 }"#;

fn run(text: &str) -> quiclab_sim::output::results::FlowResult {
    let s = Scenario::parse(text, "dgram.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "dgram.toml", None)
        .unwrap()
        .run()
        .unwrap();
    r.flows[0].clone()
}

#[test]
fn a_clean_path_delivers_every_datagram_at_the_path_delay() {
    let f = run(&scenario(MEDIA, "", "65535"));
    assert_eq!(f.workload, "datagram");
    let d = f.datagrams.expect("datagram results");
    assert_eq!((d.sent, d.frames_sent, d.delivered), (200, 200, 200));
    assert_eq!((d.lost, d.dropped_at_sender, d.refused), (0, 0, 0));
    // 20 ms propagation plus about 0.5 ms of serialization at 10 Mbit/s.
    let p50 = d.owd_p50_ms.unwrap();
    assert!((20.0..21.5).contains(&p50), "{p50}");
    assert!(d.owd_max_ms.unwrap() < 25.0, "{d:?}");
    assert_eq!(f.goodput_bytes, 200 * 500);
    assert_eq!(f.incomplete, None);
}

#[test]
fn a_tiny_send_queue_drops_at_the_sender_when_the_window_holds_datagrams_back() {
    // 2000 datagrams/s of 1100 bytes (17.6 Mbit/s) into 10 Mbit/s: the window holds
    // the excess back, and a queue of 4 drops the oldest (with the default queue of
    // 1024 nothing would be dropped in 2 s).
    let w = r#"{ kind = "datagram", rate_pps = 2000.0, size = 1100, duration_s = 2.0 }"#;
    let f = run(&scenario(
        w,
        ", datagram_send = { queue_datagrams = 4 }",
        "65535",
    ));
    let d = f.datagrams.unwrap();
    assert_eq!(d.sent, 4000);
    assert!(d.dropped_at_sender > 500, "{d:?}");
    assert_eq!(d.sent, d.frames_sent + d.dropped_at_sender, "{d:?}");
    assert_eq!(d.frames_sent, d.delivered + d.lost, "{d:?}");
    // About 9 Mbit/s of the link's 10 reach the server within the 3 s run.
    assert!(d.delivered > 2500, "{d:?}");
}

#[test]
fn the_example_scenario_shows_the_bulk_flows_queue_in_the_delays() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/datagram_media.toml");
    let s = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "datagram_media.toml", None)
        .unwrap()
        .run()
        .unwrap();
    let d = r.flows[0].datagrams.clone().unwrap();
    assert_eq!(d.sent, 2500);
    assert_eq!(d.sent, d.frames_sent + d.dropped_at_sender);
    assert_eq!(d.frames_sent, d.delivered + d.lost);
    // Alone the path takes ~21 ms; the upload's drop-tail queue adds up to 120 ms.
    assert!(d.owd_p90_ms.unwrap() > 100.0, "{d:?}");
    assert!(r.flows[1].datagrams.is_none());
}

fn error(text: &str) -> String {
    match Scenario::parse(text, "dgram.toml") {
        Err(e) => e.to_string(),
        Ok(s) => match Simulation::new(s, "dgram.toml", None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {text}"),
        },
    }
}

#[test]
fn bad_settings_name_their_key() {
    let cases = [
        (
            scenario(MEDIA, "", "0"),
            "flows[0].server.max_datagram_frame_size",
        ),
        (
            scenario(
                r#"{ kind = "datagram", rate_pps = 100.0, size = 8, duration_s = 1.0 }"#,
                "",
                "65535",
            ),
            "flows[0].workload.size",
        ),
        (
            scenario(
                r#"{ kind = "datagram", rate_pps = 0.0, size = 100, duration_s = 1.0 }"#,
                "",
                "65535",
            ),
            "flows[0].workload.rate_pps",
        ),
        (
            scenario(
                r#"{ kind = "datagram", rate_pps = 10.0, size = 100, duration_s = -1.0 }"#,
                "",
                "65535",
            ),
            "flows[0].workload.duration_s",
        ),
        (
            scenario(
                r#"{ kind = "datagram", rate_pps = 10.0, size = 100, duration_s = 1.0, fps = 3 }"#,
                "",
                "65535",
            ),
            "fps",
        ),
        (
            scenario(MEDIA, ", datagram_send = { queue_datagrams = 0 }", "65535"),
            "datagram_send.queue_datagrams",
        ),
        (
            scenario(MEDIA, "", "65535").replace("[[flows]]", "[[flows]]\ntransport = \"tcp\""),
            "flows[0].transport",
        ),
    ];
    for (text, key) in cases {
        let e = error(&text);
        assert!(e.contains(key), "{key}: {e}");
    }
}
