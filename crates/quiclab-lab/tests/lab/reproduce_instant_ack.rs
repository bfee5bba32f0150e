//! `reproduce instant-ack --quick` (seed 000, IMC '24 instant ACK): one report per plan,
//! and the study's findings hold in direction (not in exact value) at every quick point
//! with a certificate delay: IACK's first client PTO is shorter than WFC's; IACK
//! recovers sooner when the client's second flight is lost; WFC recovers sooner when
//! the rest of the server's first flight is lost.

use quiclab_lab::csv;
use quiclab_lab::present::reproduce::reproduce;
use quiclab_lab::RunOptions;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Mean of `metric` per point, keyed by the point's axis values except `iack`,
/// as (IACK, WFC) pairs.
fn pairs(summary: &Path, axes: &[&str], metric: &str) -> BTreeMap<String, (f64, f64)> {
    let t = csv::read(summary).unwrap_or_else(|e| panic!("{e}"));
    let mut out: BTreeMap<String, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for row in 0..t.rows.len() {
        let key: Vec<String> = axes
            .iter()
            .map(|a| format!("{a}={}", t.f64(row, a).unwrap().unwrap()))
            .collect();
        let v = t.f64(row, &format!("{metric}_mean")).unwrap();
        let v = v.unwrap_or_else(|| panic!("{}: no {metric} at {key:?}", summary.display()));
        let e = out.entry(key.join(" ")).or_default();
        if t.f64(row, "iack").unwrap() == Some(1.0) {
            e.0 = Some(v);
        } else {
            e.1 = Some(v);
        }
    }
    out.into_iter()
        .map(|(k, (i, w))| (k, (i.expect("IACK point"), w.expect("WFC point"))))
        .collect()
}

#[test]
fn instant_ack_quick_findings() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let out = std::env::temp_dir().join(format!("quiclab-reproduce-iack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let opts = RunOptions {
        jobs: 0,
        quick: true,
        progress: false,
    };
    reproduce(&root, "instant-ack", &out, &opts).unwrap_or_else(|e| panic!("{e}"));
    let dir = out.join("instant-ack");
    for plan in [
        "1-no-loss",
        "2-delay-sweep",
        "3-client-flight-lost",
        "4-server-flight-lost",
    ] {
        assert!(
            dir.join(plan).join("report.md").exists(),
            "{plan}: no report"
        );
    }
    let summary = |plan: &str| dir.join(plan).join("summary.csv");

    // (1) and (2): IACK's first PTO is 3 x RTT, WFC's 3 x (RTT + Δt): shorter at Δt = 50.
    let no_loss = &["rtt_ms", "delay_ms", "cert_bytes", "size"];
    for (k, (iack, wfc)) in pairs(&summary("1-no-loss"), no_loss, "first_pto_ms") {
        println!("no loss {k}: first PTO IACK {iack:.1} ms, WFC {wfc:.1} ms");
        if k.contains("delay_ms=50") {
            assert!(iack < wfc, "{k}: IACK {iack} ms >= WFC {wfc} ms");
        }
    }
    for (k, (iack, wfc)) in pairs(&summary("2-delay-sweep"), &["delay_ms"], "first_pto_ms") {
        println!("delay sweep {k}: first PTO IACK {iack:.1} ms, WFC {wfc:.1} ms");
        if !k.contains("delay_ms=0") {
            assert!(iack < wfc, "{k}: IACK {iack} ms >= WFC {wfc} ms");
        }
    }
    let lossy = &["rtt_ms", "delay_ms", "size"];
    // (3) The client's second flight lost: IACK's client PTO fires sooner.
    for (k, (iack, wfc)) in pairs(&summary("3-client-flight-lost"), lossy, "ttfb_s") {
        println!("client flight lost {k}: TTFB IACK {iack:.3} s, WFC {wfc:.3} s");
        if k.contains("delay_ms=50") {
            assert!(iack < wfc, "{k}: IACK {iack} s >= WFC {wfc} s");
        }
    }
    // (4) The rest of the server's first flight lost: the WFC server has an RTT sample.
    for (k, (iack, wfc)) in pairs(&summary("4-server-flight-lost"), lossy, "ttfb_s") {
        println!("server flight lost {k}: TTFB IACK {iack:.3} s, WFC {wfc:.3} s");
        assert!(wfc < iack, "{k}: WFC {wfc} s >= IACK {iack} s");
    }
    // The scripted drops hit what they are meant to.
    for (k, (iack, wfc)) in pairs(
        &summary("3-client-flight-lost"),
        lossy,
        "drops_client_to_server",
    ) {
        assert!(iack == 1.0 && wfc == 1.0, "{k}: {iack} {wfc} drops");
    }
    for (k, (iack, wfc)) in pairs(
        &summary("4-server-flight-lost"),
        lossy,
        "drops_server_to_client",
    ) {
        assert!(iack == 2.0 && wfc >= 1.0, "{k}: {iack} {wfc} drops");
    }
    let _ = std::fs::remove_dir_all(&out);
}
