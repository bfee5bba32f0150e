//! What the emulator writes into `--out`: `links.csv` (the columns of `sim run`'s, one
//! row per direction, throughput over the scenario's measurement window, the queue
//! counters), `links.json` (the same links as `results.json`'s `links`), queue traces when `measure.traces` is on, `emulate.json` (the relay's
//! counters, the CE marks of queues that mark, each queue's drops and sojourn-time
//! quantiles with DualPI2's L and C queues apart, and how late it sent against the
//! model; links.json adds each direction's lateness over the measurement window as
//! `send_lateness`), and with `--pcap` (or `measure.pcap`) `pcap/forward.pcap`
//! and `pcap/return.pcap` (each datagram as it starts transmission on that direction,
//! as the simulator writes them), `pcap/all.pcap` (both sides, as datagrams reach the
//! relay), plus `pcap/keys.log`, a copy of `--keylog` (the server's TLS key log) taken
//! at exit, as the simulator writes its key log beside its captures. Capture times are
//! seconds since the emulator started.

use super::lateness::LatenessSummary;
use super::lateness::SendLateness;
use super::rebind::RebindRecord;
use super::relay::Capture;
use crate::error::{Context, Result};
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_link::link::LinkResult;
use quiclab_link::pcap::PcapWriter;
use quiclab_link::queue::QueueReport;
use quiclab_proto::Instant;
use quiclab_sim::output::tables::links_csv;
use quiclab_sim::{RunResult, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

/// emulate.json (`C`: the relay's counters, the emulator's or the shell's).
#[derive(Serialize)]
struct Summary<'a, C: Serialize> {
    scenario: &'a str,
    end_s: f64,
    relay: &'a C,
    /// CE marks per link direction whose queue marks (absent when none does).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    ecn_marks: BTreeMap<String, u64>,
    /// Each link direction's queue counters, by name.
    queues: BTreeMap<String, QueueSummary>,
    /// Actual send time minus the model's due time, per delivery.
    send_lateness: LatenessSummary,
    /// The relay's moves toward the server (`--rebind`; absent without).
    #[serde(skip_serializing_if = "<[RebindRecord]>::is_empty")]
    rebinds: &'a [RebindRecord],
}

/// One link direction in links.json: its result as results.json has it, and the relay's
/// lateness on it over the measurement window (actual send minus the model's due time).
#[derive(Serialize)]
struct LinkJson<'a> {
    #[serde(flatten)]
    link: &'a LinkResult,
    send_lateness: LatenessSummary,
}

/// One link direction's queue in emulate.json (the fields of its links.csv row).
#[derive(Serialize)]
struct QueueSummary {
    drops: u64,
    sojourn_p50_ms: Option<f64>,
    sojourn_p95_ms: Option<f64>,
    sojourn_p99_ms: Option<f64>,
    /// DualPI2's `l` and `c` queues (absent for other disciplines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subqueues: Vec<QueueReport>,
}

impl QueueSummary {
    fn of(l: &LinkResult) -> QueueSummary {
        QueueSummary {
            drops: l.queue_drops,
            sojourn_p50_ms: l.sojourn_p50_ms,
            sojourn_p95_ms: l.sojourn_p95_ms,
            sojourn_p99_ms: l.sojourn_p99_ms,
            subqueues: l.subqueues.clone(),
        }
    }
}

fn capture(path: &Path) -> Result<Capture> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    PcapWriter::new(BufWriter::new(file)).with_context(|| format!("writing {}", path.display()))
}

/// Opens the links' captures under `out/pcap` and returns `all.pcap`'s, for the relay
/// to write as packets reach it.
pub(crate) fn open_pcaps(out: &Path, duplex: &mut Duplex) -> Result<Capture> {
    let dir = out.join("pcap");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let all = capture(&dir.join("all.pcap"))?;
    for side in [LinkSide::Forward, LinkSide::Return] {
        let link = duplex.link_mut(side);
        link.pcap = Some(capture(&dir.join(format!("{}.pcap", link.name)))?);
    }
    Ok(all)
}

