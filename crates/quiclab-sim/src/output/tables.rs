//! Result files: `results.json`, `flows.csv`, `links.csv`, goodput and trace CSVs, and
//! the summary table printed after a run.
//!
//! Everything here is a pure function of the [`RunResult`]: the same run gives
//! byte-identical files (floats use Rust's shortest round-trip `{}` formatting, maps are
//! ordered), so result directories can be diffed across commits.

use crate::output::metrics::SideMetrics;
use crate::output::results::{FlowResult, RunResult};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// Columns of `flows.csv`, in order.
pub const FLOWS_CSV_HEADER: &str = "name,workload,start_s,handshake_done_s,ttfb_s,ttlb_s,\
goodput_bytes,goodput_bps,client_first_pto_ms,client_first_sample_pto_ms,\
client_packets_sent,client_bytes_sent,server_packets_sent,server_bytes_sent,\
client_ack_frames_sent,client_ack_bytes_sent,server_ack_frames_sent,server_ack_bytes_sent,\
client_ack_eliciting_per_ack,server_ack_eliciting_per_ack,client_packets_lost,server_packets_lost,client_ptos,server_ptos,close,\
incomplete";

/// Columns of `links.csv`, in order: one row per link direction. After the traffic
/// counters, the queue's: `ecn_marks` (empty when the queue does not mark), the
/// sojourn-time median, p95 and p99 of every packet it sent (ms; empty when none),
/// then DualPI2's L and C queues each with their marks, drops and sojourn quantiles
/// (`l_*`, `c_*`; empty for other disciplines). One wide row per link, so
/// `pandas.read_csv` gives one record per link, empty cells as NaN. Sojourn
/// quantiles cover the packets that start transmission in the measurement window
/// (as the throughputs do); marks and drops the whole run (as `queue_drops`).
pub const LINKS_CSV_HEADER: &str = "name,delivered_packets,delivered_bytes,throughput_bps,\
payload_throughput_bps,queue_drops,impairment_drops,max_queue_packets,\
ecn_marks,sojourn_p50_ms,sojourn_p95_ms,sojourn_p99_ms,\
l_marks,l_drops,l_sojourn_p50_ms,l_sojourn_p95_ms,l_sojourn_p99_ms,\
c_marks,c_drops,c_sojourn_p50_ms,c_sojourn_p95_ms,c_sojourn_p99_ms";

/// Columns of `path_events.csv`: one row per flow and path event
/// (`FlowResult::path_events`; times in seconds, empty where it never happened).
pub const PATH_EVENTS_CSV_HEADER: &str = "flow,event,interface,at_s,stall_s,resume_s,\
new_path_s,moved_s,retransmitted_bytes,new_path_resume_s,new_path_stall_s";

/// Writes `results.json`, `flows.csv`, `links.csv` and `goodput.csv` (one row per flow
/// and interval) into `dir`, `path_events.csv` when a flow has path events, plus `traces/<flow>_{cwnd,rtt}.csv` when traces exist
/// (and `traces/link_<link>_queue.csv` for links with a queue series). Trace file names
/// use [`sanitize`]d names, made unique if two names sanitize alike.
pub fn write_results(dir: &Path, result: &RunResult) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut json = serde_json::to_string_pretty(result).map_err(io::Error::other)?;
    json.push('\n');
    fs::write(dir.join("results.json"), json)?;
    fs::write(dir.join("flows.csv"), flows_csv(result))?;
    fs::write(dir.join("links.csv"), links_csv(result))?;
    fs::write(dir.join("goodput.csv"), goodput_csv(result))?;
    if result.flows.iter().any(|f| !f.path_events.is_empty()) {
        fs::write(dir.join("path_events.csv"), path_events_csv(result))?;
    }

    let traces = dir.join("traces");
    let mut used = BTreeSet::new();
    for flow in &result.flows {
        let (c, s) = (&flow.client, &flow.server);
        let has_cwnd = !c.cwnd.is_empty() || !s.cwnd.is_empty();
        let has_rtt = !c.rtt.is_empty() || !s.rtt.is_empty();
        if !has_cwnd && !has_rtt {
            continue;
        }
        fs::create_dir_all(&traces)?;
        let base = unique_name(&mut used, &flow.name);
        if has_cwnd {
            fs::write(traces.join(format!("{base}_cwnd.csv")), cwnd_csv(flow))?;
        }
        if has_rtt {
            fs::write(traces.join(format!("{base}_rtt.csv")), rtt_csv(flow))?;
        }
    }
    for link in &result.links {
        if link.queue_series.is_empty() {
            continue;
        }
        fs::create_dir_all(&traces)?;
        let base = unique_name(&mut used, &format!("link_{}", link.name));
        let mut out = String::from("t_s,queue_packets\n");
        for (t, q) in &link.queue_series {
            let _ = writeln!(out, "{t},{q}");
        }
        fs::write(traces.join(format!("{base}_queue.csv")), out)?;
    }
    Ok(())
}

