//! Findings: a plan's claims, checked against its own runs. A seed document rarely
//! gives a curve to match point by point; it says "1:10 costs 6.2% of the throughput of
//! 1:1" or "WFC recovers faster than IACK". A finding compares one metric between two
//! groups of points (`of` against `against`, or the `of` points against their
//! `[expected]` value), paired on every other axis and on the repetition (the same seed
//! under common random numbers). Each pair gives one relative change; their mean, with
//! its 95% CI, is judged against the claim (`present::verdict`), and the seed's number
//! is compared separately. A pair with a sample missing on one side is reported, never
//! silently dropped. The report renders the results and writes `findings.csv`, which
//! tests and the exit status of `quiclab reproduce` read.

use crate::csv::{self, csv_field, row_matches, CsvError, Table};
use crate::error::LabError;
use crate::plan::claim::{Claim, Published, Verdict};
use crate::plan::load::load_plan;
use crate::plan::{FindingSpec, Plan};
use crate::present::verdict::{judge, Estimate, Sampling};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// A finding evaluated on a plan's runs.
#[derive(Clone, Debug, PartialEq)]
pub struct FindingResult {
    pub spec: FindingSpec,
    /// The parsed claim (`None` only for a hand-edited results directory whose plan
    /// no longer validates; its verdict is then "no data" with the reason).
    pub claim: Option<Claim>,
    /// The relative change over the complete pairs; `None` without any.
    pub estimate: Option<Estimate>,
    pub verdict: Verdict,
    /// Why the verdict is what it is, when that is not plain (too few pairs, missing
    /// samples, mixed single runs).
    pub reason: String,
    /// The seed's number and whether ours agrees with it (CI or single-run range
    /// overlapping the published interval).
    pub published: Option<(Published, bool)>,
}

/// Reads a results directory (its plan as run, `runs.csv` and `summary.csv`) and
/// evaluates the plan's findings.
pub fn evaluate_dir(dir: &Path) -> Result<Vec<FindingResult>, LabError> {
    let plan = load_plan(dir)?;
    if plan.findings.is_empty() {
        return Ok(Vec::new());
    }
    let data = |e: CsvError| LabError::Data {
        file: dir.display().to_string(),
        why: e.to_string(),
    };
    let runs = csv::read(dir.join("runs.csv")).map_err(data)?;
    let summary = csv::read(dir.join("summary.csv")).map_err(data)?;
    evaluate(&plan, &runs, &summary).map_err(data)
}

/// Evaluates every finding of `plan` on its `runs.csv` (one row per run) and
/// `summary.csv` (for `[expected]` values).
pub fn evaluate(
    plan: &Plan,
    runs: &Table,
    summary: &Table,
) -> Result<Vec<FindingResult>, CsvError> {
    plan.findings
        .iter()
        .map(|f| evaluate_one(plan, runs, summary, f))
        .collect()
}

/// One side of a pair: a run's value of the metric, `None` when the run has none.
type Sample = (usize, usize, Option<f64>);

/// The runs of one group (`of`, `against` or `than`), keyed by the values of the axes
/// the finding does not name and by the repetition.
fn group(
    runs: &Table,
    filter: &BTreeMap<String, crate::plan::AxisValue>,
    key_cols: &[usize],
    metric_col: usize,
) -> Result<BTreeMap<Vec<String>, Sample>, CsvError> {
    let (point_col, rep_col) = (runs.require("point")?, runs.require("rep")?);
    let mut out = BTreeMap::new();
    for row in 0..runs.rows.len() {
        if filter.is_empty() || !row_matches(runs, row, filter)? {
            continue;
        }
        let cell = |c: usize| runs.get(row, c).unwrap_or("").to_string();
        let mut key: Vec<String> = key_cols.iter().map(|&c| cell(c)).collect();
        key.push(cell(rep_col));
        let id = |c: usize| cell(c).parse::<usize>().unwrap_or(usize::MAX);
        out.insert(
            key,
            (id(point_col), id(rep_col), runs.f64_at(row, metric_col)?),
        );
    }
    Ok(out)
}

