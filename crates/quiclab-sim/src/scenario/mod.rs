//! Scenario files (TOML): topology, links, impairments, workloads, each endpoint's
//! transport config, seed and stop condition. Unknown keys and impossible values are
//! errors naming the file and the key; nothing is silently defaulted (absent optional
//! keys take the documented defaults below).
//!
//! Limits beyond signs (see `validate`): times are at most [`MAX_SECONDS`] (1e9 s, in
//! any unit the key uses), link rates are [`MIN_RATE_MBPS`] (1 bit/s) to
//! [`MAX_RATE_MBPS`], measurement bins and cross-traffic gaps at least 1 ns, at most
//! [`MAX_PAIRS`] dumbbell pairs and [`MAX_FLOWS`] flows, and a flow's send buffers
//! (`flow.send_buffer` x streams) at most [`MAX_SEND_MEMORY`]. A scenario whose estimated
//! work exceeds `stop.max_events` (default [`DEFAULT_MAX_EVENTS`]) is refused up front
//! (see `budget`).

use crate::excerpt::excerpt;
use quiclab_proto::TransportConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

mod budget;
mod datagram;
pub use datagram::STAMP_LEN as DATAGRAM_STAMP_LEN;
mod gateway;
mod host_table;
mod hosts;
mod interfaces;
mod media;
mod rebind;
pub use media::{FrameSize, FrameSizeDist, MediaMode, MEDIA_HEADER_LEN};
mod resume_from;
mod schema;
mod session_from;
mod tcp;
mod tls;
mod tls_resume;
mod trace;
mod validate;
mod web;

pub use budget::{max_events, SourceWork, DEFAULT_MAX_EVENTS};
pub use gateway::{GatewayConfig, PepConfig, MAX_PEP_BUFFER};
pub use interfaces::{
    interface_addr, ClientHost, Degradation, Interface, PathEvent, MAX_INTERFACES, MAX_PATH_EVENTS,
    MAX_SILENCE_PTOS,
};
/// A link direction's keys and `[[schedule]]` entries: the link models' own types.
pub use quiclab_link::config::{LinkChange, LinkConfig, LinkSide};
pub use rebind::{rebound, Rebind, RebindEvery, RebindKind, MAX_REBINDS, REBIND_PORTS};
pub use resume_from::{sender_is_server, ResumeFrom, FROM_FLOW};
pub use session_from::SessionFrom;
pub use tls::{Names, TlsChoiceKeys, TlsRecords, TlsSettings, TlsTable, TlsVersion};
pub use validate::{
    MAX_CERTIFICATE_PADDING, MAX_FLOWS, MAX_PAIRS, MAX_RATE_MBPS, MAX_SECONDS, MAX_SEND_MEMORY,
    MIN_RATE_MBPS, MIN_STEP_SECONDS,
};
pub use web::{
    HttpMode, HttpSettings, ObjectSize, SizeDist, TcpHttp, EXTRA_PORTS, MAX_OBJECTS,
    MAX_OBJECT_BYTES, MAX_POOL_SIZE,
};

