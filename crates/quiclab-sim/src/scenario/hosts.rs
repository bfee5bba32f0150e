//! Each endpoint's host table (`host = { ... }` in `[client]`, `[server]` and a flow's
//! `[flows.client]` / `[flows.server]`, merged as the transport keys are; see
//! `host/config.rs` for the keys).

use super::{merge_tables, Scenario, ScenarioError};
use crate::host::config::{host_of, resolve_paths, At};
use crate::host::HostConfig;
use std::path::Path;

impl Scenario {
    /// The host model of flow `i`'s client or server (`None`: none, or all keys off),
    /// its profile read and checked; `file` names the scenario in errors.
    pub fn host(
        &self,
        i: usize,
        server: bool,
        file: &str,
    ) -> Result<Option<HostConfig>, ScenarioError> {
        let f = &self.flows[i];
        let (base, over, side) = if server {
            (&self.server, &f.server, "server")
        } else {
            (&self.client, &f.client, "client")
        };
        if !base.contains_key(crate::host::config::HOST_KEY)
            && !over.contains_key(crate::host::config::HOST_KEY)
        {
            return Ok(None);
        }
        let merged = merge_tables(base, over);
        let key = format!("flows[{i}] ({}).{side}.host", f.name);
        host_of(&merged, At { file, key: &key })
    }

    /// Makes the host tables' relative paths (profiles, latency files) relative to
    /// `dir`, the scenario file's directory.
    pub(super) fn resolve_host_paths(&mut self, dir: &Path) {
        resolve_paths(&mut self.client, dir);
        resolve_paths(&mut self.server, dir);
        for f in &mut self.flows {
            resolve_paths(&mut f.client, dir);
            resolve_paths(&mut f.server, dir);
        }
    }
}
