use super::*;
use crate::events::{frame_type_name, FrameKind, FrameSummary, PacketHeaderInfo, VecSink};
use crate::wire::frame::StreamFrame;
use crate::wire::{
    AckFrame, AckFrequencyFrame, ConnectionCloseFrame, Dir, EcnCounts, Frame, NewConnectionIdFrame,
    PacketType, StreamId,
};
use serde_json::Value;
use std::time::Duration;

fn cid(b: &[u8]) -> ConnectionId {
    ConnectionId::new(b).unwrap()
}

fn sample_frames() -> Vec<Frame<'static>> {
    vec![
        Frame::Padding { len: 10 },
        Frame::Ping,
        Frame::Ack(AckFrame {
            ack_delay: 125,
            ranges: vec![7..=9, 5..=5, 0..=2],
            ecn: Some(EcnCounts {
                ect0: 4,
                ect1: 0,
                ce: 1,
            }),
        }),
        Frame::ResetStream {
            id: StreamId(4),
            error_code: 7,
            final_size: 100,
        },
        Frame::StopSending {
            id: StreamId(4),
            error_code: 7,
        },
        Frame::Crypto {
            offset: 0,
            data: &[1; 300],
        },
        Frame::NewToken { token: &[9; 20] },
        Frame::Stream(StreamFrame {
            id: StreamId(0),
            offset: 1000,
            fin: true,
            data: &[0xab; 50],
        }),
        Frame::MaxData(1 << 20),
        Frame::MaxStreamData {
            id: StreamId(0),
            max: 5000,
        },
        Frame::MaxStreams {
            dir: Dir::Uni,
            max: 3,
        },
        Frame::DataBlocked { limit: 10 },
        Frame::StreamDataBlocked {
            id: StreamId(8),
            limit: 11,
        },
        Frame::StreamsBlocked {
            dir: Dir::Bi,
            limit: 12,
        },
        Frame::NewConnectionId(NewConnectionIdFrame {
            sequence: 1,
            retire_prior_to: 0,
            id: cid(&[1, 2, 3, 4]),
            reset_token: [0xee; 16],
        }),
        Frame::RetireConnectionId { sequence: 0 },
        Frame::PathChallenge([1, 2, 3, 4, 5, 6, 7, 8]),
        Frame::PathResponse([8; 8]),
        Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: 0x0128,
            frame_type: Some(0x06),
            reason: b"bad \"cert\"\n\xff",
        }),
        Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: 0x42,
            frame_type: None,
            reason: b"bye",
        }),
        Frame::HandshakeDone,
        Frame::Datagram { data: &[0; 33] },
        Frame::AckFrequency(AckFrequencyFrame {
            sequence: 2,
            ack_eliciting_threshold: 10,
            request_max_ack_delay: 25_500,
            reordering_threshold: 1,
        }),
        Frame::ImmediateAck,
    ]
}

fn header(ty: PacketType, pn: Option<u64>) -> PacketHeaderInfo {
    PacketHeaderInfo {
        ty,
        pn,
        dcid: cid(&[0xaa, 0xbb]),
        scid: Some(cid(&[0xcc])),
        path_id: None,
    }
}

fn sample_events() -> Vec<(Instant, Event)> {
    let frames: Vec<FrameSummary> = sample_frames().iter().map(FrameSummary::from).collect();
    let params = TransportParameters {
        initial_source_connection_id: Some(cid(&[0xcc])),
        ack_delay_exponent: 2,
        max_datagram_frame_size: Some(1200),
        ..TransportParameters::default()
    };
    let t = Instant::from_micros;
    let mut events = vec![
        (
            t(0),
            Event::ConnectionStarted {
                side: Side::Client,
                version: 1,
                local_cid: cid(&[0xcc]),
                remote_cid: cid(&[0xaa, 0xbb]),
            },
        ),
        (
            t(0),
            Event::ConnectionStateUpdated {
                new: ConnectionState::Attempted,
            },
        ),
        (
            t(1),
            Event::ParametersSet {
                owner: Owner::Local,
                params: Box::new(params.clone()),
                alpn: None,
                tls_cipher: None,
                resumption: Default::default(),
            },
        ),
        (
            t(1_500),
            Event::PacketSent {
                header: header(PacketType::Initial, Some(0)),
                size: 1200,
                frames: frames.clone(),
            },
        ),
        (
            t(20_001),
            Event::ParametersSet {
                owner: Owner::Remote,
                params: Box::new(TransportParameters {
                    ack_delay_exponent: 4,
                    ..params
                }),
                alpn: Some("hq-interop".into()),
                tls_cipher: None,
                resumption: Default::default(),
            },
        ),
        (
            t(20_002),
            Event::PacketReceived {
                header: PacketHeaderInfo {
                    scid: None,
                    ..header(PacketType::OneRtt, Some(3))
                },
                size: 77,
                frames,
            },
        ),
        (
            t(20_003),
            Event::PacketDropped {
                ty: Some(PacketType::Handshake),
                size: 50,
                reason: DropReason::KeyUnavailable,
            },
        ),
        (
            t(20_003),
            Event::PacketDropped {
                ty: None,
                size: 3,
                reason: DropReason::HeaderParseError,
            },
        ),
    ];
    events.extend(sample_recovery_and_close_events());
    events
}

