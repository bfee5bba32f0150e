//! Path and content rules shared by the files a plan names (trace files,
//! `plan/trace_files.rs`; host profiles and latency files, `plan/host_files.rs`): where a
//! relative path resolves and the content hash that stands for a file in a run key.

use crate::error::LabError;
use ring::digest::{digest, SHA256};
use std::path::Path;

/// `path` made absolute against `dir` when relative (as written when already absolute);
/// `dir` is canonical when it exists (no `..` left from a base like `../scen/base.toml`).
pub(crate) fn against(dir: &Path, path: &str) -> String {
    if !Path::new(path).is_relative() {
        return path.to_string();
    }
    let dir = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf());
    dir.join(path).display().to_string()
}

/// `sha256:<hex>` of a file's contents (a run key's stand-in for a file path); `kind`
/// ("host", "trace") and `at` (the key) name the file in the error.
pub(crate) fn hash_file(kind: &str, at: &str, path: &str) -> Result<String, LabError> {
    let bytes = std::fs::read(path).map_err(|e| LabError::Data {
        file: path.to_string(),
        why: format!("the {kind} file of {at} cannot be read: {e}"),
    })?;
    let hex: String = digest(&SHA256, &bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(format!("sha256:{hex}"))
}
