//! A plan's statements as written (docs/CLAIMS.md): `[[claims]]` (what a source says,
//! reported, never gating), `[[checks]]` (what the project expects, gating) and the
//! deprecated `[[findings]]` (read as checks). Each parses into the typed
//! [`Comparison`] they share; `plan::validate_statements` checks them at load time.

use crate::plan::comparison::{Aggregate, Bound, Comparison, Published, Statistic, Test};
use crate::plan::{AxisValue, Plan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A plan-file error in a statement: the key at fault and why.
pub type KeyError = (&'static str, String);

/// `trend = { axis = "rtt_ms", expect = "increasing" }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendSpec {
    pub axis: String,
    /// "increasing" or "decreasing".
    pub expect: String,
}

/// A claim of a source (`[[claims]]`). Its reading keys (`source` ... `tolerance`) are
/// written from the source before the runs are looked at (docs/CLAIMS.md). The
/// comparison keys are those of [`CheckSpec`]; with `not_run` they may be left out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    pub name: String,
    /// "000" ... "004" for a seed, or a publication named in full.
    pub source: String,
    /// Figure, table, section or slide of the source.
    #[serde(rename = "where")]
    pub where_: String,
    /// The claim in the source's direction, close to its words.
    pub claim: String,
    pub metric: Option<String>,
    #[serde(default)]
    pub of: BTreeMap<String, AxisValue>,
    #[serde(default)]
    pub against: BTreeMap<String, AxisValue>,
    #[serde(default)]
    pub than: BTreeMap<String, AxisValue>,
    pub expect: Option<String>,
    pub within: Option<f64>,
    pub between: Option<[f64; 2]>,
    pub trend: Option<TrendSpec>,
    /// The source's statistic (required: no default for a claim).
    pub statistic: Option<String>,
    pub aggregate: Option<String>,
    pub pooled_because: Option<String>,
    pub min_pairs: Option<usize>,
    /// The source's number.
    pub published: Option<PublishedSpec>,
    /// How far ours may lie from `published` and still be "reproduced".
    pub tolerance: Option<f64>,
    /// Why that tolerance ("project default" when `tolerance` is left out).
    pub tolerance_from: Option<String>,
    /// Why this plan cannot test the claim: its status is "not run".
    pub not_run: Option<String>,
}

/// An expectation of the project (`[[checks]]`): it holds, fails or is inconclusive,
/// and every command that runs it fails unless it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub name: String,
    /// What the project expects and why, in words.
    pub check: String,
    /// Where the expectation comes from ("analytic: Mathis", "RFC 9002 §6.2.1",
    /// "model bound", "model prediction", "regression").
    pub basis: String,
    /// A metric of the plan.
    pub metric: String,
    /// The measured points: axis name = value.
    pub of: BTreeMap<String, AxisValue>,
    /// The points compared against, paired on every other axis and the repetition;
    /// empty: the `of` points' `[expected]` value.
    #[serde(default)]
    pub against: BTreeMap<String, AxisValue>,
    /// A difference of two effects: the change of `of` against `against` minus that
    /// of `than` (same axes as `of`; needs `against`).
    #[serde(default)]
    pub than: BTreeMap<String, AxisValue>,
    /// One-sided: "lower", "higher", "< x", "> x".
    pub expect: Option<String>,
    /// Two-sided: |change| <= within.
    pub within: Option<f64>,
    /// Two-sided: the change lies in [lo, hi].
    pub between: Option<[f64; 2]>,
    /// The change grows or shrinks along an axis.
    pub trend: Option<TrendSpec>,
    /// Default "ratio of means".
    pub statistic: Option<String>,
    /// "at every point" (default) or "pooled" (with `pooled_because`).
    pub aggregate: Option<String>,
    pub pooled_because: Option<String>,
    /// Pairs a point needs (default: the plan's `min_pairs`).
    pub min_pairs: Option<usize>,
    /// Read from a deprecated `[[findings]]` entry of a plan that ran one repetition:
    /// its single runs are exact, as findings were judged. Not a plan-file key.
    #[serde(skip)]
    pub single_runs_exact: bool,
}

/// A deprecated `[[findings]]` entry: read as a check (see [`FindingSpec::as_check`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindingSpec {
    pub name: String,
    pub claim: String,
    pub metric: String,
    pub of: BTreeMap<String, AxisValue>,
    #[serde(default)]
    pub against: BTreeMap<String, AxisValue>,
    #[serde(default)]
    pub than: BTreeMap<String, AxisValue>,
    /// Not judged any more (move it to a `[[claims]]` entry); still parsed.
    #[serde(default)]
    pub published: Option<PublishedSpec>,
    #[serde(default)]
    pub expect: Option<String>,
    #[serde(default)]
    pub within: Option<f64>,
    #[serde(default)]
    pub between: Option<[f64; 2]>,
    #[serde(default)]
    pub min_pairs: Option<usize>,
}

