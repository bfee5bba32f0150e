//! The run cache: `out/cache/<key>.json` = `{"key", "seed", "rep", "params", "result"}`
//! where `result` is the simulator's `RunResult`. An entry is written to a temporary file
//! and renamed, so a killed sweep leaves either a complete entry or a stray `*.tmp-*`
//! file, which is ignored. An entry that does not parse is treated as missing and re-run,
//! and so is one whose result lacks a metric of the plan (`run::complete`).

use crate::error::LabError;
use crate::plan::AxisValue;
use crate::run::rows::write_atomic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file of the entry `key`.
pub(crate) fn entry_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join(format!("{key}.json"))
}

/// A cache entry's full JSON, if present and readable.
pub(crate) fn read_entry(cache_dir: &Path, key: &str) -> Option<serde_json::Value> {
    let text = std::fs::read(entry_path(cache_dir, key)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    (v.get("key")?.as_str()? == key && v.get("result")?.is_object()).then_some(v)
}

/// The cached result of one run (the simulator's `RunResult` as JSON), e.g. for a
/// figure of its goodput time series.
pub fn load_run(cache_dir: &Path, key: &str) -> Result<serde_json::Value, LabError> {
    let path = entry_path(cache_dir, key);
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

/// The bytes of one cache entry: the run's identity and its result. The local runner
/// and a remote worker ([`crate::run::execute`]) both make entries here, so an entry is
/// the same bytes wherever the run executed.
pub fn entry_bytes<R: serde::Serialize>(
    key: &str,
    seed: u64,
    rep: u32,
    params: &BTreeMap<String, AxisValue>,
    result: &R,
) -> Result<Vec<u8>, LabError> {
    let entry = serde_json::json!({
        "key": key,
        "seed": seed,
        "rep": rep,
        "params": params,
        "result": result,
    });
    serde_json::to_vec(&entry).map_err(|e| LabError::Data {
        file: format!("{key}.json"),
        why: e.to_string(),
    })
}

/// Writes cache entry bytes made by [`entry_bytes`] in this process.
pub(crate) fn write_entry(cache_dir: &Path, key: &str, bytes: &[u8]) -> Result<(), LabError> {
    write_atomic(&entry_path(cache_dir, key), bytes)
}

/// Stores an entry made elsewhere (by [`entry_bytes`], e.g. on a Dask worker) under
/// `key`, after checking that it is a complete entry for that key: a truncated or
/// mismatched entry is an error, never cached.
pub fn store_entry(cache_dir: &Path, key: &str, bytes: &[u8]) -> Result<(), LabError> {
    let path = entry_path(cache_dir, key);
    let bad = |why: &str| LabError::Data {
        file: path.display().to_string(),
        why: why.to_string(),
    };
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| bad(&e.to_string()))?;
    if v.get("key").and_then(serde_json::Value::as_str) != Some(key) {
        return Err(bad("the entry is for another run key"));
    }
    if !v.get("result").is_some_and(serde_json::Value::is_object) {
        return Err(bad("the entry has no `result` object"));
    }
    write_atomic(&path, bytes)
}
