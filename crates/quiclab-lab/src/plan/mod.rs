//! Plans (TOML): a base scenario plus axes of parameters, how they set scenario keys,
//! which metrics to extract, analytic expectations, repetitions, figures and the text of
//! the report. A plan expands into runs, each with a fully resolved scenario and a seed
//! derived from the master seed, the point's parameters and the repetition index.

pub mod claim;
pub mod endpoints;
pub mod endpoints_check;
pub mod expand;
pub mod load;
pub mod locate;
pub mod path;
pub mod points;
pub mod validate;

use claim::{Claim, Published};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Axis scale (of a range's spacing and of a figure's axes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

/// A value an axis takes: a number or a string (e.g. a congestion controller name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AxisValue {
    Number(f64),
    Text(String),
}

/// A range of numbers: `steps` values from `from` to `to` inclusive, evenly spaced on a
/// linear or log scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub from: f64,
    pub to: f64,
    pub steps: usize,
    #[serde(default)]
    pub scale: Scale,
}

/// A swept parameter: a list of values or a range (exactly one of the two).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Every combination of every axis's values.
    #[default]
    Cartesian,
    /// The i-th values of all axes together (all axes must have the same length).
    Zip,
}

/// A figure to draw from the results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    pub repetitions: Option<u32>,
    /// Replacement values per axis name.
    #[serde(default)]
    pub axes: BTreeMap<String, Vec<AxisValue>>,
    /// Replacement `[set]` expressions (e.g. shorter runs).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Findings the quick run leaves out on purpose (their points are not run); any
    /// other finding without data fails the quick run too.
    #[serde(default)]
    pub skip_findings: Vec<String>,
}

/// A plan file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Claims about directions (e.g. "1:10 lowers throughput"), checked in the report.
    #[serde(default)]
    pub findings: Vec<FindingSpec>,
    /// Pairs a stochastic finding needs before it can hold or fail (default 5).
    #[serde(default = "five")]
    pub min_pairs: usize,
    /// Real stacks as processes through the emulator instead of the simulator, at the
    /// points `[endpoints]` selects (see [`endpoints`]). Default: every point simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<endpoints::Endpoints>,
    /// Set by `--quick` in the plan as run (`plan.resolved.json`), so the report knows
    /// which findings `[quick] skip_findings` left out. Not a plan-file key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick_run: bool,
}

fn five() -> usize {
    5
}

fn one_u32() -> u32 {
    1
}

/// A claim in a plan (`[[findings]]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingSpec {
    /// Identifier, a column value in `findings.csv` (e.g. "ratio10_vs_1").
    pub name: String,
    /// The claim in words, for the report.
    pub claim: String,
    /// A metric of the plan.
    pub metric: String,
    /// The points measured: axis name = value. Same axis names as `against`.
    pub of: BTreeMap<String, AxisValue>,
    /// The points compared against; empty (the default) compares the `of` points with
    /// their own `[expected]` value of the metric (e.g. an analytic TCP baseline).
    #[serde(default)]
    pub against: BTreeMap<String, AxisValue>,
    /// A comparison of two effects: the claim is about the change of `of` against
    /// `against` minus the change of `than` against `against` ("1:10 loses more than
    /// 1:2" is `of = {ratio = 10}`, `than = {ratio = 2}`, `against = {ratio = 1}`,
    /// `expect = "lower"`). Same axis names as `of`; needs `against`.
    #[serde(default)]
    pub than: BTreeMap<String, AxisValue>,
    /// What the seed reports: a relative change (`-0.062`, or `{ change = -0.062,
    /// precision = 0.0005 }`), a range of changes (`{ between = [0.25, 0.50] }`), or
    /// an absolute value of the metric at the `of` points (`{ value = 0.31, unit = "s" }`).
    #[serde(default)]
    pub published: Option<PublishedSpec>,
    /// A one-sided claim on the relative change: "lower" (< 0), "higher" (> 0),
    /// "< x" or "> x" (x a fraction, e.g. "< -0.667": less than a third).
    #[serde(default)]
    pub expect: Option<String>,
    /// A two-sided claim: |change| <= `within` (e.g. 0.01: the same within 1%).
    #[serde(default)]
    pub within: Option<f64>,
    /// A two-sided claim: the change lies in `[lo, hi]`.
    #[serde(default)]
    pub between: Option<[f64; 2]>,
    /// Pairs needed before a stochastic finding can hold or fail (default: the plan's
    /// `min_pairs`).
    #[serde(default)]
    pub min_pairs: Option<usize>,
}

impl FindingSpec {
    /// The claim as a [`Claim`]: exactly one of `expect`, `within`, `between`. The error
    /// names the key at fault.
    pub fn parsed_claim(&self) -> Result<Claim, (&'static str, String)> {
        match (&self.expect, self.within, self.between) {
            (Some(e), None, None) => Claim::parse_expect(e).map_err(|w| ("expect", w)),
            (None, Some(w), None) => Claim::within(w).map_err(|w| ("within", w)),
            (None, None, Some([lo, hi])) => Claim::between(lo, hi).map_err(|w| ("between", w)),
            (None, None, None) => Err((
                "expect",
                "give one of `expect`, `within` or `between`".into(),
            )),
            _ => Err((
                "expect",
                "give only one of `expect`, `within` and `between`".into(),
            )),
        }
    }

    /// The seed's number, checked: see [`PublishedSpec`].
    pub fn parsed_published(&self) -> Result<Option<Published>, String> {
        self.published
            .as_ref()
            .map(PublishedSpec::parse)
            .transpose()
    }
}

/// A finding's `published` entry as written in the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PublishedSpec {
    /// A relative change, exact.
    Change(f64),
    /// `{ change = x }`, `{ between = [lo, hi] }` or `{ value = x, unit = "s" }`, each
    /// with an optional `precision` (the seed's stated precision, default 0).
    Table(PublishedTable),
}

/// The table form of [`PublishedSpec`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedTable {
    pub change: Option<f64>,
    pub between: Option<[f64; 2]>,
    pub value: Option<f64>,
    pub unit: Option<String>,
    pub precision: Option<f64>,
}

impl PublishedSpec {
    /// Checks the entry: exactly one of `change`, `between` and `value`, finite
    /// numbers, a precision >= 0, a unit only with a value.
    pub fn parse(&self) -> Result<Published, String> {
        let t = match self {
            PublishedSpec::Change(c) => &PublishedTable {
                change: Some(*c),
                ..Default::default()
            },
            PublishedSpec::Table(t) => t,
        };
        let precision = t.precision.unwrap_or(0.0);
        if !(precision.is_finite() && precision >= 0.0) {
            return Err(format!("precision {precision} is not a finite number >= 0"));
        }
        let finite = |x: f64| {
            x.is_finite()
                .then_some(x)
                .ok_or_else(|| format!("{x} is not a finite number"))
        };
        if t.unit.is_some() && t.value.is_none() {
            return Err("`unit` goes with `value`".into());
        }
        match (t.change, t.between, t.value) {
            (Some(c), None, None) => Ok(Published::Change {
                value: finite(c)?,
                precision,
            }),
            (None, Some([lo, hi]), None) if t.precision.is_none() => {
                Claim::between(lo, hi)?;
                Ok(Published::Between(lo, hi))
            }
            (None, Some(_), None) => Err("`between` takes no `precision`".into()),
            (None, None, Some(v)) => Ok(Published::Value {
                value: finite(v)?,
                precision,
                unit: t.unit.clone().unwrap_or_default(),
            }),
            _ => Err("give exactly one of `change`, `between` and `value`".into()),
        }
    }
}
