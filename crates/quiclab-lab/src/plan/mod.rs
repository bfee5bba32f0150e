//! Plans (TOML): a base scenario plus axes of parameters, how they set scenario keys,
//! which metrics to extract, analytic expectations, repetitions, figures and the text of
//! the report. A plan expands into runs, each with a fully resolved scenario and a seed
//! derived from the master seed, the point's parameters and the repetition index.

pub mod assumptions;
pub mod comparison;
pub mod endpoints;
pub mod endpoints_check;
pub mod expand;
mod file_keys;
mod host_files;
pub mod load;
pub mod locate;
pub mod path;
pub mod points;
pub mod schema;
pub mod statement;
mod trace_files;
pub mod validate;
mod validate_statements;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Axis scale (of a range's spacing and of a figure's axes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

/// A value an axis takes: a number or a string (e.g. a congestion controller name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum AxisValue {
    Number(f64),
    Text(String),
}

/// A range of numbers: `steps` values from `from` to `to` inclusive, evenly spaced on a
/// linear or log scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: f64,
    pub to: f64,
    pub steps: usize,
    #[serde(default)]
    pub scale: Scale,
}

/// A swept parameter: a list of values or a range (exactly one of the two).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub name: String,
    pub values: Option<Vec<AxisValue>>,
    pub range: Option<Range>,
    /// Label with unit for figures, e.g. "RTT (ms)" (default: the name).
    pub label: Option<String>,
    /// Names for values in figure legends, e.g. `{ "1" = "IACK", "0" = "WFC" }` for a
    /// 0/1 switch (default: "label = value").
    #[serde(default)]
    pub value_labels: BTreeMap<String, String>,
}

/// How axes combine into points.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Every combination of every axis's values.
    #[default]
    Cartesian,
    /// The i-th values of all axes together (all axes must have the same length).
    Zip,
}

/// A figure to draw from the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// File stem under `figures/` (PNG and SVG).
    pub file: String,
    pub title: String,
    /// "lines" | "scatter" (x-y with CI error bars, plus expected curves), "cdf" (of the
    /// metric `y` over all runs, one line per series), "bars" (x = category),
    /// "timeseries" (`y = "goodput"`: the first point's goodput series, one line per
    /// flow; `y = "cwnd"`: each point's first run's sender window with its Careful
    /// Resume phase changes marked, needs `measure.traces`).
    pub kind: String,
    /// Axis name for x (not used by "cdf"/"timeseries").
    pub x: Option<String>,
    /// Metric name for y.
    pub y: String,
    /// Axis name whose values become separate series (optional).
    pub series: Option<String>,
    pub x_label: Option<String>,
    pub y_label: Option<String>,
    /// Multiply y (and expected) values by this for display (e.g. 1e-6 for Mbit/s).
    #[serde(default = "one")]
    pub y_factor: f64,
    #[serde(default)]
    pub x_scale: Scale,
    #[serde(default)]
    pub y_scale: Scale,
    /// Draw the plan's expected curve for `y` next to the measured points.
    #[serde(default)]
    pub expected: bool,
    /// Only points whose axes have these values (e.g. `{ mtu = 1500 }`).
    #[serde(default)]
    pub filter: BTreeMap<String, AxisValue>,
}

fn one() -> f64 {
    1.0
}

/// What `--quick` changes: fewer repetitions and fewer axis values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    pub repetitions: Option<u32>,
    /// Replacement values per axis name.
    #[serde(default)]
    pub axes: BTreeMap<String, Vec<AxisValue>>,
    /// Replacement `[set]` expressions (e.g. shorter runs).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Statements (claims or checks) the quick run leaves out, each with the reason the
    /// index shows: `skip = { name = "reason" }`.
    #[serde(default)]
    pub skip: BTreeMap<String, String>,
    /// Deprecated: statements left out of quick without a reason (use `skip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip_findings: Vec<String>,
}

/// A plan file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub name: String,
    pub title: String,
    /// The research question, for the report.
    pub question: String,
    /// What the seed document found / the analytic expectation, for the report.
    #[serde(default)]
    pub published: String,
    /// How our result compares with the seed's and why they differ, for the report
    /// (written after looking at the results; the numbers themselves come from the runs).
    #[serde(default)]
    pub discussion: String,
    /// Modelling assumptions and the side each favours, listed in the report (see
    /// [`assumptions`]); the entries of `assumptions_files` come first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions: Vec<assumptions::Assumption>,
    /// TOML files of `[[assumptions]]` shared by several plans, relative to the plan
    /// file (outside the experiment's top directory, where every `*.toml` is a plan).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assumptions_files: Vec<String>,
    /// The base scenario file, relative to the plan file.
    pub base: String,
    pub master_seed: u64,
    #[serde(default = "one_u32")]
    pub repetitions: u32,
    #[serde(default)]
    pub combine: Combine,
    /// Axes left out of the seed derivation: points that differ only in these axes run
    /// with the same seeds (common random numbers), so a comparison between them sees
    /// the same loss and jitter draws and needs fewer repetitions. Default: none.
    #[serde(default)]
    pub common_random_numbers: Vec<String>,
    pub axes: Vec<Axis>,
    /// Scenario key (dotted path, e.g. "topology.forward.delay_ms" or
    /// "server.ack.ack_eliciting_threshold") = expression over axis names
    /// (numbers, + - * / ^, parentheses, sqrt, ln, log10, exp, min, max, abs, floor,
    /// ceil, round); an expression that is just a text axis's name sets that text.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Settings per value of a text axis, applied after `[set]`: `[cases.policy."1:10"]`
    /// holds `scenario key = expression` entries used at the points where axis `policy`
    /// is "1:10" (for variants that differ in several keys at once).
    #[serde(default)]
    pub cases: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
    /// Metric name = path into the run's result JSON (e.g. "links[0].payload_throughput_bps",
    /// "flows[0].ttfb_s", "flows[0].client.sent_by_frame_type.ack.bytes"), or
    /// `= expression` over the run's path metrics and numeric axes (a derived metric,
    /// e.g. "= ack_bytes / ack_frames").
    pub metrics: BTreeMap<String, String>,
    /// Metric name = expression over axis names: the analytic value at each point.
    #[serde(default)]
    pub expected: BTreeMap<String, String>,
    /// Relative tolerance of measured vs expected for the report's verdict (e.g. 0.05).
    pub tolerance: Option<f64>,
    #[serde(default)]
    pub quick: Quick,
    #[serde(default)]
    pub figures: Vec<FigureSpec>,
    /// The runs have no random input (no loss, jitter, start offsets or competing
    /// flows): one repetition, each statement judged exactly. Every other plan with
    /// claims or checks runs at least 10 repetitions (5 in quick).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deterministic: bool,
    /// What sources say, each reported as reproduced ... not run (docs/CLAIMS.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<statement::ClaimSpec>,
    /// What the project expects; a check that does not hold fails the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<statement::CheckSpec>,
    /// Deprecated: read as `[[checks]]` (with a warning).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<statement::FindingSpec>,
    /// Pairs a point of a stochastic statement needs before it is judged (default 5).
    #[serde(default = "five")]
    pub min_pairs: usize,
    /// Real stacks as processes through the emulator instead of the simulator, at the
    /// points `[endpoints]` selects (see [`endpoints`]). Default: every point simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<endpoints::Endpoints>,
    /// Set by `--quick` in the plan as run (`plan.resolved.json`), so the report knows
    /// which statements `[quick] skip` left out. Not a plan-file key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick_run: bool,
}

fn five() -> usize {
    5
}

fn one_u32() -> u32 {
    1
}
