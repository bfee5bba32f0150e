//! CUBIC (RFC 9438) end to end: configuration from TOML, and a bulk transfer over a
//! lossy path in the pair harness.

use crate::common;

use quiclab_proto::cc::{CongestionControl, CubicConfig};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{DetRng, Instant, TransportConfig};
use std::time::Duration;

fn cubic_config() -> TransportConfig {
    let c: TransportConfig = toml::from_str(
        "idle_timeout_ms = 600000\n[congestion_control]\nalgorithm = \"cubic\"\nc = 0.4\n",
    )
    .expect("cubic config parses");
    c.validate().expect("cubic config is valid");
    c
}

#[test]
fn cubic_config_parses_from_toml_and_is_validated() {
    let c = cubic_config();
    assert_eq!(
        c.congestion_control,
        CongestionControl::Cubic(CubicConfig::default())
    );
    let c: TransportConfig = toml::from_str(
        "[congestion_control]\nalgorithm = \"cubic\"\nbeta = 0.8\nfast_convergence = false\n\
         initial_window_packets = 32\nminimum_window_packets = 4",
    )
    .unwrap();
    c.validate().unwrap();
    assert_eq!(
        c.congestion_control,
        CongestionControl::Cubic(CubicConfig {
            initial_window_packets: Some(32),
            minimum_window_packets: 4,
            c: 0.4,
            beta: 0.8,
            fast_convergence: false,
            ..CubicConfig::default()
        })
    );
    assert_eq!(c.congestion_control.build(1200).window(), 32 * 1200);
    // Unknown keys, including NewReno's, are errors.
    for bad in [
        "gamma = 1.0",
        "growth = \"exact\"",
        "loss_reduction_factor = 0.5",
    ] {
        let text = format!("[congestion_control]\nalgorithm = \"cubic\"\n{bad}");
        assert!(toml::from_str::<TransportConfig>(&text).is_err(), "{bad}");
    }
    // Out-of-range values name the key.
    for (bad, key) in [
        ("beta = 1.0", "congestion_control.beta"),
        ("beta = 0.0", "congestion_control.beta"),
        ("beta = nan", "congestion_control.beta"),
        ("c = 0.0", "congestion_control.c"),
        ("c = -0.4", "congestion_control.c"),
        ("c = inf", "congestion_control.c"),
        (
            "minimum_window_packets = 0",
            "congestion_control.minimum_window_packets",
        ),
    ] {
        let text = format!("[congestion_control]\nalgorithm = \"cubic\"\n{bad}");
        let c: TransportConfig = toml::from_str(&text).unwrap();
        assert_eq!(c.validate().unwrap_err().key, key, "{bad}");
    }
}

#[test]
fn bulk_transfer_with_cubic_under_random_loss_is_byte_exact() {
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        loss: 0.02,
        ..LinkConfig::default()
    };
    let mut pair = Pair::new(cubic_config(), cubic_config(), [link.clone(), link], 5);
    let mut data = vec![0u8; 3_000_000];
    DetRng::new(99).fill(&mut data);
    let limit = Instant::from_millis(600_000);
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .unwrap();
    assert_eq!(pair.client_conn().congestion_controller().name(), "cubic");
    common::upload_uni(&mut pair, &data, limit);
    let client = pair.client_conn();
    let cc = client.congestion_controller();
    assert_eq!(cc.name(), "cubic");
    // The loss reached the controller: it left slow start with a β reduction.
    assert!(client.stats().congestion_events > 0);
    assert!(cc.ssthresh() < u64::MAX);
}
