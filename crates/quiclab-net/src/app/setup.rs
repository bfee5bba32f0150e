//! What client and server share: transport config from TOML with the real driver's
//! defaults, the TLS key log, and one qlog file per connection.

use crate::app::file_writer::{FileSink, FileWriter};
use crate::error::{Context, NetError, Result};
use quiclab_proto::events::EventSink;
use quiclab_proto::tls::{CipherSuite, KxGroup, TlsChoices};
use quiclab_proto::{
    Connection, EcnMode, Instant, QlogWriter, QuicVersion, RetryMode, Side, TransportConfig,
    VersionConfig,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The hq-interop ALPN (the QUIC interop runner's HTTP/0.9).
pub const ALPN_HQ: &[u8] = b"hq-interop";

/// The transport config from a TOML file (all keys optional; unknown keys are errors),
/// or the defaults.
pub fn load_config(path: Option<&Path>) -> Result<Arc<TransportConfig>> {
    let config = match path {
        None => TransportConfig::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading config {}", path.display()))?;
            toml::from_str::<TransportConfig>(&text)
                .map_err(|e| NetError::Config(format!("config {}: {e}", path.display())))?
        }
    };
    config.validate().map_err(|e| match path {
        Some(p) => NetError::Config(format!("config {}: {e}", p.display())),
        None => NetError::Config(e.to_string()),
    })?;
    Ok(Arc::new(config))
}

/// The transport and TLS options both sides take (the command line's common flags;
/// `None`/empty: the config file's value, else the real driver's default).
#[derive(Default)]
pub struct Flags<'a> {
    pub config: Option<&'a Path>,
    pub testcase: Option<&'a str>,
    pub cipher: &'a [CipherSuite],
    pub kx: &'a [KxGroup],
    pub versions: &'a [VersionArg],
    pub key_update_every: Option<u64>,
    /// `--pacing-burst-us` (0: fixed bursts).
    pub pacing_burst_us: Option<u64>,
    /// `--notsent-lowat` (0: no limit).
    pub notsent_lowat: Option<u64>,
    /// `--pmtud-max` (0: no PMTU discovery).
    pub pmtud_max: Option<u16>,
    /// `--ecn` (off, ect0, ect1).
    pub ecn: Option<EcnMode>,
    /// The UDP payload the local interface carries (`mtu.rs`), when known: PMTU
    /// discovery's bound when neither the flag nor the config gives one.
    pub interface_payload: Option<u16>,
}

/// PMTU discovery's upper bound when neither the flag, the config nor the interface
/// gives one (a server listening on every address): the largest UDP payload of a
/// 1500-byte Ethernet path under IPv6 (1500 - 40 - 8), as quinn uses. Datagrams start
/// at max_udp_payload_size and grow once a probe of the larger size is acknowledged,
/// so a path with a smaller MTU costs only lost probes.
pub const DEFAULT_PMTUD_MAX: u16 = 1452;

/// The real-UDP driver's limit on a stream's written but unsent bytes when neither
/// the flag nor the config sets one (`flow.notsent_lowat`). The driver refills streams
/// every loop turn, and a turn sends at most one pacing burst (two 64 KB GSO sends),
/// so 256 KiB never starves the sender while the bytes copied into packets are still
/// in the core's cache (measured in docs/PERFORMANCE.md, "Bulk").
pub const DEFAULT_NOTSENT_LOWAT: u64 = 256 << 10;

/// The real-UDP driver's pacing burst when neither the flag nor the config sets one,
/// µs of the pacing rate: about what Linux TCP sends at once (TSO autosizing, ~1 ms of
/// its pacing rate). Below ~20 Mbit/s the pacer still releases datagram by datagram,
/// as in the simulator; above, the loop wakes once per half-millisecond batch (up to
/// 32 datagrams, one GSO send) instead of once per datagram.
pub const DEFAULT_PACING_BURST_US: u64 = 1000;

/// `--ecn`'s values: `off`, `ect0`, `ect1` (the transport key `ecn`); anything else is
/// refused.
pub fn parse_ecn(s: &str) -> Result<EcnMode, String> {
    match s {
        "off" => Ok(EcnMode::Off),
        "ect0" => Ok(EcnMode::Ect0),
        "ect1" => Ok(EcnMode::Ect1),
        _ => Err(format!(
            "unknown ECN mode {s:?} (expected off, ect0 or ect1)"
        )),
    }
}

