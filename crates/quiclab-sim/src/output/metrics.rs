//! Per-connection measurements collected from the connection's event stream.

use crate::output::ack_sizes::AckSizes;
use crate::output::loss_epochs::LossEpochs;
use crate::output::window_stats::{WindowStats, WindowSummary};
use quiclab_proto::events::{
    packet_type_name, Event, EventSink, FrameDetail, FrameKind, RecoveryMetrics,
};
use quiclab_proto::{Instant, PacketType};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Packets and bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub packets: u64,
    pub bytes: u64,
}

impl Count {
    fn add(&mut self, bytes: usize) {
        self.packets += 1;
        self.bytes += bytes as u64;
    }
}

/// Adds `c` under `key`, allocating the key's `String` only the first time it is seen.
fn merge(map: &mut BTreeMap<String, Count>, key: &str, c: &Count) {
    let e = match map.get_mut(key) {
        Some(e) => e,
        None => map.entry(key.to_owned()).or_default(),
    };
    e.packets += c.packets;
    e.bytes += c.bytes;
}

/// Every packet type, in the order of [`packet_index`].
const PACKET_TYPES: [PacketType; 6] = [
    PacketType::Initial,
    PacketType::Handshake,
    PacketType::ZeroRtt,
    PacketType::OneRtt,
    PacketType::Retry,
    PacketType::VersionNegotiation,
];

fn packet_index(t: PacketType) -> usize {
    match t {
        PacketType::Initial => 0,
        PacketType::Handshake => 1,
        PacketType::ZeroRtt => 2,
        PacketType::OneRtt => 3,
        PacketType::Retry => 4,
        PacketType::VersionNegotiation => 5,
    }
}

/// The per-packet counters while a run goes on: arrays and a short list instead of
/// string-keyed maps (a map lookup per frame of every packet was ~3.6% of the
/// simulator's instructions). [`SideMetrics::finish_window`] adds them into the maps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HotCounts {
    sent_by_packet_type: [Count; 6],
    received_by_packet_type: [Count; 6],
    /// (frame type name, count) in order of first appearance; a handful of types.
    sent_by_frame_type: Vec<(&'static str, Count)>,
}

impl HotCounts {
    fn frame(&mut self, name: &'static str, bytes: usize) {
        // Names are the events' `&'static str` constants: compare the pointer first.
        let found = (self.sent_by_frame_type.iter_mut())
            .find(|(n, _)| std::ptr::eq(*n, name) || *n == name);
        match found {
            Some((_, c)) => c.add(bytes),
            None => {
                let mut c = Count::default();
                c.add(bytes);
                self.sent_by_frame_type.push((name, c));
            }
        }
    }
}