/// A scenario file's top level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Master seed: every random stream (links, cross traffic, connections) derives
    /// from it and the component's name.
    pub seed: u64,
    pub stop: Stop,
    #[serde(default)]
    pub measure: Measure,
    /// Extra bytes in the servers' self-signed certificate, to vary the size of the
    /// server's first flight (default 0: the certificate of `certificate_type` alone,
    /// 243 bytes for Ed25519, about 308 for ECDSA P-256, 705 for RSA-2048).
    #[serde(default)]
    pub certificate_padding: usize,
    /// The servers' key and certificate type, QUIC and TLS-over-TCP flows alike (one
    /// certificate per run, from the seed): `"ed25519"` (default; 64-byte
    /// signatures), `"ecdsa_p256"` (RFC 6979 signatures, 70-72 bytes) or `"rsa2048"`
    /// (256-byte RSA-PSS CertificateVerify signatures, whose random salt makes pcaps
    /// and keys.log differ between runs; results and qlog do not: see
    /// `scenario/tls.rs`).
    #[serde(default, skip_serializing_if = "tls::is_default_cert")]
    #[schemars(schema_with = "schema::proto_name")]
    pub certificate_type: quiclab_proto::tls::CertType,
    /// Cipher suites and key exchange groups of every flow's client and server
    /// (`[tls]`: `cipher_suites`, `kx_groups`, and per side `client`/`server`;
    /// `scenario/tls.rs`); absent = all three suites and X25519.
    #[serde(default, skip_serializing_if = "TlsTable::is_empty")]
    pub tls: TlsTable,
    /// Packet protection of every QUIC client and server: `"aead"` (default: the
    /// negotiated AEAD and header protection) or `"checksum"` (the payload stays
    /// plaintext under a keyed 16-byte checksum tag, headers under a hashed mask;
    /// every behaviour that depends on the keys is kept, the packets' bytes are not
    /// what a real stack sends; quiclab-proto's `crypto/checksum_keys.rs`). For sweeps:
    /// results are identical and runs cheaper; not for pcap studies. TLS-over-TCP
    /// flows are unaffected.
    #[serde(default, skip_serializing_if = "is_default_protection")]
    #[schemars(schema_with = "schema::packet_protection")]
    pub packet_protection: quiclab_proto::PacketProtection,
    pub topology: Topology,
    /// Transport config of every client / server endpoint (TransportConfig keys;
    /// absent keys take TransportConfig's defaults). Flows may override keys.
    #[serde(default)]
    #[schemars(schema_with = "schema::transport_table")]
    pub client: toml::Table,
    #[serde(default)]
    #[schemars(schema_with = "schema::transport_table")]
    pub server: toml::Table,
    #[serde(default)]
    pub flows: Vec<Flow>,
    #[serde(default)]
    pub cross_traffic: Vec<CrossTraffic>,
    /// Scheduled link changes.
    #[serde(default)]
    pub schedule: Vec<LinkChange>,
}

/// Left out when serialized at its default, so scenarios written back keep their bytes.
fn is_default_protection(p: &quiclab_proto::PacketProtection) -> bool {
    *p == quiclab_proto::PacketProtection::Aead
}

/// When the run ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Simulated time limit, seconds (required).
    pub time_s: f64,
    /// Also stop as soon as every flow with a finite workload has completed.
    #[serde(default)]
    pub when_flows_done: bool,
    /// Most events the run may take (default [`DEFAULT_MAX_EVENTS`], about half an hour).
    /// A scenario whose estimated work (see [`Scenario::estimate_work`]) exceeds it is
    /// refused when loaded, naming the source that contributes most, and a run that
    /// reaches it stops with [`crate::SimError::EventLimit`]. Raise it for a long run
    /// you mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u64>,
}

/// What to measure and write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Measure {
    /// Mean goodput is computed over [from_s, to_s) (default: the whole run).
    pub from_s: f64,
    pub to_s: Option<f64>,
    /// Goodput time series bin, seconds (default 1).
    pub interval_s: f64,
    /// Record cwnd/RTT/queue traces (default off).
    pub traces: bool,
    /// Write one qlog per connection (default off).
    pub qlog: bool,
    /// Write one pcap per link direction plus keys.log (default off).
    pub pcap: bool,
    /// Count each QUIC sender's loss epochs (`output/loss_epochs.rs`; default off,
    /// results then have no `loss_epochs` entries).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub loss_epochs: bool,
    /// Record each QUIC endpoint's ACK frames over time: count, bytes and ranges per
    /// `interval_s` bin, the largest frame (`output/ack_sizes.rs`; default off, results
    /// then have no `ack_sizes` entries).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ack_sizes: bool,
}

