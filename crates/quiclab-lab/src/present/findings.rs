//! Findings: a plan's claims about *directions*, checked against its own results. A
//! seed document rarely gives a curve to match point by point; it says "1:10 costs 6.2%
//! of the throughput of 1:1" or "WFC recovers faster than IACK". A finding compares one
//! metric between two groups of points (`of` against `against`, paired on every other
//! axis), reports the relative change next to the seed's number, and says whether the
//! expected direction holds. The report renders them and writes `findings.csv`, which
//! tests read to assert each finding.

use crate::csv::{csv_field, row_matches, CsvError, Table};
use crate::plan::{Expect, FindingSpec, Plan};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A finding evaluated on a summary.
#[derive(Clone, Debug, PartialEq)]
pub struct FindingResult {
    pub spec: FindingSpec,
    /// Pairs of points with a mean on both sides.
    pub pairs: usize,
    /// Mean, min and max over pairs of (mean of / mean against - 1); `None` without pairs.
    pub change: Option<(f64, f64, f64)>,
    /// Whether `expect` holds for the mean change; `None` without pairs.
    pub holds: Option<bool>,
}

/// Evaluates every finding of `plan` on `summary` (a `summary.csv`).
pub fn evaluate(plan: &Plan, summary: &Table) -> Result<Vec<FindingResult>, CsvError> {
    plan.findings
        .iter()
        .map(|f| evaluate_one(plan, summary, f))
        .collect()
}

fn evaluate_one(plan: &Plan, summary: &Table, f: &FindingSpec) -> Result<FindingResult, CsvError> {
    let mean_col = summary.require(&format!("{}_mean", f.metric))?;
    // Points pair up on the axes neither filter names.
    let other: Vec<usize> = plan
        .axes
        .iter()
        .filter(|a| !f.of.contains_key(&a.name) && !f.against.contains_key(&a.name))
        .map(|a| summary.require(&a.name))
        .collect::<Result<_, _>>()?;
    let key = |row: usize| -> Vec<String> {
        other
            .iter()
            .map(|&c| summary.get(row, c).unwrap_or("").to_string())
            .collect()
    };
    let vs_expected = f.against.is_empty();
    let expected_col = if vs_expected {
        Some(summary.require(&format!("{}_expected", f.metric))?)
    } else {
        None
    };
    let mut against: BTreeMap<Vec<String>, f64> = BTreeMap::new();
    for row in 0..summary.rows.len() {
        if !vs_expected && row_matches(summary, row, &f.against)? {
            if let Some(m) = summary.f64_at(row, mean_col)? {
                against.insert(key(row), m);
            }
        }
    }
    let mut changes = Vec::new();
    for row in 0..summary.rows.len() {
        if !row_matches(summary, row, &f.of)? {
            continue;
        }
        let base = match expected_col {
            Some(c) => summary.f64_at(row, c)?,
            None => against.get(&key(row)).copied(),
        };
        let (Some(m), Some(base)) = (summary.f64_at(row, mean_col)?, base) else {
            continue;
        };
        if base != 0.0 && m.is_finite() && base.is_finite() {
            changes.push(m / base - 1.0);
        }
    }
    let change = (!changes.is_empty()).then(|| {
        let mean = changes.iter().sum::<f64>() / changes.len() as f64;
        let min = changes.iter().copied().fold(f64::INFINITY, f64::min);
        let max = changes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (mean, min, max)
    });
    // Validation parsed `expect` at load time; a hand-edited results dir may not have.
    let holds = match (change, Expect::parse(&f.expect)) {
        (Some((mean, _, _)), Ok(e)) => Some(e.holds(mean)),
        _ => None,
    };
    Ok(FindingResult {
        spec: f.clone(),
        pairs: changes.len(),
        change,
        holds,
    })
}

/// `findings.csv`: one row per finding (changes as fractions; empty when no data).
pub fn findings_csv(results: &[FindingResult]) -> String {
    let mut s = String::from(
        "name,metric,pairs,change_mean,change_min,change_max,published,expect,holds,claim\n",
    );
    for r in results {
        let (mean, min, max) = match r.change {
            Some((a, b, c)) => (a.to_string(), b.to_string(), c.to_string()),
            None => Default::default(),
        };
        let _ = writeln!(
            s,
            "{},{},{},{mean},{min},{max},{},{},{},{}",
            csv_field(&r.spec.name),
            csv_field(&r.spec.metric),
            r.pairs,
            r.spec.published.map(|p| p.to_string()).unwrap_or_default(),
            csv_field(&r.spec.expect),
            r.holds.map(|h| h.to_string()).unwrap_or_default(),
            csv_field(&r.spec.claim),
        );
    }
    s
}