/// The second half of [`sample_events`]: losses, recovery, keys and closes.
fn sample_recovery_and_close_events() -> Vec<(Instant, Event)> {
    let t = Instant::from_micros;
    vec![
        (
            t(30_000),
            Event::PacketLost {
                ty: PacketType::ZeroRtt,
                pn: 9,
                trigger: LossTrigger::TimeThreshold,
                path_id: None,
            },
        ),
        (
            t(30_000),
            Event::MetricsUpdated(RecoveryMetrics {
                smoothed_rtt: Some(Duration::from_nanos(20_123_999)),
                congestion_window: Some(14720),
                ..RecoveryMetrics::default()
            }),
        ),
        (
            t(30_000),
            Event::CongestionStateUpdated {
                new: CongestionState::SlowStart,
            },
        ),
        (
            t(30_001),
            Event::CongestionStateUpdated {
                new: CongestionState::Recovery,
            },
        ),
        (
            t(30_002),
            Event::KeyUpdated {
                key: KeyType::Handshake,
                owner: Owner::Remote,
            },
        ),
        (
            t(30_002),
            Event::KeyUpdated {
                key: KeyType::OneRtt,
                owner: Owner::Local,
            },
        ),
        (
            t(30_003),
            Event::KeyUpdated {
                key: KeyType::OneRtt,
                owner: Owner::Local,
            },
        ),
        (
            t(30_004),
            Event::KeyDiscarded {
                key: KeyType::Initial,
            },
        ),
        (t(40_000), Event::PtoExpired { pto_count: 2 }),
        (
            t(50_000),
            Event::ConnectionClosed {
                owner: Owner::Remote,
                code: TransportErrorCode::PROTOCOL_VIOLATION,
                application: false,
                reason: "oops".into(),
            },
        ),
        (
            t(50_001),
            Event::ConnectionClosed {
                owner: Owner::Local,
                code: TransportErrorCode(0x99),
                application: true,
                reason: String::new(),
            },
        ),
    ]
}

fn write_all(events: &[(Instant, Event)]) -> Vec<u8> {
    let mut w = QlogWriter::with_description(
        Vec::new(),
        "t \"1\"",
        "unit test",
        Side::Client,
        Some(cid(&[0x12, 0x34])),
    );
    for (now, ev) in events {
        w.event(*now, ev);
    }
    assert!(w.error().is_none());
    w.into_inner()
}

/// Splits JSON-SEQ into parsed records, checking the framing.
fn parse(bytes: &[u8]) -> Vec<Value> {
    assert_eq!(bytes.first(), Some(&RS));
    let text = std::str::from_utf8(bytes).unwrap();
    text[1..]
        .split('\u{1e}')
        .map(|rec| {
            assert!(rec.ends_with('\n'), "record not newline-terminated: {rec}");
            serde_json::from_str(rec).unwrap_or_else(|e| panic!("{e}: {rec}"))
        })
        .collect()
}

fn find<'a>(recs: &'a [Value], name: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["name"] == name).collect()
}

#[test]
fn qlog_header() {
    let recs = parse(&write_all(&[]));
    assert_eq!(recs.len(), 1);
    let h = &recs[0];
    assert_eq!(h["qlog_version"], "0.3");
    assert_eq!(h["qlog_format"], "JSON-SEQ");
    assert_eq!(h["file_schema"], "urn:ietf:params:qlog:file:sequential");
    assert_eq!(h["serialization_format"], "application/qlog+json-seq");
    assert_eq!(h["title"], "t \"1\"");
    assert_eq!(h["description"], "unit test");
    let tr = &h["trace"];
    assert_eq!(tr["vantage_point"]["type"], "client");
    assert_eq!(tr["common_fields"]["group_id"], "1234");
    assert_eq!(tr["common_fields"]["protocol_type"][0], "QUIC");
    assert_eq!(tr["common_fields"]["time_format"], "relative_to_epoch");
    assert_eq!(tr["event_schemas"][0], EVENT_SCHEMA);
}