impl FindingSpec {
    /// The finding as the check it was: the mean of the paired changes, pooled over
    /// the other axes when the plan ran repetitions, and judged at every point (each
    /// single run exact) when it ran one.
    pub fn as_check(&self, repetitions: u32) -> CheckSpec {
        let pooled = repetitions > 1;
        CheckSpec {
            name: self.name.clone(),
            check: self.claim.clone(),
            basis: "[[findings]] (deprecated)".into(),
            metric: self.metric.clone(),
            of: self.of.clone(),
            against: self.against.clone(),
            than: self.than.clone(),
            expect: self.expect.clone(),
            within: self.within,
            between: self.between,
            trend: None,
            statistic: Some(Statistic::MeanOfRatios.as_str().into()),
            aggregate: Some(if pooled { "pooled" } else { "at every point" }.into()),
            pooled_because: pooled.then(|| "a [[findings]] entry pools over the other axes".into()),
            min_pairs: self.min_pairs,
            single_runs_exact: !pooled,
        }
    }
}

/// A claim's `published` entry as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum PublishedSpec {
    /// A change.
    Change(f64),
    /// `{ change = x }`, `{ between = [lo, hi] }` or `{ value = x, unit = "s" }`.
    Table(PublishedTable),
}

/// The table form of [`PublishedSpec`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishedTable {
    pub change: Option<f64>,
    pub between: Option<[f64; 2]>,
    pub value: Option<f64>,
    pub unit: Option<String>,
    /// Only in deprecated findings (a claim states a `tolerance` instead).
    pub precision: Option<f64>,
}

impl PublishedSpec {
    /// Checks the entry: exactly one of `change`, `between` and `value`, finite
    /// numbers, a unit only with a value, no `precision`.
    pub fn parse(&self) -> Result<Published, String> {
        let t = match self {
            PublishedSpec::Change(c) => &PublishedTable {
                change: Some(*c),
                ..Default::default()
            },
            PublishedSpec::Table(t) => t,
        };
        if t.precision.is_some() {
            return Err("`precision` belongs to old findings: give the claim a `tolerance`".into());
        }
        if t.unit.is_some() && t.value.is_none() {
            return Err("`unit` goes with `value`".into());
        }
        let finite = |x: f64| {
            x.is_finite()
                .then_some(x)
                .ok_or_else(|| format!("{x} is not a finite number"))
        };
        match (t.change, t.between, t.value) {
            (Some(c), None, None) => Ok(Published::Change(finite(c)?)),
            (None, Some([lo, hi]), None) => {
                Bound::between(lo, hi)?;
                Ok(Published::Between(lo, hi))
            }
            (None, None, Some(v)) => Ok(Published::Value {
                value: finite(v)?,
                unit: t.unit.clone().unwrap_or_default(),
            }),
            _ => Err("give exactly one of `change`, `between` and `value`".into()),
        }
    }
}

/// The comparison keys every kind of statement shares, borrowed for parsing.
struct ComparisonKeys<'a> {
    metric: &'a str,
    of: &'a BTreeMap<String, AxisValue>,
    against: &'a BTreeMap<String, AxisValue>,
    than: &'a BTreeMap<String, AxisValue>,
    expect: &'a Option<String>,
    within: Option<f64>,
    between: Option<[f64; 2]>,
    trend: &'a Option<TrendSpec>,
    statistic: &'a Option<String>,
    aggregate: &'a Option<String>,
    pooled_because: &'a Option<String>,
    min_pairs: Option<usize>,
    single_runs_exact: bool,
}

