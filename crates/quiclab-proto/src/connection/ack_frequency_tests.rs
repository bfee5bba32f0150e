//! Tests of the ack-frequency sender policies, IMMEDIATE_ACK when cwnd-blocked, the
//! receiver schedule and negotiation. In-crate so they can look at connection state.

use super::*;
use crate::config::{AckFrequencyConfig, AckSchedule, TransportConfig};
use crate::connection::SpaceId;
use crate::error::TransportErrorCode;
use crate::events::FrameKind;
use crate::events::{Event, SharedSink, VecSink};
use crate::streams::StreamError;
use crate::testing::{LinkConfig, Pair};
use crate::wire::{ConnectionId, Dir, StreamId};

const MS: fn(u64) -> Duration = Duration::from_millis;

/// A config offering the extension (min_ack_delay 1 ms) or not.
fn cfg(min_ack_delay_us: Option<u64>) -> TransportConfig {
    TransportConfig {
        min_ack_delay_us,
        ..TransportConfig::default()
    }
}

fn sender(policy: AckFrequencyPolicy) -> TransportConfig {
    TransportConfig {
        ack_frequency: AckFrequencyConfig {
            policy,
            ..AckFrequencyConfig::default()
        },
        ..cfg(Some(1000))
    }
}

/// A pair over `delay` each way whose client events are collected.
fn pair(
    client: TransportConfig,
    server: TransportConfig,
    delay: Duration,
    loss: f64,
) -> (Pair, SharedSink<VecSink>) {
    let link = LinkConfig {
        loss,
        ..LinkConfig::delay(delay)
    };
    let mut p = Pair::new(client, server, [link.clone(), link], 7);
    let sink = SharedSink::new(VecSink::new());
    p.client_conn()
        .set_event_sink(Instant::ZERO, Box::new(sink.clone()));
    (p, sink)
}

/// A client-to-server bulk transfer on one unidirectional stream.
#[derive(Default)]
struct Bulk {
    total: usize,
    sent: usize,
    tx: Option<StreamId>,
    rx: Option<StreamId>,
    received: usize,
    fin: bool,
}

impl Bulk {
    fn new(total: usize) -> Self {
        Bulk {
            total,
            ..Bulk::default()
        }
    }

    fn drive(&mut self, p: &mut Pair) -> bool {
        let chunk = [0x5a; 16 * 1024];
        let c = p.client_conn();
        if self.tx.is_none() && c.is_handshake_complete() {
            self.tx = c.open_stream(Dir::Uni);
        }
        if let Some(id) = self.tx {
            while self.sent < self.total {
                let n = chunk.len().min(self.total - self.sent);
                match c.write(id, &chunk[..n]) {
                    Ok(0) | Err(StreamError::Blocked) => break,
                    Ok(w) => self.sent += w,
                    Err(e) => panic!("write: {e}"),
                }
            }
            if self.sent == self.total {
                c.finish(id).expect("finish");
                self.sent = usize::MAX;
            }
        }
        if let Some(s) = p.server_conn() {
            if self.rx.is_none() {
                self.rx = s.accept_stream(Dir::Uni);
            }
            if let Some(id) = self.rx {
                let mut buf = [0u8; 16 * 1024];
                while let Ok(r) = s.read(id, &mut buf) {
                    self.received += r.bytes;
                    self.fin |= r.fin;
                    if r.bytes == 0 || r.fin {
                        break;
                    }
                }
            }
        }
        self.fin
    }
}

fn run_bulk(p: &mut Pair, total: usize) -> Bulk {
    let mut b = Bulk::new(total);
    p.run_until(Instant::from_millis(60_000), |p| b.drive(p))
        .expect("transfer completes");
    assert_eq!(b.received, total);
    b
}

/// (time, frames) of every 1-RTT packet the client sent.
fn one_rtt_sent(sink: &SharedSink<VecSink>) -> Vec<(Instant, Vec<FrameKind>)> {
    sink.lock()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::PacketSent { header, frames, .. }
                if header.ty == crate::wire::PacketType::OneRtt =>
            {
                Some((*t, frames.iter().map(|f| f.kind.clone()).collect()))
            }
            _ => None,
        })
        .collect()
}

