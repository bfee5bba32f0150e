//! Coupled congestion control (RFC 6356 LIA, `multipath.coupled = "lia"`; OLIA, `"olia"`;
//! `src/cc/lia.rs`, `src/cc/olia.rs`, `src/connection/multipath_coupling.rs`) with the in-memory pair:
//! the client uploads over two equal paths (20 ms RTT each, no bottleneck), one
//! stream datagram dropped on each path early so that both leave slow start, then the
//! total congestion window's growth per RTT in congestion avoidance is measured and
//! compared with a single-path Reno flow's under the same drop.
//!
//! Expected from the formula (RFC 6356 §3), not from a run: a single Reno flow grows
//! one MSS per RTT; two uncoupled Reno paths two; LIA on two equal paths has alpha =
//! 1/2 and each path grows alpha * cwnd_i * MSS / cwnd_total = MSS/4 per RTT, so MSS/2
//! in total: no more than the single flow (§3's goal 2: the aggregate window at
//! equilibrium, where each path also halves only its own half, equals the single
//! flow's).

use crate::misbehaving::{connected_with, run_for, DELAY};
use crate::multipath::{config, second_address, two_paths_with};

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{CoupledCongestionControl, Dir, TransportConfig};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;

const MSS: f64 = 1200.0;

/// The client's config (multipath enabled) with `coupled`.
fn client(coupled: CoupledCongestionControl) -> TransportConfig {
    let mut c = config(Some(3));
    c.multipath.coupled = coupled;
    c
}

/// Drops the 60th stream datagram (over 300 bytes) the client sends from each address.
fn drop_one_per_path(p: &mut Pair) {
    let seen: Rc<RefCell<BTreeMap<SocketAddr, u32>>> = Rc::default();
    let addrs = [p.client_addr, second_address()];
    p.drop_filter = Some(Box::new(move |_, from, _, size| {
        if !addrs.contains(&from) || size <= 300 {
            return false;
        }
        let mut s = seen.borrow_mut();
        let n = s.entry(from).or_default();
        *n += 1;
        *n == 60
    }));
}

/// The client's (windows summed over `paths`, whether every path is in congestion
/// avoidance and out of recovery).
fn windows(p: &mut Pair, paths: &[u32]) -> (u64, bool) {
    let c = p.client_conn();
    let mut total = 0;
    let mut ca = true;
    for &id in paths {
        let cc = c.multipath_path_controller(id).expect("open path");
        total += cc.window();
        ca &= !cc.in_slow_start() && !cc.in_recovery();
    }
    (total, ca)
}

/// Uploads 8 MB and returns the total window's growth in MSS per RTT (20 ms) over the
/// longest stretch in which every path of `paths` stayed in congestion avoidance.
fn growth_per_rtt(mut p: Pair, paths: &[u32]) -> f64 {
    drop_one_per_path(&mut p);
    let data = vec![9u8; 8_000_000];
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let (mut written, mut got, mut sid) = (0, Vec::new(), None);
    let mut samples: Vec<(u64, u64)> = Vec::new(); // (round, window) while in CA
    for round in 0..4000u64 {
        if written < data.len() {
            written += p.client_conn().write(id, &data[written..]).unwrap_or(0);
            if written == data.len() {
                p.client_conn().finish(id).unwrap();
            }
        }
        run_for(&mut p, DELAY / 2);
        let (w, ca) = windows(&mut p, paths);
        if ca && written < data.len() {
            samples.push((round, w));
        } else if !samples.is_empty() && written < data.len() {
            panic!("left congestion avoidance at round {round}: {samples:?}");
        }
        let s = p.server_conn().unwrap();
        if sid.is_none() {
            sid = s.accept_stream(Dir::Uni);
        }
        if sid.is_some_and(|sid| drain_stream(s, sid, &mut got)) {
            break;
        }
    }
    assert_eq!(got.len(), data.len());
    let (first, last) = (samples[0], samples[samples.len() - 1]);
    let rtts = (last.0 - first.0) as f64 / 4.0; // 4 rounds of 5 ms per 20 ms RTT
    assert!(rtts >= 20.0, "only {rtts} RTTs in congestion avoidance");
    (last.1 - first.1) as f64 / MSS / rtts
}

#[test]
fn lia_grows_the_total_window_no_faster_than_one_reno_flow() {
    let single = growth_per_rtt(connected_with(config(Some(3)), config(Some(3)), 81), &[0]);
    let none = growth_per_rtt(
        two_paths_with(client(CoupledCongestionControl::None), config(Some(3)), 81),
        &[0, 1],
    );
    let lia = growth_per_rtt(
        two_paths_with(client(CoupledCongestionControl::Lia), config(Some(3)), 81),
        &[0, 1],
    );
    eprintln!("MSS per RTT in CA: single {single:.3}, uncoupled {none:.3}, lia {lia:.3}");
    // Reno: one MSS per RTT (within 20%: ACK clocking and the window's integer steps).
    assert!((0.8..=1.2).contains(&single), "single {single}");
    // Uncoupled: each path a Reno flow, 2x.
    assert!((1.6..=2.4).contains(&none), "uncoupled {none}");
    // LIA: alpha = 1/2 on equal paths, MSS/2 in total; never above the single flow.
    assert!((0.4..=0.6).contains(&lia), "lia {lia}");
    assert!(lia <= single, "lia {lia} > single {single}");
}

/// OLIA (`src/cc/olia.rs`) on the same two equal paths. Expected from the formula, not
/// from a run: per RTT path r acknowledges w_r bytes, so it grows by MSS times
/// (w_r² / (Σ w)² plus α_r); Σ α_r = 0 (α moves window between paths, never adds), so the total grows
/// MSS * (w_0² + w_1²) / (w_0 + w_1)², MSS/2 with equal windows (as LIA) and below MSS
/// (one Reno flow) while both paths have a window. (Measured before OLIA's set M counted
/// windows in packets: 0.29, because byte windows never tie; see `cc/olia.rs`.)
#[test]
fn olia_grows_the_total_window_as_lia_on_equal_paths() {
    let single = growth_per_rtt(connected_with(config(Some(3)), config(Some(3)), 81), &[0]);
    let olia = growth_per_rtt(
        two_paths_with(client(CoupledCongestionControl::Olia), config(Some(3)), 81),
        &[0, 1],
    );
    eprintln!("MSS per RTT in CA: single {single:.3}, olia {olia:.3}");
    assert!((0.4..=0.6).contains(&olia), "olia {olia}");
    assert!(olia <= single, "olia {olia} > single {single}");
}
