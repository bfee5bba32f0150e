//! A scenario's host tables read into `HostConfig`s (`host/config.rs`): a profile file's
//! loading and merging under the table's own keys, relative paths, and the keys' checks,
//! each failure a `ScenarioError` naming the file and key.

use super::{merge_tables, ScenarioError};
use crate::host::config::{
    HostConfig, Latency, HOST_KEY, MAX_COST_US, MAX_GSO_SEGMENTS, MAX_LATENCY_FILE_BYTES,
    MAX_SAMPLES, PROFILE_KEY,
};
use std::path::Path;

impl HostConfig {
    /// A profile file on its own (`scenarios/hosts/`), checked as a scenario's host
    /// table naming it would be.
    pub fn from_profile(path: &Path) -> Result<HostConfig, ScenarioError> {
        let file = path.display().to_string();
        let table = toml::Table::from_iter([(
            HOST_KEY.to_string(),
            toml::Value::Table(toml::Table::from_iter([(
                PROFILE_KEY.to_string(),
                toml::Value::String(file.clone()),
            )])),
        )]);
        let cfg = host_of(
            &table,
            At {
                file: &file,
                key: HOST_KEY,
            },
        )?;
        Ok(cfg.unwrap_or_default())
    }
}

/// Where errors point: the scenario file and the host table's key path.
pub(crate) struct At<'a> {
    pub file: &'a str,
    pub key: &'a str,
}

impl At<'_> {
    fn bad<T>(&self, key: &str, why: impl Into<String>) -> Result<T, ScenarioError> {
        Err(ScenarioError::Invalid {
            file: self.file.to_string(),
            key: format!("{}.{key}", self.key),
            why: why.into(),
        })
    }
}

/// The host of a merged transport table (`None`: no `host` key, or one that is off).
/// A profile path is read as written (the scenario's loading made it absolute).
pub(crate) fn host_of(table: &toml::Table, at: At) -> Result<Option<HostConfig>, ScenarioError> {
    let Some(v) = table.get(HOST_KEY) else {
        return Ok(None);
    };
    let Some(t) = v.as_table() else {
        return at.bad(
            "",
            "must be a table of host keys (see docs/book/src/guide/hosts.md)",
        );
    };
    let merged = match t.get(PROFILE_KEY) {
        None => t.clone(),
        Some(p) => {
            let Some(p) = p.as_str() else {
                return at.bad(PROFILE_KEY, "must be a file path (a string)");
            };
            let mut own = t.clone();
            own.remove(PROFILE_KEY);
            merge_tables(&load_profile(Path::new(p), &at)?, &own)
        }
    };
    let mut cfg = deserialize(&merged, &at)?;
    cfg.profile = t
        .get(PROFILE_KEY)
        .and_then(|p| p.as_str())
        .map(String::from);
    check(&cfg, &at)?;
    if let Some(Latency::Empirical { file, samples }) = &mut cfg.wakeup_latency {
        *samples = load_samples(Path::new(file.as_str()), &at)?;
    }
    Ok((!cfg.is_off()).then_some(cfg))
}

/// A profile file's table; its empirical latency file resolved against its directory.
/// A file that cannot be read is an error at the key naming it (`host.profile`).
fn load_profile(path: &Path, at: &At) -> Result<toml::Table, ScenarioError> {
    let name = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return at.bad(PROFILE_KEY, format!("cannot read {name}: {e}")),
    };
    let mut t: toml::Table = toml::from_str(&text).map_err(|e| ScenarioError::Parse {
        file: name.clone(),
        message: e.to_string(),
    })?;
    if t.contains_key(PROFILE_KEY) {
        return Err(ScenarioError::Invalid {
            file: name,
            key: PROFILE_KEY.into(),
            why: "a profile cannot name another profile".into(),
        });
    }
    if let Some(dir) = path.parent() {
        resolve_latency_file(&mut t, dir);
    }
    Ok(t)
}

/// Makes a host table's relative `wakeup_latency.file` relative to `dir`.
pub(crate) fn resolve_latency_file(host: &mut toml::Table, dir: &Path) {
    let file = host
        .get_mut("wakeup_latency")
        .and_then(|w| w.as_table_mut())
        .and_then(|w| w.get_mut("file"));
    if let Some(toml::Value::String(p)) = file {
        if Path::new(p.as_str()).is_relative() {
            *p = dir.join(&*p).display().to_string();
        }
    }
}