/// What one endpoint of a connection sent and observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SideMetrics {
    /// Every packet sent (all types; a coalesced datagram counts each packet) and its
    /// bytes: this side's whole volume, e.g. a download's return-path traffic.
    pub sent: Count,
    /// Packets sent by packet type ("initial", "handshake", "1RTT", ...): count and bytes.
    pub sent_by_packet_type: BTreeMap<String, Count>,
    /// Frames sent by frame type ("ack", "stream", ...): count and encoded bytes.
    pub sent_by_frame_type: BTreeMap<String, Count>,
    pub received_by_packet_type: BTreeMap<String, Count>,
    /// Received packets that carried an ack-eliciting frame (RFC 9002 §2).
    pub ack_eliciting_received: u64,
    pub packets_lost: u64,
    /// Congestion episodes whose lost packets were all acknowledged later (RFC 9438
    /// §4.9.2): losses this side declared that were not losses (QUIC flows; 0 for TCP).
    pub spurious_congestion_events: u64,
    /// This side's loss epochs as a sender (`output/loss_epochs.rs`): `Some` only when
    /// the scenario sets `measure.loss_epochs` and the flow is QUIC, and left out of
    /// the results otherwise, so other runs write the same results as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_epochs: Option<LossEpochs>,
    /// The ACK frames this side sent, over time (`output/ack_sizes.rs`): `Some` only
    /// when the scenario sets `measure.ack_sizes` and the flow is QUIC, and left out of
    /// the results otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_sizes: Option<AckSizes>,
    pub pto_expirations: u64,
    /// (time s, congestion window bytes) at each recovery metrics update.
    pub cwnd: Vec<(f64, u64)>,
    /// (time s, new phase, congestion window bytes after it) at each Careful Resume
    /// phase change (draft-ietf-tsvwg-careful-resume-qlog §3), with the cwnd traces;
    /// left out of the results when there is none, so runs without Careful Resume
    /// write the same results as before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub careful_resume_phases: Vec<(f64, String, u64)>,
    /// (time s, smoothed RTT ms, latest RTT ms).
    pub rtt: Vec<(f64, f64, f64)>,
    /// Every RTT sample (latest_rtt, ms) in order. One entry per metrics update that
    /// carries `latest_rtt`, i.e. per ACK processed: an ACK that yields no new sample
    /// repeats the previous value.
    pub rtt_samples: Vec<f64>,
    /// The window and RTT statistics over the measurement window (always collected;
    /// filled in when the run ends, see [`SideMetrics::finish_window`]).
    pub window: WindowSummary,
    /// Their accumulator (not part of the results).
    #[serde(skip)]
    pub window_stats: WindowStats,
    /// Packet and frame counts not yet added to the maps above (not part of the results).
    #[serde(skip)]
    pub hot: HotCounts,
}

impl SideMetrics {
    /// Empty metrics whose window statistics cover `[from_s, to_s)` (seconds since the
    /// simulation start; `to_s` may be infinite).
    pub fn with_window(from_s: f64, to_s: f64) -> Self {
        SideMetrics {
            window_stats: WindowStats::new(from_s, to_s),
            ..SideMetrics::default()
        }
    }

    /// Writes the window statistics of a run that ended at `end_s` into `window`, and
    /// the packet and frame counts into their maps (read the maps only after this).
    pub fn finish_window(&mut self, end_s: f64) {
        self.window = self.window_stats.summary(end_s);
        self.flush_counts();
    }

    /// Adds the running counts into the maps (idempotent: the counts are moved).
    fn flush_counts(&mut self) {
        let hot = std::mem::take(&mut self.hot);
        for (i, t) in PACKET_TYPES.into_iter().enumerate() {
            let name = packet_type_name(t);
            for (map, c) in [
                (&mut self.sent_by_packet_type, &hot.sent_by_packet_type[i]),
                (
                    &mut self.received_by_packet_type,
                    &hot.received_by_packet_type[i],
                ),
            ] {
                if c.packets > 0 {
                    merge(map, name, c);
                }
            }
        }
        for (name, c) in &hot.sent_by_frame_type {
            merge(&mut self.sent_by_frame_type, name, c);
        }
    }

    /// Packets and bytes sent, all packet types.
    pub fn sent_total(&self) -> Count {
        sum(&self.sent_by_packet_type)
    }

    /// Packets and bytes received, all packet types.
    pub fn received_total(&self) -> Count {
        sum(&self.received_by_packet_type)
    }

    /// Ack-eliciting packets received per ACK frame sent: the ACK ratio this side
    /// actually achieved (2 for RFC 9000's default, 10 for 1:10); `None` without ACKs.
    pub fn ack_eliciting_per_ack(&self) -> Option<f64> {
        let acks = self.frames_sent("ack").packets;
        (acks > 0).then(|| self.ack_eliciting_received as f64 / acks as f64)
    }

    /// Frames of one type sent and their encoded bytes (zero if none).
    pub fn frames_sent(&self, frame_type: &str) -> Count {
        self.sent_by_frame_type
            .get(frame_type)
            .cloned()
            .unwrap_or_default()
    }

    /// Feeds the window statistics (every update, traces or not).
    fn record_window(&mut self, t: f64, m: &RecoveryMetrics) {
        if let Some(cwnd) = m.congestion_window {
            self.window_stats.on_cwnd(t, cwnd);
        }
        if let Some(l) = m.latest_rtt {
            self.window_stats.on_rtt(t, ms(l));
        }
    }

