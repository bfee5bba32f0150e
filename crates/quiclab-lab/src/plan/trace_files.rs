//! The trace files a plan's scenarios name (`topology.*.trace = { mahimahi, delay,
//! loss }`, quiclab-link's `trace` module): where a relative path resolves, and the
//! content hashes the run key is made of.
//!
//! Paths: a relative path is relative to the file that wrote it: the base scenario's
//! directory for the paths the base holds (and every point inherits), the plan file's
//! directory for the paths `[set]` and `[cases]` write. Resolved paths are absolute, so
//! a resolved `scenario.toml` runs from any directory (the real-stack runner's work
//! directory, a Dask worker on the same file system).
//!
//! Keys: a run's key hashes each trace file's contents in place of its path, so a
//! changed trace reruns and a moved checkout reuses its runs.

use crate::error::LabError;
use crate::plan::file_keys::{against, hash_file};
use quiclab_sim::Scenario;
use std::collections::BTreeMap;
use std::path::Path;

/// The keys of a `trace` table that hold file paths.
fn path_keys() -> Vec<&'static str> {
    let mut t = quiclab_link::trace::TraceConfig::default();
    t.paths_mut().into_iter().map(|(k, _)| k).collect()
}

/// Calls `f(location, path)` on every trace path string in `table`, at any depth
/// (a `trace` table with `mahimahi`, `delay` or `loss` strings), in key order.
fn visit(table: &mut toml::Table, at: &str, keys: &[&str], f: &mut impl FnMut(&str, &mut String)) {
    for (k, v) in table.iter_mut() {
        let here = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        match v {
            toml::Value::Table(t) if k == "trace" => {
                for key in keys {
                    if let Some(toml::Value::String(s)) = t.get_mut(*key) {
                        f(&format!("{here}.{key}"), s);
                    }
                }
            }
            toml::Value::Table(t) => visit(t, &here, keys, f),
            toml::Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    if let toml::Value::Table(t) = item {
                        visit(t, &format!("{here}[{i}]"), keys, f);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Resolves every relative trace path in the base scenario's `table` against `dir`,
/// the base file's directory.
pub(crate) fn resolve_base(table: &mut toml::Table, dir: &Path) {
    visit(table, "", &path_keys(), &mut |_, p| *p = against(dir, p));
}

/// Resolves the trace paths that the plan wrote into a point's `table` (those not equal
/// to the resolved `base`'s at the same place) against `dir`, the plan file's directory.
pub(crate) fn resolve_written(table: &mut toml::Table, base: &toml::Table, dir: &Path) {
    let keys = path_keys();
    let mut inherited = BTreeMap::new();
    visit(&mut base.clone(), "", &keys, &mut |at, p| {
        inherited.insert(at.to_string(), p.clone());
    });
    visit(table, "", &keys, &mut |at, p| {
        if inherited.get(at) != Some(p) {
            *p = against(dir, p);
        }
    });
}

/// `scenario` with each trace path replaced by `sha256:<hex of the file's contents>`
/// (unchanged without traces): what the run key serializes.
pub(crate) fn keyed(scenario: &Scenario) -> Result<Scenario, LabError> {
    let mut s = scenario.clone();
    for (key, path) in s.trace_paths_mut() {
        let Some(p) = path.as_mut() else { continue };
        *p = hash_file("trace", &key, p)?;
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    fn trace<'a>(t: &'a toml::Table, side: &str) -> &'a toml::Value {
        &t["topology"][side]["trace"]
    }

    #[test]
    fn base_paths_resolve_against_its_dir_and_written_ones_against_the_plan() {
        let mut base = table(
            r#"
            [topology.forward.trace]
            mahimahi = "up.trace"
            delay = "/abs/delay.csv"
            [topology.return.trace]
            loss = "loss.csv"
            [[flows]]
            trace = { delay = "not-a-link.csv" }
            "#,
        );
        resolve_base(&mut base, Path::new("/scen"));
        assert_eq!(
            trace(&base, "forward")["mahimahi"].as_str(),
            Some("/scen/up.trace")
        );
        assert_eq!(
            trace(&base, "forward")["delay"].as_str(),
            Some("/abs/delay.csv")
        );
        assert_eq!(
            trace(&base, "return")["loss"].as_str(),
            Some("/scen/loss.csv")
        );
        // Found at any depth, arrays included (the simulator rejects unknown keys).
        assert_eq!(
            base["flows"][0]["trace"]["delay"].as_str(),
            Some("/scen/not-a-link.csv")
        );
        // A point where the plan wrote the return loss trace: only that path moves.
        let mut point = base.clone();
        let written = table("[topology.return.trace]\nloss = \"other.csv\"");
        point = quiclab_sim::scenario::merge_tables(&point, &written);
        resolve_written(&mut point, &base, Path::new("/plan"));
        assert_eq!(
            trace(&point, "return")["loss"].as_str(),
            Some("/plan/other.csv")
        );
        assert_eq!(
            trace(&point, "forward")["mahimahi"].as_str(),
            Some("/scen/up.trace")
        );
    }
}
