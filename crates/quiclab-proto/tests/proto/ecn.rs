//! ECN end to end in the pair harness (RFC 9000 §13.4, RFC 9002 §7.1): every packet
//! ECT-marked while validation holds, ACK_ECN counts, validation failing on bleached,
//! re-marked, all-CE and under-reported paths (then not-ECT, the transfer completing),
//! and a CE mark reducing the window once per round trip without retransmission.

use crate::common;

use quiclab_proto::cc::{CongestionControl, CubicConfig, NewRenoConfig, PragueConfig};
use quiclab_proto::events::{Event, FrameKind, SharedSink, VecSink};
use quiclab_proto::raw::{AckFrame, Frame, SpaceId};
use quiclab_proto::testing::{EcnImpairment, LinkConfig, Pair};
use quiclab_proto::{
    Ecn, EcnCounts, EcnFailure, EcnMode, EcnState, Instant, Side, TransportConfig,
};
use std::time::Duration;

const DATA: usize = SpaceId::Data as usize;

fn config(ecn: EcnMode) -> TransportConfig {
    TransportConfig {
        ecn,
        ..common::config()
    }
}

fn link(ecn: EcnImpairment) -> LinkConfig {
    LinkConfig {
        ecn,
        ..LinkConfig::delay(Duration::from_millis(20))
    }
}

fn pair(client: EcnMode, server: EcnMode, c2s: EcnImpairment) -> Pair {
    Pair::new(
        config(client),
        config(server),
        [link(c2s), link(EcnImpairment::None)],
        7,
    )
}

fn limit() -> Instant {
    Instant::from_millis(600_000)
}

fn handshake(p: &mut Pair) {
    p.run_until(limit(), |p| p.client_conn().is_handshake_complete())
        .expect("handshake");
}

/// Datagrams a link was offered with `ecn` set by their sender.
fn offered(p: &Pair, link: usize, ecn: Ecn) -> u64 {
    p.link_stats[link].ecn_sent[usize::from(ecn.bits())]
}

fn upload(p: &mut Pair, len: usize) {
    handshake(p);
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    common::upload_uni(p, &data, limit());
}

/// Lets everything in flight arrive and be acknowledged.
fn settle(p: &mut Pair) {
    let until = p.now + Duration::from_secs(2);
    while p.next_event_time().is_some_and(|t| t <= until) {
        p.step();
    }
}

#[test]
fn honest_path_stays_capable_with_every_packet_ect_and_counts_that_match() {
    let mut p = pair(EcnMode::Ect0, EcnMode::Ect0, EcnImpairment::None);
    let body = common::fetch(&mut p, 300_000).expect("fetch");
    assert_eq!(body.len(), 300_000);
    settle(&mut p);
    for link in [0, 1] {
        let sent = p.link_stats[link].sent;
        assert!(sent > 10);
        assert_eq!(
            offered(&p, link, Ecn::Ect0),
            sent,
            "link {link}: every datagram ECT(0)"
        );
    }
    let client = p.client_conn().ecn();
    let server_stats = p.server_conn().unwrap().stats().clone();
    let server = p.server_conn().unwrap().ecn();
    for (side, e) in [("client", client), ("server", server)] {
        assert_eq!(e.state, Some(EcnState::Capable), "{side}");
        assert_eq!((e.failure, e.sending), (None, Ecn::Ect0), "{side}");
        assert_eq!(e.ce_signals, 0, "{side}");
    }
    // What the client counted is what the server sent in 1-RTT packets (no loss, no
    // duplicates); the server's last validated report never exceeds it.
    let received = client.received[DATA];
    assert_eq!(received.ect0, server_stats.packets_sent[DATA]);
    assert_eq!(server.sent_ect0[DATA], server_stats.packets_sent[DATA]);
    assert_eq!((received.ect1, received.ce), (0, 0));
    let reported = server.peer_reported[DATA];
    assert!(
        reported.ect0 > 0 && reported.ect0 <= received.ect0,
        "{reported:?}"
    );
}

