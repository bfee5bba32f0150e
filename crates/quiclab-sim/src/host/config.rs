//! A host table's keys (`host = { ... }` under `[client]`, `[server]` or a flow's
//! `[flows.client]` / `[flows.server]`), a profile file's loading and the keys' checks.
//! Every key stands for a real mechanism of an end host; all default to "absent", and
//! a table whose keys are all absent (or zero) is no host model at all.

use crate::scenario::{merge_tables, ScenarioError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The key of a host table inside a transport table.
pub const HOST_KEY: &str = "host";
/// The key naming a profile file inside a host table.
pub const PROFILE_KEY: &str = "profile";
/// Largest cost or delay a key takes: 1 s per packet (per byte: 1 ms), in its unit.
pub const MAX_COST_US: f64 = 1e6;
/// Most segments one GSO send carries (Linux: UDP_MAX_SEGMENTS = 64 since 5.0).
pub const MAX_GSO_SEGMENTS: u32 = 64;
/// Most samples an empirical wake-up latency file holds.
pub const MAX_SAMPLES: usize = 1_000_000;

/// One endpoint's host: what its CPU, timers, sockets and application add to the
/// protocol's own behaviour (`host/model.rs` applies them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// A profile file (host keys in TOML; path relative to the scenario file) whose keys
    /// this table's other keys override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// CPU time to receive one datagram, µs: the recvmsg system call, the stack's
    /// per-packet work and header protection (the fixed part, whatever its size).
    pub recv_cost_us: f64,
    /// CPU time to send one datagram, µs (one sendmsg call; with `gso_segments` > 1,
    /// once per GSO batch, as one sendmsg carries the batch).
    pub send_cost_us: f64,
    /// CPU time per byte of a datagram, ns, each way: copies between kernel and user
    /// space and the stack's framing.
    pub per_byte_ns: f64,
    /// CPU time per byte for AEAD seal/open, ns, each way (docs/PERFORMANCE.md: the
    /// seal floor, 309 ns per 1200 B ≈ 0.26 ns/B on this machine).
    pub crypto_per_byte_ns: f64,
    /// Datagrams that may wait while the CPU is busy (the socket's backlog as the
    /// application drains it, like a NIC ring or netdev_max_backlog); one more arriving
    /// is dropped and counted in `rx_queue_drops`. Absent: unbounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_queue_packets: Option<u64>,
    /// Timer resolution, µs: a timer fires at the next multiple of it (a timer wheel,
    /// jiffies, or an event loop's millisecond poll timeout). 0: exact.
    pub timer_granularity_us: f64,
    /// Extra delay of every timer wake-up (scheduler latency from timerfd expiry to the
    /// thread running), drawn from the run's seeded RNG.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wakeup_latency: Option<Latency>,
    /// SO_RCVBUF, bytes of datagram payload waiting to be read; a datagram that does not
    /// fit is dropped as the kernel does (counted in `socket_drops`). Absent: unbounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket_rcvbuf: Option<u64>,
    /// SO_SNDBUF, bytes sent but not yet left the host: while this much waits for the
    /// CPU, the endpoint is not asked for more (sendmsg would block or return EAGAIN).
    /// Absent: unbounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket_sndbuf: Option<u64>,
    /// UDP GSO: datagrams written by one sendmsg (UDP_SEGMENT), which leave the host
    /// together when the batch's CPU work is done. Absent or 1: one per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gso_segments: Option<u32>,
    /// Application delay, ms: from a request's arrival to the response being written
    /// (a server's handler, its disk or backend; server side of request/page flows).
    pub app_delay_ms: f64,
}

/// A wake-up latency distribution (`{ dist = "fixed", us = 50 }`,
/// `{ dist = "uniform", min_us = 20, max_us = 60 }` or
/// `{ dist = "empirical", file = "wake.txt" }`: one sample in µs per line, `#` comments,
/// drawn uniformly; the path relative to the file that names it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Latency {
    Fixed {
        us: f64,
    },
    Uniform {
        min_us: f64,
        max_us: f64,
    },
    Empirical {
        file: String,
        /// The file's samples, µs (read when the scenario loads).
        #[serde(skip)]
        #[schemars(skip)]
        samples: Vec<f64>,
    },
}

