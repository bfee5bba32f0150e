//! A TLS-over-TCP download must not stall once every byte has arrived. After a loss is
//! repaired a whole window becomes readable at once; rustls takes part of it and the
//! rest waits as ciphertext (`TlsLayer::pending_in`) until the application has read the
//! plaintext. The flow's read loop stopped when the waiting ciphertext did not shrink,
//! but the same pass had fed the old ciphertext and refilled the buffer from TCP, so it
//! stopped with ciphertext waiting and no packet left to come: with the seed below the
//! 1 MB response lacked its last 35 KB until the run ended (found by the quic-vs-tcp
//! country plan, South Korea-like path, repetition 18).

use crate::country_path;

use country_path::{country, run, set};

#[test]
fn tls_over_tcp_download_completes_after_a_repaired_window() {
    // The South Korea-like path of the plan (38 ms RTT, 1% loss on the download).
    let mut t = country(3_899_240_094_374_187_653, 19.0, 0.01, 63);
    // The TCP flows only (the QUIC ones start at 300 s).
    t["flows"].as_array_mut().expect("flows").truncate(2);
    set(&mut t, &["stop", "time_s"], toml::Value::Float(60.0));
    let r = run(&t, "stall.toml");
    let tcp = r
        .flows
        .iter()
        .find(|f| f.name == "tcp")
        .expect("the tcp flow");
    assert_eq!(tcp.incomplete, None, "{:?}", tcp.close);
    let ttlb = tcp.ttlb_s.expect("the GET completes");
    assert!(ttlb < 5.0, "ttlb {ttlb} s");
}
