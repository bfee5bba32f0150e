//! Each endpoint's host table (`host = { ... }` in `[client]`, `[server]` and a flow's
//! `[flows.client]` / `[flows.server]`, merged as the transport keys are; see
//! `host/config.rs` for the keys).

use super::host_table::{host_of, resolve_paths, At};
use super::{merge_tables, Scenario, ScenarioError, Workload};
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
        let cfg = host_of(&merged, At { file, key: &key })?;
        let request = f.transport.is_quic() && matches!(f.workload, Workload::Request { .. });
        if cfg.as_ref().is_some_and(|c| c.app_delay_ms > 0.0) && !(server && request) {
            return Err(ScenarioError::Invalid {
                file: file.to_string(),
                key: format!("{key}.app_delay_ms"),
                why: "only for the server of a QUIC request flow (not simulated elsewhere yet)"
                    .into(),
            });
        }
        Ok(cfg)
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