/// The relative changes of a finding, one per complete pair, and the pairs that lack a
/// sample ("point 3 rep 1").
struct Pairs {
    changes: Vec<f64>,
    /// The `of` metric values of the complete pairs (for an absolute published value).
    values: Vec<f64>,
    missing: Vec<String>,
}

fn pairs(plan: &Plan, runs: &Table, summary: &Table, f: &FindingSpec) -> Result<Pairs, CsvError> {
    let metric_col = runs.require(&f.metric)?;
    let key_cols: Vec<usize> = plan
        .axes
        .iter()
        .filter(|a| !f.of.contains_key(&a.name))
        .map(|a| runs.require(&a.name))
        .collect::<Result<_, _>>()?;
    let of = group(runs, &f.of, &key_cols, metric_col)?;
    let against = group(runs, &f.against, &key_cols, metric_col)?;
    let than = group(runs, &f.than, &key_cols, metric_col)?;
    let expected = expected_by_point(summary, &f.metric, f.against.is_empty())?;
    let mut p = Pairs {
        changes: Vec::new(),
        values: Vec::new(),
        missing: Vec::new(),
    };
    for (key, &(point, rep, a)) in &of {
        let base = if f.against.is_empty() {
            expected.get(&point).copied().flatten()
        } else {
            against.get(key).and_then(|s| s.2)
        };
        let change = match (a, base) {
            (Some(a), Some(c)) if c != 0.0 && a.is_finite() && c.is_finite() => {
                if f.than.is_empty() {
                    Some((a, a / c - 1.0))
                } else {
                    // Two effects: (a/c - 1) - (b/c - 1) = (a - b) / c.
                    than.get(key).and_then(|s| s.2).map(|b| (a, (a - b) / c))
                }
            }
            _ => None,
        };
        match change {
            Some((a, change)) => {
                p.changes.push(change);
                p.values.push(a);
            }
            None => p.missing.push(format!("point {point} rep {rep}")),
        }
    }
    Ok(p)
}

/// `{metric}_expected` per point, when the finding compares with `[expected]`.
fn expected_by_point(
    summary: &Table,
    metric: &str,
    needed: bool,
) -> Result<BTreeMap<usize, Option<f64>>, CsvError> {
    let mut out = BTreeMap::new();
    if !needed {
        return Ok(out);
    }
    let (point_col, col) = (
        summary.require("point")?,
        summary.require(&format!("{metric}_expected"))?,
    );
    for row in 0..summary.rows.len() {
        if let Some(point) = summary.get(row, point_col).and_then(|p| p.parse().ok()) {
            out.insert(point, summary.f64_at(row, col)?);
        }
    }
    Ok(out)
}

fn evaluate_one(
    plan: &Plan,
    runs: &Table,
    summary: &Table,
    f: &FindingSpec,
) -> Result<FindingResult, CsvError> {
    let published = f.parsed_published().ok().flatten();
    let mut result = FindingResult {
        spec: f.clone(),
        claim: f.parsed_claim().ok(),
        estimate: None,
        verdict: Verdict::NoData,
        reason: String::new(),
        published: None,
    };
    if plan.quick_run && plan.quick.skip_findings.contains(&f.name) {
        result.verdict = Verdict::LeftOut;
        result.reason = "left out of the quick run by [quick] skip_findings".into();
        return Ok(result);
    }
    let Some(claim) = result.claim else {
        result.reason = "the claim does not parse".into();
        return Ok(result);
    };
    let p = pairs(plan, runs, summary, f)?;
    let sampling = if plan.repetitions > 1 {
        Sampling::Paired
    } else {
        Sampling::SingleRun
    };
    result.estimate = Estimate::of(&p.changes, sampling);
    let (verdict, reason) = judge(
        claim,
        result.estimate.as_ref(),
        f.min_pairs.unwrap_or(plan.min_pairs),
    );
    (result.verdict, result.reason) = (verdict, reason);
    if !p.missing.is_empty() {
        // A paired comparison with holes is an error, not a smaller sample.
        result.verdict = Verdict::NoData;
        let shown: Vec<&str> = p.missing.iter().take(5).map(String::as_str).collect();
        result.reason = format!(
            "{} of {} pairs lack a sample ({}{})",
            p.missing.len(),
            p.missing.len() + p.changes.len(),
            shown.join(", "),
            if p.missing.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
    }
    result.published = published.map(|pubd| {
        let ours = match pubd {
            Published::Value { .. } => Estimate::of(&p.values, sampling).map(|e| e.range()),
            _ => result.estimate.map(|e| e.range()),
        };
        let agrees = ours.is_some_and(|r| pubd.agrees_with(r));
        (pubd, agrees)
    });
    Ok(result)
}

/// The counts of each verdict over a plan's findings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub holds: usize,
    pub inconclusive: usize,
    pub fails: usize,
    pub no_data: usize,
    pub left_out: usize,
}