/// ECN as configured, for the start-up log.
pub fn ecn_note(config: &TransportConfig) -> String {
    match config.ecn {
        EcnMode::Off => "ECN: off (not-ECT)".into(),
        EcnMode::Ect0 => "ECN: ECT(0), until validation fails (RFC 9000 §13.4)".into(),
        EcnMode::Ect1 => "ECN: ECT(1), until validation fails (RFC 9000 §13.4)".into(),
    }
}

/// Whether the TOML config file at `path` sets `key` at its top level (an unreadable
/// or invalid file was already refused by [`load_config`]).
fn file_sets(path: Option<&Path>, key: &str) -> bool {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|t| t.contains_key(key))
}

/// A QUIC version on the command line (`v1`, `v2`).
#[derive(Clone, Copy, Debug)]
pub struct VersionArg(pub QuicVersion);

impl std::str::FromStr for VersionArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "v1" | "1" => Ok(VersionArg(QuicVersion::V1)),
            "v2" | "2" => Ok(VersionArg(QuicVersion::V2)),
            _ => Err(format!("unknown QUIC version {s:?} (expected v1 or v2)")),
        }
    }
}

/// The config file with the flags applied on top: first the interop-runner test
/// case's settings, then explicit flags (which win). Returns the transport config and
/// the TLS choices.
///
/// Test cases (the QUIC interop runner's names): `handshake`, `transfer`,
/// `multiplexing` need nothing special; `keyupdate`: the client updates its 1-RTT keys
/// early and often (every 2 packets it sends: a downloading client sends mostly ACKs,
/// and few of those, since the driver reads GRO batches and acknowledges once per batch); `chacha20`: only ChaCha20-Poly1305;
/// `v2` (the interop runner's meaning): the client starts in QUIC v1 offering v2 (and
/// preferring it), so a server preferring v2 moves the connection to v2 by compatible
/// version negotiation (RFC 9368 §2.3), which the client follows; the server accepts v2
/// and v1, preferring v2, so it upgrades such a client; `retry`: the server sends a Retry on every connection
/// (RFC 9000 §8.1.2; the client needs nothing: it always handles Retry); `resumption`: the
/// server issues session tickets and the client makes a second connection that resumes
/// (the command line splits its URLs); `zerortt`: the same, with 0-RTT on both sides (`zero_rtt`);
/// `ecn`: every packet ECN-capable (ECT(0) unless the config says ECT(1)) and ECN counts
/// in ACK frames, as the runner checks in its capture; `connectionmigration`: the
/// server announces a preferred address (the command line's `--preferred-address`) and
/// the client moves there after validating it (RFC 9000 §9.6; a client does so by
/// default, so neither side's config changes here); `multiconnect` (the runner's
/// handshakeloss and handshakecorruption): nothing changes either, the client opens a
/// connection per URL (the command line splits them). Anything
/// else is [`NetError::UnsupportedTestcase`].
///
/// ECN: real endpoints send ECT(0) with validation by default, as RFC 9000 §13.4
/// recommends (the simulator's default stays off); the config file's `ecn`, then
/// `--ecn`, override that.
pub fn configure(f: &Flags<'_>, side: Side) -> Result<(Arc<TransportConfig>, TlsChoices)> {
    let mut config = (*load_config(f.config)?).clone();
    if !file_sets(f.config, "ecn") {
        config.ecn = EcnMode::Ect0;
    }
    let mut choices = TlsChoices::default();
    match f.testcase {
        None
        | Some(
            "handshake" | "transfer" | "multiplexing" | "connectionmigration" | "multiconnect",
        ) => {}
        Some("keyupdate") => {
            if side == Side::Client {
                config.key_update.every_packets = Some(2);
            }
        }
        Some("resumption") => {}
        Some("zerortt") => config.zero_rtt = true,
        Some("ecn") => {
            if config.ecn == EcnMode::Off {
                config.ecn = EcnMode::Ect0;
            }
        }
        Some("retry") => {
            if side == Side::Server {
                config.admission.retry = RetryMode::Always;
            }
        }
        Some("chacha20") => choices = TlsChoices::only_suite(CipherSuite::Chacha20Poly1305),
        Some("v2") => {
            config.versions = match side {
                // RFC 9368 §2.5: the oldest version first, offering the newer one.
                Side::Client => VersionConfig {
                    initial: QuicVersion::V1,
                    supported: vec![QuicVersion::V2, QuicVersion::V1],
                },
                // Preferring v2, so a v1 client offering v2 is upgraded (RFC 9368 §2.3).
                Side::Server => VersionConfig {
                    initial: QuicVersion::V1,
                    supported: vec![QuicVersion::V2, QuicVersion::V1],
                },
            }
        }
        Some(other) => return Err(NetError::UnsupportedTestcase(other.to_string())),
    }
    if !f.cipher.is_empty() {
        choices.cipher_suites = f.cipher.to_vec();
    }
    if !f.kx.is_empty() {
        choices.kx_groups = f.kx.to_vec();
    }
    if let Some((first, _)) = f.versions.split_first() {
        config.versions = VersionConfig {
            initial: first.0,
            supported: f.versions.iter().map(|v| v.0).collect(),
        };
    }
    if let Some(n) = f.key_update_every {
        config.key_update.every_packets = Some(n);
    }
    if let Some(e) = f.ecn {
        config.ecn = e;
    }
    config.pacing_burst_us = match f.pacing_burst_us {
        Some(0) => None,
        Some(us) => Some(us),
        None => config.pacing_burst_us.or(Some(DEFAULT_PACING_BURST_US)),
    };
    // The flag, else the config file (where 0 also means off), else the driver's default.
    config.pmtud_max_udp_payload_size = f.pmtud_max.or(config.pmtud_max_udp_payload_size).or(Some(
        f.interface_payload
            .unwrap_or(DEFAULT_PMTUD_MAX)
            .max(config.max_udp_payload_size),
    ));
    config.flow.notsent_lowat = f
        .notsent_lowat
        .or(config.flow.notsent_lowat)
        .or(Some(DEFAULT_NOTSENT_LOWAT));
    config
        .validate()
        .map_err(|e| NetError::Config(e.to_string()))?;
    choices
        .validate()
        .map_err(|e| NetError::Config(e.to_string()))?;
    Ok((Arc::new(config), choices))
}

