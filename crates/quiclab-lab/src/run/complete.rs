//! Whether a cached result holds every metric the plan extracts. An entry is reused only
//! if it does ([`crate::run::prepare::PreparedPlan::missing`] redoes it otherwise, with a
//! warning), so a damaged or foreign entry such as `{"key": K, "result": {}}` cannot
//! silently turn a point into "no data".
//!
//! Some values are in a result only sometimes: a frame type never sent has no count, a
//! workload's own fields (`search_latency_s`) and the loss epochs appear only where they
//! apply, a simulated run has no `client_first_retransmit_ms`. What a result of its kind
//! always holds is read from a template, a result of that kind made of defaults (the
//! simulator's `RunResult` with one flow and one link, or a real run's result; an array
//! in the template stands for every element of that array), so a metric lacks only when
//! its path leaves the result at a step the template has. A `null` value (a flow that
//! never finished) and an index past an array's end (a metric of a flow the run does
//! not have) are held: the run recorded that there is no value.

use crate::plan::path::{MetricPath, Path, Seg};
use quiclab_sim::results::{FlowResult, LinkResult};
use quiclab_sim::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;

/// The paths a plan reads from each result, with the metric each serves.
pub(crate) struct Required {
    paths: Vec<(String, Path)>,
    sim: Value,
    real: Value,
}

impl Required {
    /// The paths of a plan's `[metrics]` (derived metrics read none; a windowed metric
    /// also reads the bin width `series_interval_s`).
    pub(crate) fn of(metrics: &BTreeMap<String, String>) -> Required {
        let mut paths = Vec::new();
        for (m, src) in metrics {
            if src.trim().starts_with('=') {
                continue;
            }
            // Validation rejected paths that do not parse.
            let Ok(metric) = MetricPath::parse(src) else {
                continue;
            };
            if metric.window.is_some() {
                if let Ok(width) = Path::parse("series_interval_s") {
                    paths.push((m.clone(), width));
                }
            }
            paths.push((m.clone(), metric.path));
        }
        let sim = RunResult {
            flows: vec![FlowResult::default()],
            links: vec![LinkResult::default()],
            ..RunResult::default()
        };
        Required {
            paths,
            sim: serde_json::to_value(sim).unwrap_or_default(),
            real: crate::run::real::result_template(),
        }
    }

    /// The first metric (name, path) that `result`, a real stack's run if `real`, lacks.
    pub(crate) fn lacking(&self, result: &Value, real: bool) -> Option<(&str, &Path)> {
        let template = if real { &self.real } else { &self.sim };
        self.paths
            .iter()
            .find(|(_, p)| lacks(result, template, p))
            .map(|(m, p)| (m.as_str(), p))
    }
}

/// Whether `result` leaves `path` at a step that `template` has. An array may be shorter
/// than an index of the path (a metric of `flows[3]` in a run with one flow): the run
/// has no such element, which is its answer, as a `null` is.
fn lacks(result: &Value, template: &Value, path: &Path) -> bool {
    let (mut r, mut t) = (result, template);
    for seg in &path.0 {
        let (next_r, next_t) = match seg {
            Seg::Key(k) => (r.get(k), t.get(k)),
            Seg::Index(i) => match r.as_array() {
                Some(a) if a.len() <= *i => return false,
                _ => (r.get(i), t.get(0)),
            },
        };
        let Some(next_t) = next_t else {
            return false;
        };
        let Some(next_r) = next_r else {
            return true;
        };
        (r, t) = (next_r, next_t);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn required(metrics: &[(&str, &str)]) -> Required {
        let metrics = metrics
            .iter()
            .map(|(m, p)| (m.to_string(), p.to_string()))
            .collect();
        Required::of(&metrics)
    }

    #[test]
    fn a_result_without_a_metric_lacks_it() {
        let r = required(&[
            ("ttlb", "flows[0].ttlb_s"),
            ("acks", "flows[0].client.sent_by_frame_type.ack.packets"),
            ("goodput", "flows[0].goodput_series@1:2"),
            ("ratio", "= ttlb / 2"),
        ]);
        let lacking = |v: Value| r.lacking(&v, false).map(|(m, p)| (m, p.to_string()));
        assert_eq!(
            lacking(json!({})),
            Some((
                "acks",
                "flows[0].client.sent_by_frame_type.ack.packets".into()
            ))
        );
        let flow =
            json!({"ttlb_s": null, "goodput_series": [], "client": {"sent_by_frame_type": {}}});
        let whole = json!({"series_interval_s": 0.1, "flows": [flow]});
        assert_eq!(
            lacking(whole.clone()),
            None,
            "null and absent frame types are held"
        );
        let mut no_ttlb = whole.clone();
        no_ttlb["flows"][0]
            .as_object_mut()
            .unwrap()
            .remove("ttlb_s");
        assert_eq!(lacking(no_ttlb), Some(("ttlb", "flows[0].ttlb_s".into())));
        assert_eq!(
            lacking(json!({"flows": [flow]})),
            Some(("goodput", "series_interval_s".into()))
        );
        // A run with fewer flows than a path names has no value there.
        assert_eq!(
            lacking(json!({"series_interval_s": 0.1, "flows": []})),
            None
        );
        assert!(lacking(json!({"series_interval_s": 0.1, "flows": null})).is_some());
    }

    #[test]
    fn values_a_result_holds_only_sometimes_are_not_required() {
        let r = required(&[
            ("search", "flows[0].search_latency_s"),
            ("epochs", "flows[0].server.loss_epochs.sizes[1]"),
            ("retransmit", "flows[0].client_first_retransmit_ms"),
            ("rtt", "flows[0].client.rtt_samples[3]"),
        ]);
        let sim = json!({"flows": [{"server": {}, "client": {"rtt_samples": []}}]});
        assert_eq!(r.lacking(&sim, false), None);
        // A real run always has its retransmission time (null when none).
        let real = json!({"flows": [{"server": {}}]});
        assert_eq!(r.lacking(&real, true).map(|(m, _)| m), Some("retransmit"));
    }
}