impl Counts {
    pub fn of(results: &[FindingResult]) -> Counts {
        let mut c = Counts::default();
        for r in results {
            *match r.verdict {
                Verdict::Holds => &mut c.holds,
                Verdict::Inconclusive => &mut c.inconclusive,
                Verdict::Fails => &mut c.fails,
                Verdict::NoData => &mut c.no_data,
                Verdict::LeftOut => &mut c.left_out,
            } += 1;
        }
        c
    }

    /// Findings that fail or have no data: these make a reproduction exit non-zero.
    pub fn failures(&self) -> usize {
        self.fails + self.no_data
    }

    pub fn add(&mut self, o: Counts) {
        self.holds += o.holds;
        self.inconclusive += o.inconclusive;
        self.fails += o.fails;
        self.no_data += o.no_data;
        self.left_out += o.left_out;
    }
}

impl std::fmt::Display for Counts {
    /// "3 hold, 1 inconclusive, 0 fail, 0 no data" (and ", 2 left out (quick)").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hold, {} inconclusive, {} fail, {} no data",
            self.holds, self.inconclusive, self.fails, self.no_data
        )?;
        if self.left_out > 0 {
            write!(f, ", {} left out (quick)", self.left_out)?;
        }
        Ok(())
    }
}

/// The findings of several results directories: their counts, and one line per
/// finding that fails or has no data ("dir: name: verdict (reason)"). This is what
/// decides the exit status of `quiclab reproduce` and `quiclab lab run`.
pub fn gate(dirs: &[std::path::PathBuf]) -> Result<(Counts, Vec<String>), LabError> {
    let mut counts = Counts::default();
    let mut failing = Vec::new();
    for dir in dirs {
        let found = evaluate_dir(dir)?;
        counts.add(Counts::of(&found));
        for r in found.iter().filter(|r| r.verdict.is_failure()) {
            let mut line = format!("{}: {}: {}", dir.display(), r.spec.name, r.verdict.as_str());
            if !r.reason.is_empty() {
                let _ = write!(line, " ({})", r.reason);
            }
            failing.push(line);
        }
    }
    Ok((counts, failing))
}

/// `findings.csv`: one row per finding. Changes are fractions; cells are empty where a
/// value does not exist (no CI for single runs, no published number).
pub fn findings_csv(results: &[FindingResult]) -> String {
    let mut s = String::from(
        "name,metric,verdict,sampling,pairs,change_mean,ci_lo,ci_hi,change_min,change_max,\
         claimed,published,published_agrees,reason,claim\n",
    );
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in results {
        let e = r.estimate;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.spec.name),
            csv_field(&r.spec.metric),
            csv_field(r.verdict.as_str()),
            match e.map(|e| e.sampling) {
                Some(Sampling::Paired) => "paired",
                Some(Sampling::SingleRun) => "single run",
                None => "",
            },
            e.map_or(0, |e| e.n),
            num(e.map(|e| e.mean)),
            num(e.and_then(|e| e.ci).map(|c| c.0)),
            num(e.and_then(|e| e.ci).map(|c| c.1)),
            num(e.map(|e| e.min)),
            num(e.map(|e| e.max)),
            csv_field(&r.claim.map(Claim::describe).unwrap_or_default()),
            csv_field(
                &r.published
                    .as_ref()
                    .map(|p| p.0.describe())
                    .unwrap_or_default()
            ),
            r.published
                .as_ref()
                .map(|p| p.1.to_string())
                .unwrap_or_default(),
            csv_field(&r.reason),
            csv_field(&r.spec.claim),
        );
    }
    s
}

