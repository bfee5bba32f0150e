//! A link direction's `trace` keys (quiclab-link's `trace` module: Mahimahi delivery
//! traces, delay and loss step traces) as a scenario uses them: checks against the
//! other keys, and file paths resolved against the scenario file's directory.
//!
//! Paths: a relative path is relative to the directory of the scenario file that
//! names it, when the scenario is loaded from a file ([`Scenario::load`], `sim run`,
//! `quiclab emulate`); the resolved path is what the loaded scenario holds (and what
//! results record). Scenario text parsed without a file ([`Scenario::parse`]) keeps
//! its paths, which then resolve against the working directory.

use super::{LinkConfig, LinkSide, Scenario, ScenarioError, Topology};
use std::path::Path;

/// An invalid-key error in `file`.
fn bad(file: &str, key: String, why: &str) -> Result<(), ScenarioError> {
    Err(ScenarioError::Invalid {
        file: file.to_string(),
        key,
        why: why.to_string(),
    })
}

/// Checks `key.trace` against the direction's other keys.
pub(super) fn check_link_trace(file: &str, l: &LinkConfig, key: &str) -> Result<(), ScenarioError> {
    let Some(t) = &l.trace else { return Ok(()) };
    let files = t.mahimahi.is_some() || t.delay.is_some() || t.loss.is_some();
    if t.profile.is_some() {
        return check_profile(file, l, key, files);
    }
    if t.seconds.is_some() {
        return bad(
            file,
            format!("{key}.trace.seconds"),
            "is for `profile` only",
        );
    }
    if !files {
        return bad(
            file,
            format!("{key}.trace"),
            "needs `mahimahi`, `delay`, `loss` or `profile`",
        );
    }
    if t.mahimahi.is_some() && l.rate_mbps.is_some() {
        return bad(
            file,
            format!("{key}.rate_mbps"),
            "must be absent with trace.mahimahi (the trace's opportunities set the rate)",
        );
    }
    Ok(())
}

/// A link profile replaces the trace files and the rate; its realisation length is
/// bounded (quiclab-link's `profile` module).
fn check_profile(file: &str, l: &LinkConfig, key: &str, files: bool) -> Result<(), ScenarioError> {
    if files {
        return bad(
            file,
            format!("{key}.trace.profile"),
            "replaces `mahimahi`, `delay` and `loss`, which must then be absent",
        );
    }
    if l.rate_mbps.is_some() {
        return bad(
            file,
            format!("{key}.rate_mbps"),
            "must be absent with trace.profile (the profile sets the capacity)",
        );
    }
    let max = quiclab_link::profile::MAX_SECONDS;
    match l.trace.as_ref().and_then(|t| t.seconds) {
        Some(s) if !(s > 0.0 && s <= max) => bad(
            file,
            format!("{key}.trace.seconds"),
            &format!("must be in (0, {max}]"),
        ),
        _ => Ok(()),
    }
}

impl Scenario {
    /// Refuses scheduled changes a trace would silently override: a rate change on a
    /// bottleneck direction driven by a Mahimahi trace, a delay change on one with a
    /// delay trace.
    pub(super) fn check_trace_schedule(&self, file: &str) -> Result<(), ScenarioError> {
        let (fwd, ret) = self.links();
        for (i, change) in self.schedule.iter().enumerate() {
            let l = if change.link == LinkSide::Forward {
                fwd
            } else {
                ret
            };
            let Some(t) = &l.trace else { continue };
            if change.rate_mbps.is_some() && (t.mahimahi.is_some() || t.profile.is_some()) {
                return bad(
                    file,
                    format!("schedule[{i}].rate_mbps"),
                    "the link follows a Mahimahi trace (trace.mahimahi or trace.profile)",
                );
            }
            if change.delay_ms.is_some() && (t.delay.is_some() || t.profile.is_some()) {
                return bad(
                    file,
                    format!("schedule[{i}].delay_ms"),
                    "the link follows a delay trace (trace.delay or trace.profile)",
                );
            }
        }
        Ok(())
    }

    /// Every link direction's trace file paths with their scenario keys
    /// (`topology.forward.trace.mahimahi`, ...): what [`Self::resolve_trace_paths`]
    /// resolves and what the lab's run key hashes.
    pub fn trace_paths_mut(&mut self) -> Vec<(String, &mut Option<String>)> {
        let links: Vec<(String, &mut LinkConfig)> = match &mut self.topology {
            Topology::PointToPoint {
                forward,
                ret,
                gateway,
                client,
            } => {
                let mut v = vec![
                    ("topology.forward".to_string(), forward),
                    ("topology.return".to_string(), ret),
                ];
                if let Some(g) = gateway {
                    v.push(("topology.gateway.forward".into(), &mut g.forward));
                    v.push(("topology.gateway.return".into(), &mut g.ret));
                }
                let ifaces = client.iter_mut().flat_map(|c| c.interfaces.iter_mut());
                for (k, i) in ifaces.enumerate() {
                    let key = format!("topology.client.interfaces[{k}]");
                    v.push((format!("{key}.forward"), &mut i.forward));
                    v.push((format!("{key}.return"), &mut i.ret));
                }
                v
            }
            Topology::Dumbbell { forward, ret, .. } => {
                vec![
                    ("topology.forward".to_string(), forward),
                    ("topology.return".to_string(), ret),
                ]
            }
        };
        let mut out = Vec::new();
        for (key, l) in links {
            let Some(t) = l.trace.as_mut() else { continue };
            for (name, path) in t.paths_mut() {
                out.push((format!("{key}.trace.{name}"), path));
            }
        }
        out
    }

    /// Makes every relative trace path relative to `dir` (the scenario file's
    /// directory) instead.
    pub fn resolve_trace_paths(&mut self, dir: &Path) {
        for (_, path) in self.trace_paths_mut() {
            if let Some(p) = path.as_mut() {
                if Path::new(p.as_str()).is_relative() {
                    *p = dir.join(&*p).display().to_string();
                }
            }
        }
    }
}