fn ack_frequency_frames(sink: &SharedSink<VecSink>) -> Vec<(Instant, AckFrequencyFrame)> {
    one_rtt_sent(sink)
        .into_iter()
        .flat_map(|(t, fs)| {
            fs.into_iter().filter_map(move |f| match f {
                FrameKind::AckFrequency(a) => Some((t, a)),
                _ => None,
            })
        })
        .collect()
}

fn has_immediate_ack(frames: &[FrameKind]) -> bool {
    frames.iter().any(|f| matches!(f, FrameKind::ImmediateAck))
}

#[test]
fn schedule_switches_threshold_after_packets_and_ack_frequency_overrides() {
    let mut server = cfg(Some(1000));
    server.ack.schedule = Some(AckSchedule {
        after_packets: 20,
        threshold: 10,
    });
    let (mut p, _) = pair(cfg(Some(1000)), server, MS(10), 0.0);
    p.run_until(Instant::from_millis(1000), |p| {
        p.server_conn().is_some_and(|s| s.is_handshake_complete())
    })
    .unwrap();
    let s = p.server_conn().unwrap();
    let base = s.ack_frequency.data_eliciting_received;
    // Packets 1..=20 go by the configured threshold, the 21st and later by 10.
    s.ack_frequency.data_eliciting_received = 19;
    assert_eq!(s.receive_ack_policy().ack_eliciting_threshold, 2);
    s.ack_frequency.data_eliciting_received = 20;
    assert_eq!(s.receive_ack_policy().ack_eliciting_threshold, 10);
    s.ack_frequency.data_eliciting_received = base;
    s.on_ack_frequency(&AckFrequencyFrame {
        sequence: 0,
        ack_eliciting_threshold: 3,
        request_max_ack_delay: 40_000,
        reordering_threshold: 0,
    })
    .unwrap();
    for n in [0, 19, 20, 1000] {
        s.ack_frequency.data_eliciting_received = n;
        let policy = s.receive_ack_policy();
        assert_eq!(policy.ack_eliciting_threshold, 4, "ACK_FREQUENCY wins");
        assert_eq!(policy.max_ack_delay, MS(40));
        assert_eq!(policy.reordering_threshold, 0);
    }
}

/// Ack-eliciting packets the server received per ACK it sent, after the first `skip`.
fn achieved_ratio(schedule: Option<AckSchedule>) -> (f64, u64) {
    let mut server = cfg(None);
    server.ack.schedule = schedule;
    let (mut p, _) = pair(cfg(None), server, MS(10), 0.0);
    let server_sink = SharedSink::new(VecSink::new());
    p.run_until(Instant::from_millis(1000), |p| p.server_conn().is_some())
        .unwrap();
    let now = p.now;
    p.server_conn()
        .unwrap()
        .set_event_sink(now, Box::new(server_sink.clone()));
    run_bulk(&mut p, 1 << 20);
    let acks = server_sink
        .lock()
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::PacketSent { frames, .. } => Some(frames.iter().any(|f| f.name == "ack")),
            _ => None,
        })
        .filter(|&a| a)
        .count() as f64;
    let received = p
        .server_conn()
        .unwrap()
        .ack_frequency
        .data_eliciting_received;
    (received as f64 / acks, received)
}

#[test]
fn schedule_reduces_acks_end_to_end() {
    let (default, n) = achieved_ratio(None);
    let (scheduled, _) = achieved_ratio(Some(AckSchedule {
        after_packets: 100,
        threshold: 10,
    }));
    assert!(n > 500, "enough packets for the schedule to matter: {n}");
    assert!(default < 2.5, "default 1:2, got 1:{default:.2}");
    assert!(
        scheduled > 6.0,
        "1:10 after 100 packets, got 1:{scheduled:.2}"
    );
}

