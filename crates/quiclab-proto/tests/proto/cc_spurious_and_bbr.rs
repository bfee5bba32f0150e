//! End to end in the pair harness: the connection's spurious loss detection driving
//! CUBIC's undo (RFC 9438 §4.9.2) on a reordering path, and BBRv3 moving a bulk transfer
//! byte-exact over a lossy, reordering path.

use crate::common;

use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{DetRng, Instant, TransportConfig};
use std::time::Duration;

fn config(cc: &str) -> TransportConfig {
    let c: TransportConfig = toml::from_str(&format!(
        "idle_timeout_ms = 600000\n[congestion_control]\n{cc}\n"
    ))
    .expect("config parses");
    c.validate().expect("config is valid");
    c
}

/// Uploads `len` seeded bytes from client to server; returns the pair when the server
/// has read them all (asserting they arrived intact) and the time it took.
fn upload(cc: &str, link: LinkConfig, len: usize) -> (Pair, Duration) {
    let mut pair = Pair::new(config(cc), config(cc), [link.clone(), link], 5);
    let mut data = vec![0u8; len];
    DetRng::new(99).fill(&mut data);
    let limit = Instant::from_millis(600_000);
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .unwrap();
    let start = pair.now;
    common::upload_uni(&mut pair, &data, limit);
    let took = pair.now - start;
    (pair, took)
}

#[test]
fn reordering_is_detected_as_spurious_and_cubic_undoes_its_reductions() {
    // No loss at all: 3% of datagrams are held back up to 30 ms behind later ones, so
    // packet-threshold loss detection fires on packets that arrive later.
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        reorder: 0.03,
        reorder_extra: Duration::from_millis(30),
        ..LinkConfig::default()
    };
    let (mut off, t_off) = upload("algorithm = \"cubic\"", link.clone(), 4_000_000);
    let (mut on, t_on) = upload(
        "algorithm = \"cubic\"\nspurious_undo = true",
        link,
        4_000_000,
    );
    let s_off = off.client_conn().stats().clone();
    let s_on = on.client_conn().stats().clone();
    println!(
        "undo off: {t_off:?}, {} congestion events, {} spurious; undo on: {t_on:?}, {} \
         congestion events, {} spurious",
        s_off.congestion_events,
        s_off.spurious_congestion_events,
        s_on.congestion_events,
        s_on.spurious_congestion_events
    );
    assert!(s_off.congestion_events > 0);
    // Every congestion episode here is spurious (nothing is ever dropped); episodes
    // whose detection came too late to count are not.
    assert!(s_off.spurious_congestion_events > 0);
    assert!(s_on.spurious_congestion_events > 0);
    // Undoing them finishes the transfer sooner.
    assert!(t_on < t_off, "{t_on:?} vs {t_off:?}");
}

#[test]
fn bbr_bulk_transfer_under_loss_and_reordering_is_byte_exact() {
    let link = LinkConfig {
        delay: Duration::from_millis(20),
        loss: 0.01,
        reorder: 0.01,
        reorder_extra: Duration::from_millis(10),
        ..LinkConfig::default()
    };
    let (mut pair, took) = upload("algorithm = \"bbr\"", link, 3_000_000);
    let client = pair.client_conn();
    assert_eq!(client.congestion_controller().name(), "bbr");
    assert!(client.stats().packets_lost > 0);
    let model = client
        .congestion_controller()
        .model()
        .expect("BBR has a model");
    let min_rtt = model.min_rtt.expect("min_rtt measured");
    // The path's propagation RTT is 40 ms (the harness has no serialisation delay).
    assert!(
        min_rtt >= Duration::from_millis(40) && min_rtt < Duration::from_millis(45),
        "{min_rtt:?}"
    );
    assert!(model.bandwidth.is_some_and(|b| b > 0));
    println!(
        "BBR: 3 MB in {took:?}, min_rtt {min_rtt:?}, bw {:?} B/s",
        model.bandwidth
    );
}
