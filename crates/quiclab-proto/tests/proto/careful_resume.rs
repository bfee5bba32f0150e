//! Careful Resume end to end over the in-memory pair: the jump of the Unvalidated
//! Phase leaves at the paced rate jump_cwnd / current RTT (draft-ietf-tsvwg-careful-resume
//! §4.3, §5.6), never in bursts larger than the pacer's (10 packets, RFC 9002 §7.7),
//! and the qlog phases follow Figure 1.

use crate::common;

use quiclab_proto::cc::{CarefulResumePhase as Phase, CarefulResumeUpdate};
use quiclab_proto::events::{Event, SharedSink, VecSink};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{Instant, TransportConfig};
use std::time::Duration;

const SAVED_CWND: u64 = 1_200_000;
const BURST_BYTES: u64 = 10 * 1252; // the pacer's bucket: 10 datagrams

fn config(cr: &str) -> TransportConfig {
    let text = format!(
        "idle_timeout_ms = 600000\n\
         [flow]\ninitial_max_data = 100000000\ninitial_max_stream_data = 100000000\n\
         send_buffer = 16000000\n\
         [careful_resume]\n{cr}"
    );
    let c: TransportConfig = toml::from_str(&text).unwrap();
    c.validate().unwrap();
    c
}

/// Uploads 3 MB with the client resuming; returns the client's datagrams (send time,
/// bytes) and its Careful Resume phase changes.
fn run(pacing: &str) -> (Vec<(Instant, u64)>, Vec<CarefulResumeUpdate>) {
    let cr = format!(
        "enabled = true\nsaved_cwnd_bytes = {SAVED_CWND}\nsaved_rtt_ms = 50.0\n\
         unvalidated_pacing = \"{pacing}\""
    );
    let link = LinkConfig::delay(Duration::from_millis(25));
    let mut pair = Pair::new(config(&cr), config(""), [link.clone(), link], 7);
    pair.capture = Some(Vec::new());
    let sink = SharedSink::new(VecSink::new());
    let now = pair.now;
    pair.client_conn()
        .set_event_sink(now, Box::new(sink.clone()));
    let limit = Instant::from_millis(600_000);
    let data = vec![7u8; 3_000_000];
    pair.run_until(limit, |p| p.client_conn().is_handshake_complete())
        .unwrap();
    common::upload_uni(&mut pair, &data, limit);
    let sent = pair
        .capture
        .take()
        .unwrap()
        .into_iter()
        .filter(|(_, to_server, _)| *to_server)
        .map(|(t, _, d)| (t, d.len() as u64))
        .collect();
    let updates = sink
        .lock()
        .take()
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::CarefulResumePhaseUpdated(u) => Some(*u),
            _ => None,
        })
        .collect();
    (sent, updates)
}

/// The datagrams sent while Unvalidated, and the jump's rate (bytes/s).
fn unvalidated(sent: &[(Instant, u64)], ups: &[CarefulResumeUpdate]) -> Vec<(Instant, u64)> {
    let start = ups.iter().find(|u| u.new == Phase::Unvalidated).unwrap().at;
    let end = ups
        .iter()
        .find(|u| u.old == Some(Phase::Unvalidated))
        .unwrap()
        .at;
    sent.iter()
        .filter(|(t, _)| *t > start && *t <= end)
        .copied()
        .collect()
}

/// The largest excess of any run of consecutive datagrams over what a token bucket
/// of `rate` bytes/s and `BURST_BYTES` allows.
fn worst_excess(sent: &[(Instant, u64)], rate: f64) -> f64 {
    let mut worst = f64::MIN;
    for i in 0..sent.len() {
        let mut bytes = 0.0;
        for j in i..sent.len() {
            bytes += sent[j].1 as f64;
            let dt = (sent[j].0.as_nanos() - sent[i].0.as_nanos()) as f64 / 1e9;
            worst = worst.max(bytes - (BURST_BYTES as f64 + rate * dt));
        }
    }
    worst
}

#[test]
fn jump_is_paced_at_jump_over_current_rtt() {
    let (sent, ups) = run("current_rtt");
    let phases: Vec<Phase> = ups.iter().map(|u| u.new).collect();
    assert_eq!(
        phases,
        [
            Phase::Reconnaissance,
            Phase::Unvalidated,
            Phase::Validating,
            Phase::Normal
        ],
        "{ups:#?}"
    );
    let jump = unvalidated(&sent, &ups);
    assert!(jump.len() > 200, "the jump sent {} datagrams", jump.len());
    // RTT 50 ms (plus the peer's ACK delay at most): rate = 600 KB / 50 ms.
    let rate = (SAVED_CWND / 2) as f64 / 0.050;
    let excess = worst_excess(&jump, rate);
    assert!(
        excess <= 0.0,
        "burst beyond the pacer's bucket: {excess} bytes"
    );
    let span = (jump.last().unwrap().0.as_nanos() - jump[0].0.as_nanos()) as f64 / 1e9;
    let bytes: u64 = jump.iter().map(|d| d.1).sum();
    let achieved = bytes as f64 / span;
    assert!(
        (achieved / rate - 1.0).abs() < 0.15,
        "paced at {achieved:.0} B/s, expected about {rate:.0}"
    );
}

#[test]
fn unpaced_jump_bursts() {
    let (sent, ups) = run("off");
    let jump = unvalidated(&sent, &ups);
    let rate = (SAVED_CWND / 2) as f64 / 0.050;
    assert!(
        worst_excess(&jump, rate) > 100_000.0,
        "without pacing the jump leaves as a line-rate burst"
    );
}
