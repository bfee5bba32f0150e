//! A cheap estimate of how many events a run will take, so that a scenario whose work is
//! absurd (a 1e9 s stop time with fast cross traffic, an unlimited bulk flow over an
//! unlimited, delay-free link) is refused up front instead of appearing to hang.
//!
//! The estimate is a rough upper bound from rates, durations and workload sizes, not a
//! prediction: it ignores congestion control and losses (which only slow a flow down).
//! A flow moves at most min(link rate, window / RTT) for as long as it is active, and at
//! most its workload's bytes; each data packet costs about [`EVENTS_PER_PACKET_HOP`]
//! events per link it crosses (serialization end, arrival, and its share of the ACKs
//! and timers), and [`HOST_EVENTS_PER_PACKET`] more for each endpoint with a host model.
//! Cross traffic sends (stop - start) / mean gap datagrams. The run itself
//! also stops with an error after `stop.max_events` events.

use super::validate::Check;
use super::{LinkConfig, LinkSide, Scenario, ScenarioError, Topology, Workload};
use quiclab_proto::TransportConfig;

/// `stop.max_events` when absent: about half an hour of simulation at the simulator's
/// usual 0.5-1 million events per wall-clock second.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

/// Events per data packet and link hop (measured on the scenario files: 3 on a saturated
/// point-to-point link with an ACK every two packets, 4 for a download over an
/// asymmetric satellite path, where pacing timers and ACKs weigh more).
const EVENTS_PER_PACKET_HOP: f64 = 4.0;
/// Extra events per data packet for each endpoint of a flow with a host model
/// (`host/`): the CPU's completion of the data packet it receives or of the batch it
/// sends, and of the ACKs that go the other way (measured on bulk_hosts.toml: 2.4
/// events per packet for both hosts together, at most one ACK per packet).
const HOST_EVENTS_PER_PACKET: f64 = 2.0;
/// Events of a flow's handshake and close.
const EVENTS_PER_FLOW: f64 = 100.0;
/// Request bytes per request (`GET /N\r\n` plus stream overhead).
const REQUEST_BYTES: f64 = 32.0;

/// The estimated work of one traffic source.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceWork {
    /// The scenario key of the source (`flows[0]`, `cross_traffic[1]`).
    pub key: String,
    /// Estimated events (may be infinite).
    pub events: f64,
    /// What bounds it, for error messages.
    pub bound: String,
}

/// The limit on events: `stop.max_events`, or [`DEFAULT_MAX_EVENTS`].
pub fn max_events(s: &Scenario) -> u64 {
    s.stop.max_events.unwrap_or(DEFAULT_MAX_EVENTS)
}

impl Scenario {
    /// The estimated events of every flow and cross-traffic source, in scenario order
    /// (see the module docs). Call on a validated scenario: a flow whose transport
    /// config does not parse counts with the default config.
    pub fn estimate_work(&self) -> Vec<SourceWork> {
        let mut out = Vec::new();
        for i in 0..self.flows.len() {
            out.push(self.flow_work(i));
        }
        let hops = self.hops();
        for (i, x) in self.cross_traffic.iter().enumerate() {
            let end = x.stop_s.unwrap_or(f64::INFINITY).min(self.stop.time_s);
            let active = (end - x.start_s).max(0.0);
            let gap_s = (x.interval_min_ms + x.interval_max_ms) / 2.0 / 1e3;
            let datagrams = active / gap_s;
            out.push(SourceWork {
                key: format!("cross_traffic[{i}]"),
                events: datagrams * (1.0 + 2.0 * hops),
                bound: format!("{datagrams:.3e} datagrams over {active} s"),
            });
        }
        out
    }

    /// Refuses a scenario whose estimated events exceed `stop.max_events`, naming the
    /// source that contributes most.
    pub(super) fn check_work(&self, c: Check) -> Result<(), ScenarioError> {
        let work = self.estimate_work();
        let total: f64 = work.iter().map(|w| w.events).sum();
        let limit = max_events(self);
        if total <= limit as f64 {
            return Ok(());
        }
        let Some(top) = work.iter().max_by(|a, b| a.events.total_cmp(&b.events)) else {
            return Ok(());
        };
        c.bad(
            top.key.clone(),
            format!(
                "the run would take about {total:.2e} events (this source: {}), more than \
                 stop.max_events = {limit}; shorten stop.time_s or the workload, or raise \
                 stop.max_events if you mean it",
                top.bound
            ),
        )
    }