impl HostConfig {
    /// No key changes anything: the endpoint runs without a host model.
    pub fn is_off(&self) -> bool {
        let zero = [
            self.recv_cost_us,
            self.send_cost_us,
            self.per_byte_ns,
            self.crypto_per_byte_ns,
            self.timer_granularity_us,
            self.app_delay_ms,
        ];
        zero.iter().all(|v| *v == 0.0)
            && self.rx_queue_packets.is_none()
            && self.wakeup_latency.is_none()
            && self.socket_rcvbuf.is_none()
            && self.socket_sndbuf.is_none()
            && self.gso_segments.is_none_or(|g| g == 1)
    }

    /// A profile file on its own (`scenarios/hosts/`), checked as a scenario's host
    /// table naming it would be.
    pub fn from_profile(path: &Path) -> Result<HostConfig, ScenarioError> {
        let file = path.display().to_string();
        let table = toml::Table::from_iter([(
            HOST_KEY.to_string(),
            toml::Value::Table(toml::Table::from_iter([(
                PROFILE_KEY.to_string(),
                toml::Value::String(file.clone()),
            )])),
        )]);
        let cfg = host_of(
            &table,
            At {
                file: &file,
                key: HOST_KEY,
            },
        )?;
        Ok(cfg.unwrap_or_default())
    }
}

/// Where errors point: the scenario file and the host table's key path.
pub(crate) struct At<'a> {
    pub file: &'a str,
    pub key: &'a str,
}

impl At<'_> {
    fn bad<T>(&self, key: &str, why: impl Into<String>) -> Result<T, ScenarioError> {
        Err(ScenarioError::Invalid {
            file: self.file.to_string(),
            key: format!("{}.{key}", self.key),
            why: why.into(),
        })
    }
}

/// The host of a merged transport table (`None`: no `host` key, or one that is off).
/// A profile path is read as written (the scenario's loading made it absolute).
pub(crate) fn host_of(table: &toml::Table, at: At) -> Result<Option<HostConfig>, ScenarioError> {
    let Some(v) = table.get(HOST_KEY) else {
        return Ok(None);
    };
    let Some(t) = v.as_table() else {
        return at.bad(
            "",
            "must be a table of host keys (see docs/book/src/guide/hosts.md)",
        );
    };
    let merged = match t.get(PROFILE_KEY) {
        None => t.clone(),
        Some(p) => {
            let Some(p) = p.as_str() else {
                return at.bad(PROFILE_KEY, "must be a file path (a string)");
            };
            let mut own = t.clone();
            own.remove(PROFILE_KEY);
            merge_tables(&load_profile(Path::new(p))?, &own)
        }
    };
    let mut cfg = deserialize(&merged, &at)?;
    cfg.profile = t
        .get(PROFILE_KEY)
        .and_then(|p| p.as_str())
        .map(String::from);
    check(&cfg, &at)?;
    if let Some(Latency::Empirical { file, samples }) = &mut cfg.wakeup_latency {
        *samples = load_samples(Path::new(file.as_str()))?;
    }
    Ok((!cfg.is_off()).then_some(cfg))
}

/// A profile file's table; its empirical latency file resolved against its directory.
fn load_profile(path: &Path) -> Result<toml::Table, ScenarioError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        file: name.clone(),
        source,
    })?;
    let mut t: toml::Table = toml::from_str(&text).map_err(|e| ScenarioError::Parse {
        file: name.clone(),
        message: e.to_string(),
    })?;
    if t.contains_key(PROFILE_KEY) {
        return Err(ScenarioError::Invalid {
            file: name,
            key: PROFILE_KEY.into(),
            why: "a profile cannot name another profile".into(),
        });
    }
    if let Some(dir) = path.parent() {
        resolve_latency_file(&mut t, dir);
    }
    Ok(t)
}

/// Makes a host table's relative `wakeup_latency.file` relative to `dir`.
pub(crate) fn resolve_latency_file(host: &mut toml::Table, dir: &Path) {
    let file = host
        .get_mut("wakeup_latency")
        .and_then(|w| w.as_table_mut())
        .and_then(|w| w.get_mut("file"));
    if let Some(toml::Value::String(p)) = file {
        if Path::new(p.as_str()).is_relative() {
            *p = dir.join(&*p).display().to_string();
        }
    }
}

