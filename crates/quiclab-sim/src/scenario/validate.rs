//! Scenario validation, one function per concern: stop and measurement, topology and
//! links, flows and workloads, cross traffic, the link schedule. Every check names the
//! offending key. Besides plain sign checks, values are bounded so that the simulator's
//! integer arithmetic cannot overflow: times must fit virtual time ([`MAX_SECONDS`]),
//! rates must give a serialization time ([`MIN_RATE_MBPS`]..=[`MAX_RATE_MBPS`]), and
//! counts must fit the address plan ([`MAX_PAIRS`], [`MAX_FLOWS`]).

use super::{
    parse_transport, CrossTraffic, Flow, LinkChange, LinkConfig, LinkSide, Scenario, ScenarioError,
    TlsSettings, Topology, Workload,
};

/// The largest time any key may give, seconds (about 31.7 years). Virtual time counts
/// nanoseconds in a u64 (about 584 years); the margin keeps sums of such times (start +
/// delays + jitter) meaningful, and they saturate beyond it.
pub const MAX_SECONDS: f64 = 1e9;
/// The smallest link rate, Mbit/s (1 bit/s): below it the simulator's integer bit rate
/// would be 0 and a packet would never finish serializing.
pub const MIN_RATE_MBPS: f64 = 1e-6;
/// The largest link rate, Mbit/s (1 Pbit/s; the integer bit rate stays far below u64::MAX).
pub const MAX_RATE_MBPS: f64 = 1e9;
/// The smallest time step a key may give, seconds: virtual time counts whole nanoseconds,
/// so a shorter measurement bin or cross-traffic gap would be 0.
pub const MIN_STEP_SECONDS: f64 = 1e-9;
/// Dumbbell pairs: hosts are 10.0.x.y / 10.1.x.y with x < 256 and 1 <= y <= 250.
pub const MAX_PAIRS: usize = 256 * 250;
/// Flows: flow i's client uses UDP port 40000 + i.
pub const MAX_FLOWS: usize = 65536 - 40000;
/// Send-buffer bytes a flow may hold at once (send_buffer x streams in use): 1 GiB.
pub const MAX_SEND_MEMORY: u64 = 1 << 30;
/// Extra certificate bytes (a 1 MiB certificate is already far beyond real TLS chains).
pub const MAX_CERTIFICATE_PADDING: usize = 1 << 20;

/// Builds errors naming the file.
#[derive(Clone, Copy)]
pub(super) struct Check<'a> {
    pub file: &'a str,
}

impl Check<'_> {
    pub fn bad<T>(
        &self,
        key: impl Into<String>,
        why: impl Into<String>,
    ) -> Result<T, ScenarioError> {
        Err(ScenarioError::Invalid {
            file: self.file.to_string(),
            key: key.into(),
            why: why.into(),
        })
    }

    /// A time in seconds: finite, within [`MAX_SECONDS`], and > 0 if `positive` (else >= 0).
    pub fn seconds(
        &self,
        key: impl Into<String>,
        v: f64,
        positive: bool,
    ) -> Result<(), ScenarioError> {
        let ok = v.is_finite() && v <= MAX_SECONDS && if positive { v > 0.0 } else { v >= 0.0 };
        if ok {
            return Ok(());
        }
        let sign = if positive { "positive" } else { "non-negative" };
        self.bad(key, format!("must be {sign} and at most {MAX_SECONDS:e} s"))
    }

    /// A time in milliseconds, as [`Check::seconds`].
    pub fn millis(&self, key: impl Into<String>, v: f64) -> Result<(), ScenarioError> {
        if (0.0..=MAX_SECONDS * 1e3).contains(&v) {
            return Ok(());
        }
        self.bad(
            key,
            format!(
                "must be non-negative and at most {:e} ms",
                MAX_SECONDS * 1e3
            ),
        )
    }

    /// A link rate in Mbit/s.
    pub fn rate(&self, key: impl Into<String>, r: f64) -> Result<(), ScenarioError> {
        if r.is_finite() && (MIN_RATE_MBPS..=MAX_RATE_MBPS).contains(&r) {
            return Ok(());
        }
        self.bad(
            key,
            format!(
                "must be {MIN_RATE_MBPS:e} (1 bit/s) to {MAX_RATE_MBPS:e} Mbit/s (omit it for an unlimited link)"
            ),
        )
    }
}