impl Default for Measure {
    fn default() -> Self {
        Measure {
            from_s: 0.0,
            to_s: None,
            interval_s: 1.0,
            traces: false,
            qlog: false,
            pcap: false,
            loss_epochs: false,
            ack_sizes: false,
        }
    }
}

/// The network shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    /// One client host and one server host joined by one link each way; with
    /// `gateway`, a terrestrial link pair and optionally a TCP PEP behind them
    /// (`scenario/gateway.rs`); with `client`, a client host with several network
    /// interfaces, each on its own links, and scripted path events
    /// (`scenario/interfaces.rs`).
    PointToPoint {
        forward: LinkConfig,
        #[serde(rename = "return")]
        ret: LinkConfig,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gateway: Option<Box<GatewayConfig>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<Box<ClientHost>>,
    },
    /// `pairs` sender/receiver host pairs sharing one bottleneck each way; each pair's
    /// access links (unlimited rate) add `access_delay_ms[i]` one way.
    Dumbbell {
        pairs: usize,
        #[serde(default)]
        access_delay_ms: Vec<f64>,
        forward: LinkConfig,
        #[serde(rename = "return")]
        ret: LinkConfig,
    },
}

/// What a flow's client does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// Keep the send buffer full on one stream to the server (INET's traffic
    /// generator; the server discards). `bytes` absent = unlimited until `stop_s`.
    Bulk {
        bytes: Option<u64>,
        stop_s: Option<f64>,
    },
    /// GET `size` bytes (hq-interop style): `count` requests, `parallel` at a time,
    /// `think_ms` between a response and the next request.
    Request {
        size: u64,
        #[serde(default = "one")]
        count: u64,
        #[serde(default = "one")]
        parallel: u64,
        #[serde(default)]
        think_ms: f64,
    },
    /// A page load over HTTP/3 (RFC 9114, QPACK): GET an `html_size`-byte page, then
    /// its `objects` embedded objects of `object_size` bytes each, all at once on
    /// parallel request streams (as a browser does once the HTML arrived).
    Page {
        html_size: u64,
        objects: u64,
        object_size: u64,
    },
    /// A search (seed 003 §6.3's Search Latency): GET an `html_size`-byte page, then
    /// its `objects` embedded objects (sizes from `object_size`, see `scenario/web.rs`)
    /// all at once once the HTML arrived; measured until the last object's last byte.
    Search {
        html_size: u64,
        objects: u64,
        object_size: ObjectSize,
    },
    /// A video playback of `duration_s` seconds at `bitrate_mbps` (video) plus
    /// `audio_kbps` (audio, default 128; 0 = none) in `chunk_s` chunks with a playback
    /// buffer (seed 003 §6.5's rebuffer rate; `workload/webapp.rs`): playback starts with
    /// `startup_s` buffered, chunks are fetched while less than `buffer_target_s` is
    /// buffered.
    Video {
        duration_s: f64,
        bitrate_mbps: f64,
        #[serde(default = "audio_kbps")]
        audio_kbps: f64,
        chunk_s: f64,
        startup_s: f64,
        buffer_target_s: f64,
    },
    /// Real-time media-like traffic (`workload/datagram.rs`): from the handshake on,
    /// the client sends `rate_pps` RFC 9221 DATAGRAM frames per second of `size`
    /// payload bytes (at least 16: a sequence number and a send time) for
    /// `duration_s`; the server counts them and their one-way delays. Both sides
    /// need `max_datagram_frame_size`.
    Datagram {
        rate_pps: f64,
        size: u64,
        duration_s: f64,
    },
    /// Interactive media (`workload/media.rs`, keys in `scenario/media.rs`): from the
    /// handshake on, the client sends `fps` frames per second for `duration_s`, each of
    /// `frame_size` bytes (a number, `{ dist = "uniform", min, max }` or
    /// `{ dist = "keyframe", bytes, key_bytes, every }`), in DATAGRAM fragments
    /// (`mode = "datagram"`, the default; both sides need `max_datagram_frame_size`) or
    /// one unidirectional stream per frame (`mode = "stream"`). The server measures each
    /// frame's one-way latency (application to application); a frame later than
    /// `deadline_ms`, or never complete, is a deadline miss.
    Media {
        fps: f64,
        frame_size: FrameSize,
        deadline_ms: f64,
        duration_s: f64,
        #[serde(default)]
        mode: MediaMode,
    },
}

