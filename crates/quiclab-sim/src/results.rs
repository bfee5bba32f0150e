//! The results of one simulation run, as data (serde): everything the JSON and CSV
//! outputs and the summary table are made from.

use crate::output::metrics::SideMetrics;
use serde::Serialize;

/// One flow's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowResult {
    pub name: String,
    /// "bulk", "request", ...
    pub workload: String,
    /// When the flow's client started connecting, seconds since the simulation start.
    pub start_s: f64,
    /// When the client completed the handshake, seconds since the simulation start
    /// (`None` if it never did); subtract `start_s` for the handshake duration.
    pub handshake_done_s: Option<f64>,
    /// Time to the first and to the last byte of the first request's response,
    /// seconds from the flow's start (so they include the handshake).
    pub ttfb_s: Option<f64>,
    pub ttlb_s: Option<f64>,
    /// Application bytes delivered to the receiving application.
    pub goodput_bytes: u64,
    /// Mean goodput over the measurement window, bit/s.
    pub goodput_bps: f64,
    /// (interval start s, bit/s) per sampling interval.
    pub goodput_series: Vec<(f64, f64)>,
    /// First probe timeout armed by the client, ms.
    pub client_first_pto_ms: Option<f64>,
    /// The client's PTO right after its first RTT sample (3x that sample, RFC 9002
    /// §6.2.1), ms: the "first PTO" of the instant-ACK study.
    pub client_first_sample_pto_ms: Option<f64>,
    /// Both sides negotiated the ack-frequency extension, so the client's
    /// `ack_frequency` policy could act (`Connection::ack_frequency_active`).
    pub client_ack_frequency_active: bool,
    pub client: SideMetrics,
    pub server: SideMetrics,
    /// The connection's close reason, if it closed.
    pub close: Option<String>,
}

/// One link direction's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkResult {
    pub name: String,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Wire throughput (IP packets) over the measurement window, bit/s.
    pub throughput_bps: f64,
    /// UDP payload (QUIC-layer) throughput over the measurement window, bit/s.
    pub payload_throughput_bps: f64,
    pub queue_drops: u64,
    pub impairment_drops: u64,
    pub max_queue_packets: u64,
    /// (time s, queue length in packets) at each change, if traces are on.
    pub queue_series: Vec<(f64, u64)>,
}

/// Everything a run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    /// Simulated time at the end, seconds.
    pub end_s: f64,
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
}
