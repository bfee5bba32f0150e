//! The files a plan's host tables name (`host = { profile = "...", wakeup_latency =
//! { dist = "empirical", file = "..." } }` under `[client]`, `[server]` and a flow's
//! `[flows.client]` / `[flows.server]`, issue 37): where a relative path resolves, and
//! the content hashes the run key is made of. The same rules as trace files
//! (`plan/trace_files.rs`): a path the base scenario holds is relative to the base's
//! directory, one `[set]` or `[cases]` writes is relative to the plan's; a run's key
//! hashes each file's contents in place of its path, so an edited profile reruns.

use crate::error::LabError;
use crate::plan::file_keys::{against, hash_file};
use quiclab_sim::host::config::{HOST_KEY, PROFILE_KEY};
use quiclab_sim::Scenario;
use std::collections::BTreeMap;
use std::path::Path;

/// Calls `f(location, path)` on each path string of one transport table's host table.
fn visit_host(table: &mut toml::Table, at: &str, f: &mut impl FnMut(&str, &mut String)) {
    let Some(toml::Value::Table(host)) = table.get_mut(HOST_KEY) else {
        return;
    };
    if let Some(toml::Value::String(p)) = host.get_mut(PROFILE_KEY) {
        f(&format!("{at}.{HOST_KEY}.{PROFILE_KEY}"), p);
    }
    let latency = host
        .get_mut("wakeup_latency")
        .and_then(|w| w.as_table_mut())
        .and_then(|w| w.get_mut("file"));
    if let Some(toml::Value::String(p)) = latency {
        f(&format!("{at}.{HOST_KEY}.wakeup_latency.file"), p);
    }
}

/// Calls `f(location, path)` on every host path of a scenario table: `client`,
/// `server`, then each flow's, in order.
fn visit(table: &mut toml::Table, f: &mut impl FnMut(&str, &mut String)) {
    for side in ["client", "server"] {
        if let Some(toml::Value::Table(t)) = table.get_mut(side) {
            visit_host(t, side, f);
        }
    }
    if let Some(toml::Value::Array(flows)) = table.get_mut("flows") {
        for (i, flow) in flows.iter_mut().enumerate() {
            let toml::Value::Table(flow) = flow else {
                continue;
            };
            for side in ["client", "server"] {
                if let Some(toml::Value::Table(t)) = flow.get_mut(side) {
                    visit_host(t, &format!("flows[{i}].{side}"), f);
                }
            }
        }
    }
}

/// Resolves every relative host path in the base scenario's `table` against `dir`, the
/// base file's directory.
pub(crate) fn resolve_base(table: &mut toml::Table, dir: &Path) {
    visit(table, &mut |_, p| *p = against(dir, p));
}

/// Resolves the host paths the plan wrote into a point's `table` (those not equal to
/// the resolved `base`'s at the same place) against `dir`, the plan file's directory.
pub(crate) fn resolve_written(table: &mut toml::Table, base: &toml::Table, dir: &Path) {
    let mut inherited = BTreeMap::new();
    visit(&mut base.clone(), &mut |at, p| {
        inherited.insert(at.to_string(), p.clone());
    });
    visit(table, &mut |at, p| {
        if inherited.get(at) != Some(p) {
            *p = against(dir, p);
        }
    });
}

/// Replaces each host path of `scenario` with the hash of the file's contents (nothing
/// changes without host files): what the run key serializes.
pub(crate) fn keyed(scenario: &mut Scenario) -> Result<(), LabError> {
    let mut err = None;
    let mut hash = |at: &str, p: &mut String| match hash_file("host", at, p) {
        Ok(h) => *p = h,
        Err(e) => {
            err.get_or_insert(e);
        }
    };
    visit_host(&mut scenario.client, "client", &mut hash);
    visit_host(&mut scenario.server, "server", &mut hash);
    for (i, flow) in scenario.flows.iter_mut().enumerate() {
        visit_host(&mut flow.client, &format!("flows[{i}].client"), &mut hash);
        visit_host(&mut flow.server, &format!("flows[{i}].server"), &mut hash);
    }
    err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    fn profile<'a>(t: &'a toml::Table, side: &str) -> Option<&'a str> {
        t[side][HOST_KEY][PROFILE_KEY].as_str()
    }

    #[test]
    fn base_paths_resolve_against_its_dir_and_written_ones_against_the_plan() {
        let mut base = table(
            r#"
            [client]
            host = { profile = "hosts/a.toml" }
            [server]
            host = { profile = "/abs/b.toml", wakeup_latency = { dist = "empirical", file = "lat.txt" } }
            "#,
        );
        resolve_base(&mut base, Path::new("/scen"));
        assert_eq!(profile(&base, "client"), Some("/scen/hosts/a.toml"));
        assert_eq!(profile(&base, "server"), Some("/abs/b.toml"));
        assert_eq!(
            base["server"][HOST_KEY]["wakeup_latency"]["file"].as_str(),
            Some("/scen/lat.txt")
        );
        // The plan keeps the client's and writes a new server profile and a flow's.
        let mut point = base.clone();
        point["server"][HOST_KEY]
            .as_table_mut()
            .unwrap()
            .insert(PROFILE_KEY.into(), "c.toml".into());
        point.insert(
            "flows".into(),
            toml::Value::Array(vec![toml::Value::Table(table(
                "[server]\nhost = { profile = \"d.toml\" }",
            ))]),
        );
        resolve_written(&mut point, &base, Path::new("/plan"));
        assert_eq!(profile(&point, "client"), Some("/scen/hosts/a.toml"));
        assert_eq!(profile(&point, "server"), Some("/plan/c.toml"));
        assert_eq!(
            point["flows"][0]["server"][HOST_KEY][PROFILE_KEY].as_str(),
            Some("/plan/d.toml")
        );
    }
}