impl Scenario {
    /// Checks every key (see the module docs of `scenario`), then the estimated amount of
    /// work against `stop.max_events`.
    pub(crate) fn validate(&self, file: &str) -> Result<(), ScenarioError> {
        let c = Check { file };
        self.check_stop_measure(c)?;
        if self.certificate_padding > MAX_CERTIFICATE_PADDING {
            return c.bad(
                "certificate_padding",
                format!("must be at most {MAX_CERTIFICATE_PADDING} bytes"),
            );
        }
        let pairs = self.check_topology(c)?;
        self.check_tls(c)?;
        // Unknown keys and wrong types in the scenario-wide transport tables, named as
        // written (the per-flow checks see them merged, and only if there are flows).
        parse_transport(&self.client, "client", file)?;
        parse_transport(&self.server, "server", file)?;
        if self.flows.is_empty() && self.cross_traffic.is_empty() {
            return c.bad(
                "flows",
                "a scenario needs at least one flow or cross-traffic source",
            );
        }
        if self.flows.len() > MAX_FLOWS {
            return c.bad("flows", format!("at most {MAX_FLOWS} flows"));
        }
        let mut names = std::collections::BTreeSet::new();
        let mut rebinds = 0usize;
        for (i, f) in self.flows.iter().enumerate() {
            if !names.insert(f.name.as_str()) {
                return c.bad(format!("flows[{i}].name"), "flow names must be unique");
            }
            self.check_flow(c, i, f, pairs)?;
            self.check_rebinds(c, i, f, rebinds)?;
            rebinds = rebinds.saturating_add(self.flow_rebinds(i).len());
            self.check_pep_flow(c, i)?;
            self.resume_from(i, file)?;
            self.session_from(i, file)?;
            self.host(i, false, file)?;
            self.host(i, true, file)?;
        }
        self.check_extra_ports(c)?;
        for (i, x) in self.cross_traffic.iter().enumerate() {
            check_cross_traffic(c, i, x, pairs)?;
        }
        for (i, change) in self.schedule.iter().enumerate() {
            check_change(c, i, change)?;
        }
        self.check_trace_schedule(c.file)?;
        self.check_work(c)
    }

    /// Checks only what drives the links (stop and measure, the topology with its
    /// queues and impairments, the scenario-wide transport tables' keys, the link
    /// schedule), not flows or cross traffic: for a user that puts real endpoints on
    /// the links (the real-time emulator, `quiclab emulate`), where a scenario without
    /// flows is fine. A scenario with flows should be checked in full with
    /// [`Scenario::parse`] instead.
    pub fn validate_links(&self, file: &str) -> Result<(), ScenarioError> {
        let c = Check { file };
        self.check_stop_measure(c)?;
        self.check_topology(c)?;
        parse_transport(&self.client, "client", file)?;
        parse_transport(&self.server, "server", file)?;
        for (i, change) in self.schedule.iter().enumerate() {
            check_change(c, i, change)?;
        }
        self.check_trace_schedule(c.file)
    }

    fn check_stop_measure(&self, c: Check) -> Result<(), ScenarioError> {
        c.seconds("stop.time_s", self.stop.time_s, true)?;
        if self.stop.max_events == Some(0) {
            return c.bad("stop.max_events", "must be at least 1");
        }
        let m = &self.measure;
        c.seconds("measure.interval_s", m.interval_s, true)?;
        if m.interval_s < MIN_STEP_SECONDS {
            return c.bad("measure.interval_s", "must be at least 1e-9 s (1 ns)");
        }
        c.seconds("measure.from_s", m.from_s, false)?;
        if let Some(to) = m.to_s {
            c.seconds("measure.to_s", to, true)?;
            if to <= m.from_s {
                return c.bad("measure", "needs 0 <= from_s < to_s");
            }
        }
        Ok(())
    }

    /// Checks the topology's links and shape; returns the number of host pairs.
    fn check_topology(&self, c: Check) -> Result<usize, ScenarioError> {
        let (forward, ret) = self.links();
        check_link(c, forward, "topology.forward")?;
        check_link(c, ret, "topology.return")?;
        self.check_gateway(c)?;
        self.check_client_host(c)?;
        let Topology::Dumbbell {
            pairs,
            access_delay_ms,
            ..
        } = &self.topology
        else {
            return Ok(1);
        };
        if !(1..=MAX_PAIRS).contains(pairs) {
            return c.bad("topology.pairs", format!("must be 1 to {MAX_PAIRS}"));
        }
        if !access_delay_ms.is_empty() && access_delay_ms.len() != *pairs {
            return c.bad(
                "topology.access_delay_ms",
                "needs one value per pair (or none)",
            );
        }
        for (i, d) in access_delay_ms.iter().enumerate() {
            c.millis(format!("topology.access_delay_ms[{i}]"), *d)?;
        }
        Ok(*pairs)
    }