#[test]
fn ecn_off_sends_not_ect_and_never_ack_ecn() {
    let mut p = pair(EcnMode::Off, EcnMode::Off, EcnImpairment::None);
    let sink = SharedSink::new(VecSink::new());
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    common::fetch(&mut p, 100_000).expect("fetch");
    for link in [0, 1] {
        assert_eq!(offered(&p, link, Ecn::NotEct), p.link_stats[link].sent);
    }
    assert_eq!(p.client_conn().ecn().state, None);
    assert_eq!(p.client_conn().ecn().received, [EcnCounts::default(); 3]);
    let events = sink.lock().take();
    let (acks, with_ecn) = ack_frames(&events);
    assert!(
        acks > 10 && with_ecn == 0,
        "{acks} ACKs, {with_ecn} with ECN"
    );
    assert!(!events.iter().any(|(_, e)| matches!(
        e,
        Event::EcnStateUpdated { .. } | Event::DatagramReceived { .. }
    )));
}

/// (ACK frames in sent and received packets, those with ECN counts).
fn ack_frames(events: &[(Instant, Event)]) -> (usize, usize) {
    let mut n = (0, 0);
    for (_, e) in events {
        let frames = match e {
            Event::PacketSent { frames, .. } | Event::PacketReceived { frames, .. } => frames,
            _ => continue,
        };
        for f in frames {
            if let FrameKind::Ack { ecn, .. } = &f.kind {
                n.0 += 1;
                n.1 += usize::from(ecn.is_some());
            }
        }
    }
    n
}

#[test]
fn a_receiver_without_ecn_still_reports_counts_and_acks_carry_them() {
    // RFC 9000 §13.4.1: feedback even when not sending ECT.
    let mut p = pair(EcnMode::Ect0, EcnMode::Off, EcnImpairment::None);
    let sink = SharedSink::new(VecSink::new());
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    upload(&mut p, 200_000);
    assert_eq!(p.client_conn().ecn().state, Some(EcnState::Capable));
    assert_eq!(offered(&p, 1, Ecn::NotEct), p.link_stats[1].sent);
    let events = sink.lock().take();
    let (acks, with_ecn) = ack_frames(&events);
    assert!(with_ecn > 10, "{acks} ACKs, {with_ecn} with ECN");
    let states: Vec<_> = events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::EcnStateUpdated { old, new } => Some((*old, *new)),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        [
            (None, EcnState::Testing),
            (Some(EcnState::Testing), EcnState::Unknown),
            (Some(EcnState::Unknown), EcnState::Capable)
        ]
    );
    // The client's received datagrams are logged with their codepoint (not-ECT here).
    assert!(events.iter().any(|(_, e)| matches!(
        e,
        Event::DatagramReceived {
            ecn: Ecn::NotEct,
            ..
        }
    )));
}

/// Runs an upload over a client->server path that does `impairment`; the client's
/// validation must fail with `why`, after which it sends only not-ECT and the upload
/// completes.
fn fails_then_completes(impairment: EcnImpairment, why: EcnFailure) {
    let mut p = pair(EcnMode::Ect0, EcnMode::Ect0, impairment);
    // The testing period's packets settle once data flows (ACK-only packets are
    // acknowledged only in ACKs of ack-eliciting ones).
    upload(&mut p, 100_000);
    assert_eq!(p.client_conn().ecn().failure, Some(why));
    let marked = offered(&p, 0, Ecn::Ect0);
    assert!(marked <= 20, "{marked} ECT(0) datagrams before the failure");
    upload(&mut p, 300_000);
    let e = p.client_conn().ecn();
    assert_eq!((e.state, e.sending), (Some(EcnState::Failed), Ecn::NotEct));
    assert_eq!(
        offered(&p, 0, Ecn::Ect0),
        marked,
        "not-ECT after the failure"
    );
    assert!(offered(&p, 0, Ecn::NotEct) > 100);
    // The server's path was honest.
    assert_eq!(
        p.server_conn().unwrap().ecn().state,
        Some(EcnState::Capable)
    );
}

#[test]
fn bleaching_fails_validation() {
    fails_then_completes(EcnImpairment::Bleach, EcnFailure::MissingCounts);
}

