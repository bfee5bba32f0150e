//! Judging a statement at each of its points (docs/CLAIMS.md): the test on the 95%
//! interval of the change (exactly, for a deterministic point), then a check's verdict
//! (holds / inconclusive / fails) or a claim's status (reproduced / direction only /
//! inconclusive / not reproduced), the worst point deciding. Pure functions.

use crate::plan::comparison::{Comparison, Published, Test};
use crate::present::estimate::{self, Estimate};
use crate::present::samples::{Collected, Group};

/// The test's outcome at a point (and a check's verdict there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Holds,
    Inconclusive,
    Fails,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Fails => "fails",
        }
    }
}

/// A claim's status at a point or over all (ordered best to worst; "not run" apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClaimStatus {
    Reproduced,
    DirectionOnly,
    Inconclusive,
    NotReproduced,
    NotRun,
}

impl ClaimStatus {
    pub const ALL: [ClaimStatus; 5] = [
        ClaimStatus::Reproduced,
        ClaimStatus::DirectionOnly,
        ClaimStatus::NotReproduced,
        ClaimStatus::Inconclusive,
        ClaimStatus::NotRun,
    ];

    /// The word in reports, `claims.csv` and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Reproduced => "reproduced",
            ClaimStatus::DirectionOnly => "direction only",
            ClaimStatus::Inconclusive => "inconclusive",
            ClaimStatus::NotReproduced => "not reproduced",
            ClaimStatus::NotRun => "not run",
        }
    }

    pub fn parse(s: &str) -> Option<ClaimStatus> {
        ClaimStatus::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// A statement at one of its points.
#[derive(Clone, Debug, PartialEq)]
pub struct PointResult {
    /// The point's axis values ("p = 0.05"), "all points" when pooled, "" for a
    /// statement whose `of` names every axis.
    pub label: String,
    /// The change (a trend: its slope); `None` without a value.
    pub estimate: Option<Estimate>,
    /// The metric's value at the `of` runs (mean, or median for "ratio of medians").
    pub of_value: Option<f64>,
    /// `None` when there is nothing to judge (no value).
    pub verdict: Option<Verdict>,
    /// Why, when the verdict is not plain.
    pub reason: String,
    /// The repetitions came out identical though the plan is not declared
    /// deterministic.
    pub identical_repetitions: bool,
}

/// Judges `cmp` at each group of `collected`; `min_pairs` is the plan's default.
pub fn judge_points(cmp: &Comparison, collected: &Collected, min_pairs: usize) -> Vec<PointResult> {
    let need = cmp.min_pairs.unwrap_or(min_pairs).max(2);
    collected
        .groups
        .iter()
        .map(|g| judge_group(cmp, g, need))
        .collect()
}

fn judge_group(cmp: &Comparison, g: &Group, need: usize) -> PointResult {
    let stat = cmp.statistic;
    let (estimate, of_value) = match &cmp.test {
        Test::Bound(_) => {
            let cell = &g.cells[0];
            (
                estimate::estimate(stat, cell),
                estimate::of_value(stat, &cell.pairs),
            )
        }
        Test::Trend { .. } => (estimate::trend(stat, &g.cells), None),
    };
    let mut r = PointResult {
        label: g.label.clone(),
        estimate,
        of_value,
        verdict: None,
        reason: String::new(),
        identical_repetitions: g.cells.iter().any(|c| c.identical_repetitions),
    };
    let bound = cmp.test.bound();
    let Some(e) = estimate else {
        r.reason = match &cmp.test {
            Test::Trend { axis, .. } => {
                format!("no slope: fewer than two values of {axis} with data")
            }
            Test::Bound(_) => "no value (a zero baseline?)".into(),
        };
        return r;
    };
    r.verdict = Some(if e.is_exact() {
        if bound.satisfied_by(e.value) {
            Verdict::Holds
        } else {
            Verdict::Fails
        }
    } else if e.n < need {
        r.reason = format!("{} pairs, fewer than the {need} required", e.n);
        Verdict::Inconclusive
    } else {
        match e.ci {
            None => {
                r.reason = "no finite interval".into();
                Verdict::Inconclusive
            }
            Some((lo, hi)) => match bound.judge_interval(lo, hi) {
                Some(true) => Verdict::Holds,
                Some(false) => Verdict::Fails,
                None => Verdict::Inconclusive,
            },
        }
    });
    r
}

/// A claim's status at a point: the verdict of its direction, then, where it holds,
/// whether our point estimate lies within `tolerance` of the published number. `None`
/// without a verdict.
pub fn claim_status(
    p: &PointResult,
    published: Option<&Published>,
    tolerance: Option<f64>,
) -> Option<ClaimStatus> {
    Some(match p.verdict? {
        Verdict::Fails => ClaimStatus::NotReproduced,
        Verdict::Inconclusive => ClaimStatus::Inconclusive,
        Verdict::Holds => match (published, tolerance) {
            (Some(pubd), Some(tol)) => {
                let ours = if pubd.is_value() {
                    p.of_value
                } else {
                    p.estimate.map(|e| e.value)
                };
                match ours {
                    Some(x) if pubd.distance(x) <= tol + 1e-12 * tol.abs().max(1.0) => {
                        ClaimStatus::Reproduced
                    }
                    _ => ClaimStatus::DirectionOnly,
                }
            }
            _ => ClaimStatus::Reproduced,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::comparison::{Aggregate, Bound, Statistic};
    use crate::present::estimate::Interval;
    use crate::present::samples::{Cell, Pair};

    fn cmp(test: Test) -> Comparison {
        Comparison {
            metric: "m".into(),
            of: Default::default(),
            against: Default::default(),
            than: Default::default(),
            test,
            statistic: Statistic::MeanOfRatios,
            aggregate: Aggregate::AtEveryPoint,
            min_pairs: None,
            single_runs_exact: false,
        }
    }

    fn group(label: &str, changes: &[f64], exact: bool) -> Group {
        let pairs = changes
            .iter()
            .enumerate()
            .map(|(rep, c)| Pair {
                rep,
                of: 1.0 + c,
                base: 1.0,
                than: None,
            })
            .collect();
        Group {
            label: label.into(),
            cells: vec![Cell {
                x: None,
                x_label: String::new(),
                pairs,
                exact,
                identical_repetitions: false,
            }],
        }
    }

    fn verdicts(test: Test, groups: Vec<Group>) -> Vec<Option<Verdict>> {
        let c = Collected {
            groups,
            missing: vec![],
        };
        judge_points(&cmp(test), &c, 5)
            .iter()
            .map(|p| p.verdict)
            .collect()
    }

    #[test]
    fn the_interval_decides_and_too_few_pairs_are_inconclusive() {
        let lower = Test::Bound(Bound::Below(0.0));
        let v = verdicts(
            lower.clone(),
            vec![
                group("tight", &[-0.011, -0.009, -0.010, -0.012, -0.008], false),
                group("straddles", &[-0.008, 0.001, -0.004, 0.002, -0.006], false),
                group("higher", &[0.05, 0.06, 0.04, 0.05, 0.055], false),
                group("few", &[-0.1, -0.1, -0.11], false),
            ],
        );
        use Verdict::*;
        assert_eq!(
            v,
            vec![
                Some(Holds),
                Some(Inconclusive),
                Some(Fails),
                Some(Inconclusive)
            ]
        );
    }

    #[test]
    fn a_deterministic_point_is_judged_exactly() {
        let lower = Test::Bound(Bound::Below(0.0));
        let v = verdicts(
            lower,
            vec![group("a", &[-0.1], true), group("b", &[0.0], true)],
        );
        assert_eq!(v, vec![Some(Verdict::Holds), Some(Verdict::Fails)]);
    }

    #[test]
    fn claim_status_uses_the_tolerance_on_the_point_estimate() {
        let p = PointResult {
            label: String::new(),
            estimate: Some(Estimate {
                value: 0.04,
                ci: Some((0.01, 0.07)),
                interval: Interval::StudentT,
                n: 10,
            }),
            of_value: Some(2.0),
            verdict: Some(Verdict::Holds),
            reason: String::new(),
            identical_repetitions: false,
        };
        // The seed's -15% against our +4%: the direction may hold, the number does not.
        let seed = Published::Change(-0.15);
        assert_eq!(
            claim_status(&p, Some(&seed), Some(0.0375)),
            Some(ClaimStatus::DirectionOnly)
        );
        let close = Published::Change(0.05);
        assert_eq!(
            claim_status(&p, Some(&close), Some(0.02)),
            Some(ClaimStatus::Reproduced)
        );
        assert_eq!(claim_status(&p, None, None), Some(ClaimStatus::Reproduced));
        let value = Published::Value {
            value: 2.4,
            unit: "s".into(),
        };
        assert_eq!(
            claim_status(&p, Some(&value), Some(0.5)),
            Some(ClaimStatus::Reproduced)
        );
        assert_eq!(
            claim_status(&p, Some(&value), Some(0.3)),
            Some(ClaimStatus::DirectionOnly)
        );
        let fails = PointResult {
            verdict: Some(Verdict::Fails),
            ..p.clone()
        };
        assert_eq!(
            claim_status(&fails, None, None),
            Some(ClaimStatus::NotReproduced)
        );
        let none = PointResult { verdict: None, ..p };
        assert_eq!(claim_status(&none, None, None), None);
    }
}
