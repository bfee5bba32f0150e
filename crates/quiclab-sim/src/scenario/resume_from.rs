//! `careful_resume.from_flow`: a flow's sender resumes with Careful Resume from what an
//! earlier flow's sender observed (draft-ietf-tsvwg-careful-resume §4.1 "Observing":
//! saved_cwnd and saved_rtt), instead of explicit `saved_cwnd_bytes` / `saved_rtt_ms`.
//!
//! The key is only accepted in a flow's own transport table on its data sender's side
//! (`flows[i].server` for `request`/`page` workloads, `flows[i].client` for `bulk`;
//! in the scenario-wide `[client]`/`[server]` tables it is an unknown key):
//! `careful_resume = { enabled = true, from_flow = "first" }`. The referenced flow must
//! exist, be another flow on the same dumbbell pair whose data sender is on the same
//! side, start earlier and have a finite workload; whether it has actually ended when
//! this flow starts is only known while running (the simulator then fails with
//! [`crate::SimError::ResumeSource`]). Explicit saved values in the scenario-wide table
//! are replaced by the reference; explicit values beside it in the flow's own table
//! are an error.

use super::validate::Check;
use super::{Flow, Scenario, ScenarioError, Transport, Workload};

/// The key inside a `careful_resume` table.
pub const FROM_FLOW: &str = "from_flow";

/// A flow's validated reference to an earlier flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResumeFrom {
    /// Index of the referenced flow in `Scenario::flows`.
    pub flow: usize,
    /// Both flows' data sender is the server (else the client).
    pub server: bool,
}

/// Whether a workload's data flows from the server (requests, pages) or the client (bulk).
pub fn sender_is_server(w: &Workload) -> bool {
    !matches!(w, Workload::Bulk { .. })
}

fn careful_resume(table: &toml::Table) -> Option<&toml::Table> {
    table.get("careful_resume").and_then(toml::Value::as_table)
}

/// Removes `careful_resume.from_flow` from a merged transport table; when it was there,
/// also the scenario-wide saved values it replaces. Returns whether it was there.
pub(crate) fn take_from_flow(table: &mut toml::Table) -> bool {
    let Some(toml::Value::Table(cr)) = table.get_mut("careful_resume") else {
        return false;
    };
    if cr.remove(FROM_FLOW).is_none() {
        return false;
    }
    cr.remove("saved_cwnd_bytes");
    cr.remove("saved_rtt_ms");
    true
}

impl Scenario {
    /// The earlier flow whose observation flow `i`'s sender resumes from, if any
    /// (validated as the module docs say; `file` names the scenario in errors).
    pub fn resume_from(&self, i: usize, file: &str) -> Result<Option<ResumeFrom>, ScenarioError> {
        let c = Check { file };
        let f = &self.flows[i];
        let mut found = None;
        for (server, t) in [(false, &f.client), (true, &f.server)] {
            if let Some(cr) = careful_resume(t) {
                if let Some(v) = cr.get(FROM_FLOW) {
                    found = Some((server, cr, v));
                }
            }
        }
        let Some((server, cr, v)) = found else {
            return Ok(None);
        };
        let side = if server { "server" } else { "client" };
        let key = format!("flows[{i}] ({}).{side}.careful_resume.{FROM_FLOW}", f.name);
        let Some(name) = v.as_str() else {
            return c.bad(key, "must be a flow name (a string)");
        };
        if server != sender_is_server(&f.workload) {
            return c.bad(key, "must be on the side that sends the flow's data");
        }
        if cr.contains_key("saved_cwnd_bytes") || cr.contains_key("saved_rtt_ms") {
            return c.bad(
                key,
                "give either explicit saved_cwnd_bytes/saved_rtt_ms or from_flow, not both",
            );
        }
        let Some(j) = self.flows.iter().position(|g| g.name == name) else {
            return c.bad(key, format!("no flow named {name:?}"));
        };
        check_source(c, &key, f, &self.flows[j], i == j)?;
        Ok(Some(ResumeFrom { flow: j, server }))
    }
}

/// Can flow `f` resume from `src` (`same`: it is itself)?
fn check_source(
    c: Check,
    key: &str,
    f: &Flow,
    src: &Flow,
    same: bool,
) -> Result<(), ScenarioError> {
    let name = &src.name;
    if same {
        return c.bad(key, "a flow cannot resume from itself");
    }
    // Careful Resume is a QUIC controller layer; TCP flows take no saved parameters.
    if f.transport != Transport::Quic || src.transport != Transport::Quic {
        return c.bad(
            key,
            "Careful Resume from an earlier flow needs QUIC flows on both ends",
        );
    }
    if src.pair != f.pair {
        return c.bad(
            key,
            format!("flow {name:?} is on pair {}, not on this flow's pair {} (a different client/server pair)", src.pair, f.pair),
        );
    }
    if sender_is_server(&src.workload) != sender_is_server(&f.workload) {
        return c.bad(
            key,
            format!("flow {name:?} sends its data the other way (bulk vs request/page)"),
        );
    }
    if src.start_s >= f.start_s {
        return c.bad(
            key,
            format!("flow {name:?} must start (and end) before this flow starts"),
        );
    }
    if let Workload::Bulk {
        bytes: None,
        stop_s: None,
    } = src.workload
    {
        return c.bad(
            key,
            format!("flow {name:?} never ends (a bulk workload without bytes or stop_s)"),
        );
    }
    Ok(())
}
