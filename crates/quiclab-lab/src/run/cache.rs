//! The run cache: `out/cache/<key>.json` = `{"key", "seed", "rep", "params", "result"}`
//! where `result` is the simulator's `RunResult`. An entry is written to a temporary file
//! and renamed, so a killed sweep leaves either a complete entry or a stray `*.tmp-*`
//! file, which is ignored. An entry that does not parse is treated as missing and re-run.

use crate::error::LabError;
use crate::plan::expand::RunSpec;
use crate::run::rows::write_atomic;
use std::path::{Path, PathBuf};

fn cache_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join(format!("{key}.json"))
}

/// A cache entry's full JSON, if present and readable.
pub(crate) fn read_entry(cache_dir: &Path, key: &str) -> Option<serde_json::Value> {
    let text = std::fs::read(cache_path(cache_dir, key)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    (v.get("key")?.as_str()? == key && v.get("result")?.is_object()).then_some(v)
}

/// The cached result of one run (the simulator's `RunResult` as JSON), e.g. for a
/// figure of its goodput time series.
pub fn load_run(cache_dir: &Path, key: &str) -> Result<serde_json::Value, LabError> {
    let path = cache_path(cache_dir, key);
    let text = std::fs::read(&path).map_err(|e| LabError::io(&path, e))?;
    let mut v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| LabError::Data {
        file: path.display().to_string(),
        why: e.to_string(),
    })?;
    v.get_mut("result")
        .map(serde_json::Value::take)
        .ok_or_else(|| LabError::Data {
            file: path.display().to_string(),
            why: "no `result` in cache entry".into(),
        })
}

/// Stores the result of `spec`'s run as its cache entry.
pub(crate) fn store<R: serde::Serialize>(
    cache_dir: &Path,
    spec: &RunSpec,
    result: &R,
) -> Result<(), LabError> {
    let entry = serde_json::json!({
        "key": spec.key,
        "seed": spec.seed,
        "rep": spec.rep,
        "params": spec.params,
        "result": result,
    });
    let path = cache_path(cache_dir, &spec.key);
    let bytes = serde_json::to_vec(&entry).map_err(|e| LabError::Data {
        file: path.display().to_string(),
        why: e.to_string(),
    })?;
    write_atomic(&path, &bytes)
}