    fn check_flow(&self, c: Check, i: usize, f: &Flow, pairs: usize) -> Result<(), ScenarioError> {
        let key = format!("flows[{i}]");
        if f.pair >= pairs {
            return c.bad(format!("{key}.pair"), "no such pair in the topology");
        }
        c.seconds(format!("{key}.start_s"), f.start_s, false)?;
        match &f.workload {
            Workload::Bulk { bytes, stop_s } => {
                if bytes.is_none() && stop_s.is_none() && self.stop.when_flows_done {
                    return c.bad(
                        format!("{key}.workload"),
                        "an unlimited bulk flow never finishes: set bytes or stop_s",
                    );
                }
                if let Some(s) = *stop_s {
                    c.seconds(format!("{key}.workload.stop_s"), s, true)?;
                    if s <= f.start_s {
                        return c.bad(format!("{key}.workload.stop_s"), "must be after start_s");
                    }
                }
            }
            Workload::Request {
                count,
                parallel,
                think_ms,
                ..
            } => {
                if *count == 0 || *parallel == 0 {
                    return c.bad(
                        format!("{key}.workload"),
                        "count and parallel must be at least 1",
                    );
                }
                c.millis(format!("{key}.workload.think_ms"), *think_ms)?;
            }
            Workload::Page { .. } => {}
            Workload::Search { .. } | Workload::Video { .. } => {}
            Workload::Datagram { .. } => self.check_datagram_flow(c, i, f)?,
            Workload::Media { .. } => self.check_media_flow(c, i, f)?,
        }
        self.check_web_flow(c, i, f)?;
        let tcp_tls = f.tls.as_ref().and_then(TlsSettings::tcp_only_key);
        if !f.transport.is_quic() || f.tcp.is_some() || tcp_tls.is_some() {
            return self.check_tcp_flow(c, i, f);
        }
        for server in [false, true] {
            let t = self.transport(i, server, c.file)?;
            let mtu = self.path_mtu(if server {
                LinkSide::Return
            } else {
                LinkSide::Forward
            });
            if u32::from(t.max_udp_payload_size) + 28 > mtu {
                let side = if server { "server" } else { "client" };
                return c.bad(
                    format!("{key}.{side}.max_udp_payload_size"),
                    format!(
                        "{} + 28 bytes of IPv4/UDP headers exceeds the link mtu {mtu}",
                        t.max_udp_payload_size
                    ),
                );
            }
        }
        self.check_send_memory(c, i, f)
    }

    /// The sender writes its workload into stream send buffers at once, up to
    /// `flow.send_buffer` per open stream, and the simulator holds those bytes in memory:
    /// a huge buffer times many streams would exhaust it (an abort, not an error).
    fn check_send_memory(&self, c: Check, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let (client, server) = (
            self.transport(i, false, c.file)?,
            self.transport(i, true, c.file)?,
        );
        let (side, sender, streams) = match f.workload {
            Workload::Bulk { .. } => ("client", &client, 1),
            // The client opens at most `parallel` request streams, within the server's
            // stream limit; the server buffers each response.
            Workload::Request {
                count, parallel, ..
            } => (
                "server",
                &server,
                parallel.min(count).min(server.flow.max_streams_bidi),
            ),
            Workload::Page { objects, .. } => (
                "server",
                &server,
                (objects + 1).min(server.flow.max_streams_bidi),
            ),
            Workload::Search { objects, .. } => (
                "server",
                &server,
                objects.max(1).min(server.flow.max_streams_bidi),
            ),
            // Two chunks in flight (workload/webapp.rs).
            Workload::Video { .. } => ("server", &server, 2),
            // No stream data: the DATAGRAM send queue has its own bounds.
            Workload::Datagram { .. } => return Ok(()),
            // Frame bodies are written as references to one static chunk
            // (`write_static`): a stream buffers no copies.
            Workload::Media { .. } => return Ok(()),
        };
        let buffered = u128::from(sender.flow.send_buffer) * u128::from(streams);
        if buffered > u128::from(MAX_SEND_MEMORY) {
            return c.bad(
                format!("flows[{i}].{side}.flow.send_buffer"),
                format!(
                    "{} bytes x {streams} streams may be buffered at once; at most {MAX_SEND_MEMORY} bytes per flow",
                    sender.flow.send_buffer
                ),
            );
        }
        Ok(())
    }

