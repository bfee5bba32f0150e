//! quinn-hq's qlog (`--qlog-dir`): quinn 0.11's own qlog (its `qlog` feature) kept as
//! written in `quinn-raw.jsonseq`, and a copy, `quinn.sqlog`, that quiclab's lab reads
//! like the other clients' (crates/quiclab-lab/src/run/real/qlog.rs). The copy differs
//! from quinn's in two ways, both needed because of what quinn 0.11 logs:
//! - quinn writes the RTTs of `recovery:metrics_updated` in seconds (`as_secs_f32`),
//!   where the qlog schema has milliseconds: the copy has them in milliseconds;
//! - quinn logs no frames (packets only): the copy adds one `transport:packet_received`
//!   event per response read, at the time the application's read returned data, with a
//!   STREAM frame of the bytes read, marked `"quinn_hq": "application read"`. So the
//!   TTFB read from it is when quinn handed the first bytes to the application (tens of
//!   µs after the packet arrived, in the same process).
//!
//! Without frames in sent packets, the lab takes the client's ClientHello
//! retransmission from the emulator's capture instead (it cannot be seen here).

use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The RTT fields of quinn's `metrics_updated` (seconds in quinn 0.11).
const RTT_FIELDS: [&str; 4] = ["min_rtt", "smoothed_rtt", "latest_rtt", "rtt_variance"];

/// One chunk of a response as the application read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Read {
    /// When the read returned.
    pub at: Instant,
    /// Stream offset of the chunk.
    pub offset: u64,
    /// Bytes read.
    pub len: u64,
    /// The stream's FIN came with (or right after) this chunk.
    pub fin: bool,
}

/// Where quinn's qlog goes, and the reads to add to the copy.
#[derive(Clone)]
pub struct Qlog {
    dir: PathBuf,
    start: Instant,
    reads: Arc<Mutex<Vec<(u64, Read)>>>,
}

impl Qlog {
    /// Creates `dir` and returns the transport config's qlog stream (quinn writes into
    /// `quinn-raw.jsonseq` as events happen).
    pub fn start(dir: &Path) -> Result<(Qlog, quinn::QlogStream)> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let raw = dir.join("quinn-raw.jsonseq");
        let file =
            std::fs::File::create(&raw).with_context(|| format!("creating {}", raw.display()))?;
        let start = Instant::now();
        let mut config = quinn::QlogConfig::default();
        config
            .writer(Box::new(file))
            .title(Some("quinn-hq".into()))
            .start_time(start);
        let stream = config
            .into_stream()
            .context("quinn could not start its qlog")?;
        let q = Qlog {
            dir: dir.to_path_buf(),
            start,
            reads: Arc::default(),
        };
        Ok((q, stream))
    }

    /// Records a read of stream `stream_id`.
    pub fn read(&self, stream_id: u64, read: Read) {
        if let Ok(mut reads) = self.reads.lock() {
            reads.push((stream_id, read));
        }
    }

    /// Writes `quinn.sqlog` from quinn's qlog and the reads (call after the
    /// connection closed, so quinn wrote all its events).
    pub fn finish(&self) -> Result<()> {
        let raw = self.dir.join("quinn-raw.jsonseq");
        let bytes = std::fs::read(&raw).with_context(|| format!("reading {}", raw.display()))?;
        let reads = self.reads.lock().map(|r| r.clone()).unwrap_or_default();
        let out = convert(&bytes, &reads, self.start)?;
        let path = self.dir.join("quinn.sqlog");
        std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))
    }
}

/// quinn's JSON-SEQ records with RTTs in ms, then one `packet_received` per read.
fn convert(raw: &[u8], reads: &[(u64, Read)], start: Instant) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len() + 200 * reads.len());
    for rec in raw.split(|b| *b == 0x1e).filter(|r| !r.is_empty()) {
        let mut v: Value = serde_json::from_slice(rec).context("a record of quinn's qlog")?;
        if v.get("name").and_then(Value::as_str) == Some("recovery:metrics_updated") {
            to_ms(&mut v);
        }
        push(&mut out, &v)?;
    }
    for (id, r) in reads {
        let ms = r.at.saturating_duration_since(start).as_secs_f64() * 1e3;
        let event = json!({
            "time": ms,
            "name": "transport:packet_received",
            "data": {
                "header": {"packet_type": "1RTT"},
                "frames": [{"frame_type": "stream", "stream_id": id, "offset": r.offset,
                            "length": r.len, "fin": r.fin}],
            },
            "quinn_hq": "application read",
        });
        push(&mut out, &event)?;
    }
    Ok(out)
}

fn to_ms(v: &mut Value) {
    let Some(data) = v.get_mut("data").and_then(Value::as_object_mut) else {
        return;
    };
    for f in RTT_FIELDS {
        if let Some(s) = data.get(f).and_then(Value::as_f64) {
            data.insert(f.into(), json!(s * 1e3));
        }
    }
}

fn push(out: &mut Vec<u8>, v: &Value) -> Result<()> {
    out.push(0x1e);
    serde_json::to_writer(&mut *out, v)?;
    out.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rtts_become_ms_and_reads_become_stream_frames() {
        let raw = b"\x1e{\"qlog_version\":\"0.3\"}\n\x1e{\"time\":1.5,\"name\":\"recovery:metrics_updated\",\"data\":{\"smoothed_rtt\":0.02,\"rtt_variance\":0.01,\"bytes_in_flight\":1200}}\n\x1e{\"time\":2.0,\"name\":\"transport:packet_sent\",\"data\":{\"header\":{\"packet_type\":\"initial\"}}}\n";
        let start = Instant::now();
        let read = Read {
            at: start + Duration::from_millis(30),
            offset: 0,
            len: 1000,
            fin: true,
        };
        let out = convert(raw, &[(0, read)], start).unwrap();
        let recs: Vec<Value> = out
            .split(|b| *b == 0x1e)
            .filter(|r| !r.is_empty())
            .map(|r| serde_json::from_slice(r).unwrap())
            .collect();
        assert_eq!(recs.len(), 4);
        let m = &recs[1]["data"];
        assert!((m["smoothed_rtt"].as_f64().unwrap() - 20.0).abs() < 1e-9);
        assert!((m["rtt_variance"].as_f64().unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(m["bytes_in_flight"], 1200);
        assert_eq!(recs[2]["data"]["header"]["packet_type"], "initial");
        let f = &recs[3]["data"]["frames"][0];
        assert_eq!(
            (f["stream_id"].as_u64(), f["length"].as_u64()),
            (Some(0), Some(1000))
        );
        assert!((recs[3]["time"].as_f64().unwrap() - 30.0).abs() < 1e-6);
    }

    #[test]
    fn a_broken_record_is_an_error() {
        assert!(convert(b"\x1e{not json\n", &[], Instant::now()).is_err());
    }
}