#[test]
fn fixed_policy_sends_one_frame_after_confirmation() {
    let client = sender(AckFrequencyPolicy::Fixed {
        ratio: 10,
        max_ack_delay_ms: None,
    });
    let (mut p, sink) = pair(client, cfg(Some(1000)), MS(10), 0.0);
    run_bulk(&mut p, 300_000);
    let frames = ack_frequency_frames(&sink);
    assert_eq!(frames.len(), 1, "{frames:?}");
    let (t, f) = frames[0];
    // Wire threshold = ratio - 1; the peer's advertised max_ack_delay (25 ms).
    assert_eq!(
        f,
        AckFrequencyFrame {
            sequence: 0,
            ack_eliciting_threshold: 9,
            request_max_ack_delay: 25_000,
            reordering_threshold: 1,
        }
    );
    let c = p.client_conn();
    assert!(t >= c.stats().handshake_confirmed_at.unwrap());
    assert_eq!(c.stats().ack_frequency_sent, 1);
    assert!(c.ack_frequency_active() && c.stats().ack_frequency_active);
    assert_eq!(c.peer_max_ack_delay(), MS(25));
    let s = p.server_conn().unwrap();
    assert_eq!(s.ack_frequency.policy.ack_eliciting_threshold, 10);
    assert_eq!(s.ack_frequency.peer_seq, Some(0));
}

#[test]
fn requested_delay_is_raised_to_peer_min_ack_delay() {
    let client = sender(AckFrequencyPolicy::Fixed {
        ratio: 4,
        max_ack_delay_ms: Some(0.5),
    });
    let (mut p, sink) = pair(client, cfg(Some(2000)), MS(10), 0.0);
    run_bulk(&mut p, 50_000);
    let frames = ack_frequency_frames(&sink);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].1.request_max_ack_delay, 2000);
    assert_eq!(frames[0].1.ack_eliciting_threshold, 3);
    assert!(p.server_conn().unwrap().stats().local_error.is_none());
}

#[test]
fn after_slow_start_sends_nothing_until_slow_start_ends() {
    let client = sender(AckFrequencyPolicy::AfterSlowStart {
        ratio: 10,
        max_ack_delay_ms: Some(10.0),
    });
    // No loss: the window never leaves slow start, so nothing is sent.
    let (mut p, sink) = pair(client.clone(), cfg(Some(1000)), MS(10), 0.0);
    run_bulk(&mut p, 300_000);
    assert!(p.client_conn().congestion_controller().in_slow_start());
    assert!(ack_frequency_frames(&sink).is_empty());
    // With loss, the request leaves only once the controller left slow start.
    let (mut p, sink) = pair(client, cfg(Some(1000)), MS(10), 0.02);
    let mut b = Bulk::new(2 << 20);
    let mut checked = false;
    p.run_until(Instant::from_millis(60_000), |p| {
        let c = p.client_conn();
        if c.stats().ack_frequency_sent > 0 && !checked {
            checked = true;
            assert!(!c.congestion_controller().in_slow_start());
            assert!(c.stats().congestion_events > 0);
        }
        b.drive(p)
    })
    .unwrap();
    let frames = ack_frequency_frames(&sink);
    assert!(checked && !frames.is_empty());
    assert_eq!(frames[0].1.ack_eliciting_threshold, 9);
    assert_eq!(frames[0].1.request_max_ack_delay, 10_000);
    // One request; resends of a lost one keep its sequence number.
    assert!(frames.iter().all(|(_, f)| f.sequence == 0));
}