    /// The bottleneck (or only) link configs: (forward, return).
    pub(crate) fn links(&self) -> (&LinkConfig, &LinkConfig) {
        match &self.topology {
            Topology::PointToPoint { forward, ret, .. }
            | Topology::Dumbbell { forward, ret, .. } => (forward, ret),
        }
    }

    /// The smallest MTU on a direction's path.
    pub(crate) fn path_mtu(&self, side: LinkSide) -> u32 {
        let (f, r) = self.links();
        let l = if side == LinkSide::Forward { f } else { r };
        let beyond = self.gateway().map(|g| {
            if side == LinkSide::Forward {
                &g.forward
            } else {
                &g.ret
            }
        });
        // Any interface may carry the flow (`scenario/interfaces.rs`).
        let ifaces = self.client_host().into_iter().flat_map(|h| {
            h.interfaces.iter().map(move |i| {
                if side == LinkSide::Forward {
                    &i.forward
                } else {
                    &i.ret
                }
            })
        });
        [Some(l), beyond]
            .into_iter()
            .flatten()
            .chain(ifaces)
            .map(|l| l.mtu.unwrap_or(65535))
            .min()
            .unwrap_or(65535)
    }
}

pub(super) fn check_link(c: Check, l: &LinkConfig, key: &str) -> Result<(), ScenarioError> {
    if let Some(r) = l.rate_mbps {
        c.rate(format!("{key}.rate_mbps"), r)?;
    }
    c.millis(format!("{key}.delay_ms"), l.delay_ms)?;
    if l.mtu.is_some_and(|m| !(68..=65535).contains(&m)) {
        return c.bad(format!("{key}.mtu"), "must be 68 to 65535");
    }
    // Checked again when the link is built; here so a loaded scenario is a valid one.
    if let Err(why) = l.impairments.validate() {
        return c.bad(format!("{key}.impairments"), why);
    }
    // Queue errors already name the field (`queue.packets ...`).
    if let Err(why) = l.queue.validate() {
        return c.bad(key, why);
    }
    super::trace::check_link_trace(c.file, l, key)
}

fn check_cross_traffic(
    c: Check,
    i: usize,
    x: &CrossTraffic,
    pairs: usize,
) -> Result<(), ScenarioError> {
    let key = format!("cross_traffic[{i}]");
    if x.pair >= pairs {
        return c.bad(format!("{key}.pair"), "no such pair in the topology");
    }
    if x.size_min == 0 || x.size_min > x.size_max || x.size_max > 65507 {
        return c.bad(
            format!("{key}.size_min"),
            "needs 1 <= size_min <= size_max <= 65507",
        );
    }
    if !(x.interval_min_ms > 0.0 && x.interval_min_ms <= x.interval_max_ms) {
        return c.bad(
            format!("{key}.interval_min_ms"),
            "needs 0 < interval_min_ms <= interval_max_ms",
        );
    }
    if x.interval_min_ms < MIN_STEP_SECONDS * 1e3 {
        return c.bad(
            format!("{key}.interval_min_ms"),
            "must be at least 1e-6 ms (1 ns)",
        );
    }
    c.millis(format!("{key}.interval_max_ms"), x.interval_max_ms)?;
    c.seconds(format!("{key}.start_s"), x.start_s, false)?;
    if let Some(s) = x.stop_s {
        c.seconds(format!("{key}.stop_s"), s, false)?;
    }
    Ok(())
}

fn check_change(c: Check, i: usize, change: &LinkChange) -> Result<(), ScenarioError> {
    let key = format!("schedule[{i}]");
    c.seconds(format!("{key}.at_s"), change.at_s, false)?;
    if let Some(r) = change.rate_mbps {
        c.rate(format!("{key}.rate_mbps"), r)?;
    }
    if let Some(Err(why)) = change.loss.as_ref().map(|l| l.validate()) {
        return c.bad(format!("{key}.loss"), why);
    }
    if let Some(d) = change.delay_ms {
        c.millis(format!("{key}.delay_ms"), d)?;
    }
    if let Some(o) = change.outage_s {
        c.seconds(format!("{key}.outage_s"), o, false)?;
    }
    Ok(())
}