#[test]
fn re_marking_fails_validation() {
    fails_then_completes(EcnImpairment::RemarkEct1, EcnFailure::Remarked);
}

#[test]
fn an_all_ce_path_fails_validation() {
    fails_then_completes(EcnImpairment::MarkAllCe, EcnFailure::TestingLostOrCe);
}

#[test]
fn an_under_reporting_peer_fails_validation() {
    let mut p = pair(EcnMode::Ect0, EcnMode::Ect0, EcnImpairment::None);
    upload(&mut p, 50_000);
    settle(&mut p);
    assert_eq!(p.client_conn().ecn().state, Some(EcnState::Capable));
    // The client sends more 1-RTT packets; before they arrive, the server
    // acknowledges them all with the counts it reported before: no increase.
    let id = p
        .client_conn()
        .open_stream(quiclab_proto::Dir::Uni)
        .unwrap();
    p.client_conn().write(id, &[7; 5000]).unwrap();
    p.flush();
    let largest = p.client_conn().stats().packets_sent[DATA] - 1;
    let old = p.server_conn().unwrap().ecn().received[DATA];
    let ack = Frame::Ack(AckFrame {
        ack_delay: 0,
        ranges: vec![0..=largest],
        ecn: Some(old),
    });
    let mut frames = Vec::new();
    ack.encode(&mut frames);
    assert!(p.send_crafted(Side::Server, SpaceId::Data, &frames));
    p.run_until(limit(), |p| {
        p.client_conn().ecn().state == Some(EcnState::Failed)
    })
    .expect("validation fails");
    assert_eq!(
        p.client_conn().ecn().failure,
        Some(EcnFailure::UnderReported)
    );
    assert!(!p.client_conn().is_closed());
}

/// Uploads 2 MB with `cc` over a 20 ms path whose client->server link marks CE on the
/// datagrams at `marks`; returns (window reductions seen, client statistics' lost
/// packets, CE signals).
fn ce_reductions(cc: CongestionControl, marks: Vec<u64>) -> (usize, u64, u64) {
    let run = ce_run(cc, EcnMode::Ect0, marks);
    (run.reductions, run.lost, run.signals)
}

/// What [`ce_run`] saw.
struct CeRun {
    reductions: usize,
    lost: u64,
    signals: u64,
    /// Datagrams the client offered its link with ECT(1) and with not-ECT.
    ect1: u64,
    not_ect: u64,
    /// The client's window before the first reduction and after the last.
    first_window: u64,
    windows: Vec<u64>,
    /// The client's `metrics_updated` alpha and CE fraction (millionths), in order.
    alphas: Vec<(Option<u32>, Option<u32>)>,
}

/// [`ce_reductions`] with the codepoint `ecn`, reporting more.
fn ce_run(cc: CongestionControl, ecn: EcnMode, marks: Vec<u64>) -> CeRun {
    let cfg = TransportConfig {
        congestion_control: cc,
        ..config(ecn)
    };
    let mut p = Pair::new(
        cfg.clone(),
        cfg,
        [link(EcnImpairment::CeOn(marks)), link(EcnImpairment::None)],
        3,
    );
    handshake(&mut p);
    let sink = SharedSink::new(VecSink::new());
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    let data: Vec<u8> = (0..2_000_000).map(|i| (i % 251) as u8).collect();
    let id = p
        .client_conn()
        .open_stream(quiclab_proto::Dir::Uni)
        .unwrap();
    let (mut sent, mut got, mut sid) = (0, 0usize, None);
    let mut last = p.client_conn().congestion_window();
    let mut reductions = 0;
    let mut windows = Vec::new();
    let first_window = last;
    let mut buf = vec![0u8; 65_536];
    while got < data.len() {
        assert!(p.now < limit(), "stuck");
        let c = p.client_conn();
        while sent < data.len() {
            match c.write(id, &data[sent..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => sent += n,
            }
        }
        let cwnd = c.congestion_window();
        if cwnd < last {
            reductions += 1;
            windows.push(last);
            windows.push(cwnd);
        }
        last = cwnd;
        if let Some(s) = p.server_conn() {
            sid = sid.or_else(|| s.accept_stream(quiclab_proto::Dir::Uni));
            if let Some(sid) = sid {
                while let Ok(r) = s.read(sid, &mut buf) {
                    if r.bytes == 0 {
                        break;
                    }
                    got += r.bytes;
                }
            }
        }
        p.step();
    }
    let (ect1, not_ect) = (offered(&p, 0, Ecn::Ect1), offered(&p, 0, Ecn::NotEct));
    let alphas = sink
        .lock()
        .take()
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::MetricsUpdated(m) => Some((m.ecn_alpha_ppm, m.ce_fraction_ppm)),
            _ => None,
        })
        .collect();
    let c = p.client_conn();
    CeRun {
        reductions,
        lost: c.stats().packets_lost,
        signals: c.ecn().ce_signals,
        ect1,
        not_ect,
        first_window,
        windows,
        alphas,
    }
}

