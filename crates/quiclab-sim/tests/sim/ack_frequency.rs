//! The ack-frequency config keys reach the transport through scenario `[client]` /
//! `[server]` tables, and the frames they produce are counted per frame type.

use quiclab_sim::{Scenario, Simulation};

fn scenario(client: &str, server: &str) -> String {
    format!(
        r#"
name = "ack-frequency"
seed = 3

[stop]
time_s = 5.0

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 20.0
delay_ms = 5.0
impairments = {{ loss = {{ model = "periodic", p = 0.01 }} }}

[topology.return]
rate_mbps = 20.0
delay_ms = 5.0

[client]
{client}

[server]
{server}

[[flows]]
name = "bulk"
workload = {{ kind = "bulk", bytes = 1000000 }}
"#
    )
}

fn run(client: &str, server: &str) -> quiclab_sim::results::FlowResult {
    let text = scenario(client, server);
    let s = Scenario::parse(&text, "ack_frequency.toml").unwrap();
    let mut r = Simulation::new(s, "ack_frequency.toml", None)
        .unwrap()
        .run()
        .unwrap();
    r.flows.remove(0)
}

#[test]
fn ack_frequency_frames_are_counted_by_frame_type() {
    let f = run(
        "min_ack_delay_us = 1000\nack_frequency = { policy = { kind = \"fixed\", ratio = 10 }, immediate_ack_when_blocked = true }",
        "min_ack_delay_us = 1000\nack = { ack_eliciting_threshold = 2, schedule = { after_packets = 100, threshold = 10 } }",
    );
    assert_eq!(f.goodput_bytes, 1_000_000);
    assert!(f.client_ack_frequency_active);
    assert_eq!(f.client.frames_sent("ack_frequency").packets, 1);
    assert!(f.client.frames_sent("immediate_ack").packets > 0);
    // The receiver follows the 1:10 request.
    let ratio = f.server.ack_eliciting_per_ack().unwrap();
    assert!(ratio > 5.0, "1:{ratio:.1}");
}

#[test]
fn without_the_servers_min_ack_delay_nothing_is_sent() {
    let f = run(
        "min_ack_delay_us = 1000\nack_frequency = { policy = { kind = \"fixed\", ratio = 10 }, immediate_ack_when_blocked = true }",
        "ack = { ack_eliciting_threshold = 2 }",
    );
    assert_eq!(f.goodput_bytes, 1_000_000);
    assert!(!f.client_ack_frequency_active);
    assert_eq!(f.client.frames_sent("ack_frequency").packets, 0);
    assert_eq!(f.client.frames_sent("immediate_ack").packets, 0);
}