#[test]
fn cwnd_policy_follows_the_window_at_most_once_per_rtt() {
    let client = sender(AckFrequencyPolicy::Cwnd {
        acks_per_window: 4,
        max_ratio: 10,
        max_ack_delay_ms: Some(100.0),
    });
    // RTT 40 ms; no loss, so the window only grows.
    let (mut p, sink) = pair(client, cfg(Some(1000)), MS(20), 0.0);
    run_bulk(&mut p, 2 << 20);
    let frames = ack_frequency_frames(&sink);
    assert!(frames.len() >= 3, "{frames:?}");
    for w in frames.windows(2) {
        let ((t0, a), (t1, b)) = (w[0], w[1]);
        assert!(b.sequence > a.sequence);
        assert!(b.ack_eliciting_threshold > a.ack_eliciting_threshold);
        // At most once per smoothed RTT, which is at least the 40 ms path RTT.
        assert!(
            t1.saturating_duration_since(t0) >= MS(40),
            "{t0:?} -> {t1:?}"
        );
    }
    // The first update leaves the 1:2 default; the last reaches max_ratio.
    assert!(frames[0].1.ack_eliciting_threshold >= 2);
    assert_eq!(frames.last().unwrap().1.ack_eliciting_threshold, 9);
    for (_, f) in &frames {
        // ack-frequency §8.1: min(100 ms, smoothed RTT), here about the 40 ms RTT.
        assert!(
            (40_000..100_000).contains(&f.request_max_ack_delay),
            "{f:?}"
        );
        assert_eq!(f.reordering_threshold, 1);
    }
}

/// Runs the handshake, then waits until the client has nothing in flight.
fn quiet_pair(client: TransportConfig, server: TransportConfig) -> (Pair, SharedSink<VecSink>) {
    let (mut p, sink) = pair(client, server, MS(10), 0.0);
    p.run_until(Instant::from_millis(2000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.bytes_in_flight() == 0)
            && p.client_conn().bytes_in_flight() == 0
    })
    .unwrap();
    (p, sink)
}

#[test]
fn immediate_ack_goes_in_the_packet_that_fills_the_window_only() {
    let mut client = cfg(Some(1000));
    client.pacing = false;
    client.ack_frequency.immediate_ack_when_blocked = true;
    let mut server = cfg(Some(1000));
    server.ack.ack_eliciting_threshold = 100;
    let (mut p, sink) = quiet_pair(client, server);
    let now = p.now;
    let c = p.client_conn();
    let id = c.open_stream(Dir::Uni).unwrap();
    c.write(id, &[1u8; 100_000]).unwrap();
    let cwnd = c.congestion_window();
    sink.lock().take();
    let mut datagrams = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = p.client.poll_transmit(now, &mut buf) {
        datagrams.push(buf[..t.size].to_vec());
        buf.clear();
    }
    let c = p.client_conn();
    assert!(c.bytes_in_flight() >= cwnd, "the window is full");
    let sent = one_rtt_sent(&sink);
    assert!(sent.len() >= 5, "a window's worth: {}", sent.len());
    let flags: Vec<bool> = sent.iter().map(|(_, f)| has_immediate_ack(f)).collect();
    let last = flags.len() - 1;
    assert!(
        flags[last],
        "the window-filling packet carries IMMEDIATE_ACK"
    );
    assert!(!flags[..last].iter().any(|&f| f), "and no other: {flags:?}");
    assert_eq!(c.stats().immediate_ack_sent, 1);
    // The receiver (threshold 100) delays its ACK until the IMMEDIATE_ACK arrives.
    let (last_dg, rest) = datagrams.split_last_mut().unwrap();
    for d in rest {
        p.server
            .handle_datagram(now, p.client_addr, crate::Ecn::NotEct, d)
            .unwrap();
    }
    let s = p.server_conn().unwrap();
    let deadline = s.spaces[SpaceId::Data as usize].acks.ack_deadline();
    assert_eq!(deadline, Some(now + MS(25)));
    p.server
        .handle_datagram(now, p.client_addr, crate::Ecn::NotEct, last_dg)
        .unwrap();
    let s = p.server_conn().unwrap();
    let deadline = s.spaces[SpaceId::Data as usize].acks.ack_deadline();
    assert_eq!(deadline, Some(now), "ACKed at once");
}

