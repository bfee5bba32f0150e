//! A saturated sender on a high bandwidth-delay path reaches line rate in steady state.
//! Guards against two failures seen before: congestion avoidance stalling on large
//! windows, and a receiver's ACK stream starving its own MAX_DATA updates.

use quiclab_sim::{Scenario, Simulation};

#[test]
fn bulk_reaches_line_rate_on_a_1gbps_40ms_path() {
    let text = r#"
name = "line-rate"
seed = 3
[stop]
time_s = 5.0
[measure]
from_s = 2.0
to_s = 5.0
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 1000.0
delay_ms = 20.0
mtu = 1500
queue = { discipline = "drop_tail", packets = 5000 }
[topology.return]
rate_mbps = 1000.0
delay_ms = 20.0
mtu = 1500
[client]
max_udp_payload_size = 1472
flow = { initial_max_data = 67108864, initial_max_stream_data = 67108864, send_buffer = 67108864 }
[server]
max_udp_payload_size = 1472
flow = { initial_max_data = 67108864, initial_max_stream_data = 67108864 }
[[flows]]
name = "bulk"
workload = { kind = "bulk" }
"#;
    let s = Scenario::parse(text, "inline").unwrap();
    let r = Simulation::new(s, "inline", None).unwrap().run().unwrap();
    let wire = r.links[0].throughput_bps;
    println!(
        "forward wire {:.1} Mbit/s, goodput {:.1} Mbit/s",
        wire / 1e6,
        r.flows[0].goodput_bps / 1e6
    );
    assert!(wire > 0.99e9, "the link idles in steady state: {wire}");
    // Goodput: 1500-byte IP packets carry about 1430 bytes of stream data.
    assert!(
        r.flows[0].goodput_bps > 0.94e9,
        "goodput {}",
        r.flows[0].goodput_bps
    );
}