/// PMTU discovery as configured, for the start-up log.
pub fn pmtud_note(config: &TransportConfig) -> String {
    match config.pmtud_max_udp_payload_size.filter(|&m| m > 0) {
        None => format!(
            "PMTU discovery: off, datagrams of {} bytes",
            config.max_udp_payload_size
        ),
        Some(m) => format!(
            "PMTU discovery: from {} up to {m} bytes of UDP payload",
            config.max_udp_payload_size
        ),
    }
}

/// The pacing the transport config gives, for the start-up log.
pub fn pacing_note(config: &TransportConfig) -> String {
    match (config.pacing, config.pacing_burst_us) {
        (false, _) => "pacing: off".into(),
        (true, None) => "pacing: bursts of 10 datagrams".into(),
        (true, Some(us)) => {
            format!("pacing: bursts of {us} µs of the pacing rate (10 datagrams to 128 KiB)")
        }
    }
}

/// Whether a test case resumes a session on a second connection (RFC 9001 §4.5).
pub fn resumes(testcase: Option<&str>) -> bool {
    matches!(testcase, Some("resumption" | "zerortt"))
}

/// rustls's clock for session tickets: the driver's `now` on top of the wall-clock
/// time of its epoch (`crypto::clock`), so ticket ages and certificate dates are real.
pub fn tls_clock() -> quiclab_proto::tls::VirtualClock {
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    quiclab_proto::tls::VirtualClock::with_base(base)
}

/// A TLS key log writing to `$SSLKEYLOGFILE`, when it is set (for Wireshark).
pub fn key_log() -> Option<Arc<dyn rustls::KeyLog>> {
    std::env::var_os("SSLKEYLOGFILE").map(|_| Arc::new(rustls::KeyLogFile::new()) as _)
}

/// Where per-connection qlog files go, if anywhere. The files are created and written
/// by one writer thread per `QlogDir` and its clones ([`FileWriter`]), so no
/// file-system call runs on the endpoint's thread during a connection; the last holder
/// (this value, a clone, or a connection's sink) joins the thread, so every byte is in
/// its file once the endpoint and its `QlogDir`s are dropped.
#[derive(Clone, Debug)]
pub struct QlogDir(Option<(PathBuf, FileWriter)>);

impl QlogDir {
    /// Creates the directory now, so a bad path fails before any connection, and
    /// starts the writer thread.
    pub fn new(dir: Option<PathBuf>) -> Result<Self> {
        let Some(d) = dir else {
            return Ok(QlogDir(None));
        };
        std::fs::create_dir_all(&d)
            .with_context(|| format!("creating qlog dir {}", d.display()))?;
        let writer = FileWriter::spawn("qlog").context("starting the qlog writer")?;
        Ok(QlogDir(Some((d, writer))))
    }

    /// The directory, when qlog is on.
    pub fn dir(&self) -> Option<&Path> {
        self.0.as_ref().map(|(d, _)| d.as_path())
    }