#[test]
fn immediate_ack_not_in_small_packets_before_the_window_fills() {
    // Application-limited writes of 100 bytes: many small packets approach the window,
    // and only the one that reaches it carries IMMEDIATE_ACK (not every packet sent
    // within a full-size packet of the edge).
    let mut client = cfg(Some(1000));
    client.pacing = false;
    client.ack_frequency.immediate_ack_when_blocked = true;
    let (mut p, sink) = quiet_pair(client, cfg(Some(1000)));
    let now = p.now;
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let cwnd = p.client_conn().congestion_window();
    sink.lock().take();
    let mut buf = Vec::new();
    while p.client_conn().bytes_in_flight() < cwnd {
        p.client_conn().write(id, &[3u8; 100]).unwrap();
        while p.client.poll_transmit(now, &mut buf).is_some() {
            buf.clear();
        }
    }
    let flags: Vec<bool> = one_rtt_sent(&sink)
        .iter()
        .map(|(_, f)| has_immediate_ack(f))
        .collect();
    assert!(flags.len() > 50, "{}", flags.len());
    let last = flags.len() - 1;
    assert!(
        flags[last] && !flags[..last].iter().any(|&f| f),
        "{flags:?}"
    );
}

/// Time to move `total` bytes to a 1:10 receiver; (time, IMMEDIATE_ACKs, 1-RTT packets).
fn transfer_time(
    immediate_ack_when_blocked: bool,
    delay_ms: u64,
    loss: f64,
    total: usize,
    seed: u64,
) -> (Duration, u64, u64) {
    let mut client = cfg(Some(1000));
    client.ack_frequency.immediate_ack_when_blocked = immediate_ack_when_blocked;
    let mut server = cfg(Some(1000));
    server.ack.ack_eliciting_threshold = 10;
    let link = LinkConfig {
        loss,
        ..LinkConfig::delay(MS(delay_ms))
    };
    let mut p = Pair::new(client, server, [link.clone(), link], seed);
    run_bulk(&mut p, total);
    let s = p.client_conn().stats().clone();
    (
        p.now - Instant::ZERO,
        s.immediate_ack_sent,
        s.packets_sent[SpaceId::Data as usize],
    )
}

#[test]
fn immediate_ack_when_blocked_speeds_up_a_one_in_ten_receiver() {
    // The INET paper's setting (seed 002 §V.C): a loss-limited window and an RTT below
    // max_ack_delay, so a 1:10 receiver holding a partial ratio stalls the sender.
    for seed in [1, 2] {
        let (without, none, _) = transfer_time(false, 5, 0.01, 2 << 20, seed);
        let (with, iacks, packets) = transfer_time(true, 5, 0.01, 2 << 20, seed);
        assert_eq!(none, 0);
        // Only at blocking transitions, not in every packet.
        assert!(iacks > 0 && iacks * 2 < packets, "{iacks} of {packets}");
        assert!(
            with.as_secs_f64() < 0.8 * without.as_secs_f64(),
            "seed {seed}: with {with:?}, without {without:?}"
        );
    }
}

#[test]
fn nothing_is_sent_unless_both_sides_offer_min_ack_delay() {
    for (client_min, server_min) in [(None, Some(1000)), (Some(1000), None), (None, None)] {
        let mut client = sender(AckFrequencyPolicy::Fixed {
            ratio: 10,
            max_ack_delay_ms: None,
        });
        client.min_ack_delay_us = client_min;
        client.ack_frequency.immediate_ack_when_blocked = true;
        let (mut p, sink) = pair(client, cfg(server_min), MS(10), 0.0);
        run_bulk(&mut p, 300_000);
        let c = p.client_conn();
        assert!(!c.ack_frequency_active() && !c.stats().ack_frequency_active);
        assert_eq!(
            (c.stats().ack_frequency_sent, c.stats().immediate_ack_sent),
            (0, 0)
        );
        assert!(ack_frequency_frames(&sink).is_empty());
        assert!(c.stats().local_error.is_none());
        assert!(p.server_conn().unwrap().stats().local_error.is_none());
    }
}

