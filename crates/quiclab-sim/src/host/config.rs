//! A host table's keys (`host = { ... }` under `[client]`, `[server]` or a flow's
//! `[flows.client]` / `[flows.server]`); reading and checking them from a scenario or a
//! profile file is `scenario/host_table.rs`.
//! Every key stands for a real mechanism of an end host; all default to "absent", and
//! a table whose keys are all absent (or zero) is no host model at all.

use serde::{Deserialize, Serialize};

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
/// The largest empirical latency file read: [`MAX_SAMPLES`] samples of a dozen
/// characters each, with room for comments.
pub const MAX_LATENCY_FILE_BYTES: u64 = 64 << 20;

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
}