/// Makes a transport table's relative host paths (profile, latency file) relative to `dir`.
pub(crate) fn resolve_paths(table: &mut toml::Table, dir: &Path) {
    let Some(toml::Value::Table(host)) = table.get_mut(HOST_KEY) else {
        return;
    };
    if let Some(toml::Value::String(p)) = host.get_mut(PROFILE_KEY) {
        if Path::new(p.as_str()).is_relative() {
            *p = dir.join(&*p).display().to_string();
        }
    }
    resolve_latency_file(host, dir);
}

/// Deserializes a host table; the first key that fails alone is named.
fn deserialize(t: &toml::Table, at: &At) -> Result<HostConfig, ScenarioError> {
    toml::Value::Table(t.clone())
        .try_into()
        .map_err(|e: toml::de::Error| {
            let culprit = t.iter().find(|(k, v)| {
                let alone = toml::Table::from_iter([((*k).clone(), (*v).clone())]);
                toml::Value::Table(alone).try_into::<HostConfig>().is_err()
            });
            ScenarioError::Invalid {
                file: at.file.to_string(),
                key: culprit.map_or_else(|| at.key.to_string(), |(k, _)| format!("{}.{k}", at.key)),
                why: e.message().to_string(),
            }
        })
}

/// Finite, non-negative values within their limits; positive sizes.
fn check(c: &HostConfig, at: &At) -> Result<(), ScenarioError> {
    let costs = [
        ("recv_cost_us", c.recv_cost_us),
        ("send_cost_us", c.send_cost_us),
        ("per_byte_ns", c.per_byte_ns),
        ("crypto_per_byte_ns", c.crypto_per_byte_ns),
        ("timer_granularity_us", c.timer_granularity_us),
        ("app_delay_ms", c.app_delay_ms),
    ];
    for (k, v) in costs {
        if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
            return at.bad(k, format!("must be 0 to {MAX_COST_US}"));
        }
    }
    let sizes = [
        ("rx_queue_packets", c.rx_queue_packets),
        ("socket_rcvbuf", c.socket_rcvbuf),
        ("socket_sndbuf", c.socket_sndbuf),
    ];
    for (k, v) in sizes {
        if v == Some(0) {
            return at.bad(k, "must be at least 1 (absent: unbounded)");
        }
    }
    if let Some(g) = c.gso_segments {
        if !(1..=MAX_GSO_SEGMENTS).contains(&g) {
            return at.bad("gso_segments", format!("must be 1 to {MAX_GSO_SEGMENTS}"));
        }
    }
    let ok = |v: f64| v.is_finite() && (0.0..=MAX_COST_US).contains(&v);
    match &c.wakeup_latency {
        Some(Latency::Fixed { us }) if !ok(*us) => {
            at.bad("wakeup_latency.us", format!("must be 0 to {MAX_COST_US}"))
        }
        Some(Latency::Uniform { min_us, max_us })
            if !(ok(*min_us) && ok(*max_us)) || min_us > max_us =>
        {
            at.bad(
                "wakeup_latency",
                format!("min_us and max_us must be 0 to {MAX_COST_US}, min_us <= max_us"),
            )
        }
        _ => Ok(()),
    }
}

/// An empirical latency file's samples, µs: one number per line, `#` comments.
fn load_samples(path: &Path) -> Result<Vec<f64>, ScenarioError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        file: name.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| ScenarioError::Invalid {
            file: name.clone(),
            key: format!("line {}", n + 1),
            why: why.to_string(),
        };
        let v: f64 = line.parse().map_err(|_| bad("not a number (µs)"))?;
        if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
            return Err(bad("a wake-up latency must be 0 to 1e6 µs"));
        }
        if out.len() == MAX_SAMPLES {
            return Err(bad("more than 1,000,000 samples"));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(ScenarioError::Invalid {
            file: name,
            key: "wakeup_latency.file".into(),
            why: "no samples".into(),
        });
    }
    Ok(out)
}
