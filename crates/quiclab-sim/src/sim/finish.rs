//! The end of a run: each flow's results from its endpoints' statistics and the
//! applications' measurements, the links' results, and the output files closed (the
//! pcaps flushed, the key log written after the connections are dropped).

use super::{lock, secs, SimError, Simulation, Stack};
use crate::output::metrics::SideMetrics;
use crate::output::results::{FlowResult, PathSummary, RunResult};
use crate::scenario::Workload;
use quiclab_proto::Instant;
use std::sync::Mutex;

impl Simulation {
    pub(super) fn finish(mut self) -> Result<RunResult, SimError> {
        let end = self.now;
        let mut flows = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let spec = &self.scenario.flows[i];
            let (stats, close) = match &self.nodes[f.client_node].stack {
                Stack::Quic { endpoint, conn, .. } => {
                    let client = conn.and_then(|h| endpoint.connection(h));
                    (
                        client.map(|c| c.stats().clone()).unwrap_or_default(),
                        client
                            .and_then(|c| c.close_reason())
                            .map(|r| format!("{r:?}")),
                    )
                }
                Stack::Pep(_) => Default::default(),
                Stack::Tcp(t) => {
                    for n in [f.client_node, f.server_node] {
                        if let Stack::Tcp(t) = &self.nodes[n].stack {
                            t.finish_metrics();
                        }
                    }
                    let stats = quiclab_proto::ConnectionStats {
                        handshake_completed_at: t.handshake_completed_at(),
                        ..Default::default()
                    };
                    (stats, t.close_reason())
                }
            };
            let m = &f.measure;
            let from = self.window.from.max(secs(spec.start_s));
            let to = self.window.to.min(end);
            let span = to.saturating_duration_since(from).as_secs_f64();
            let bin_s = self.window.bin.as_secs_f64();
            let first = m.requests.first();
            let mut result = FlowResult {
                name: spec.name.clone(),
                workload: match spec.workload {
                    Workload::Bulk { .. } => "bulk".into(),
                    Workload::Request { .. } => "request".into(),
                    Workload::Page { .. } => "page".into(),
                    Workload::Search { .. } => "search".into(),
                    Workload::Video { .. } => "video".into(),
                    Workload::Datagram { .. } => "datagram".into(),
                    Workload::Media { .. } => "media".into(),
                },
                start_s: spec.start_s,
                handshake_done_s: stats.handshake_completed_at.map(|t| t.as_secs_f64()),
                ttfb_s: first
                    .and_then(|r| r.1)
                    .map(|t| t.as_secs_f64() - spec.start_s),
                // A page's last byte is its last object's (the page load time).
                ttlb_s: match spec.workload {
                    Workload::Page { .. } | Workload::Search { .. } => m.done_at,
                    _ => first.and_then(|r| r.2),
                }
                .map(|t| t.as_secs_f64() - spec.start_s),
                goodput_bytes: m.delivered,
                goodput_bps: if span > 0.0 {
                    m.window_bytes as f64 * 8.0 / span
                } else {
                    0.0
                },
                goodput_series: m
                    .bins
                    .iter()
                    .map(|(&b, &bytes)| (b as f64 * bin_s, bytes as f64 * 8.0 / bin_s))
                    .collect(),
                client_first_pto_ms: stats.first_pto.map(|d| d.as_secs_f64() * 1e3),
                client_first_sample_pto_ms: stats.first_sample_pto.map(|d| d.as_secs_f64() * 1e3),
                client_ack_frequency_active: stats.ack_frequency_active,
                client: finished(&f.client_metrics, end),
                server: finished(&f.server_metrics, end),
                close,
                incomplete: m.incomplete(&spec.workload),
                pep: f.pep_node.and_then(|n| match &self.nodes[n].stack {
                    Stack::Pep(p) => Some(p.result()),
                    _ => None,
                }),
                ..Default::default()
            };
            if let Some(d) = &m.datagram {
                d.fill(&mut result);
            }
            if let Some(media) = &m.media {
                media.fill(&mut result);
            }
            if let Some(web) = &m.web {
                web.fill(&mut result, &m.requests, secs(spec.start_s), end);
            }
            result.path_events = self.path_event_results(i);
            result.path_summary = PathSummary::of(&result.path_events);
            result.paths = self.multipath_results(i);
            result.client.spurious_congestion_events = stats.spurious_congestion_events;
            result.server.spurious_congestion_events = self.server_spurious(f.server_node);
            result.client_host = self.host_stats(f.client_node, end.as_secs_f64());
            result.server_host = self.host_stats(f.server_node, end.as_secs_f64());
            flows.push(result);
        }
        let span = self
            .window
            .to
            .min(end)
            .saturating_duration_since(self.window.from)
            .as_secs_f64();
        let links = self.net.links.iter().map(|l| l.result(span)).collect();
        // Drop the connections (and their qlog writers) before writing the key log.
        self.nodes.clear();
        if let Some(p) = self.all_pcap.take() {
            use std::io::Write;
            let _ = p.into_inner().flush();
        }
        for l in &mut self.net.links {
            if let Some(p) = l.pcap.take() {
                use std::io::Write;
                let _ = p.into_inner().flush();
            }
        }
        if self.scenario.measure.pcap {
            if let Some(out) = &self.out {
                let path = out.join("pcap").join("keys.log");
                let lines = self
                    .key_log
                    .lines
                    .lock()
                    .map(|l| l.join("\n") + "\n")
                    .unwrap_or_default();
                std::fs::write(&path, lines).map_err(|source| SimError::Output {
                    path: path.display().to_string(),
                    source,
                })?;
            }
        }
        Ok(RunResult {
            scenario: self.scenario.name.clone(),
            seed: self.scenario.seed,
            end_s: end.as_secs_f64(),
            events: self.event_count,
            series_interval_s: self.window.bin.as_secs_f64(),
            flows,
            links,
        })
    }
}

/// One side's metrics with the window statistics of a run that ended at `end`.
impl Simulation {
    /// The spurious congestion episodes of a QUIC server's connections (one per flow
    /// on its own node; 0 for other stacks or once the connection is gone).
    fn server_spurious(&self, node: usize) -> u64 {
        match &self.nodes[node].stack {
            Stack::Quic { endpoint, .. } => endpoint
                .handles()
                .filter_map(|h| endpoint.connection(h))
                .map(|c| c.stats().spurious_congestion_events)
                .sum(),
            _ => 0,
        }
    }
}

fn finished(m: &Mutex<SideMetrics>, end: Instant) -> SideMetrics {
    let mut s = lock(m).clone();
    s.finish_window(end.as_secs_f64());
    s
}