#[test]
fn a_ce_burst_reduces_newreno_and_cubic_once_without_retransmission() {
    for cc in [
        CongestionControl::NewReno(NewRenoConfig::default()),
        CongestionControl::Cubic(CubicConfig::default()),
    ] {
        let name = format!("{cc:?}");
        // Consecutive datagrams, well within one round trip.
        let (reductions, lost, signals) = ce_reductions(cc.clone(), (60..66).collect());
        assert_eq!(lost, 0, "{name}");
        // Several ACKs report the burst's CE marks: one reduction all the same.
        assert!(signals >= 2, "{name}: {signals} CE signals");
        assert_eq!(reductions, 1, "{name}: one reduction per round trip");
        // Two bursts many round trips apart: two reductions.
        let (reductions, lost, _) = ce_reductions(cc, vec![60, 61, 600, 601]);
        assert_eq!((reductions, lost), (2, 0), "{name}");
    }
}

#[test]
fn prague_marks_ect1_and_reduces_on_ce_without_retransmission() {
    let prague = CongestionControl::Prague(PragueConfig::default());
    let run = ce_run(prague.clone(), EcnMode::Ect1, (60..66).collect());
    // RFC 9331 §4: every datagram carries the L4S identifier.
    assert_eq!(run.not_ect, 0);
    assert!(run.ect1 > 1000, "{} ECT(1) datagrams", run.ect1);
    assert_eq!(run.lost, 0, "nothing lost, nothing retransmitted");
    assert!(run.signals >= 2, "{} CE signals", run.signals);
    // The burst lies within one round trip: one reduction, by alpha/2 (alpha starts
    // at 1 and decays by 15/16 per round without marks, so it is between 1/2 and 1
    // this early: the window keeps between half and three quarters).
    assert_eq!(run.reductions, 1, "windows {:?}", run.windows);
    let (before, after) = (run.windows[0] as f64, run.windows[1] as f64);
    assert!(
        (0.5 * before..=0.75 * before + 1.0).contains(&after),
        "{before} -> {after}"
    );
    assert!(
        before > run.first_window as f64,
        "it reduced from slow start"
    );
    // qlog metrics_updated carries alpha on every update: it falls from 1 while no
    // marks arrive, and the burst's round shows a CE fraction above 0.
    assert!(run.alphas.iter().all(|(a, _)| a.is_some()));
    // (The handshake's ACKs may have ended a round: 15/16 of 1.)
    assert!(run.alphas[0].0 >= Some(937_500), "{:?}", run.alphas[0]);
    assert!(run.alphas.iter().any(|(_, f)| f.is_some_and(|f| f > 0)));
    let last = run.alphas.last().unwrap().0.unwrap();
    assert!(last < 500_000, "alpha decays to {last} ppm after the burst");
    // Classic controllers log no alpha.
    let cubic = ce_run(
        CongestionControl::Cubic(CubicConfig::default()),
        EcnMode::Ect0,
        vec![60],
    );
    assert!(cubic.alphas.iter().all(|(a, f)| a.is_none() && f.is_none()));
    // Prague is refused without ECT(1).
    let cfg = TransportConfig {
        congestion_control: prague,
        ..config(EcnMode::Ect0)
    };
    assert_eq!(cfg.validate().unwrap_err().key, "ecn");
}