    fn record_metrics(&mut self, t: f64, m: &RecoveryMetrics) {
        if let Some(cwnd) = m.congestion_window {
            self.cwnd.push((t, cwnd));
        }
        let srtt = m.smoothed_rtt.map(ms);
        let latest = m.latest_rtt.map(ms);
        if let Some(l) = latest {
            self.rtt_samples.push(l);
        }
        if srtt.is_some() || latest.is_some() {
            // Updates carry only changed fields: fill the other from the last point so
            // every row is complete (or from this update's other value at the start).
            let last = self.rtt.last().map(|&(_, s, l)| (s, l));
            let s = srtt.or(last.map(|p| p.0)).or(latest).unwrap_or_default();
            let l = latest.or(last.map(|p| p.1)).or(srtt).unwrap_or_default();
            self.rtt.push((t, s, l));
        }
    }
}

fn sum(map: &BTreeMap<String, Count>) -> Count {
    map.values().fold(Count::default(), |a, c| Count {
        packets: a.packets + c.packets,
        bytes: a.bytes + c.bytes,
    })
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// An event sink that fills a shared [`SideMetrics`]; the simulator keeps a clone of the
/// handle to read it after the run.
#[derive(Clone, Debug, Default)]
pub struct MetricsSink {
    pub metrics: Arc<Mutex<SideMetrics>>,
    /// Record cwnd/RTT traces (they can be large).
    pub traces: bool,
}

impl EventSink for MetricsSink {
    fn event(&mut self, now: Instant, event: &Event) {
        // Most events count nothing: skip the lock for them.
        // (Metrics updates always count: they feed the window statistics.)
        let wanted = matches!(
            event,
            Event::PacketSent { .. }
                | Event::PacketReceived { .. }
                | Event::PacketLost { .. }
                | Event::PtoExpired { .. }
                | Event::MetricsUpdated(_)
                | Event::CarefulResumePhaseUpdated(_)
        );
        if !wanted {
            return;
        }
        // A poisoned lock only means another holder panicked; the counts are still usable.
        let mut m = self.metrics.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::PacketSent {
                header,
                size,
                frames,
            } => {
                m.sent.add(*size);
                m.hot.sent_by_packet_type[packet_index(header.ty)].add(*size);
                for f in frames {
                    m.hot.frame(f.frame_type_name(), f.wire_len());
                    if let (Some(a), FrameKind::Ack { range_count, .. }) =
                        (&mut m.ack_sizes, &f.kind)
                    {
                        a.on_ack_sent(now.as_secs_f64(), f.wire_len(), *range_count);
                    }
                }
            }
            Event::PacketReceived {
                header,
                size,
                frames,
            } => {
                m.hot.received_by_packet_type[packet_index(header.ty)].add(*size);
                if frames.iter().any(|f| f.is_ack_eliciting()) {
                    m.ack_eliciting_received += 1;
                }
            }
            Event::PacketLost { .. } => {
                m.packets_lost += 1;
                if let Some(e) = &mut m.loss_epochs {
                    e.on_lost(now.saturating_duration_since(Instant::ZERO));
                }
            }
            Event::PtoExpired { .. } => m.pto_expirations += 1,
            Event::CarefulResumePhaseUpdated(u) if self.traces => {
                let entry = (
                    u.at.as_secs_f64(),
                    u.new.name().to_string(),
                    u.congestion_window,
                );
                m.careful_resume_phases.push(entry);
            }
            Event::MetricsUpdated(r) => {
                if let (Some(e), Some(srtt)) = (&mut m.loss_epochs, r.smoothed_rtt) {
                    e.on_smoothed_rtt(srtt);
                }
                let t = now.as_secs_f64();
                m.record_window(t, r);
                if self.traces {
                    m.record_metrics(t, r);
                }
            }
            _ => {}
        }
    }

    /// Only frame types, sizes and ack-elicitation are counted.
    fn frame_detail(&self) -> FrameDetail {
        FrameDetail::Counts
    }
}