fn one() -> u64 {
    1
}

/// A video's default audio track, kbit/s (a typical AAC stereo track).
fn audio_kbps() -> f64 {
    128.0
}

/// Which transport a flow runs.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    #[default]
    Quic,
    /// TCP (quiclab-tcp) with the same congestion controllers, optionally under TLS
    /// (`[flows.tls]`).
    Tcp,
}

impl Transport {
    pub fn is_quic(&self) -> bool {
        *self == Transport::Quic
    }
}

/// A QUIC connection and its workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub name: String,
    /// Dumbbell pair index (point-to-point: 0).
    #[serde(default)]
    pub pair: usize,
    /// When the client starts connecting, seconds.
    #[serde(default)]
    pub start_s: f64,
    pub workload: Workload,
    /// The transport: `"quic"` (default) or `"tcp"` (quiclab-tcp; see `scenario/tcp.rs`).
    #[serde(default, skip_serializing_if = "Transport::is_quic")]
    pub transport: Transport,
    /// TCP settings of both ends (`[flows.tcp]`, quiclab_tcp::TcpConfig keys); only
    /// with `transport = "tcp"`, absent keys take TcpConfig's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<quiclab_tcp::TcpConfig>,
    /// The flow's TLS (`[flows.tls]`): on a TCP flow, TLS over it (`version = "1.3"` or
    /// `"1.2"`; absent = plain TCP); on any flow, its own cipher suites and groups
    /// (`scenario/tls.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSettings>,
    /// How a TCP flow carries a `search` / `video` workload (`[flows.http]`, see
    /// `scenario/web.rs`); absent = the workload's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpSettings>,
    /// The earlier flow whose TLS session this flow's client resumes (a flow name;
    /// see `scenario/session_from.rs`); absent = a first connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_from: Option<String>,
    /// Overrides of the scenario's client/server (QUIC) transport keys for this flow.
    #[serde(default)]
    #[schemars(schema_with = "schema::transport_table")]
    pub client: toml::Table,
    #[serde(default)]
    #[schemars(schema_with = "schema::transport_table")]
    pub server: toml::Table,
    /// NAT rebindings of the flow's client (`[[flows.rebinds]]`, QUIC flows;
    /// `scenario/rebind.rs`): its datagrams take a new public source port or address
    /// at each `at_s`, which the client never learns (RFC 9000 §9.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebinds: Vec<Rebind>,
    /// Periodic NAT rebindings of the flow's client (`scenario/rebind.rs`): one every
    /// `period_s` from `first_s` until the run's stop, besides `rebinds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebind_every: Option<RebindEvery>,
}

/// UDP cross traffic between a pair's hosts (INET's shared-link case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrossTraffic {
    pub name: String,
    #[serde(default)]
    pub pair: usize,
    /// Uniform datagram size range, bytes of UDP payload.
    pub size_min: u32,
    pub size_max: u32,
    /// Uniform gap between datagrams, ms.
    pub interval_min_ms: f64,
    pub interval_max_ms: f64,
    #[serde(default)]
    pub start_s: f64,
    pub stop_s: Option<f64>,
}

/// A scenario file that cannot be used, with the file and key named (each quoted at
/// most as [`excerpt`] allows: a message can carry a whole input value).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{}: {source}", excerpt(.file))]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{}: {}", excerpt(.file), excerpt(.message))]
    Parse { file: String, message: String },
    #[error("{}: {}: {}", excerpt(.file), excerpt(.key), excerpt(.why))]
    Invalid {
        file: String,
        key: String,
        why: String,
    },
}