impl ComparisonKeys<'_> {
    /// The typed comparison (statistic `default` when the entry names none); the error
    /// names the key at fault. References to axes and metrics are checked by
    /// `plan::validate_statements`.
    fn parse(&self, default: Option<Statistic>) -> Result<Comparison, KeyError> {
        let test = match (self.expect, self.within, self.between, self.trend) {
            (Some(e), None, None, None) => Bound::parse_expect(e)
                .map(Test::Bound)
                .map_err(|w| ("expect", w))?,
            (None, Some(w), None, None) => Bound::within(w)
                .map(Test::Bound)
                .map_err(|w| ("within", w))?,
            (None, None, Some([lo, hi]), None) => Bound::between(lo, hi)
                .map(Test::Bound)
                .map_err(|w| ("between", w))?,
            (None, None, None, Some(t)) => Test::Trend {
                axis: t.axis.clone(),
                increasing: match t.expect.as_str() {
                    "increasing" => true,
                    "decreasing" => false,
                    other => {
                        return Err((
                            "trend",
                            format!("expect = `{other}`: \"increasing\" or \"decreasing\""),
                        ))
                    }
                },
            },
            (None, None, None, None) => {
                return Err((
                    "expect",
                    "give one of `expect`, `within`, `between` or `trend`".into(),
                ))
            }
            _ => {
                return Err((
                    "expect",
                    "give only one of `expect`, `within`, `between` and `trend`".into(),
                ))
            }
        };
        let statistic = match (self.statistic, default) {
            (Some(s), _) => Statistic::parse(s).map_err(|w| ("statistic", w))?,
            (None, Some(d)) => d,
            (None, None) => {
                return Err((
                    "statistic",
                    "a claim states the source's statistic (\"ratio of means\", \"mean of ratios\", \"ratio of medians\" or \"difference of means\")".into(),
                ))
            }
        };
        let because = self.pooled_because.as_deref().map(str::trim);
        let aggregate = match (self.aggregate.as_deref(), because) {
            (None | Some("at every point"), None) => Aggregate::AtEveryPoint,
            (None | Some("at every point"), Some(_)) => {
                return Err(("pooled_because", "only with aggregate = \"pooled\"".into()))
            }
            (Some("pooled"), Some(b)) if !b.is_empty() => Aggregate::Pooled {
                because: b.to_string(),
            },
            (Some("pooled"), _) => {
                return Err((
                    "pooled_because",
                    "aggregate = \"pooled\" needs the reason in `pooled_because`".into(),
                ))
            }
            (Some(other), _) => {
                return Err((
                    "aggregate",
                    format!("`{other}`: \"at every point\" or \"pooled\""),
                ))
            }
        };
        if self.min_pairs == Some(0) {
            return Err(("min_pairs", "must be at least 1".into()));
        }
        Ok(Comparison {
            metric: self.metric.to_string(),
            of: self.of.clone(),
            against: self.against.clone(),
            than: self.than.clone(),
            test,
            statistic,
            aggregate,
            min_pairs: self.min_pairs,
            single_runs_exact: self.single_runs_exact,
        })
    }
}

impl CheckSpec {
    /// The typed comparison ("ratio of means" unless `statistic` says otherwise).
    pub fn comparison(&self) -> Result<Comparison, KeyError> {
        ComparisonKeys {
            metric: &self.metric,
            of: &self.of,
            against: &self.against,
            than: &self.than,
            expect: &self.expect,
            within: self.within,
            between: self.between,
            trend: &self.trend,
            statistic: &self.statistic,
            aggregate: &self.aggregate,
            pooled_because: &self.pooled_because,
            min_pairs: self.min_pairs,
            single_runs_exact: self.single_runs_exact,
        }
        .parse(Some(Statistic::RatioOfMeans))
    }
}

impl ClaimSpec {
    /// The typed comparison; `Ok(None)` for a claim that is not run and names no
    /// metric.
    pub fn comparison(&self) -> Result<Option<Comparison>, KeyError> {
        let Some(metric) = &self.metric else {
            return match self.not_run {
                Some(_) => Ok(None),
                None => Err(("metric", "a claim that is run names a metric".into())),
            };
        };
        ComparisonKeys {
            metric,
            of: &self.of,
            against: &self.against,
            than: &self.than,
            expect: &self.expect,
            within: self.within,
            between: self.between,
            trend: &self.trend,
            statistic: &self.statistic,
            aggregate: &self.aggregate,
            pooled_because: &self.pooled_because,
            min_pairs: self.min_pairs,
            single_runs_exact: false,
        }
        .parse(None)
        .map(Some)
    }

    /// The source's number.
    pub fn published(&self) -> Result<Option<Published>, KeyError> {
        self.published
            .as_ref()
            .map(PublishedSpec::parse)
            .transpose()
            .map_err(|w| ("published", w))
    }

    /// The tolerance on `published`: the claim's own, else the project default.
    pub fn tolerance(&self) -> Option<f64> {
        let published = self.published().ok().flatten()?;
        self.tolerance.or_else(|| published.default_tolerance())
    }
}

impl Plan {
    /// The checks of the plan as it ran: `[[checks]]`, then the deprecated
    /// `[[findings]]` read as checks.
    pub fn all_checks(&self) -> Vec<CheckSpec> {
        let mut checks = self.checks.clone();
        checks.extend(self.findings.iter().map(|f| f.as_check(self.repetitions)));
        checks
    }

    /// Why a quick run leaves statement `name` out (`[quick] skip`, or the deprecated
    /// `skip_findings`), when this is the plan as a quick run ran it.
    pub fn quick_skip_reason(&self, name: &str) -> Option<String> {
        if !self.quick_run {
            return None;
        }
        let reason = match self.quick.skip.get(name) {
            Some(r) => r.trim(),
            None if self.quick.skip_findings.iter().any(|n| n == name) => "",
            None => return None,
        };
        Some(if reason.is_empty() {
            "left out of quick (no reason given)".into()
        } else {
            format!("left out of quick: {reason}")
        })
    }

    /// Whether the plan states its comparisons in the current schema.
    pub fn uses_statements(&self) -> bool {
        !self.claims.is_empty() || !self.checks.is_empty()
    }
}
