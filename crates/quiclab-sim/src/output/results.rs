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
    /// seconds from the flow's start (so they include the handshake). For a `page`
    /// workload, `ttlb_s` is the whole page's load time (its last object's last byte).
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
    /// Why the workload's transfer did not complete (a stream aborted, or the run ended
    /// first); `None` when it completed or has no end. An incomplete request flow has no
    /// `ttlb_s` for the unanswered request.
    pub incomplete: Option<String>,
    /// `search`: the flow's start (connection setup included) to the last embedded
    /// object's last byte, seconds (seed 003 §6.3's Search Latency; `ttfb_s` is the
    /// HTML's time to first byte). Absent for other workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_latency_s: Option<f64>,
    /// `video`: the flow's start to the start of playback, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video_startup_s: Option<f64>,
    /// `video`: stalls during playback, their total time and the time played, seconds;
    /// `rebuffer_rate` = rebuffer_s / (rebuffer_s + play_s) (seed 003 §6.5), absent
    /// when playback never started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuffer_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuffer_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub play_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuffer_rate: Option<f64>,
    /// `search` / `video`: each fetch's last byte (the HTML, then the objects; or the
    /// chunks' parts in request order), seconds from the flow's start (`None`: not
    /// complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_done_s: Option<Vec<Option<f64>>>,
    /// The gateway's PEP for this flow (a TCP flow with `[topology.gateway.pep]`
    /// enabled); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pep: Option<PepResult>,
    /// `datagram`: what the RFC 9221 DATAGRAM workload measured; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub datagrams: Option<DatagramResult>,
    /// `media`: what the interactive media workload measured; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<MediaResult>,
    /// Each path event's effect on the flow, in the order they happened: the client
    /// host's interface events (`[topology.client]`) and the flow's NAT rebindings;
    /// absent without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path_events: Vec<PathEventResult>,
    /// `path_events` summed up; absent without any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_summary: Option<PathSummary>,
    /// With multipath negotiated (`transport.multipath`, `sim/multipath.rs`): each
    /// path the client opened, in the order it opened them (path 0 on the first
    /// interface first), with the datagrams that crossed it; absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<FlowPathResult>,
    /// The client's and the server's host model counters (`host/stats.rs`): receive
    /// queue and socket drops, CPU busy time and utilisation, timer lateness; absent
    /// for an endpoint without a host table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_host: Option<crate::host::HostStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host: Option<crate::host::HostStats>,
}

/// One multipath path of a flow (`FlowResult::paths`, draft-ietf-quic-multipath §3):
/// the datagrams of the flow that the client received on it and sent on it, as the
/// simulator saw them cross the path's interface while the path was that interface's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowPathResult {
    pub path_id: u32,
    /// The client host's interface it runs on.
    pub interface: String,
    /// The client marked it backup (PATH_STATUS_BACKUP, §3.3).
    pub backup: bool,
    /// UDP payload bytes and datagrams received by the client on it.
    pub bytes_rx: u64,
    pub datagrams_rx: u64,
    /// UDP payload bytes and datagrams the client sent on it.
    pub bytes_tx: u64,
    pub datagrams_tx: u64,
    /// Abandoned before the end of the run (§3.4), by either end.
    pub abandoned: bool,
    /// Its smoothed RTT at the end as the client's recovery for it had it, seconds
    /// (`None` for path 0, which `FlowResult` covers, or without a sample). The
    /// peer's PATH_ACKs may come back on another path (draft §4.1), so this is not
    /// the path's own round trip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub srtt_s: Option<f64>,
}

/// A flow's path events together (`FlowResult::path_summary`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathSummary {
    pub events: u64,
    /// Events after which delivery never resumed (the run ended first); the stall
    /// figures leave them out.
    pub unresumed: u64,
    /// The stalls of the other events: their sum and the longest, seconds (0 with
    /// none).
    pub stall_s_total: f64,
    pub stall_s_max: f64,
    /// `retransmitted_bytes` summed: the stream bytes both ends retransmitted from
    /// the first event on.
    pub retransmitted_bytes: u64,
}

