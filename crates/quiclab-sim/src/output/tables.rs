//! Result files: `results.json`, `flows.csv`, `links.csv`, goodput and trace CSVs, and
//! the summary table printed after a run.

use crate::results::RunResult;
use std::io;
use std::path::Path;

/// Writes `results.json`, `flows.csv`, `links.csv` and `goodput.csv` (one row per flow
/// and interval) into `dir`, plus `traces/<flow>_{cwnd,rtt}.csv` when traces exist.
pub fn write_results(dir: &Path, result: &RunResult) -> io::Result<()> {
    let _ = (dir, result);
    todo!("S-C")
}

/// A plain-text table: one row per flow (handshake, TTFB, TTLB, goodput, losses, PTOs)
/// and one per link (throughput, drops).
pub fn summary_table(result: &RunResult) -> String {
    let _ = result;
    todo!("S-C")
}
