//! A page of 20 objects over HTTP/3 in the simulator: every response completes, and the
//! HTTP/3 qlog files hold frame events stamped with simulated time.

use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

#[test]
fn page_of_20_objects_over_h3_with_qlog() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/h3_page_load.toml");
    let s = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let out = std::env::temp_dir().join(format!("quiclab-h3-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let r = Simulation::new(s, "h3_page_load.toml", Some(&out))
        .unwrap()
        .run()
        .unwrap();
    let f = &r.flows[0];
    assert_eq!(f.workload, "page");
    assert!(
        f.close.is_none() || !f.close.as_deref().unwrap_or("").contains("abort"),
        "{:?}",
        f.close
    );
    // HTML + 20 objects of payload (and nothing lost to errors).
    assert!(
        f.goodput_bytes >= 30_000 + 20 * 15_000,
        "{}",
        f.goodput_bytes
    );
    let ttlb = f.ttlb_s.expect("the page finished");
    // No formula gives the whole time: at least the handshake, the HTML and the objects
    // (3 RTTs of 40 ms) and 330 KB at 20 Mbit/s (132 ms), plus the slow-start rounds of a
    // fresh connection. The simulator is deterministic, so this is a regression value
    // (recorded at commit c2a54c2): a change that moves it by more than 1% changes the
    // simulated protocol and says why in its commit, with the new value here.
    let expected = 0.351;
    assert!(
        (ttlb - expected).abs() <= 0.01 * expected,
        "page load {ttlb} s, regression value {expected} s +-1% (HTML + 20 objects of \
         15 KB over h3, 40 ms RTT, 20 Mbit/s)"
    );

    let client = std::fs::read_to_string(out.join("qlog/page_client_h3.sqlog")).unwrap();
    let server = std::fs::read_to_string(out.join("qlog/page_server_h3.sqlog")).unwrap();
    let heads = |log: &str, name: &str| {
        log.lines()
            .filter(|l| l.contains(name) && l.contains("\"frame_type\":\"headers\""))
            .count()
    };
    assert_eq!(heads(&client, "http:frame_created"), 21);
    assert_eq!(heads(&server, "http:frame_parsed"), 21);
    assert_eq!(heads(&server, "http:frame_created"), 21);
    // Times are simulated: the first request leaves after the handshake (>= 1 RTT of
    // 40 ms) and the last frame is before the page finished.
    let times: Vec<f64> = client
        .lines()
        .filter_map(|l| l.split("\"time\":").nth(1)?.split(',').next()?.parse().ok())
        .collect();
    assert!(times.len() > 40);
    assert!(times[0] >= 40.0, "first h3 event at {} ms", times[0]);
    let last_head = client
        .lines()
        .rev()
        .filter(|l| l.contains("http:frame_created"))
        .find_map(|l| {
            l.split("\"time\":")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .unwrap();
    assert!(
        last_head < ttlb * 1000.0,
        "last request at {last_head} ms, page done {ttlb} s"
    );
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    eprintln!("page of 20 objects over h3: {ttlb:.3} s");
    let _ = std::fs::remove_dir_all(&out);
}