/// What a relay (the emulator's UDP one, or the shell's IP one) hands to [`finish`].
pub(crate) struct RelayState<'a, C: Serialize> {
    pub duplex: &'a mut Duplex,
    /// all.pcap, if capturing (taken and flushed).
    pub capture: &'a mut Option<Capture>,
    /// The relay's counters, emulate.json's `relay`.
    pub counters: &'a C,
    pub lateness: &'a SendLateness,
    pub rebinds: &'a [RebindRecord],
}

/// Flushes the captures and writes the tables; `end` is the emulator time at exit.
pub(crate) fn finish<C: Serialize>(
    out: &Path,
    scenario: &Scenario,
    relay: RelayState<'_, C>,
    end: Instant,
    keylog: Option<&Path>,
) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if let Some(c) = relay.capture.take() {
        c.into_inner().flush().context("writing all.pcap")?;
    }
    for side in [LinkSide::Forward, LinkSide::Return] {
        if let Some(c) = relay.duplex.link_mut(side).pcap.take() {
            c.into_inner().flush().context("writing a link pcap")?;
        }
    }
    if let Some(k) = keylog {
        let to = out.join("pcap").join("keys.log");
        std::fs::create_dir_all(out.join("pcap"))?;
        // The server may not have written it (no connection): say so, write the rest.
        if let Err(e) = std::fs::copy(k, &to) {
            note!("quiclab emulate: key log {} not copied: {e}", k.display());
        }
    }
    let m = &scenario.measure;
    let to = m
        .to_s
        .map_or(end.as_secs_f64(), |t| t.min(end.as_secs_f64()));
    let span = (to - m.from_s).max(0.0);
    let result = RunResult {
        scenario: scenario.name.clone(),
        seed: scenario.seed,
        end_s: end.as_secs_f64(),
        links: [LinkSide::Forward, LinkSide::Return]
            .map(|s| relay.duplex.link(s).result(span))
            .to_vec(),
        ..RunResult::default()
    };
    std::fs::write(out.join("links.csv"), links_csv(&result))?;
    // The links as the simulator's results.json holds them, so a lab plan reads a real
    // run's `links[..]` metrics by the same paths as a simulated run's; plus how late
    // the relay delivered on each over the same window, which only a real run has.
    let links: Vec<LinkJson> = [LinkSide::Forward, LinkSide::Return]
        .iter()
        .zip(&result.links)
        .map(|(&side, link)| LinkJson {
            link,
            send_lateness: relay.lateness.window.summary(side),
        })
        .collect();
    let mut links = serde_json::to_string_pretty(&links)?;
    links.push('\n');
    std::fs::write(out.join("links.json"), links)?;
    write_queue_traces(out, &result)?;
    let summary = Summary {
        scenario: &scenario.name,
        end_s: end.as_secs_f64(),
        relay: relay.counters,
        ecn_marks: result
            .links
            .iter()
            .filter_map(|l| Some((l.name.clone(), l.ecn_marks?)))
            .collect(),
        queues: result
            .links
            .iter()
            .map(|l| (l.name.clone(), QueueSummary::of(l)))
            .collect(),
        send_lateness: relay.lateness.total.summary(),
        rebinds: relay.rebinds,
    };
    let mut json = serde_json::to_string_pretty(&summary)?;
    json.push('\n');
    std::fs::write(out.join("emulate.json"), json)?;
    Ok(())
}

/// `traces/link_<name>_queue.csv`, as `sim run` names them.
fn write_queue_traces(out: &Path, result: &RunResult) -> Result<()> {
    for link in result.links.iter().filter(|l| !l.queue_series.is_empty()) {
        let dir = out.join("traces");
        std::fs::create_dir_all(&dir)?;
        let mut text = String::from("t_s,queue_packets\n");
        for (t, q) in &link.queue_series {
            text.push_str(&format!("{t},{q}\n"));
        }
        std::fs::write(dir.join(format!("link_{}_queue.csv", link.name)), text)?;
    }
    Ok(())
}