/// Fans one connection's events out to several sinks (metrics and qlog).
pub struct Tee(pub Vec<Box<dyn EventSink>>);

impl EventSink for Tee {
    fn event(&mut self, now: Instant, event: &Event) {
        for s in &mut self.0 {
            s.event(now, event);
        }
    }

    /// The most any of the sinks reads.
    fn frame_detail(&self) -> FrameDetail {
        (self.0.iter().map(|s| s.frame_detail()))
            .max()
            .unwrap_or(FrameDetail::Counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quiclab_proto::events::{FrameSummary, KeyType, LossTrigger, PacketHeaderInfo};
    use quiclab_proto::raw::{AckFrame, Frame, StreamFrame};
    use quiclab_proto::{ConnectionId, Dir, PacketType, Side, StreamId};
    use std::time::Duration;

    fn header(ty: PacketType, pn: u64) -> PacketHeaderInfo {
        PacketHeaderInfo {
            ty,
            pn: Some(pn),
            dcid: ConnectionId::EMPTY,
            scid: None,
            path_id: None,
        }
    }

    fn sent(ty: PacketType, pn: u64, size: usize, frames: &[Frame<'_>]) -> Event {
        Event::PacketSent {
            header: header(ty, pn),
            size,
            frames: frames.iter().map(FrameSummary::from).collect(),
        }
    }

    fn ack(largest: u64) -> Frame<'static> {
        Frame::Ack(AckFrame {
            ack_delay: 3,
            ranges: vec![0..=largest],
            ecn: None,
        })
    }

    fn rtt_update(srtt: Option<u64>, latest: Option<u64>, cwnd: Option<u64>) -> Event {
        Event::MetricsUpdated(RecoveryMetrics {
            smoothed_rtt: srtt.map(Duration::from_millis),
            latest_rtt: latest.map(Duration::from_millis),
            congestion_window: cwnd,
            ..Default::default()
        })
    }

    fn run(traces: bool) -> SideMetrics {
        let mut sink = MetricsSink {
            traces,
            ..Default::default()
        };
        let data = [7u8; 1000];
        let stream = Frame::Stream(StreamFrame {
            id: StreamId::new(Side::Client, Dir::Bi, 0),
            offset: 0,
            fin: false,
            data: &data,
        });
        let events = [
            (
                0,
                sent(
                    PacketType::Initial,
                    0,
                    1200,
                    &[Frame::Ping, Frame::Padding { len: 1100 }],
                ),
            ),
            (1, sent(PacketType::Handshake, 0, 60, &[ack(0)])),
            (
                2,
                sent(PacketType::OneRtt, 0, 1050, &[ack(3), stream.clone()]),
            ),
            (3, sent(PacketType::OneRtt, 1, 1040, &[stream])),
            (
                4,
                Event::PacketReceived {
                    header: header(PacketType::OneRtt, 5),
                    size: 40,
                    frames: vec![FrameSummary::from(&ack(1))],
                },
            ),
            (5, rtt_update(Some(30), Some(30), Some(14000))),
            (
                6,
                Event::PacketLost {
                    ty: PacketType::OneRtt,
                    pn: 0,
                    trigger: LossTrigger::TimeThreshold,
                    path_id: None,
                },
            ),
            (7, Event::PtoExpired { pto_count: 1 }),
            (8, rtt_update(Some(35), None, None)),
            (9, rtt_update(None, Some(50), Some(7000))),
            (
                10,
                Event::KeyDiscarded {
                    key: KeyType::Initial,
                },
            ),
        ];
        for (ms, e) in &events {
            sink.event(Instant::from_millis(*ms), e);
        }
        let mut m = sink.metrics.lock().unwrap().clone();
        m.finish_window(1.0);
        m
    }

    #[test]
    fn counts_packets_and_frames() {
        let m = run(false);
        let c = |p, b| Count {
            packets: p,
            bytes: b,
        };
        assert_eq!(m.sent_by_packet_type["initial"], c(1, 1200));
        assert_eq!(m.sent_by_packet_type["handshake"], c(1, 60));
        assert_eq!(m.sent_by_packet_type["1RTT"], c(2, 2090));
        assert_eq!(m.sent_total(), c(4, 3350));
        assert_eq!(
            m.sent,
            m.sent_total(),
            "the running total matches the per-type sum"
        );
        assert_eq!(m.received_by_packet_type["1RTT"], c(1, 40));
        assert_eq!(m.received_total(), c(1, 40));

        let len = |f: &Frame<'_>| FrameSummary::from(f).wire_len() as u64;
        assert_eq!(m.frames_sent("ping"), c(1, 1));
        assert_eq!(m.frames_sent("padding"), c(1, 1100));
        assert_eq!(m.frames_sent("ack"), c(2, len(&ack(0)) + len(&ack(3))));
        let s = m.frames_sent("stream");
        assert_eq!(s.packets, 2);
        assert!(s.bytes > 2000 && s.bytes < 2020, "{s:?}");
        assert_eq!(m.frames_sent("crypto"), c(0, 0));
        assert_eq!(m.sent_by_frame_type.len(), 4);

        assert_eq!(m.packets_lost, 1);
        assert_eq!(m.pto_expirations, 1);
        // No traces unless asked for.
        assert!(m.cwnd.is_empty() && m.rtt.is_empty() && m.rtt_samples.is_empty());
    }

    #[test]
    fn traces_fill_missing_fields() {
        let m = run(true);
        assert_eq!(m.cwnd, vec![(0.005, 14000), (0.009, 7000)]);
        assert_eq!(
            m.rtt,
            vec![
                (0.005, 30.0, 30.0),
                (0.008, 35.0, 30.0),
                (0.009, 35.0, 50.0)
            ]
        );
        assert_eq!(m.rtt_samples, vec![30.0, 50.0]);
        // Counters are the same with traces on.
        assert_eq!(m.sent_total(), run(false).sent_total());
    }

    /// With `loss_epochs` on, the sink feeds it the sender's smoothed RTT and its
    /// declared losses at the event times; off (the default), nothing is collected.
    #[test]
    fn loss_epochs_from_events_only_when_asked() {
        let lost = |pn| Event::PacketLost {
            ty: PacketType::OneRtt,
            pn,
            trigger: LossTrigger::ReorderingThreshold,
            path_id: None,
        };
        let events = [
            (10, rtt_update(Some(40), Some(40), None)),
            (100, lost(1)),
            (120, lost(2)),
            (139, lost(3)),
            (140, lost(9)),
            (500, lost(20)),
        ];
        let feed = |on: bool| {
            let sink = MetricsSink::default();
            if on {
                sink.metrics.lock().unwrap().loss_epochs = Some(LossEpochs::default());
            }
            let mut s = sink.clone();
            for (ms, e) in &events {
                s.event(Instant::from_millis(*ms), e);
            }
            let m = sink.metrics.lock().unwrap().clone();
            m
        };
        let e = feed(true).loss_epochs.expect("collected");
        // [100, 140): three losses; 140 and 500 open epochs of one loss each.
        assert_eq!((e.epochs, e.lost, e.single, e.max), (3, 5, 2, 3));
        let off = feed(false);
        assert_eq!(off.loss_epochs, None);
        assert_eq!(off.packets_lost, 5);
        let json = serde_json::to_string(&off).unwrap();
        assert!(
            !json.contains("loss_epochs"),
            "absent from the results when off"
        );
    }

    #[test]
    fn tee_and_shared_handle() {
        let a = MetricsSink::default();
        let b = MetricsSink::default();
        let mut tee = Tee(vec![Box::new(a.clone()), Box::new(b.clone())]);
        tee.event(Instant::ZERO, &Event::PtoExpired { pto_count: 1 });
        assert_eq!(a.metrics.lock().unwrap().pto_expirations, 1);
        assert_eq!(b.metrics.lock().unwrap().pto_expirations, 1);
    }
}