/// "Findings: 3 hold, 1 inconclusive, 0 fail, 0 no data", or `None` for a plan without.
pub fn verdict(results: &[FindingResult]) -> Option<String> {
    (!results.is_empty()).then(|| format!("findings: {}", Counts::of(results)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::parse;

    fn plan(reps: u32, findings: &str) -> Plan {
        let text = format!(
            r#"
name = "t"
title = "t"
question = "q"
base = "b.toml"
master_seed = 1
repetitions = {reps}
[[axes]]
name = "ratio"
values = [1, 2, 10]
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

    /// runs.csv rows "point,rep,ratio,rtt,tp" from (ratio, rtt, [tp per rep]).
    fn runs(points: &[(u32, u32, &[&str])]) -> Table {
        let mut t = String::from("point,rep,ratio,rtt,tp\n");
        for (i, (ratio, rtt, tps)) in points.iter().enumerate() {
            for (rep, tp) in tps.iter().enumerate() {
                t += &format!("{i},{rep},{ratio},{rtt},{tp}\n");
            }
        }
        parse(&t, "runs.csv").unwrap()
    }

    fn no_summary() -> Table {
        parse("point\n", "summary.csv").unwrap()
    }

    const R10: &str = r#"[[findings]]
name = "r10"
claim = "1:10 is slower"
metric = "tp"
of = { ratio = 10 }
against = { ratio = 1 }
published = -0.062
expect = "lower""#;

    #[test]
    fn single_runs_pair_on_the_other_axes() {
        let t = runs(&[
            (1, 10, &["100"]),
            (1, 20, &["50"]),
            (10, 10, &["90"]),
            (10, 20, &["40"]),
        ]);
        let r = evaluate(&plan(1, R10), &t, &no_summary()).unwrap();
        let e = r[0].estimate.unwrap();
        assert_eq!((e.n, e.sampling, e.ci), (2, Sampling::SingleRun, None));
        assert!((e.mean - -0.15).abs() < 1e-12);
        assert!((e.min - -0.2).abs() < 1e-12 && (e.max - -0.1).abs() < 1e-12);
        assert_eq!(r[0].verdict, Verdict::Holds);
        // Ours is -10%..-20%: the seed's -6.2% is outside.
        assert_eq!(r[0].published.as_ref().map(|p| p.1), Some(false));
        assert_eq!(
            verdict(&r).unwrap(),
            "findings: 1 hold, 0 inconclusive, 0 fail, 0 no data"
        );
        let csv = findings_csv(&r);
        assert!(csv.contains("r10,tp,holds,single run,2,"), "{csv}");
        assert!(csv.contains(",< 0%,-6.2%,false,,1:10 is slower"), "{csv}");
    }

    #[test]
    fn repetitions_pair_by_rep_and_the_ci_decides() {
        // Per rep: -1%, -2%, +0.5%, ... straddles zero: inconclusive, though the mean is lower.
        let t = runs(&[
            (1, 10, &["100", "100", "100"]),
            (1, 20, &["100", "100", "100"]),
            (10, 10, &["99", "98", "100.5"]),
            (10, 20, &["99.5", "101", "99"]),
        ]);
        let r = evaluate(&plan(3, R10), &t, &no_summary()).unwrap();
        let e = r[0].estimate.unwrap();
        assert_eq!((e.n, e.sampling), (6, Sampling::Paired));
        assert!(e.mean < 0.0 && e.ci.unwrap().1 > 0.0);
        assert_eq!(r[0].verdict, Verdict::Inconclusive);
        // Clearly lower at every rep: holds.
        let t = runs(&[
            (1, 10, &["100", "100", "100"]),
            (1, 20, &["100", "100", "100"]),
            (10, 10, &["90", "91", "89"]),
            (10, 20, &["90", "92", "90"]),
        ]);
        let r = evaluate(&plan(3, R10), &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::Holds);
        // The seed's -6.2% is outside our CI (about -9.7% +- 1%).
        assert_eq!(r[0].published.as_ref().map(|p| p.1), Some(false));
    }

    #[test]
    fn a_missing_sample_is_reported_not_dropped() {
        let t = runs(&[
            (1, 10, &["100", "100", "100"]),
            (1, 20, &["100", "", "100"]),
            (10, 10, &["90", "91", "89"]),
            (10, 20, &["90", "92", "90"]),
        ]);
        let r = evaluate(&plan(3, R10), &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::NoData);
        assert!(
            r[0].reason
                .contains("1 of 6 pairs lack a sample (point 3 rep 1)"),
            "{}",
            r[0].reason
        );
        assert_eq!(r[0].estimate.unwrap().n, 5);
    }

    #[test]
    fn the_same_first_pto_fails_when_one_is_50_percent_higher() {
        let same = r#"[[findings]]
name = "same_pto"
claim = "the same within 1%"
metric = "tp"
of = { ratio = 2 }
against = { ratio = 1 }
within = 0.01"#;
        let t = runs(&[
            (1, 10, &["27"]),
            (1, 20, &["57"]),
            (2, 10, &["40.5"]),
            (2, 20, &["85.5"]),
        ]);
        let r = evaluate(&plan(1, same), &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::Fails);
        let t = runs(&[
            (1, 10, &["27"]),
            (1, 20, &["57"]),
            (2, 10, &["27"]),
            (2, 20, &["57"]),
        ]);
        let r = evaluate(&plan(1, same), &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::Holds);
    }

    #[test]
    fn two_effects_compare_against_the_same_baseline() {
        let more = r#"[[findings]]
name = "r10_more_than_r2"
claim = "1:10 loses more than 1:2"
metric = "tp"
of = { ratio = 10 }
than = { ratio = 2 }
against = { ratio = 1 }
expect = "lower""#;
        let t = runs(&[
            (1, 10, &["100"]),
            (1, 20, &["50"]),
            (2, 10, &["99"]),
            (2, 20, &["49"]),
            (10, 10, &["90"]),
            (10, 20, &["45"]),
        ]);
        let r = evaluate(&plan(1, more), &t, &no_summary()).unwrap();
        let e = r[0].estimate.unwrap();
        // (90 - 99) / 100 and (45 - 49) / 50.
        assert!((e.min - -0.09).abs() < 1e-12 && (e.max - -0.08).abs() < 1e-12);
        assert_eq!(r[0].verdict, Verdict::Holds);
    }

    #[test]
    fn without_against_compares_with_the_expected_value() {
        let p = plan(
            1,
            r#"[[findings]]
name = "vs_model"
claim = "above the model"
metric = "tp"
of = { ratio = 1 }
published = { between = [0.25, 0.5] }
expect = "> 0.1""#,
        );
        let t = runs(&[(1, 10, &["120"]), (1, 20, &["60"]), (10, 10, &["1"])]);
        let summary = parse("point,tp_expected\n0,100\n1,50\n2,100\n", "summary.csv").unwrap();
        let r = evaluate(&p, &t, &summary).unwrap();
        assert!((r[0].estimate.unwrap().mean - 0.2).abs() < 1e-12);
        assert_eq!(r[0].verdict, Verdict::Holds);
        assert_eq!(r[0].published.as_ref().map(|p| p.1), Some(false));
    }

    #[test]
    fn no_runs_is_no_data_and_quick_can_leave_a_finding_out() {
        let t = runs(&[(1, 10, &["100"])]);
        let mut p = plan(1, R10);
        let r = evaluate(&p, &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::NoData);
        assert!(Counts::of(&r).failures() == 1);
        p.quick.skip_findings = vec!["r10".into()];
        p.quick_run = true;
        let r = evaluate(&p, &t, &no_summary()).unwrap();
        assert_eq!(r[0].verdict, Verdict::LeftOut);
        assert_eq!(Counts::of(&r).failures(), 0);
        assert!(verdict(&r).unwrap().ends_with("1 left out (quick)"));
    }
}
