//! Per-connection measurements collected from the connection's event stream.

use quiclab_proto::events::{Event, EventSink};
use quiclab_proto::time::Instant;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Packets and bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub packets: u64,
    pub bytes: u64,
}

/// What one endpoint of a connection sent and observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SideMetrics {
    /// Packets sent by packet type ("initial", "handshake", "1RTT", ...): count and bytes.
    pub sent_by_packet_type: BTreeMap<String, Count>,
    /// Frames sent by frame type ("ack", "stream", ...): count and encoded bytes.
    pub sent_by_frame_type: BTreeMap<String, Count>,
    pub received_by_packet_type: BTreeMap<String, Count>,
    pub packets_lost: u64,
    pub pto_expirations: u64,
    /// (time s, congestion window bytes) at each recovery metrics update.
    pub cwnd: Vec<(f64, u64)>,
    /// (time s, smoothed RTT ms, latest RTT ms).
    pub rtt: Vec<(f64, f64, f64)>,
    /// Every RTT sample (latest_rtt, ms) in order.
    pub rtt_samples: Vec<f64>,
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
        let _ = (now, event);
        todo!("S-C")
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
}
