//! Helpers shared by the integration tests: temp dirs that clean up after themselves,
//! running an inline scenario and reading back what it wrote, and the tshark check that
//! a pcap plus NSS key log decrypts completely.
//!
//! Each test binary compiles this module separately and uses only part of it.
#![allow(dead_code)]

use quiclab_sim::{RunResult, Scenario, Simulation};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory under the system temp dir, removed on drop (also when the test
/// panics), so failed runs do not leave output behind; set `QUICLAB_KEEP_TMP` to keep
/// it for inspection.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("quiclab-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("QUICLAB_KEEP_TMP").is_some() {
            println!("kept {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the scenario `text` (named "inline"), writing its outputs under `out`.
pub fn run(text: &str, out: &Path) -> RunResult {
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", Some(out))
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every file under `dir`, by path relative to it.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root");
                let bytes = std::fs::read(&path).expect("read");
                out.insert(rel.display().to_string(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[path = "../../../../tests/skip.rs"]
mod skip;

/// Whether tshark runs. When it does not, the test fails if scripts/setup-tests.sh ran
/// (`QUICLAB_TEST_SETUP`, or `CI`), and otherwise skips, printed and recorded in the
/// skip list (`tests/skip.rs`), so a developer without Wireshark can still run the suite.
pub fn tshark_available(test: &str) -> bool {
    match Command::new("tshark").arg("--version").output() {
        Ok(out) if out.status.success() => {
            let version = String::from_utf8_lossy(&out.stdout);
            println!("using {}", version.lines().next().unwrap_or("tshark"));
            true
        }
        result => {
            let why = match result {
                Ok(out) => format!("`tshark --version` exited with {}", out.status),
                Err(e) => format!("cannot run tshark: {e}"),
            };
            skip::skip(test, &why, "apt-get install tshark");
            false
        }
    }
}

/// Every value of `key` anywhere under `v` (tshark's JSON nests trees as objects and
/// repeats as arrays with `--no-duplicate-keys`).
fn find_all<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == key {
                    match child {
                        Value::Array(items) => out.extend(items),
                        other => out.push(other),
                    }
                }
                find_all(child, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|c| find_all(c, key, out)),
        _ => {}
    }
}

pub fn all<'a>(v: &'a Value, key: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    find_all(v, key, &mut out);
    out
}

pub fn as_u64(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// tshark's `aa:bb:..` bytes.
pub fn hex_bytes(v: &Value) -> Vec<u8> {
    let s = v.as_str().expect("stream data is a string");
    s.split(':')
        .filter(|h| !h.is_empty())
        .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
        .collect()
}

/// What tshark saw in a fully decrypted capture.
pub struct Decrypted {
    pub frames: usize,
    pub quic_packets: usize,
    /// The STREAM frame payloads of every packet, in capture order.
    pub stream_data: Vec<u8>,
}

/// Runs tshark on `pcap` with the key log `keys`, decoding UDP `ports` as QUIC, and
/// asserts that every frame is QUIC, that its QUIC packets cover the whole UDP payload
/// (none skipped) and that every packet decrypted (packet number and frames visible,
/// no decryption failure reported).
pub fn tshark_decrypt_all(pcap: &Path, keys: &Path, ports: &[u16]) -> Decrypted {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(pcap)
        .arg("-o")
        .arg(format!("tls.keylog_file:{}", keys.display()));
    for p in ports {
        cmd.args(["-d", &format!("udp.port=={p},quic")]);
    }
    let out = cmd
        .args(["-T", "json", "--no-duplicate-keys"])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<Value> = serde_json::from_slice(&out.stdout).expect("tshark JSON");
    let mut stream_data = Vec::new();
    let mut packets = 0;
    for (n, frame) in frames.iter().enumerate() {
        let n = n + 1;
        let layers = &frame["_source"]["layers"];
        let udp_len = as_u64(&layers["udp"]["udp.length"]);
        let quic = &layers["quic"];
        let quic_packets: Vec<&Value> = match quic {
            Value::Array(items) => items.iter().collect(),
            Value::Object(_) => vec![quic],
            _ => panic!(
                "{} frame {n}: no QUIC layer (UDP ports {ports:?} not decoded as QUIC?)",
                pcap.display()
            ),
        };
        // The QUIC packets cover the whole UDP payload, so none was skipped.
        let covered: u64 = quic_packets
            .iter()
            .map(|p| match &p["quic.packet_length"] {
                Value::Null => panic!(
                    "{} frame {n}: QUIC packet without length: {p}",
                    pcap.display()
                ),
                len => as_u64(len),
            })
            .sum();
        assert_eq!(
            covered,
            udp_len - 8,
            "{} frame {n}: QUIC packets cover the datagram",
            pcap.display()
        );
        for (i, p) in quic_packets.iter().enumerate() {
            // Undecrypted packets show `quic.remaining_payload` (no keys) or the
            // `quic.decryption_failed` expert item, and no packet number or frames.
            assert!(
                all(p, "quic.decryption_failed").is_empty()
                    && all(p, "quic.remaining_payload").is_empty(),
                "{} frame {n} packet {i} not decrypted: {p}",
                pcap.display()
            );
            assert!(
                !all(p, "quic.packet_number").is_empty(),
                "{} frame {n} packet {i}: no packet number",
                pcap.display()
            );
            assert!(
                !all(p, "quic.frame_type").is_empty(),
                "{} frame {n} packet {i}: no frames",
                pcap.display()
            );
            packets += 1;
        }
        assert!(
            all(layers, "quic.decryption_failed").is_empty(),
            "{} frame {n}: decryption failure reported",
            pcap.display()
        );
        for message in all(layers, "_ws.expert.message") {
            let text = message.as_str().unwrap_or_default().to_lowercase();
            assert!(
                !text.contains("decrypt"),
                "{} frame {n}: {text}",
                pcap.display()
            );
        }
        for data in all(layers, "quic.stream_data") {
            stream_data.extend(hex_bytes(data));
        }
    }
    Decrypted {
        frames: frames.len(),
        quic_packets: packets,
        stream_data,
    }
}

/// Merges classic little-endian pcap files (as the simulator writes them, one per link
/// direction) into one, records ordered by timestamp (ties keep input order). tshark
/// needs both directions of a connection in one capture: the cipher suite comes from the
/// server's ServerHello, so a one-direction capture's Handshake and 1-RTT packets cannot
/// be decrypted on their own.
pub fn merge_pcaps(inputs: &[PathBuf], output: &Path) {
    let mut header = None;
    let mut records = Vec::new();
    for (file_index, path) in inputs.iter().enumerate() {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(bytes.len() >= 24, "{}: no pcap header", path.display());
        let h = &bytes[..24];
        match &header {
            None => header = Some(h.to_vec()),
            Some(first) => assert_eq!(first, h, "{}: a different pcap header", path.display()),
        }
        let mut at = 24;
        while at < bytes.len() {
            let field = |i: usize| {
                u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().expect("4 bytes"))
            };
            let (sec, usec, caplen) = (field(0), field(4), field(8) as usize);
            let end = at + 16 + caplen;
            assert!(end <= bytes.len(), "{}: truncated record", path.display());
            records.push(((sec, usec, file_index, at), bytes[at..end].to_vec()));
            at = end;
        }
    }
    records.sort_by_key(|r| r.0);
    let mut out = header.expect("at least one input");
    for (_, r) in records {
        out.extend(r);
    }
    std::fs::write(output, out).unwrap_or_else(|e| panic!("{}: {e}", output.display()));
}
