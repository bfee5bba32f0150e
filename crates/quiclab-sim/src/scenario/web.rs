//! The web and video workloads (`search`, `video`) and how a TCP flow carries them
//! (`[flows.http]`): their keys, checks and the drawn object sizes.
//!
//! ```toml
//! [[flows]]
//! name = "search"
//! transport = "tcp"
//! tls = { version = "1.3" }
//! workload = { kind = "search", html_size = 30000, objects = 10, object_size = { dist = "lognormal", median = 6000, sigma = 1.0 } }
//! http = { mode = "multiplex" }            # or { mode = "pool", pool_size = 6 }
//!
//! [[flows]]
//! name = "video"
//! workload = { kind = "video", duration_s = 60, bitrate_mbps = 2.5, chunk_s = 2, startup_s = 2, buffer_target_s = 10 }
//! # audio_kbps = 128 (default): each chunk's audio part, fetched separately

//! ```
//!
//! `object_size` is a byte count (`object_size = 8000`), `{ dist = "fixed", bytes = N }`
//! or `{ dist = "lognormal", median = M, sigma = S }` (bytes; sizes drawn from the
//! flow's own seeded stream, `derive_seed(seed, "objects:<flow name>")`, so a QUIC flow
//! and a TCP flow of the same name and seed fetch the same bytes; a draw is rounded and
//! kept within 1 byte to [`MAX_OBJECT_BYTES`]; `webapp::object_sizes`).
//!
//! `[flows.http]` is for TCP flows with a `search` or `video` workload only: `mode =
//! "multiplex"` runs HTTP/2-style framing over one connection (`workload/h2mux.rs`), `"pool"`
//! HTTP/1.1-style requests over up to `pool_size` connections (`workload/tcpweb.rs`). Absent,
//! a search runs `multiplex` (seed 003 §6.1: "HTTP/2 over a single TLS/TCP connection
//! for Search") and a video `pool` with 2 connections ("HTTP/1.1 over two TLS/TCP
//! connections for video playbacks"). `pool_size` defaults to 6 (a browser's
//! connections per host), and to 2 for a video.

use super::validate::Check;
use super::{Flow, Scenario, ScenarioError, Transport, Workload};
use serde::{Deserialize, Serialize};

/// The largest object a size distribution may give, bytes (64 MiB).
pub const MAX_OBJECT_BYTES: u64 = 64 << 20;
/// Most embedded objects a search page may have.
pub const MAX_OBJECTS: u64 = 10_000;
/// Most chunks a video playback may have (duration_s / chunk_s).
pub const MAX_CHUNKS: f64 = 100_000.0;
/// Most connections a pool may open.
pub const MAX_POOL_SIZE: u32 = 64;
/// Client ports of the extra connections of pooled TCP flows: 30000 up to 39999 (flow
/// `i`'s first connection keeps 40000 + i; servers use 4433 + i, below 30000).
pub const EXTRA_PORTS: std::ops::Range<u16> = 30000..40000;

/// The size of each embedded object of a `search` page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ObjectSize {
    /// Every object has this many bytes.
    Bytes(u64),
    Dist(SizeDist),
}

/// A size distribution (`dist` names it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    Fixed {
        bytes: u64,
    },
    /// exp(N(ln median, sigma^2)), bytes.
    Lognormal {
        median: f64,
        sigma: f64,
    },
}

/// How a TCP flow carries a web or video workload.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum HttpMode {
    /// HTTP/2-style streams over one connection (head-of-line blocking included).
    #[default]
    Multiplex,
    /// HTTP/1.1-style: up to `pool_size` connections, one request in flight on each.
    Pool,
}

/// `[flows.http]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    pub mode: Option<HttpMode>,
    pub pool_size: Option<u32>,
}

/// How a flow's web workload runs over TCP, defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpHttp {
    Multiplex,
    Pool(u32),
}

impl TcpHttp {
    /// Connections the client may open.
    pub fn connections(self) -> u32 {
        match self {
            TcpHttp::Multiplex => 1,
            TcpHttp::Pool(n) => n,
        }
    }
}

impl Workload {
    /// A `search` or `video` workload (the web workloads of `workload/webapp.rs`).
    pub fn is_web(&self) -> bool {
        matches!(self, Workload::Search { .. } | Workload::Video { .. })
    }
}

impl ObjectSize {
    /// The mean object size, bytes (for the work estimate; lognormal: median x
    /// exp(sigma^2 / 2)).
    pub fn mean(&self) -> f64 {
        match self {
            ObjectSize::Bytes(b) | ObjectSize::Dist(SizeDist::Fixed { bytes: b }) => *b as f64,
            ObjectSize::Dist(SizeDist::Lognormal { median, sigma }) => {
                (median * (sigma * sigma / 2.0).exp()).min(MAX_OBJECT_BYTES as f64)
            }
        }
    }
}

impl Scenario {
    /// Flow `i`'s HTTP mode over TCP (defaults per workload, see the module doc).
    pub fn tcp_http(&self, i: usize) -> TcpHttp {
        let f = &self.flows[i];
        let video = matches!(f.workload, Workload::Video { .. });
        let h = f.http.clone().unwrap_or_default();
        let default_mode = if video {
            HttpMode::Pool
        } else {
            HttpMode::Multiplex
        };
        match h.mode.unwrap_or(default_mode) {
            HttpMode::Multiplex => TcpHttp::Multiplex,
            HttpMode::Pool => TcpHttp::Pool(h.pool_size.unwrap_or(if video { 2 } else { 6 })),
        }
    }