/// Makes a transport table's relative host paths (profile, latency file) relative to `dir`.
pub(crate) fn resolve_paths(table: &mut toml::Table, dir: &Path) {
    let Some(toml::Value::Table(host)) = table.get_mut(HOST_KEY) else {
        return;
    };
    if let Some(toml::Value::String(p)) = host.get_mut(PROFILE_KEY) {
        if Path::new(p.as_str()).is_relative() {
            *p = dir.join(&*p).display().to_string();
        }
    }
    resolve_latency_file(host, dir);
}

/// Deserializes a host table; the first key that fails alone is named.
fn deserialize(t: &toml::Table, at: &At) -> Result<HostConfig, ScenarioError> {
    toml::Value::Table(t.clone())
        .try_into()
        .map_err(|e: toml::de::Error| {
            let culprit = t.iter().find(|(k, v)| {
                let alone = toml::Table::from_iter([((*k).clone(), (*v).clone())]);
                toml::Value::Table(alone).try_into::<HostConfig>().is_err()
            });
            ScenarioError::Invalid {
                file: at.file.to_string(),
                key: culprit.map_or_else(|| at.key.to_string(), |(k, _)| format!("{}.{k}", at.key)),
                why: e.message().to_string(),
            }
        })
}

/// Finite, non-negative values within their limits; positive sizes.
fn check(c: &HostConfig, at: &At) -> Result<(), ScenarioError> {
    let costs = [
        ("recv_cost_us", c.recv_cost_us),
        ("send_cost_us", c.send_cost_us),
        ("per_byte_ns", c.per_byte_ns),
        ("crypto_per_byte_ns", c.crypto_per_byte_ns),
        ("timer_granularity_us", c.timer_granularity_us),
        ("app_delay_ms", c.app_delay_ms),
    ];
    for (k, v) in costs {
        if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
            return at.bad(k, format!("must be 0 to {MAX_COST_US}"));
        }
    }
    let sizes = [
        ("rx_queue_packets", c.rx_queue_packets),
        ("socket_rcvbuf", c.socket_rcvbuf),
        ("socket_sndbuf", c.socket_sndbuf),
    ];
    for (k, v) in sizes {
        if v == Some(0) {
            return at.bad(k, "must be at least 1 (absent: unbounded)");
        }
    }
    if let Some(g) = c.gso_segments {
        if !(1..=MAX_GSO_SEGMENTS).contains(&g) {
            return at.bad("gso_segments", format!("must be 1 to {MAX_GSO_SEGMENTS}"));
        }
    }
    let ok = |v: f64| v.is_finite() && (0.0..=MAX_COST_US).contains(&v);
    match &c.wakeup_latency {
        Some(Latency::Fixed { us }) if !ok(*us) => {
            at.bad("wakeup_latency.us", format!("must be 0 to {MAX_COST_US}"))
        }
        Some(Latency::Uniform { min_us, max_us })
            if !(ok(*min_us) && ok(*max_us)) || min_us > max_us =>
        {
            at.bad(
                "wakeup_latency",
                format!("min_us and max_us must be 0 to {MAX_COST_US}, min_us <= max_us"),
            )
        }
        _ => Ok(()),
    }
}

/// An empirical latency file's samples, µs: one number per line, `#` comments.
/// A file that cannot be read is an error at `host.wakeup_latency.file`.
fn load_samples(path: &Path, at: &At) -> Result<Vec<f64>, ScenarioError> {
    use std::io::Read;
    let name = path.display().to_string();
    // Read at most one byte past the bound, so a huge file costs no more memory than that.
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|f| {
        f.take(MAX_LATENCY_FILE_BYTES.saturating_add(1))
            .read_to_string(&mut text)
    });
    match read {
        Ok(n) if n as u64 > MAX_LATENCY_FILE_BYTES => {
            return at.bad(
                "wakeup_latency.file",
                format!("{name} is larger than {MAX_LATENCY_FILE_BYTES} bytes"),
            )
        }
        Ok(_) => {}
        Err(e) => return at.bad("wakeup_latency.file", format!("cannot read {name}: {e}")),
    }
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| ScenarioError::Invalid {
            file: name.clone(),
            key: format!("line {}", n + 1),
            why: why.to_string(),
        };
        let v: f64 = line.parse().map_err(|_| bad("not a number (µs)"))?;
        if !(v.is_finite() && (0.0..=MAX_COST_US).contains(&v)) {
            return Err(bad("a wake-up latency must be 0 to 1e6 µs"));
        }
        if out.len() == MAX_SAMPLES {
            return Err(bad("more than 1,000,000 samples"));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(ScenarioError::Invalid {
            file: name,
            key: "wakeup_latency.file".into(),
            why: "no samples".into(),
        });
    }
    Ok(out)
}
