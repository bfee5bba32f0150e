//! Prague (L4S, draft-briscoe-iccrg-prague-congestion-control-04) in the simulator: a
//! bulk upload with ECT(1) through a CoDel bottleneck that marks CE instead of
//! dropping fills the link without a single loss (every reduction is a CE response,
//! nothing retransmitted), and Prague without ECT(1) is a config error naming `ecn`.

use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

fn ecn_codel(ecn: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/experiments/ecn_codel.toml");
    std::fs::read_to_string(path)
        .unwrap()
        .replace("time_s = 30.0", "time_s = 6.0")
        .replace("from_s = 5.0", "from_s = 2.0")
        .replace(
            "queue = { discipline = \"codel\", packets = 1000 }",
            "queue = { discipline = \"codel\", packets = 1000, ecn = true }",
        )
        .replace(
            "congestion_control = { algorithm = \"cubic\" }",
            &format!("congestion_control = {{ algorithm = \"prague\" }}\necn = \"{ecn}\""),
        )
}

#[test]
fn prague_fills_a_marking_codel_bottleneck_without_loss() {
    let s = Scenario::parse(&ecn_codel("ect1"), "prague.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "prague.toml", None)
        .unwrap()
        .run()
        .unwrap();
    let f = &r.flows[0];
    let forward = &r.links[0];
    let marks = forward.ecn_marks.expect("the queue marks");
    assert!(marks > 10, "{marks} CE marks");
    assert_eq!(forward.queue_drops, 0);
    assert_eq!(f.client.packets_lost, 0, "CE responses retransmit nothing");
    // 20 Mbit/s: Prague keeps the link busy between its alpha/2 reductions.
    assert!(f.goodput_bps > 0.9 * 20e6 * 0.95, "{} bit/s", f.goodput_bps);
}

#[test]
fn prague_without_ect1_is_refused_naming_ecn() {
    let e = match Scenario::parse(&ecn_codel("ect0"), "prague.toml") {
        Err(e) => e.to_string(),
        Ok(s) => match Simulation::new(s, "prague.toml", None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted prague with ect0"),
        },
    };
    assert!(e.contains("ecn") && e.contains("ect1"), "{e}");
}