    /// The checks of a `search` / `video` workload and of `[flows.http]`.
    pub(super) fn check_web_flow(&self, c: Check, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let key = format!("flows[{i}]");
        match &f.workload {
            Workload::Search {
                html_size,
                objects,
                object_size,
            } => {
                // Every response has a byte at least (a real one has headers).
                if !(1..=MAX_OBJECT_BYTES).contains(html_size) {
                    return c.bad(
                        format!("{key}.workload.html_size"),
                        format!("must be 1 to {MAX_OBJECT_BYTES} bytes"),
                    );
                }
                if *objects > MAX_OBJECTS {
                    return c.bad(
                        format!("{key}.workload.objects"),
                        format!("at most {MAX_OBJECTS}"),
                    );
                }
                check_object_size(c, &format!("{key}.workload.object_size"), object_size)?;
            }
            Workload::Video {
                duration_s,
                bitrate_mbps,
                audio_kbps,
                chunk_s,
                startup_s,
                buffer_target_s,
            } => {
                let k = format!("{key}.workload");
                check_video(
                    c,
                    &k,
                    (*duration_s, *bitrate_mbps, *chunk_s),
                    (*startup_s, *buffer_target_s),
                )?;
                if !(audio_kbps.is_finite()
                    && *audio_kbps >= 0.0
                    && *audio_kbps <= bitrate_mbps * 1e3)
                {
                    return c.bad(
                        format!("{k}.audio_kbps"),
                        "must be 0 (no audio) to bitrate_mbps x 1000",
                    );
                }
            }
            _ => {}
        }
        let Some(h) = &f.http else {
            return Ok(());
        };
        if f.transport != Transport::Tcp || !f.workload.is_web() {
            return c.bad(
                format!("{key}.http"),
                "only for transport = \"tcp\" with a search or video workload",
            );
        }
        if let Some(n) = h.pool_size {
            if h.mode != Some(HttpMode::Pool) {
                return c.bad(format!("{key}.http.pool_size"), "only with mode = \"pool\"");
            }
            if !(1..=MAX_POOL_SIZE).contains(&n) {
                return c.bad(
                    format!("{key}.http.pool_size"),
                    format!("must be 1 to {MAX_POOL_SIZE}"),
                );
            }
        }
        Ok(())
    }

    /// The pooled flows' extra client ports must fit [`EXTRA_PORTS`].
    pub(super) fn check_extra_ports(&self, c: Check) -> Result<(), ScenarioError> {
        let extra: u64 = (0..self.flows.len())
            .filter(|&i| {
                self.flows[i].transport == Transport::Tcp && self.flows[i].workload.is_web()
            })
            .map(|i| u64::from(self.tcp_http(i).connections() - 1))
            .sum();
        let room = u64::from(EXTRA_PORTS.end - EXTRA_PORTS.start);
        if extra > room {
            return c.bad(
                "flows",
                format!("pooled TCP flows need {extra} extra client ports; at most {room}"),
            );
        }
        Ok(())
    }
}

fn check_object_size(c: Check, key: &str, s: &ObjectSize) -> Result<(), ScenarioError> {
    match s {
        ObjectSize::Bytes(b) | ObjectSize::Dist(SizeDist::Fixed { bytes: b }) => {
            if !(1..=MAX_OBJECT_BYTES).contains(b) {
                return c.bad(key, format!("must be 1 to {MAX_OBJECT_BYTES} bytes"));
            }
        }
        ObjectSize::Dist(SizeDist::Lognormal { median, sigma }) => {
            if !(median.is_finite() && *median >= 1.0 && *median <= MAX_OBJECT_BYTES as f64) {
                return c.bad(
                    format!("{key}.median"),
                    format!("must be 1 to {MAX_OBJECT_BYTES} bytes"),
                );
            }
            if !(sigma.is_finite() && (0.0..=5.0).contains(sigma)) {
                return c.bad(format!("{key}.sigma"), "must be 0 to 5");
            }
        }
    }
    Ok(())
}

fn check_video(
    c: Check,
    key: &str,
    (duration_s, bitrate_mbps, chunk_s): (f64, f64, f64),
    (startup_s, buffer_target_s): (f64, f64),
) -> Result<(), ScenarioError> {
    c.seconds(format!("{key}.duration_s"), duration_s, true)?;
    c.rate(format!("{key}.bitrate_mbps"), bitrate_mbps)?;
    c.seconds(format!("{key}.chunk_s"), chunk_s, true)?;
    if chunk_s < 1e-3 || duration_s / chunk_s > MAX_CHUNKS {
        return c.bad(
            format!("{key}.chunk_s"),
            format!("at least 1 ms and at most {MAX_CHUNKS} chunks per playback"),
        );
    }
    if bitrate_mbps * 1e6 / 8.0 * chunk_s > MAX_OBJECT_BYTES as f64 {
        return c.bad(
            format!("{key}.chunk_s"),
            format!("a chunk (bitrate_mbps x chunk_s) may have at most {MAX_OBJECT_BYTES} bytes"),
        );
    }
    c.seconds(format!("{key}.startup_s"), startup_s, true)?;
    if startup_s > duration_s {
        return c.bad(format!("{key}.startup_s"), "at most duration_s");
    }
    c.seconds(format!("{key}.buffer_target_s"), buffer_target_s, true)?;
    // Below startup_s the player would stop fetching before it may start playing.
    if buffer_target_s < startup_s {
        return c.bad(format!("{key}.buffer_target_s"), "at least startup_s");
    }
    Ok(())
}