#[test]
fn ack_frequency_without_our_min_ack_delay_is_a_protocol_violation() {
    // The server never offered the extension; the client sends a request anyway.
    let (mut p, _) = quiet_pair(cfg(Some(1000)), cfg(None));
    let now = p.now;
    p.client_conn()
        .ack_frequency
        .sender
        .request(now, 10, 25_000, 1);
    let _ = p.run_until(Instant::from_millis(5000), |p| p.client_conn().is_closed());
    let s = p.server_conn().unwrap();
    assert_eq!(
        s.stats().local_error,
        Some(TransportErrorCode::PROTOCOL_VIOLATION)
    );
    // IMMEDIATE_ACK likewise.
    let (mut p, _) = quiet_pair(cfg(Some(1000)), cfg(None));
    let now = p.now;
    let s = p.server_conn().unwrap();
    let dcid = ConnectionId::new(&[0; 8]).unwrap();
    let err = s
        .on_frame(now, SpaceId::Data, &dcid, Frame::ImmediateAck, &mut false)
        .unwrap_err();
    assert_eq!(err.code, TransportErrorCode::PROTOCOL_VIOLATION);
}

#[test]
fn invalid_requested_max_ack_delay_is_a_protocol_violation() {
    let (mut p, _) = quiet_pair(cfg(Some(1000)), cfg(Some(1000)));
    let s = p.server_conn().unwrap();
    let frame = |request_max_ack_delay| AckFrequencyFrame {
        sequence: 5,
        ack_eliciting_threshold: 1,
        request_max_ack_delay,
        reordering_threshold: 1,
    };
    for bad in [999, 16_384_000, u64::MAX] {
        let err = s.on_ack_frequency(&frame(bad)).unwrap_err();
        assert_eq!(err.code, TransportErrorCode::PROTOCOL_VIOLATION, "{bad}");
    }
    s.on_ack_frequency(&frame(16_383_999)).unwrap();
    // Obsolete sequence numbers are ignored.
    s.on_ack_frequency(&AckFrequencyFrame {
        sequence: 4,
        ..frame(1000)
    })
    .unwrap();
    assert_eq!(
        s.ack_frequency.policy.max_ack_delay,
        Duration::from_micros(16_383_999)
    );
}

#[test]
fn pto_uses_the_largest_requested_delay_in_flight() {
    let (mut p, _) = quiet_pair(cfg(Some(1000)), cfg(Some(1000)));
    let pto = |c: &Connection| {
        let last = c
            .path
            .recovery
            .sent(SpaceId::Data)
            .time_of_last_ack_eliciting()
            .unwrap();
        let (t, space) = c
            .path
            .recovery
            .pto_time_and_space(last, &c.pto_context())
            .unwrap();
        assert_eq!(space, SpaceId::Data);
        t.saturating_duration_since(last) - c.path.recovery.rtt().pto_base()
    };
    let until_acked = |p: &mut Pair| {
        p.run_until(Instant::from_millis(5000), |p| {
            p.client_conn().ack_frequency.sender.in_flight.is_empty()
        })
        .unwrap();
    };
    let now = p.now;
    let c = p.client_conn();
    c.ack_frequency.sender.request(now, 10, 200_000, 1);
    p.flush();
    let c = p.client_conn();
    assert_eq!(c.stats().ack_frequency_sent, 1);
    assert_eq!(c.ack_frequency.sender.in_flight.len(), 1);
    // In flight: max(25 ms advertised, 200 ms requested) (ack-frequency §6).
    assert_eq!(pto(c), MS(200));
    until_acked(&mut p);
    let c = p.client_conn();
    assert_eq!(
        c.peer_max_ack_delay(),
        MS(200),
        "acknowledged: the peer's value"
    );
    // A smaller request counts only once acknowledged.
    let now = p.now;
    p.client_conn()
        .ack_frequency
        .sender
        .request(now, 10, 5_000, 1);
    p.flush();
    assert_eq!(pto(p.client_conn()), MS(200));
    until_acked(&mut p);
    assert_eq!(p.client_conn().peer_max_ack_delay(), MS(5));
    assert_eq!(
        p.server_conn().unwrap().ack_frequency.policy.max_ack_delay,
        MS(5)
    );
}