    fn flow_work(&self, i: usize) -> SourceWork {
        let f = &self.flows[i];
        let key = format!("flows[{i}]");
        let config = |server| {
            self.transport(i, server, "")
                .unwrap_or_else(|_| TransportConfig::default())
        };
        let (client, server) = (config(false), config(true));
        // Bulk uploads (client to server); requests download (server to client).
        let (bytes, end, sender, receiver, side, streams) = match f.workload {
            Workload::Bulk { bytes, stop_s } => (
                bytes.map_or(f64::INFINITY, |b| b as f64),
                stop_s.unwrap_or(f64::INFINITY),
                &client,
                &server,
                LinkSide::Forward,
                1.0,
            ),
            Workload::Request {
                size,
                count,
                parallel,
                ..
            } => (
                (size as f64 + REQUEST_BYTES) * count as f64,
                f64::INFINITY,
                &server,
                &client,
                LinkSide::Return,
                parallel.min(count) as f64,
            ),
            Workload::Page {
                html_size,
                objects,
                object_size,
            } => (
                (html_size + objects * object_size) as f64 + REQUEST_BYTES * (objects + 1) as f64,
                f64::INFINITY,
                &server,
                &client,
                LinkSide::Return,
                objects.max(1) as f64,
            ),
            Workload::Search {
                html_size,
                objects,
                ref object_size,
            } => (
                html_size as f64
                    + objects as f64 * object_size.mean()
                    + REQUEST_BYTES * (objects + 1) as f64,
                f64::INFINITY,
                &server,
                &client,
                LinkSide::Return,
                objects.max(1) as f64,
            ),
            Workload::Video {
                duration_s,
                bitrate_mbps,
                audio_kbps,
                ..
            } => (
                (bitrate_mbps * 1e6 + audio_kbps * 1e3) / 8.0 * duration_s,
                f64::INFINITY,
                &server,
                &client,
                LinkSide::Return,
                2.0,
            ),
            Workload::Datagram {
                rate_pps,
                size,
                duration_s,
            } => (
                rate_pps * size as f64 * duration_s,
                f64::INFINITY,
                &client,
                &server,
                LinkSide::Forward,
                1.0,
            ),
            Workload::Media {
                fps,
                ref frame_size,
                duration_s,
                ..
            } => (
                fps * frame_size.mean() * duration_s,
                f64::INFINITY,
                &client,
                &server,
                LinkSide::Forward,
                1.0,
            ),
        };
        let active = (end.min(self.stop.time_s) - f.start_s).max(0.0);
        let rate_bytes_s = self
            .max_rate_mbps(side)
            .map_or(f64::INFINITY, |r| r * 1e6 / 8.0);
        let window = window_bytes(sender, receiver, streams);
        // With no delay at all the window is no bound (window / 0 = inf).
        let throughput = rate_bytes_s.min(window / self.min_rtt_s(f.pair));
        // Guards inf * 0 = NaN: an inactive flow or an empty workload moves nothing.
        let moved = if active > 0.0 && bytes > 0.0 {
            bytes.min(throughput * active)
        } else {
            0.0
        };
        let payload = f64::from(sender.max_udp_payload_size)
            .min(f64::from(self.path_mtu(side)) - 28.0)
            .max(1.0);
        let packets = match f.workload {
            // A packet per datagram at most (RFC 9221 frames are not fragmented; small
            // ones may share one), whatever their size, while the flow is active.
            Workload::Datagram {
                rate_pps,
                duration_s,
                ..
            } => (rate_pps * duration_s.min(active)).ceil(),
            // Full packets of frame bytes, plus one partly filled packet per frame.
            Workload::Media {
                fps, duration_s, ..
            } => (moved / payload).ceil() + (fps * duration_s.min(active)).ceil(),
            _ => (moved / payload).ceil(),
        };
        // A host table that does not load counts as none (validation reports it).
        let hosts = [false, true]
            .into_iter()
            .filter(|&server| self.host(i, server, "").ok().flatten().is_some())
            .count() as f64;
        let per_packet = EVENTS_PER_PACKET_HOP * self.hops() + HOST_EVENTS_PER_PACKET * hosts;
        SourceWork {
            key: format!("{key}.workload"),
            events: EVENTS_PER_FLOW + packets * per_packet,
            bound: format!(
                "{moved:.3e} bytes: at most {throughput:.3e} B/s for {active} s, \
                 {bytes:.3e} bytes of workload"
            ),
        }
    }

