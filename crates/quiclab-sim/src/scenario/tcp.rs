//! Flows with `transport = "tcp"`: their checks and their TCP settings.
//!
//! ```toml
//! [[flows]]
//! name = "web"
//! transport = "tcp"
//! workload = { kind = "request", size = 100000 }
//! tcp = { window_scaling = false, congestion_control = { algorithm = "cubic" } }
//! ```
//!
//! The `[flows.tcp]` table (quiclab_tcp::TcpConfig keys, unknown keys are errors)
//! applies to both ends; the scenario's `[client]`/`[server]` tables are QUIC settings
//! and do not apply to TCP flows. A TCP flow carries a single byte stream: `request`
//! workloads run one request at a time on it (`parallel = 1`), `page` (HTTP/3) is
//! QUIC-only. `tls = { version = "1.3" }` (or `"1.2"`) runs rustls over the stream
//! (`workload/tcptls.rs`; its certificate and cipher suite / group choices are the QUIC flows',
//! `scenario/tls.rs`); without it the flow is plain TCP. `tcp = { fast_open = true }`
//! turns on TCP Fast Open (RFC 7413) at both ends; `session_from` with `tls = { early_data }`
//! resumes an earlier flow's TLS session (`tls_resume.rs`). `search` and `video`
//! workloads run over one multiplexed connection or a pool of connections
//! (`[flows.http]`, `scenario/web.rs`).

use super::validate::Check;
use super::{Flow, LinkSide, Scenario, ScenarioError, Transport, Workload};
use quiclab_tcp::TcpConfig;

impl Scenario {
    /// The checks of a TCP flow (after the workload's own).
    pub(super) fn check_tcp_flow(&self, c: Check, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let key = format!("flows[{i}]");
        if f.transport != Transport::Tcp {
            let what = f
                .tls
                .as_ref()
                .and_then(super::TlsSettings::tcp_only_key)
                .unwrap_or("tcp");
            return c.bad(format!("{key}.{what}"), "only for transport = \"tcp\"");
        }
        // A host table (`scenario/hosts.rs`) applies to a TCP flow's ends too.
        let transport_keys = |t: &toml::Table| t.keys().any(|k| k != crate::host::config::HOST_KEY);
        if transport_keys(&f.client) || transport_keys(&f.server) {
            let side = if !transport_keys(&f.client) {
                "server"
            } else {
                "client"
            };
            return c.bad(
                format!("{key}.{side}"),
                "QUIC transport keys do not apply to a TCP flow; use [flows.tcp]",
            );
        }
        match f.workload {
            Workload::Page { .. } => {
                return c.bad(
                    format!("{key}.workload"),
                    "page loads run HTTP/3 over QUIC only",
                );
            }
            Workload::Request { parallel, .. } if parallel != 1 => {
                return c.bad(
                    format!("{key}.workload.parallel"),
                    "a TCP flow is one byte stream: requests run one at a time (parallel = 1)",
                );
            }
            _ => {}
        }
        if f.workload.is_web() && f.session_from.is_some() {
            return c.bad(
                format!("{key}.session_from"),
                "search and video flows over TCP start fresh connections (no session_from)",
            );
        }
        if f.tls.as_ref().is_some_and(|t| t.version.is_none()) {
            return c.bad(
                format!("{key}.tls.version"),
                "TLS over a TCP flow needs its version: \"1.3\" or \"1.2\"",
            );
        }
        self.check_tls_resume(c.file, i, f)?;
        let cfg = self.tcp_config(i);
        cfg.validate().map_err(|e| ScenarioError::Invalid {
            file: c.file.to_string(),
            key: format!("{key}.tcp.{}", e.key),
            why: e.why,
        })?;
        let mtu = self
            .path_mtu(LinkSide::Forward)
            .min(self.path_mtu(LinkSide::Return));
        if u32::from(cfg.mss) + 40 > mtu {
            return c.bad(
                format!("{key}.tcp.mss"),
                format!(
                    "{} + 40 bytes of IPv4/TCP headers exceeds the link mtu {mtu}",
                    cfg.mss
                ),
            );
        }
        Ok(())
    }

    /// Flow `i`'s TCP settings (defaults where the flow gives none).
    pub fn tcp_config(&self, i: usize) -> TcpConfig {
        self.flows[i].tcp.clone().unwrap_or_default()
    }
}