/// `flows.csv`: one row per flow, [`FLOWS_CSV_HEADER`] columns.
pub fn flows_csv(result: &RunResult) -> String {
    let mut out = String::from(FLOWS_CSV_HEADER);
    out.push('\n');
    for f in &result.flows {
        let (c, s) = (&f.client, &f.server);
        let (cs, ss) = (c.sent_total(), s.sent_total());
        let (ca, sa) = (c.frames_sent("ack"), s.frames_sent("ack"));
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&f.name),
            csv_field(&f.workload),
            f.start_s,
            opt(f.handshake_done_s),
            opt(f.ttfb_s),
            opt(f.ttlb_s),
            f.goodput_bytes,
            f.goodput_bps,
            opt(f.client_first_pto_ms),
            opt(f.client_first_sample_pto_ms),
            cs.packets,
            cs.bytes,
            ss.packets,
            ss.bytes,
            ca.packets,
            ca.bytes,
            sa.packets,
            sa.bytes,
            opt(c.ack_eliciting_per_ack()),
            opt(s.ack_eliciting_per_ack()),
            c.packets_lost,
            s.packets_lost,
            c.pto_expirations,
            s.pto_expirations,
            f.close.as_deref().map(csv_field).unwrap_or_default(),
            f.incomplete.as_deref().map(csv_field).unwrap_or_default(),
        );
    }
    out
}

/// `path_events.csv`: one row per flow and path event, [`PATH_EVENTS_CSV_HEADER`]
/// columns.
pub fn path_events_csv(result: &RunResult) -> String {
    let mut out = String::from(PATH_EVENTS_CSV_HEADER);
    out.push('\n');
    for f in &result.flows {
        for e in &f.path_events {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&f.name),
                csv_field(&e.event),
                e.interface.as_deref().map(csv_field).unwrap_or_default(),
                e.at_s,
                opt(e.stall_s),
                opt(e.resume_s),
                opt(e.new_path_s),
                opt(e.moved_s),
                e.retransmitted_bytes,
                opt(e.new_path_resume_s),
                opt(e.new_path_stall_s),
            );
        }
    }
    out
}

/// `links.csv`: one row per link direction, [`LINKS_CSV_HEADER`] columns.
pub fn links_csv(result: &RunResult) -> String {
    let mut out = String::from(LINKS_CSV_HEADER);
    out.push('\n');
    for l in &result.links {
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&l.name),
            l.delivered_packets,
            l.delivered_bytes,
            l.throughput_bps,
            l.payload_throughput_bps,
            l.queue_drops,
            l.impairment_drops,
            l.max_queue_packets,
            l.ecn_marks.map_or_else(String::new, |m| m.to_string()),
            opt(l.sojourn_p50_ms),
            opt(l.sojourn_p95_ms),
            opt(l.sojourn_p99_ms),
        );
        for name in ["l", "c"] {
            match l.subqueues.iter().find(|q| q.name == name) {
                Some(q) => {
                    let _ = write!(
                        out,
                        ",{},{},{},{},{}",
                        q.marks,
                        q.drops,
                        opt(q.sojourn_p50_ms),
                        opt(q.sojourn_p95_ms),
                        opt(q.sojourn_p99_ms),
                    );
                }
                None => out.push_str(",,,,,"),
            }
        }
        out.push('\n');
    }
    out
}

/// `goodput.csv`: every flow's goodput series in long form (`flow,t_s,bps`), easy to plot
/// grouped by flow.
pub fn goodput_csv(result: &RunResult) -> String {
    let mut out = String::from("flow,t_s,bps\n");
    for f in &result.flows {
        let name = csv_field(&f.name);
        for (t, bps) in &f.goodput_series {
            let _ = writeln!(out, "{name},{t},{bps}");
        }
    }
    out
}

fn cwnd_csv(f: &FlowResult) -> String {
    let mut out = String::from("side,t_s,cwnd_bytes\n");
    for (side, m) in sides(f) {
        for (t, w) in &m.cwnd {
            let _ = writeln!(out, "{side},{t},{w}");
        }
    }
    out
}