#[test]
fn qlog_events_parse_with_draft_names_and_fields() {
    let recs = parse(&write_all(&sample_events()));
    let names: Vec<&str> = recs[1..]
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "quic:connection_started",
            "quic:version_information",
            "quic:connection_state_updated",
            "quic:parameters_set",
            "quic:packet_sent",
            "quic:parameters_set",
            "quic:alpn_information",
            "quic:packet_received",
            "quic:packet_dropped",
            "quic:packet_dropped",
            "quic:packet_lost",
            "quic:recovery_metrics_updated",
            "quic:congestion_state_updated",
            "quic:congestion_state_updated",
            "quic:key_updated",
            "quic:key_updated",
            "quic:key_updated",
            "quic:key_discarded",
            "quic:key_discarded",
            "quic:timer_updated",
            "quic:connection_closed",
            "quic:connection_closed",
        ]
    );
    for r in &recs[1..] {
        assert!(r["time"].is_f64() && r["data"].is_object(), "{r}");
    }

    let started = find(&recs, "quic:connection_started")[0];
    assert_eq!(started["data"]["remote"]["connection_ids"][0], "aabb");
    assert_eq!(
        find(&recs, "quic:version_information")[0]["data"]["chosen_version"],
        "00000001"
    );

    let sent = &find(&recs, "quic:packet_sent")[0];
    assert_eq!(sent["time"].as_f64(), Some(1.5));
    let d = &sent["data"];
    assert_eq!(d["header"]["packet_type"], "initial");
    assert_eq!(d["header"]["packet_number"], 0);
    assert_eq!(d["header"]["dcid"], "aabb");
    assert_eq!(d["header"]["scid"], "cc");
    assert_eq!(d["raw"]["length"], 1200);
    let frames = d["frames"].as_array().unwrap();
    let types: Vec<&str> = frames
        .iter()
        .map(|f| f["frame_type"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = sample_frames().iter().map(frame_type_name).collect();
    assert_eq!(types, expected);
    assert_eq!(frames[0]["raw"]["payload_length"], 10);
    // ACK: raw 125 << local exponent 2 = 500 µs; ranges lowest first.
    let ack = &frames[2];
    assert_eq!(ack["ack_delay"].as_f64(), Some(0.5));
    assert_eq!(
        ack["acked_ranges"],
        serde_json::json!([[0, 2], [5], [7, 9]])
    );
    assert_eq!(
        (ack["ect0"].clone(), ack["ce"].clone()),
        (4.into(), 1.into())
    );
    assert_eq!(frames[5]["offset"], 0);
    assert_eq!(frames[5]["raw"]["length"], 300);
    let stream = &frames[7];
    assert_eq!(stream["stream_id"], 0);
    assert_eq!(stream["offset"], 1000);
    assert_eq!(stream["length"], 50);
    assert_eq!(stream["fin"], true);
    assert_eq!(stream["raw"]["length"], 50);
    assert_eq!(frames[10]["stream_type"], "unidirectional");
    assert_eq!(frames[14]["connection_id"], "01020304");
    assert_eq!(frames[16]["data"], "0102030405060708");
    let close = &frames[18];
    assert_eq!(close["error_space"], "transport");
    assert_eq!(close["error"], "crypto_error_0x128");
    assert_eq!(close["trigger_frame_type"], 6);
    assert_eq!(close["reason"], "bad \"cert\"\n\u{fffd}");
    assert_eq!(frames[19]["error_space"], "application");
    assert_eq!(frames[19]["error_code"], 0x42);
    assert_eq!(frames[22]["request_max_ack_delay"].as_f64(), Some(25.5));
    // Frames without a data Length log their encoded size.
    assert_eq!(frames[1]["raw"]["length"], 1);

    // The received ACK uses the peer's exponent (4): 125 * 16 = 2000 µs.
    let recv = &find(&recs, "quic:packet_received")[0]["data"];
    assert_eq!(recv["header"]["packet_type"], "1RTT");
    assert!(recv["header"].get("scid").is_none());
    assert_eq!(recv["frames"][2]["ack_delay"].as_f64(), Some(2.0));

    let params = &find(&recs, "quic:parameters_set");
    assert_eq!(params[0]["data"]["initiator"], "local");
    assert_eq!(params[1]["data"]["initiator"], "remote");
    assert_eq!(params[0]["data"]["initial_source_connection_id"], "cc");
    assert_eq!(params[0]["data"]["max_datagram_frame_size"], 1200);
    assert_eq!(params[0]["data"]["max_ack_delay"], 25);
    assert_eq!(
        find(&recs, "quic:alpn_information")[0]["data"]["chosen_alpn"]["string_value"],
        "hq-interop"
    );

    let dropped = find(&recs, "quic:packet_dropped");
    assert_eq!(dropped[0]["data"]["header"]["packet_type"], "handshake");
    assert_eq!(dropped[0]["data"]["trigger"], "key_unavailable");
    assert_eq!(dropped[1]["data"]["trigger"], "invalid");
    assert!(dropped[1]["data"].get("header").is_none());

    let lost = &find(&recs, "quic:packet_lost")[0]["data"];
    assert_eq!(lost["header"]["packet_type"], "0RTT");
    assert_eq!(lost["header"]["packet_number"], 9);
    assert_eq!(lost["trigger"], "time_threshold");

    let m = &find(&recs, "quic:recovery_metrics_updated")[0]["data"];
    assert_eq!(m["smoothed_rtt"].as_f64(), Some(20.123));
    assert_eq!(m["congestion_window"], 14720);
    assert!(m.get("min_rtt").is_none());

    let cc = find(&recs, "quic:congestion_state_updated");
    assert!(cc[0]["data"].get("old").is_none());
    assert_eq!(cc[1]["data"]["old"], "slow_start");
    assert_eq!(cc[1]["data"]["new"], "recovery");

    let keys = find(&recs, "quic:key_updated");
    assert_eq!(keys[0]["data"]["key_type"], "server_handshake_secret");
    assert_eq!(keys[1]["data"]["key_type"], "client_1rtt_secret");
    assert_eq!(keys[1]["data"]["trigger"], "tls");
    assert_eq!(keys[2]["data"]["key_phase"], 1);
    let discarded = find(&recs, "quic:key_discarded");
    assert_eq!(discarded[0]["data"]["key_type"], "client_initial_secret");
    assert_eq!(discarded[1]["data"]["key_type"], "server_initial_secret");

    let timer = &find(&recs, "quic:timer_updated")[0]["data"];
    assert_eq!(timer["timer_type"], "pto");
    assert_eq!(timer["event_type"], "expired");

    let closed = find(&recs, "quic:connection_closed");
    assert_eq!(closed[0]["data"]["initiator"], "remote");
    assert_eq!(closed[0]["data"]["connection_error"], "protocol_violation");
    assert_eq!(closed[0]["data"]["reason"], "oops");
    assert_eq!(closed[1]["data"]["application_error"], "unknown");
    assert_eq!(closed[1]["data"]["error_code"], 0x99);
}

#[test]
fn qlog_is_deterministic() {
    let events = sample_events();
    assert_eq!(write_all(&events), write_all(&events));
    // A collected run replays to the same bytes.
    let mut sink = VecSink::new();
    for (t, e) in &events {
        sink.event(*t, e);
    }
    assert_eq!(write_all(&sink.take()), write_all(&events));
}

#[test]
fn qlog_time_format() {
    let mut buf = Vec::new();
    Json::new(&mut buf).ms(1_234_567_891);
    assert_eq!(buf, b"1234.567");
    buf.clear();
    Json::new(&mut buf).ms(999);
    assert_eq!(buf, b"0.000");
}

/// Fails after `budget` bytes.
struct Failing {
    budget: usize,
    calls: usize,
}

impl Write for Failing {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.calls += 1;
        if b.len() > self.budget {
            return Err(io::Error::other("disk full"));
        }
        self.budget -= b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn qlog_io_error_is_kept_not_raised() {
    let f = Failing {
        budget: 600,
        calls: 0,
    };
    let mut w = QlogWriter::new(f, "t", Side::Server, None);
    assert!(w.error().is_none());
    for (t, e) in sample_events() {
        w.event(t, &e);
    }
    assert_eq!(w.error().map(|e| e.to_string()), Some("disk full".into()));
    let calls = w.into_inner().calls;
    assert!(calls < 5, "kept writing after an error: {calls} calls");
}

#[test]
fn qlog_frame_summary() {
    for f in sample_frames() {
        let s = FrameSummary::from(&f);
        assert_eq!(s.wire_len(), f.encoded_len());
        assert_eq!(s.frame_type_name(), frame_type_name(&f));
        assert_eq!(s.is_ack_eliciting(), f.is_ack_eliciting());
    }
    let s = FrameSummary::from(&sample_frames()[7]);
    assert_eq!(
        s.kind,
        FrameKind::Stream {
            id: StreamId(0),
            offset: 1000,
            length: 50,
            fin: true
        }
    );
    assert_eq!(s.app_data_len(), 50);
}

#[test]
fn bbr_states_and_model_metrics() {
    let t = |ms: u64| Instant::from_millis(ms);
    let events = vec![
        (
            t(1),
            Event::CongestionStateUpdated {
                new: CongestionState::BbrStartup,
            },
        ),
        (
            t(2),
            Event::MetricsUpdated(RecoveryMetrics {
                congestion_window: Some(120_000),
                bytes_in_flight: Some(60_000),
                pacing_rate: Some(1_250_000),
                model_bandwidth: Some(1_000_000),
                model_min_rtt: Some(Duration::from_micros(50_100)),
                ..RecoveryMetrics::default()
            }),
        ),
        (
            t(3),
            Event::CongestionStateUpdated {
                new: CongestionState::BbrProbeBwCruise,
            },
        ),
        (
            t(4),
            Event::CongestionStateUpdated {
                new: CongestionState::BbrProbeRtt,
            },
        ),
    ];
    let recs = parse(&write_all(&events));
    let m = &find(&recs, "quic:recovery_metrics_updated")[0]["data"];
    // qlog: pacing_rate in bits per second; BBR's bw likewise, min_rtt in ms.
    assert_eq!(m["pacing_rate"], 10_000_000);
    assert_eq!(m["bbr_bw"], 8_000_000);
    assert_eq!(m["bbr_min_rtt"].as_f64(), Some(50.1));
    assert_eq!(m["bytes_in_flight"], 60_000);
    let cc = find(&recs, "quic:congestion_state_updated");
    assert_eq!(cc[0]["data"]["new"], "startup");
    assert_eq!(cc[1]["data"]["old"], "startup");
    assert_eq!(cc[1]["data"]["new"], "probe_bw_cruise");
    assert_eq!(cc[2]["data"]["new"], "probe_rtt");
}

#[test]
fn kernel_drops_is_a_quiclab_event() {
    use crate::events::{KernelDrops, KernelDropsTrigger};
    let reading = |drops, trigger| {
        Event::KernelDrops(KernelDrops {
            drops,
            recv_buffer: 8 << 20,
            send_buffer: 4 << 20,
            trigger,
        })
    };
    let recs = parse(&write_all(&[
        (
            Instant::from_millis(250),
            reading(790, KernelDropsTrigger::Increased),
        ),
        (
            Instant::from_millis(900),
            reading(812, KernelDropsTrigger::Final),
        ),
    ]));
    let k = find(&recs, "quiclab:kernel_drops");
    assert_eq!(k.len(), 2);
    assert_eq!(k[0]["time"], 250.0);
    assert_eq!(k[0]["data"]["drops"], 790);
    assert_eq!(k[0]["data"]["recv_buffer"], 8 << 20);
    assert_eq!(k[0]["data"]["send_buffer"], 4 << 20);
    assert_eq!(k[0]["data"]["trigger"], "increased");
    assert_eq!(k[1]["data"]["trigger"], "final");
}

#[test]
fn ecn_state_and_received_codepoints_use_the_draft_names() {
    use crate::ecn::{Ecn, EcnState};
    let recs = parse(&write_all(&[
        (
            Instant::from_millis(1),
            Event::EcnStateUpdated {
                old: None,
                new: EcnState::Testing,
            },
        ),
        (
            Instant::from_millis(2),
            Event::DatagramReceived {
                size: 1200,
                ecn: Ecn::Ect0,
            },
        ),
        (
            Instant::from_millis(3),
            Event::EcnStateUpdated {
                old: Some(EcnState::Unknown),
                new: EcnState::Capable,
            },
        ),
        (
            Instant::from_millis(4),
            Event::DatagramReceived {
                size: 40,
                ecn: Ecn::Ce,
            },
        ),
    ]));
    let e = find(&recs, "quic:ecn_state_updated");
    assert_eq!(e.len(), 2);
    assert!(e[0]["data"].get("old").is_none());
    assert_eq!(e[0]["data"]["new"], "testing");
    assert_eq!(e[1]["data"]["old"], "unknown");
    assert_eq!(e[1]["data"]["new"], "capable");
    let d = find(&recs, "quic:udp_datagrams_received");
    assert_eq!(d.len(), 2);
    assert_eq!(d[0]["data"]["count"], 1);
    assert_eq!(d[0]["data"]["raw"][0]["length"], 1200);
    assert_eq!(d[0]["data"]["ecn"][0], "ECT(0)");
    assert_eq!(d[1]["data"]["ecn"][0], "CE");
}

#[test]
fn datagram_frame_dropped_is_a_quiclab_event() {
    use crate::events::DatagramDropReason;
    let dropped = |length, reason| Event::DatagramDropped { length, reason };
    let recs = parse(&write_all(&[
        (
            Instant::from_millis(5),
            dropped(1000, DatagramDropReason::QueueFull),
        ),
        (
            Instant::from_millis(7),
            dropped(1300, DatagramDropReason::TooLarge),
        ),
    ]));
    let d = find(&recs, "quiclab:datagram_frame_dropped");
    assert_eq!(d.len(), 2);
    assert_eq!(d[0]["data"]["raw"]["length"], 1000);
    assert_eq!(d[0]["data"]["trigger"], "queue_full");
    assert_eq!(d[1]["data"]["trigger"], "too_large");
}

/// Counts flushes, so a test sees when the writer pushes its buffer out.
#[derive(Default)]
struct Flushes {
    bytes: Vec<u8>,
    flushes: usize,
}

impl Write for Flushes {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }
}

/// Regression: a server's log of a closed connection stayed in its `BufWriter` until
/// the connection was dropped after draining, so the interop check read it incomplete.
#[test]
fn qlog_flushes_when_the_connection_closes() {
    let t0 = Instant::ZERO;
    let mut w = QlogWriter::new(Flushes::default(), "t", Side::Server, None);
    let state = |new| Event::ConnectionStateUpdated { new };
    w.event(t0, &state(ConnectionState::HandshakeComplete));
    w.event(t0, &state(ConnectionState::HandshakeConfirmed));
    assert_eq!(w.out.as_ref().map(|o| o.flushes), Some(0));
    for (n, s) in [
        ConnectionState::Closing,
        ConnectionState::Draining,
        ConnectionState::Closed,
    ]
    .into_iter()
    .enumerate()
    {
        w.event(t0, &state(s));
        assert_eq!(w.out.as_ref().map(|o| o.flushes), Some(n + 1), "{s:?}");
    }
}

#[test]
fn prague_alpha_and_ce_fraction_are_metrics_extension_fields() {
    let t = |ms: u64| Instant::from_millis(ms);
    let events = vec![
        (
            t(1),
            Event::MetricsUpdated(RecoveryMetrics {
                congestion_window: Some(24_000),
                ecn_alpha_ppm: Some(62_500),
                ..RecoveryMetrics::default()
            }),
        ),
        (
            t(2),
            Event::MetricsUpdated(RecoveryMetrics {
                ecn_alpha_ppm: Some(1_000_000),
                ce_fraction_ppm: Some(40_000),
                ..RecoveryMetrics::default()
            }),
        ),
        (t(3), Event::MetricsUpdated(RecoveryMetrics::default())),
    ];
    let text = write_all(&events);
    // Printed from integers: byte-stable text.
    let s = String::from_utf8_lossy(&text);
    assert!(s.contains("\"prague_alpha\":0.062500"), "{s}");
    let recs = parse(&text);
    let m = find(&recs, "quic:recovery_metrics_updated");
    assert_eq!(m[0]["data"]["prague_alpha"].as_f64(), Some(0.0625));
    assert!(m[0]["data"].get("prague_ce_fraction").is_none());
    assert_eq!(m[1]["data"]["prague_alpha"].as_f64(), Some(1.0));
    assert_eq!(m[1]["data"]["prague_ce_fraction"].as_f64(), Some(0.04));
    // Other controllers log neither.
    assert!(m[2]["data"].get("prague_alpha").is_none());
}