/// Deep-merges `over` onto `base` (tables merge key by key; other values replace).
pub fn merge_tables(base: &toml::Table, over: &toml::Table) -> toml::Table {
    let mut out = base.clone();
    for (k, v) in over {
        match (out.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
                let merged = merge_tables(b, o);
                *b = merged;
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

impl Scenario {
    /// Reads and validates a scenario file; relative trace paths resolve against its
    /// directory (`scenario/trace.rs`).
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            file: file.clone(),
            source,
        })?;
        Self::parse_in(&text, &file, path.parent())
    }

    /// Parses and validates scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Self::parse_in(text, file, None)
    }

    /// [`Scenario::parse`] for text read from a file in `dir` (relative trace paths
    /// resolve against it).
    pub fn parse_in(text: &str, file: &str, dir: Option<&Path>) -> Result<Scenario, ScenarioError> {
        let mut s: Scenario = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        if let Some(dir) = dir {
            s.resolve_trace_paths(dir);
            s.resolve_host_paths(dir);
        }
        s.validate(file)?;
        Ok(s)
    }

    /// The transport config of a flow's client or server (scenario keys, then the
    /// flow's overrides), validated. With `careful_resume.from_flow` (see
    /// [`Scenario::resume_from`]) its saved values are left unset (0): the simulator
    /// fills them from the referenced flow when this flow starts.
    pub fn transport(
        &self,
        flow: usize,
        server: bool,
        file: &str,
    ) -> Result<TransportConfig, ScenarioError> {
        let f = &self.flows[flow];
        let (base, over, side) = if server {
            (&self.server, &f.server, "server")
        } else {
            (&self.client, &f.client, "client")
        };
        let mut merged = merge_tables(base, over);
        let key = format!("flows[{}] ({}).{side}", flow, f.name);
        // `careful_resume.from_flow` (see `resume_from`): the saved values arrive
        // while running; every other key is validated now, with stand-in saved values.
        let from_flow = resume_from::take_from_flow(&mut merged);
        let mut config = parse_transport(&merged, &key, file)?;
        config.packet_protection = self.packet_protection;
        let mut checked = config.clone();
        if from_flow {
            checked.careful_resume.saved_cwnd_bytes = 1;
            checked.careful_resume.saved_rtt_ms = 1.0;
        }
        checked.validate().map_err(|e| ScenarioError::Invalid {
            file: file.to_string(),
            key: format!("{key}.{}", e.key),
            why: e.why,
        })?;
        Ok(config)
    }
}

/// Deserializes a transport table; `key` names it in errors. Errors from a `toml::Value`
/// carry no key path, so the top-level key that fails on its own is added to `key`
/// (every TransportConfig key has a default, so the others deserialize alone).
pub(crate) fn parse_transport(
    table: &toml::Table,
    key: &str,
    file: &str,
) -> Result<TransportConfig, ScenarioError> {
    // The host table is the simulator's (`scenario/hosts.rs`), not the transport's.
    let mut table = table.clone();
    table.remove(crate::host::config::HOST_KEY);
    let table = &table;
    let config: TransportConfig =
        toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                let culprit = table.iter().find(|(k, v)| {
                    let alone = toml::Table::from_iter([((*k).clone(), (*v).clone())]);
                    toml::Value::Table(alone)
                        .try_into::<TransportConfig>()
                        .is_err()
                });
                ScenarioError::Invalid {
                    file: file.to_string(),
                    key: culprit.map_or_else(|| key.to_string(), |(k, _)| format!("{key}.{k}")),
                    why: e.message().to_string(),
                }
            })?;
    if config.preferred_address.is_some() {
        return Err(ScenarioError::Invalid {
            file: file.to_string(),
            key: format!("{key}.preferred_address"),
            why: "not simulated yet: a simulated host has one address, so a client's \
                  probe of the preferred address (RFC 9000 §9.6) could never arrive"
                .to_string(),
        });
    }
    Ok(config)
}
