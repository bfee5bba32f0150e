//! The rows a plan run produces (one per run, one summary per point) and the atomic
//! file write every result file and cache entry goes through.

use crate::error::LabError;
use crate::plan::AxisValue;
use crate::run::stats::Stats;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One run's row of the results.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub point: usize,
    pub rep: u32,
    pub seed: u64,
    pub params: BTreeMap<String, AxisValue>,
    /// Metrics present in this run.
    pub metrics: BTreeMap<String, f64>,
    /// The point's expected values.
    pub expected: BTreeMap<String, f64>,
    /// Cache key: `load_run(cache_dir, key)` gives the full result.
    pub key: String,
}

/// One point's statistics over its repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct PointSummary {
    pub point: usize,
    pub params: BTreeMap<String, AxisValue>,
    /// Metrics present in at least one run.
    pub stats: BTreeMap<String, Stats>,
    pub expected: BTreeMap<String, f64>,
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename,
/// so readers never see a partial file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = path.with_file_name(format!("{name}.tmp-{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| LabError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        LabError::io(path, e)
    })
}
