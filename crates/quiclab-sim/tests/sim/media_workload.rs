//! The `media` workload (interactive media frames with a deadline): a clean link
//! delivers every frame at the path's delay plus serialization, a slow link makes
//! frames miss a tight deadline, and on a lossy link datagram mode loses frames while
//! stream mode delivers them all, late. Bad settings name their key.

use quiclab_sim::output::results::{FlowResult, MediaResult};
use quiclab_sim::{Scenario, Simulation};

const BASE: &str = r#"
name = "media"
seed = 1

[stop]
time_s = 4.0

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = RATE
delay_ms = 20.0
mtu = 1500
IMPAIR

[topology.return]
rate_mbps = 10.0
delay_ms = 20.0
mtu = 1500

[[flows]]
name = "call"
workload = WORKLOAD
client = { max_datagram_frame_size = 65535 }
server = { max_datagram_frame_size = 65535 }
"#;

fn scenario(rate: &str, impair: &str, workload: &str) -> String {
    BASE.replace("RATE", rate)
        .replace("IMPAIR", impair)
        .replace("WORKLOAD", workload)
}

fn run(text: &str) -> FlowResult {
    let s = Scenario::parse(text, "media.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "media.toml", None)
        .unwrap()
        .run()
        .unwrap();
    r.flows[0].clone()
}

fn media(f: &FlowResult) -> MediaResult {
    f.media.clone().expect("media results")
}

#[test]
fn a_clean_link_delivers_every_frame_at_the_path_delay_plus_serialization() {
    // 30 fps of 3000-byte frames (three DATAGRAM fragments each) for 2 s at 10 Mbit/s.
    let w = r#"{ kind = "media", fps = 30.0, frame_size = 3000, deadline_ms = 100.0, duration_s = 2.0 }"#;
    let f = run(&scenario("10.0", "", w));
    assert_eq!(f.workload, "media");
    let m = media(&f);
    assert_eq!(m.mode, "datagram");
    assert_eq!(
        (m.frames_sent, m.frames_delivered, m.frames_on_time),
        (60, 60, 60)
    );
    assert_eq!(m.deadline_misses, 0);
    assert_eq!((m.fragments_sent, m.fragments_refused), (180, 0));
    assert_eq!(m.received_fps, 30.0);
    // 20 ms propagation plus three ~1.2 kB packets at 10 Mbit/s (≈ 3 ms).
    let p50 = m.latency_p50_ms.unwrap();
    assert!((22.0..24.5).contains(&p50), "{p50}");
    assert!(m.latency_p99_ms.unwrap() < 26.0, "{m:?}");
    assert_eq!(f.incomplete, None);
}

#[test]
fn a_slow_link_makes_frames_miss_a_tight_deadline() {
    // 30 fps with an intra frame of 40 kB every 10 frames: each one takes 320 ms to
    // serialize at 1 Mbit/s, far past a 60 ms deadline.
    let w = r#"{ kind = "media", fps = 30.0, frame_size = { dist = "keyframe", bytes = 1500, key_bytes = 40000, every = 10 }, deadline_ms = 60.0, duration_s = 2.0 }"#;
    let f = run(&scenario("1.0", "", w));
    let m = media(&f);
    assert_eq!(m.frames_sent, 60);
    assert!(m.deadline_misses >= 6, "{m:?}");
    assert!(m.received_fps < 27.0, "{m:?}");
    assert!(m.latency_p99_ms.unwrap() > 60.0, "{m:?}");
    assert_eq!(m.deadline_misses, m.frames_sent - m.frames_on_time);
}

#[test]
fn on_a_lossy_link_datagrams_lose_frames_and_streams_deliver_them_late() {
    let impair = "impairments = { loss = { model = \"bernoulli\", p = 0.03 } }";
    let w = |mode: &str| {
        format!(
            r#"{{ kind = "media", fps = 30.0, frame_size = {{ dist = "uniform", min = 2000, max = 4000 }}, deadline_ms = 50.0, duration_s = 2.0, mode = "{mode}" }}"#
        )
    };
    let d = media(&run(&scenario("10.0", impair, &w("datagram"))));
    let s = media(&run(&scenario("10.0", impair, &w("stream"))));
    assert_eq!((d.frames_sent, s.frames_sent), (60, 60));
    // Datagram mode: a frame missing a fragment is lost (what arrives may still be
    // late: after a loss the window holds datagrams back at the sender).
    assert!(d.frames_delivered < 60, "{d:?}");
    assert!(d.deadline_misses >= 60 - d.frames_delivered);
    // Stream mode: every frame arrives (retransmitted), some after the deadline (a
    // loss costs at least a round trip of 40 ms on top of 20 ms).
    assert_eq!(s.mode, "stream");
    assert_eq!(s.frames_delivered, 60, "{s:?}");
    assert!(s.frames_on_time < 60, "{s:?}");
    assert!(s.latency_max_ms.unwrap() > 60.0, "{s:?}");
}

#[test]
fn the_sizes_are_seeded_and_bad_settings_name_their_key() {
    let w = r#"{ kind = "media", fps = 30.0, frame_size = { dist = "uniform", min = 500, max = 5000 }, deadline_ms = 100.0, duration_s = 1.0 }"#;
    let a = run(&scenario("10.0", "", w));
    let b = run(&scenario("10.0", "", w));
    assert_eq!(a.goodput_bytes, b.goodput_bytes, "same seed, same frames");
    for (bad, key) in [
        (
            r#"{ kind = "media", fps = 0.0, frame_size = 10, deadline_ms = 1.0, duration_s = 1.0 }"#,
            "flows[0].workload.fps",
        ),
        (
            r#"{ kind = "media", fps = 30.0, frame_size = 0, deadline_ms = 1.0, duration_s = 1.0 }"#,
            "flows[0].workload.frame_size",
        ),
        (
            r#"{ kind = "media", fps = 30.0, frame_size = { dist = "uniform", min = 9, max = 2 }, deadline_ms = 1.0, duration_s = 1.0 }"#,
            "flows[0].workload.frame_size",
        ),
        (
            r#"{ kind = "media", fps = 30.0, frame_size = { dist = "keyframe", bytes = 1, key_bytes = 2, every = 0 }, deadline_ms = 1.0, duration_s = 1.0 }"#,
            "flows[0].workload.frame_size.every",
        ),
        (
            r#"{ kind = "media", fps = 30.0, frame_size = 10, deadline_ms = -1.0, duration_s = 1.0 }"#,
            "flows[0].workload.deadline_ms",
        ),
    ] {
        let e = Scenario::parse(&scenario("10.0", "", bad), "media.toml").unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
    let no_dgram = scenario(
        "10.0",
        "",
        r#"{ kind = "media", fps = 30.0, frame_size = 10, deadline_ms = 1.0, duration_s = 1.0 }"#,
    )
    .replace("server = { max_datagram_frame_size = 65535 }", "");
    let e = Scenario::parse(&no_dgram, "media.toml").unwrap_err();
    assert!(
        e.to_string().contains("server.max_datagram_frame_size"),
        "{e}"
    );
}

#[test]
fn the_example_shows_the_bulk_queue_in_the_frames_latency_in_both_modes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/examples/media_interactive.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let d = media(&run(&text));
    let s = media(&run(
        &text.replace("mode = \"datagram\"", "mode = \"stream\"")
    ));
    assert_eq!((d.mode.as_str(), s.mode.as_str()), ("datagram", "stream"));
    assert_eq!((d.frames_sent, s.frames_sent), (300, 300));
    // The upload's drop-tail queue drops fragments (frames lost) and delays the rest
    // past the 150 ms deadline; streams deliver every frame, later still.
    assert!(
        d.frames_delivered < 300 && s.frames_delivered == 300,
        "{d:?} {s:?}"
    );
    assert!(d.deadline_misses > 0 && s.deadline_misses > 0);
    assert!(s.latency_p99_ms > d.latency_p99_ms, "{d:?} {s:?}");
    assert!(d.received_fps < 30.0);
}