impl PathSummary {
    /// The summary of `events` (`None` without any).
    pub fn of(events: &[PathEventResult]) -> Option<PathSummary> {
        if events.is_empty() {
            return None;
        }
        let stalls: Vec<f64> = events.iter().filter_map(|e| e.stall_s).collect();
        Some(PathSummary {
            events: events.len() as u64,
            unresumed: (events.len() - stalls.len()) as u64,
            stall_s_total: stalls.iter().sum(),
            stall_s_max: stalls.iter().copied().fold(0.0, f64::max),
            retransmitted_bytes: events.iter().map(|e| e.retransmitted_bytes).sum(),
        })
    }
}

/// One path event as one flow saw it (`sim/paths.rs`). Times are seconds; `None`
/// where it never happened before the run ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathEventResult {
    /// `"down"`, `"up"`, `"degrade"`, `"handover"` or `"rebind"`.
    pub event: String,
    /// The interface (a handover's old one); `None` for a rebinding.
    pub interface: Option<String>,
    /// When it was measured, seconds since the start: the event's time (a handover's:
    /// when its old interface went down).
    pub at_s: f64,
    /// Time without delivery around it: from the receiving application's last
    /// delivery at or before `at_s` to its first after.
    pub stall_s: Option<f64>,
    /// From `at_s` to that first delivery after it.
    pub resume_s: Option<f64>,
    /// From `at_s` to the receiving application's first delivery at an instant its
    /// end got a datagram on the new path (the client's address other than the one
    /// it used at `at_s`, as for `new_path_s`): delivery that data on the new path
    /// allowed. It differs from `resume_s` when datagrams already past the old
    /// interface keep arriving after `at_s` (an upload's: the interface is its
    /// first hop).
    pub new_path_resume_s: Option<f64>,
    /// Time without delivery before that delivery: from the receiving application's
    /// last delivery before it (at or before `at_s`, or after it from the old path)
    /// to it.
    pub new_path_stall_s: Option<f64>,
    /// From `at_s` to the first datagram the client received at another address
    /// than the one it used at `at_s` (an interface, or a NAT's public address): the
    /// first byte on the new path.
    pub new_path_s: Option<f64>,
    /// From `at_s` to the client's first move to another interface (`None`: it did
    /// not move, or cannot, as for a rebinding).
    pub moved_s: Option<f64>,
    /// STREAM data bytes both ends retransmitted from `at_s` until the flow's next
    /// event (or the end of the run).
    pub retransmitted_bytes: u64,
}

/// A `media` flow's frames (`workload/media.rs`). `deadline_misses = frames_sent −
/// frames_on_time`: a frame later than its deadline or never complete is a miss.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MediaResult {
    /// `"datagram"` or `"stream"`.
    pub mode: String,
    /// Frames the sender generated.
    pub frames_sent: u64,
    /// Frames the receiving application got complete (at any time).
    pub frames_delivered: u64,
    /// Of those, the ones within the deadline.
    pub frames_on_time: u64,
    pub deadline_misses: u64,
    /// Frames on time per second of the workload's duration (the playable frame rate).
    pub received_fps: f64,
    /// One-way latency of complete frames, application to application (the sender's
    /// queueing included), ms: median, 99th percentile (linear between closest ranks, `quiclab_link::quantile`), maximum.
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    /// Datagram mode: DATAGRAM fragments handed to QUIC, and fragments (or whole frames
    /// without room for one) it refused.
    pub fragments_sent: u64,
    pub fragments_refused: u64,
}

/// A `datagram` flow's counts (`workload/datagram.rs`). At the end of the run,
/// `frames_sent = delivered + lost` (frames still in flight count as lost) and
/// `sent = frames_sent + dropped_at_sender + still queued`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DatagramResult {
    /// Payloads the application handed to QUIC.
    pub sent: u64,
    /// Payloads QUIC refused (larger than fits one packet or the peer's limit).
    pub refused: u64,
    /// DATAGRAM frames QUIC sent (each once: never retransmitted).
    pub frames_sent: u64,
    /// Payloads dropped from the sender's queue (its bounds reached while the
    /// congestion controller held them back).
    pub dropped_at_sender: u64,
    /// Distinct payloads the receiving application got.
    pub delivered: u64,
    /// Frames sent but not delivered.
    pub lost: u64,
    /// Extra copies received (network duplication).
    pub duplicates: u64,
    /// One-way delay of delivered payloads, application to application (the
    /// sender's queueing included), ms: median, 90th, 99th percentile (linear
    /// between closest ranks, `quiclab_link::quantile`) and maximum.
    pub owd_p50_ms: Option<f64>,
    pub owd_p90_ms: Option<f64>,
    pub owd_p99_ms: Option<f64>,
    pub owd_max_ms: Option<f64>,
}