    /// Attaches a `<odcid>_<side>.sqlog` writer to `conn`. A file that cannot be
    /// created is reported and skipped: logging never stops a transfer.
    pub fn attach(&self, conn: &mut Connection, now: Instant) {
        if let Some(sink) = self.sink_for(conn) {
            conn.set_event_sink(now, sink);
        }
    }

    /// A new file `name` in the directory, created and written on the writer thread
    /// (other logs of a connection: the HTTP/3 qlog), if qlog is on.
    pub fn file(&self, name: &str) -> Option<FileSink> {
        let (dir, writer) = self.0.as_ref()?;
        Some(writer.create(dir.join(name)))
    }

    /// A `<odcid>_<side>.sqlog` writer for `conn`, if qlog is on. The file is created
    /// on the writer thread; one that cannot be is reported there (in the notes of the
    /// thread that made this `QlogDir`) and its events are dropped, not fatal. Servers
    /// hand this to `Endpoint::set_sink_factory`, so the log starts with the client's
    /// first Initial.
    pub fn sink_for(&self, conn: &Connection) -> Option<Box<dyn EventSink>> {
        let (dir, writer) = self.0.as_ref()?;
        let side = match conn.side() {
            Side::Client => "client",
            Side::Server => "server",
        };
        let odcid = conn.original_dcid();
        let file = writer.create(dir.join(format!("{odcid}_{side}.sqlog")));
        let title = format!("quiclab {side}");
        Some(Box::new(QlogWriter::new(
            file,
            &title,
            conn.side(),
            Some(odcid),
        )))
    }
}

/// Hands a connection's remaining qlog bytes to the writer and closes its file there
/// (dropping the writer does).
pub fn detach_qlog(conn: &mut Connection) {
    drop(conn.take_event_sink());
}

/// A TLS key log appended to a file (NSS key log format, as `$SSLKEYLOGFILE`), for
/// in-process endpoints that must not read the environment. The file is opened at
/// once; each line goes to its own writer thread ([`FileWriter`]), so a handshake makes
/// no file-system call, and is in the file once the last holder (the TLS configs
/// holding this log) is dropped. Write errors are reported once and not fatal:
/// logging never stops a handshake.
#[derive(Debug)]
pub struct FileKeyLog(FileSink);

impl FileKeyLog {
    /// Opens `path` for appending (created if missing).
    pub fn open(path: &Path) -> Result<Arc<FileKeyLog>> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening key log {}", path.display()))?;
        let writer = FileWriter::spawn("key log").context("starting the key log writer")?;
        Ok(Arc::new(FileKeyLog(writer.adopt(path.to_path_buf(), file))))
    }
}

impl rustls::KeyLog for FileKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        use std::fmt::Write as _;
        let mut line = format!("{label} ");
        for b in client_random {
            let _ = write!(line, "{b:02x}");
        }
        line.push(' ');
        for b in secret {
            let _ = write!(line, "{b:02x}");
        }
        line.push('\n');
        self.0.send(line.into_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ecn_of(f: &Flags<'_>) -> EcnMode {
        configure(f, Side::Client).unwrap().0.ecn
    }

    /// Real endpoints default to ECT(0); the config file, the `ecn` test case and the
    /// flag change it in that order.
    #[test]
    fn ecn_defaults_and_overrides() {
        assert_eq!(ecn_of(&Flags::default()), EcnMode::Ect0);
        let dir = std::env::temp_dir().join(format!("quiclab-setup-ecn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let off = dir.join("off.toml");
        std::fs::write(&off, "ecn = \"off\"\n").unwrap();
        let with = |testcase, ecn| Flags {
            config: Some(&off),
            testcase,
            ecn,
            ..Flags::default()
        };
        assert_eq!(ecn_of(&with(None, None)), EcnMode::Off);
        assert_eq!(ecn_of(&with(Some("ecn"), None)), EcnMode::Ect0);
        assert_eq!(
            ecn_of(&with(Some("ecn"), Some(EcnMode::Ect1))),
            EcnMode::Ect1
        );
        assert_eq!(ecn_of(&with(None, Some(EcnMode::Ect0))), EcnMode::Ect0);
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, "ecn = \"ce\"\n").unwrap();
        let f = Flags {
            config: Some(&bad),
            ..Flags::default()
        };
        assert!(configure(&f, Side::Client).is_err());
        assert_eq!(parse_ecn("ect1"), Ok(EcnMode::Ect1));
        assert!(parse_ecn("on").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