    /// Links a packet crosses end to end.
    fn hops(&self) -> f64 {
        match self.topology {
            // An interface's link, then the topology's (`scenario/interfaces.rs`).
            Topology::PointToPoint {
                client: Some(_), ..
            } => 2.0,
            Topology::PointToPoint { gateway: None, .. } => 1.0,
            // Satellite, then terrestrial (`scenario/gateway.rs`).
            Topology::PointToPoint {
                gateway: Some(_), ..
            } => 2.0,
            Topology::Dumbbell { .. } => 2.0,
        }
    }

    /// The highest rate a bottleneck direction takes (its own or a scheduled one);
    /// `None` = unlimited.
    fn max_rate_mbps(&self, side: LinkSide) -> Option<f64> {
        let (fwd, ret) = self.links();
        let link = if side == LinkSide::Forward { fwd } else { ret };
        let base = link.rate_mbps?;
        let scheduled = self
            .schedule
            .iter()
            .filter(|c| c.link == side)
            .filter_map(|c| c.rate_mbps);
        Some(scheduled.fold(base, f64::max))
    }

    /// The smallest round trip a pair can see, seconds: both directions' delays (their
    /// smallest scheduled values) plus the pair's access links.
    fn min_rtt_s(&self, pair: usize) -> f64 {
        let (fwd, ret) = self.links();
        let min_delay = |l: &LinkConfig, side| {
            self.schedule
                .iter()
                .filter(|c| c.link == side)
                .filter_map(|c| c.delay_ms)
                .fold(l.delay_ms, f64::min)
        };
        let access = match &self.topology {
            Topology::Dumbbell {
                access_delay_ms, ..
            } => access_delay_ms.get(pair).copied().unwrap_or(0.0) * 2.0,
            Topology::PointToPoint {
                gateway, client, ..
            } => {
                let beyond = gateway
                    .as_ref()
                    .map_or(0.0, |g| g.forward.delay_ms + g.ret.delay_ms);
                // The quickest interface (degradations may only lower a delay further).
                let iface = client.as_ref().map_or(0.0, |h| {
                    let lowest = (h.events.iter())
                        .filter_map(|e| e.degradation()?.delay_ms)
                        .fold(f64::INFINITY, f64::min);
                    (h.interfaces.iter())
                        .map(|i| (i.forward.delay_ms + i.ret.delay_ms).min(2.0 * lowest))
                        .fold(f64::INFINITY, f64::min)
                });
                beyond + iface
            }
        };
        (min_delay(fwd, LinkSide::Forward) + min_delay(ret, LinkSide::Return) + access) / 1e3
    }
}

/// Bytes a flow can have in flight: the receiver's flow-control windows (grown to their
/// caps when auto-tuning) and the sender's send buffers, over `streams` streams.
fn window_bytes(sender: &TransportConfig, receiver: &TransportConfig, streams: f64) -> f64 {
    let r = &receiver.flow;
    let (conn, stream) = if r.autotune {
        (
            r.initial_max_data.max(r.max_receive_window),
            r.initial_max_stream_data.max(r.max_stream_receive_window),
        )
    } else {
        (r.initial_max_data, r.initial_max_stream_data)
    };
    (conn as f64)
        .min(stream as f64 * streams)
        .min(sender.flow.send_buffer as f64 * streams)
}