/// A flow's split-connection PEP (`workload/pep.rs`): its relay buffers and its two TCP ends.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PepResult {
    /// Each relay buffer's capacity (`topology.gateway.pep.buffer_bytes`).
    pub buffer_bytes: u64,
    /// The most bytes the client -> server / server -> client buffer held at once.
    pub max_up_buffered: u64,
    pub max_down_buffered: u64,
    /// Bytes handed on to the server's / the client's side.
    pub relayed_up_bytes: u64,
    pub relayed_down_bytes: u64,
    /// The end facing the client (over the satellite) and the one facing the server.
    pub satellite: PepSideResult,
    pub terrestrial: PepSideResult,
}

/// One of the PEP's TCP connections (quiclab_tcp::TcpStats).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PepSideResult {
    pub segments_sent: u64,
    pub segments_received: u64,
    pub retransmitted_segments: u64,
    pub lost_segments: u64,
    pub pure_acks_sent: u64,
}

/// One link direction's results (the link models' type).
pub use quiclab_link::link::LinkResult;

/// Everything a run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    /// Simulated time at the end, seconds.
    pub end_s: f64,
    pub events: u64,
    /// The bin width of every `goodput_series`, seconds (`measure.interval_s`).
    pub series_interval_s: f64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
}

/// The mean of a binned rate series (`(bin start s, value)` pairs, bins `interval_s`
/// wide, such as `FlowResult::goodput_series`) over the bins that start in
/// `[from, to)`. Bins absent from the series (nothing delivered) count as zero, so a
/// flow that stalls is not flattered: the divisor is the number of bins the window
/// spans, not the number present. `None` for an empty or invalid window. This is the
/// one definition of a windowed mean: the lab's `path@from:to` metrics and the
/// simulator's validation tests both use it.
pub fn window_mean(series: &[(f64, f64)], interval_s: f64, from: f64, to: f64) -> Option<f64> {
    if !(interval_s > 0.0 && from.is_finite() && to.is_finite() && from < to) {
        return None;
    }
    // Bins are indexed by their start: bin k starts at k * interval_s.
    let first = (from / interval_s).ceil();
    let end = (to / interval_s).ceil();
    let bins = end - first;
    if bins < 1.0 {
        return None;
    }
    let sum: f64 = series
        .iter()
        .filter(|(t, y)| *t >= from && *t < to && y.is_finite())
        .map(|(_, y)| y)
        .sum();
    Some(sum / bins)
}

#[cfg(test)]
mod tests {
    use super::window_mean;

    #[test]
    fn empty_bins_count_as_zero() {
        // Bins of 1 s; nothing delivered in [0, 1) and [3, 4).
        let s = [(1.0, 4.0), (2.0, 8.0), (4.0, 2.0)];
        assert_eq!(window_mean(&s, 1.0, 0.0, 5.0), Some(14.0 / 5.0));
        assert_eq!(window_mean(&s, 1.0, 1.0, 3.0), Some(6.0));
        // A window with no delivery at all is zero, not missing.
        assert_eq!(window_mean(&s, 1.0, 10.0, 12.0), Some(0.0));
        // Bins of 0.5 s: [0, 2) spans 4 bins.
        let h = [(0.5, 2.0), (1.0, 2.0)];
        assert_eq!(window_mean(&h, 0.5, 0.0, 2.0), Some(1.0));
        assert_eq!(window_mean(&h, 0.0, 0.0, 2.0), None);
        assert_eq!(window_mean(&h, 0.5, 2.0, 1.0), None);
    }
}