/// "3 of 3 findings hold" (plus findings without data), or `None` for a plan without.
pub fn verdict(results: &[FindingResult]) -> Option<String> {
    if results.is_empty() {
        return None;
    }
    let holding = results.iter().filter(|r| r.holds == Some(true)).count();
    let missing = results.iter().filter(|r| r.holds.is_none()).count();
    let mut line = format!("{holding} of {} findings hold", results.len());
    if missing > 0 {
        let _ = write!(line, " ({missing} without data)");
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::parse;

    fn plan(findings: &str) -> Plan {
        let text = format!(
            r#"
name = "t"
title = "t"
question = "q"
base = "b.toml"
master_seed = 1
[[axes]]
name = "ratio"
values = [1, 10]
[[axes]]
name = "rtt"
values = [10, 20]
[metrics]
tp = "x"
{findings}
"#
        );
        toml::from_str(&text).unwrap()
    }

    const SUMMARY: &str =
        "point,ratio,rtt,tp_mean\n0,1,10,100\n1,1,20,50\n2,10,10,90\n3,10,20,40\n";

    #[test]
    fn pairs_on_the_other_axes_and_averages_the_change() {
        let p = plan(
            r#"[[findings]]
name = "r10"
claim = "1:10 is slower"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
published = -0.062
expect = "lower""#,
        );
        let t = parse(SUMMARY, "summary.csv").unwrap();
        let r = evaluate(&p, &t).unwrap();
        assert_eq!(r[0].pairs, 2);
        let (mean, min, max) = r[0].change.unwrap();
        assert!((min - -0.2).abs() < 1e-12 && (max - -0.1).abs() < 1e-12);
        assert!((mean - -0.15).abs() < 1e-12);
        assert_eq!(r[0].holds, Some(true));
        assert_eq!(verdict(&r).unwrap(), "1 of 1 findings hold");
        let csv = findings_csv(&r);
        assert!(csv.contains("r10,tp,2,"), "{csv}");
        assert!(csv.contains(",-0.062,lower,true,1:10 is slower"), "{csv}");
    }

    #[test]
    fn a_bound_that_fails_is_reported_as_not_holding() {
        let p = plan(
            r#"[[findings]]
name = "r10"
claim = "1:10 costs more than a third"
metric = "tp"
of = { ratio = 10, rtt = 10 }
against = { ratio = 1, rtt = 10 }
expect = "< -0.333""#,
        );
        let t = parse(SUMMARY, "summary.csv").unwrap();
        let r = evaluate(&p, &t).unwrap();
        assert_eq!(r[0].pairs, 1);
        assert_eq!(r[0].holds, Some(false));
    }

    #[test]
    fn no_matching_points_means_no_data() {
        let p = plan(
            r#"[[findings]]
name = "none"
claim = "c"
metric = "tp"
of = { ratio = 2 }
against = { ratio = 1 }
expect = "higher""#,
        );
        let t = parse(SUMMARY, "summary.csv").unwrap();
        let r = evaluate(&p, &t).unwrap();
        assert_eq!((r[0].pairs, r[0].holds), (0, None));
        assert_eq!(
            verdict(&r).unwrap(),
            "0 of 1 findings hold (1 without data)"
        );
    }

    #[test]
    fn without_against_compares_with_the_expected_value() {
        let p = plan(
            r#"[[findings]]
name = "vs_model"
claim = "above the model"
metric = "tp"
of = { ratio = 1 }
expect = "> 0.1""#,
        );
        let t = parse(
            "point,ratio,rtt,tp_mean,tp_expected\n0,1,10,120,100\n1,1,20,60,50\n2,10,10,1,100\n",
            "summary.csv",
        )
        .unwrap();
        let r = evaluate(&p, &t).unwrap();
        assert_eq!(r[0].pairs, 2);
        assert!((r[0].change.unwrap().0 - 0.2).abs() < 1e-12);
        assert_eq!(r[0].holds, Some(true));
    }

    #[test]
    fn expect_parses_words_and_bounds() {
        assert_eq!(Expect::parse("lower"), Ok(Expect::Below(0.0)));
        assert_eq!(Expect::parse(" > 0.25 "), Ok(Expect::Above(0.25)));
        assert_eq!(Expect::parse("<-0.667"), Ok(Expect::Below(-0.667)));
        assert!(Expect::parse("smaller").is_err());
        assert!(Expect::parse("< abc").is_err());
        assert!(Expect::Below(0.0).holds(-0.1) && !Expect::Below(0.0).holds(0.0));
    }
}