fn rtt_csv(f: &FlowResult) -> String {
    let mut out = String::from("side,t_s,srtt_ms,latest_ms\n");
    for (side, m) in sides(f) {
        for (t, s, l) in &m.rtt {
            let _ = writeln!(out, "{side},{t},{s},{l}");
        }
    }
    out
}

fn sides(f: &FlowResult) -> [(&'static str, &SideMetrics); 2] {
    [("client", &f.client), ("server", &f.server)]
}

/// A name safe as a file name on any system: ASCII letters, digits, `-`, `_` and `.`
/// are kept, anything else becomes `_`; empty or dot-only names become `flow`.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().all(|c| c == '.') {
        "flow".to_owned()
    } else {
        s
    }
}

/// [`sanitize`]d `name`, with `_2`, `_3`, ... appended if already used, so two flows
/// never overwrite each other's files.
fn unique_name(used: &mut BTreeSet<String>, name: &str) -> String {
    let base = sanitize(name);
    let mut candidate = base.clone();
    let mut n = 2;
    while !used.insert(candidate.clone()) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// One CSV field as the `csv` crate writes it inside a row: quoted only when it holds a
/// comma, a quote or a line break (RFC 4180; names and close reasons are free text).
fn csv_field(s: &str) -> String {
    // The crate writes a row of one empty field as `""` (so it is not a blank line);
    // inside a longer row an empty field is empty.
    if s.is_empty() {
        return String::new();
    }
    let mut w = csv::WriterBuilder::new()
        .buffer_capacity(2 * s.len() + 3)
        .from_writer(Vec::new());
    // Writing into memory cannot fail, and a quoted `str` is UTF-8.
    w.write_record([s]).expect("CSV into a Vec");
    let mut field = String::from_utf8(w.into_inner().expect("CSV into a Vec")).expect("UTF-8");
    field.pop(); // the record's `\n`
    field
}

/// An optional number: empty cell when absent.
fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// A plain-text table: one row per flow (handshake, TTFB, TTLB, goodput, losses, PTOs)
/// and one per link (throughput, drops). `hs ms` is the handshake's duration from the
/// flow's start; TTFB and TTLB count from the request; "lost" and "PTOs" are
/// client/server; `-` marks what never happened.
pub fn summary_table(result: &RunResult) -> String {
    let mut out = format!(
        "scenario {}  seed {}  end {:.3} s  events {}\n",
        result.scenario, result.seed, result.end_s, result.events
    );
    if !result.flows.is_empty() {
        out.push('\n');
        let header = [
            "flow",
            "workload",
            "hs ms",
            "TTFB ms",
            "TTLB ms",
            "goodput MB",
            "goodput Mbit/s",
            "lost c/s",
            "PTOs c/s",
            "close",
        ];
        let rows = result
            .flows
            .iter()
            .map(|f| {
                vec![
                    f.name.clone(),
                    f.workload.clone(),
                    opt_ms(f.handshake_done_s.map(|h| h - f.start_s)),
                    opt_ms(f.ttfb_s),
                    opt_ms(f.ttlb_s),
                    format!("{:.3}", f.goodput_bytes as f64 / 1e6),
                    format!("{:.3}", f.goodput_bps / 1e6),
                    format!("{}/{}", f.client.packets_lost, f.server.packets_lost),
                    format!("{}/{}", f.client.pto_expirations, f.server.pto_expirations),
                    f.close.clone().unwrap_or_else(|| "-".to_owned()),
                ]
            })
            .collect::<Vec<_>>();
        render(&mut out, &header, &rows, &[0, 1, 9]);
    }
    path_events_table(&mut out, result);
    if !result.links.is_empty() {
        out.push('\n');
        let header = [
            "link",
            "packets",
            "MB",
            "wire Mbit/s",
            "QUIC Mbit/s",
            "queue drops",
            "impair drops",
            "max queue pkts",
        ];
        let rows = result
            .links
            .iter()
            .map(|l| {
                vec![
                    l.name.clone(),
                    l.delivered_packets.to_string(),
                    format!("{:.3}", l.delivered_bytes as f64 / 1e6),
                    format!("{:.3}", l.throughput_bps / 1e6),
                    format!("{:.3}", l.payload_throughput_bps / 1e6),
                    l.queue_drops.to_string(),
                    l.impairment_drops.to_string(),
                    l.max_queue_packets.to_string(),
                ]
            })
            .collect::<Vec<_>>();
        render(&mut out, &header, &rows, &[0]);
    }
    out
}

/// The summary's path events: one row per flow and event (nothing without any).
fn path_events_table(out: &mut String, result: &RunResult) {
    let rows: Vec<Vec<String>> = (result.flows.iter())
        .flat_map(|f| {
            f.path_events.iter().map(move |e| {
                vec![
                    f.name.clone(),
                    e.event.clone(),
                    e.interface.clone().unwrap_or_else(|| "-".to_owned()),
                    format!("{:.3}", e.at_s),
                    opt_ms(e.stall_s),
                    opt_ms(e.resume_s),
                    opt_ms(e.new_path_s),
                    opt_ms(e.moved_s),
                    e.retransmitted_bytes.to_string(),
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push('\n');
    let header = [
        "flow",
        "event",
        "interface",
        "at s",
        "stall ms",
        "resume ms",
        "new path ms",
        "moved ms",
        "retx bytes",
    ];
    render(out, &header, &rows, &[0, 1, 2]);
}

fn opt_ms(s: Option<f64>) -> String {
    s.map(|s| format!("{:.1}", s * 1e3))
        .unwrap_or_else(|| "-".to_owned())
}

/// Appends an aligned table: columns in `left` are left-aligned (text), the others
/// right-aligned (numbers); columns are separated by two spaces.
fn render(out: &mut String, header: &[&str], rows: &[Vec<String>], left: &[usize]) {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.zip(&width).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            if left.contains(&i) {
                let _ = write!(l, "{cell:<w$}");
            } else {
                let _ = write!(l, "{cell:>w$}");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::metrics::Count;
    use crate::output::results::LinkResult;

    fn side(sent: u64, bytes: u64, acks: u64, ack_bytes: u64, lost: u64) -> SideMetrics {
        let mut m = SideMetrics::default();
        m.sent_by_packet_type.insert(
            "1RTT".into(),
            Count {
                packets: sent,
                bytes,
            },
        );
        m.sent_by_frame_type.insert(
            "ack".into(),
            Count {
                packets: acks,
                bytes: ack_bytes,
            },
        );
        m.packets_lost = lost;
        m
    }

    fn sample() -> RunResult {
        let mut client = side(10, 12000, 4, 40, 1);
        client.pto_expirations = 2;
        client.cwnd = vec![(0.01, 12000), (0.02, 24000)];
        client.rtt = vec![(0.01, 20.5, 20.5)];
        let bulk = FlowResult {
            name: "bulk 1/a".into(),
            workload: "bulk".into(),
            start_s: 0.0,
            handshake_done_s: Some(0.0405),
            ttfb_s: Some(0.061),
            ttlb_s: Some(1.25),
            goodput_bytes: 1_000_000,
            goodput_bps: 6_400_000.0,
            goodput_series: vec![(0.0, 1e6), (0.1, 2.5e6)],
            client_first_pto_ms: Some(999.0),
            client_first_sample_pto_ms: Some(120.0),
            client_ack_frequency_active: false,
            client,
            server: side(20, 30000, 1, 9, 0),
            close: Some("idle, \"timeout\"".into()),
            incomplete: None,
            ..Default::default()
        };
        let pending = FlowResult {
            name: "req".into(),
            workload: "request".into(),
            start_s: 0.5,
            incomplete: Some("not finished: 0 of 1".into()),
            ..Default::default()
        };
        RunResult {
            scenario: "dumbbell".into(),
            seed: 7,
            end_s: 2.0,
            events: 1234,
            series_interval_s: 0.1,
            flows: vec![bulk, pending],
            links: vec![LinkResult {
                name: "a->b".into(),
                delivered_packets: 30,
                delivered_bytes: 42000,
                throughput_bps: 10_000_000.0,
                payload_throughput_bps: 9_000_000.0,
                queue_drops: 3,
                impairment_drops: 1,
                corrupted_packets: 0,
                max_queue_packets: 17,
                ecn_marks: None,
                sojourn_p50_ms: Some(1.5),
                queue_series: vec![(0.0, 0), (0.1, 2)],
                ..Default::default()
            }],
        }
    }

    #[test]
    fn flows_csv_rows() {
        let csv = flows_csv(&sample());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], FLOWS_CSV_HEADER);
        assert_eq!(
            lines[1],
            "bulk 1/a,bulk,0,0.0405,0.061,1.25,1000000,6400000,999,120,\
             10,12000,20,30000,4,40,1,9,0,0,1,0,2,0,\"idle, \"\"timeout\"\"\","
        );
        assert_eq!(
            lines[2],
            "req,request,0.5,,,,0,0,,,0,0,0,0,0,0,0,0,,,0,0,0,0,,not finished: 0 of 1"
        );
        assert_eq!(lines.len(), 3);
        // Every row has as many cells as the header (the quoted comma aside).
        let n = FLOWS_CSV_HEADER.split(',').count();
        assert_eq!(lines[2].split(',').count(), n);
    }

    /// DualPI2's L and C counters land in their columns, each under its header.
    #[test]
    fn links_csv_subqueue_columns() {
        use quiclab_link::queue::QueueReport;
        let sub = |name: &str, marks, drops, p50| QueueReport {
            name: name.into(),
            marks,
            drops,
            sojourn_p50_ms: Some(p50),
            sojourn_p95_ms: Some(2.0 * p50),
            sojourn_p99_ms: None,
            ..Default::default()
        };
        let mut r = sample();
        r.links[0].ecn_marks = Some(9);
        r.links[0].subqueues = vec![sub("l", 7, 0, 0.5), sub("c", 2, 3, 14.0)];
        let csv = links_csv(&r);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(header.len(), row.len());
        let cell = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(cell("ecn_marks"), "9");
        assert_eq!(cell("sojourn_p50_ms"), "1.5");
        assert_eq!(cell("l_marks"), "7");
        assert_eq!(cell("l_sojourn_p95_ms"), "1");
        assert_eq!(cell("l_sojourn_p99_ms"), "");
        assert_eq!(cell("c_drops"), "3");
        assert_eq!(cell("c_sojourn_p50_ms"), "14");
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("plain name"), "plain name");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines\r"), "\"two\nlines\r\"");
    }

    #[test]
    fn write_results_files() {
        let dir = std::env::temp_dir().join(format!(
            "quiclab-sim-tables-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        let r = sample();
        write_results(&dir, &r).unwrap();
        let read = |p: &str| fs::read_to_string(dir.join(p)).unwrap();

        let json: serde_json::Value = serde_json::from_str(&read("results.json")).unwrap();
        assert_eq!(json["scenario"], "dumbbell");
        assert_eq!(json["flows"][0]["client"]["packets_lost"], 1);
        assert_eq!(read("flows.csv"), flows_csv(&r));
        assert_eq!(
            read("links.csv"),
            format!("{LINKS_CSV_HEADER}\na->b,30,42000,10000000,9000000,3,1,17,,1.5,,,,,,,,,,,,\n")
        );
        assert_eq!(
            read("goodput.csv"),
            "flow,t_s,bps\nbulk 1/a,0,1000000\nbulk 1/a,0.1,2500000\n"
        );
        assert_eq!(
            read("traces/bulk_1_a_cwnd.csv"),
            "side,t_s,cwnd_bytes\nclient,0.01,12000\nclient,0.02,24000\n"
        );
        assert_eq!(
            read("traces/bulk_1_a_rtt.csv"),
            "side,t_s,srtt_ms,latest_ms\nclient,0.01,20.5,20.5\n"
        );
        assert_eq!(
            read("traces/link_a-_b_queue.csv"),
            "t_s,queue_packets\n0,0\n0.1,2\n"
        );
        // No traces for the flow without any.
        assert!(!dir.join("traces/req_cwnd.csv").exists());
        // Deterministic: writing again gives the same bytes.
        let first = read("results.json");
        write_results(&dir, &r).unwrap();
        assert_eq!(read("results.json"), first);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_sanitized_and_unique() {
        assert_eq!(sanitize("a b/c:d"), "a_b_c_d");
        assert_eq!(sanitize(".."), "flow");
        assert_eq!(sanitize(""), "flow");
        assert_eq!(sanitize("ok-1.2_x"), "ok-1.2_x");
        let mut used = BTreeSet::new();
        assert_eq!(unique_name(&mut used, "a b"), "a_b");
        assert_eq!(unique_name(&mut used, "a/b"), "a_b_2");
        assert_eq!(unique_name(&mut used, "a:b"), "a_b_3");
    }

    #[test]
    fn summary_lists_flows_and_links() {
        let t = summary_table(&sample());
        println!("{t}");
        assert!(t.contains("dumbbell") && t.contains("seed 7"));
        for s in [
            "bulk 1/a", "req", "a->b", "hs ms", "Mbit/s", "40.5", "61.0", "1250.0", "6.400", "1/0",
            "2/0", "10.000", "17",
        ] {
            assert!(t.contains(s), "missing {s:?} in\n{t}");
        }
        // Aligned: the header and every flow row have the same column starts.
        let lines: Vec<&str> = t.lines().collect();
        let hdr = lines.iter().position(|l| l.starts_with("flow")).unwrap();
        let col = lines[hdr].find("TTLB ms").unwrap() + "TTLB ms".len();
        assert_eq!(&lines[hdr + 1][col - 6..col], "1250.0");
        assert_eq!(&lines[hdr + 2][col - 1..col], "-");
    }
}
