//! A plan's claims and checks evaluated on its runs (docs/CLAIMS.md): each statement's
//! pairs ([`samples`](crate::present::samples)), estimates
//! ([`estimate`](crate::present::estimate)) and verdicts at every point
//! ([`judge`](crate::present::judge)), then one status per claim and one verdict per
//! check. Claims never gate; a check that does not hold (fails, is inconclusive, has no
//! data) makes `quiclab reproduce` and `lab run` exit non-zero ([`gate`]).

use crate::csv::{self, CsvError, Table};
use crate::error::LabError;
use crate::plan::comparison::{Comparison, Published};
use crate::plan::load::load_plan;
use crate::plan::statement::{CheckSpec, ClaimSpec};
use crate::plan::Plan;
use crate::present::judge::{claim_status, judge_points, ClaimStatus, PointResult, Verdict};
use crate::present::samples::collect;
use crate::present::sources::{source_order, source_title};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A check's verdict over all its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckVerdict {
    Holds,
    Inconclusive,
    Fails,
    /// No pairs, or pairs lacking a sample.
    NoData,
    /// Left out of a quick run by `[quick] skip`.
    NotRun,
}

impl CheckVerdict {
    pub const ALL: [CheckVerdict; 5] = [
        CheckVerdict::Holds,
        CheckVerdict::Fails,
        CheckVerdict::Inconclusive,
        CheckVerdict::NoData,
        CheckVerdict::NotRun,
    ];

    /// The word in reports, `checks.csv` and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckVerdict::Holds => "holds",
            CheckVerdict::Inconclusive => "inconclusive",
            CheckVerdict::Fails => "fails",
            CheckVerdict::NoData => "no data",
            CheckVerdict::NotRun => "not run",
        }
    }

    /// Whether it fails the run: everything but "holds" and "not run" (left out of a
    /// quick run on purpose).
    pub fn is_failure(self) -> bool {
        !matches!(self, CheckVerdict::Holds | CheckVerdict::NotRun)
    }
}

/// What judging a statement's comparison found.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Judged {
    /// `None` for a claim that is not run and names no comparison, or a plan that no
    /// longer validates.
    pub comparison: Option<Comparison>,
    /// One per point (one when pooled).
    pub points: Vec<PointResult>,
}

/// A claim evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimResult {
    pub spec: ClaimSpec,
    pub published: Option<Published>,
    /// The tolerance applied (the claim's, or the project default).
    pub tolerance: Option<f64>,
    pub judged: Judged,
    /// Per point, parallel to `judged.points` (`None`: no verdict there).
    pub point_status: Vec<Option<ClaimStatus>>,
    pub status: ClaimStatus,
    pub reason: String,
}

/// A check evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    pub spec: CheckSpec,
    pub judged: Judged,
    pub verdict: CheckVerdict,
    pub reason: String,
}

/// A plan's statements evaluated.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Evaluation {
    pub claims: Vec<ClaimResult>,
    pub checks: Vec<CheckResult>,
}

impl Evaluation {
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.checks.is_empty()
    }
}

/// Reads a results directory (its plan as run, `runs.csv` and `summary.csv`) and
/// evaluates the plan's statements.
pub fn evaluate_dir(dir: &Path) -> Result<Evaluation, LabError> {
    let plan = load_plan(dir)?;
    if !plan.uses_statements() && plan.findings.is_empty() {
        return Ok(Evaluation::default());
    }
    let data = |e: CsvError| LabError::Data {
        file: dir.display().to_string(),
        why: e.to_string(),
    };
    let runs = csv::read(dir.join("runs.csv")).map_err(data)?;
    let summary = csv::read(dir.join("summary.csv")).map_err(data)?;
    evaluate(&plan, &runs, &summary).map_err(data)
}

/// Evaluates every statement of `plan` (the plan as it ran) on its `runs.csv` and
/// `summary.csv`.
pub fn evaluate(plan: &Plan, runs: &Table, summary: &Table) -> Result<Evaluation, CsvError> {
    let claims = plan
        .claims
        .iter()
        .map(|c| evaluate_claim(plan, runs, summary, c))
        .collect::<Result<_, _>>()?;
    let checks = plan
        .all_checks()
        .into_iter()
        .map(|c| evaluate_check(plan, runs, summary, c))
        .collect::<Result<_, _>>()?;
    Ok(Evaluation { claims, checks })
}

/// Why a statement was not judged ("not run" / "no data"), or its judgement.
enum Outcome {
    NotJudged(String),
    Judged(Judged),
}

/// The judgement of one comparison, unless it is left out of quick, has no pairs or
/// has pairs lacking a sample.
fn judge(
    plan: &Plan,
    runs: &Table,
    summary: &Table,
    name: &str,
    cmp: Comparison,
) -> Result<Outcome, CsvError> {
    if let Some(reason) = plan.quick_skip_reason(name) {
        return Ok(Outcome::NotJudged(reason));
    }
    let collected = collect(plan, &cmp, runs, summary)?;
    if !collected.missing.is_empty() {
        let m = &collected.missing;
        let total: usize = m.len()
            + collected
                .groups
                .iter()
                .flat_map(|g| &g.cells)
                .map(|c| c.pairs.len())
                .sum::<usize>();
        let shown: Vec<&str> = m.iter().take(5).map(String::as_str).collect();
        let more = if m.len() > shown.len() { ", ..." } else { "" };
        return Ok(Outcome::NotJudged(format!(
            "{} of {total} pairs lack a sample ({}{more})",
            m.len(),
            shown.join(", ")
        )));
    }
    if collected.groups.is_empty() {
        return Ok(Outcome::NotJudged("no runs at its points".into()));
    }
    let points = judge_points(&cmp, &collected, plan.min_pairs);
    Ok(Outcome::Judged(Judged {
        comparison: Some(cmp),
        points,
    }))
}

fn evaluate_check(
    plan: &Plan,
    runs: &Table,
    summary: &Table,
    spec: CheckSpec,
) -> Result<CheckResult, CsvError> {
    let mut r = CheckResult {
        spec,
        judged: Judged::default(),
        verdict: CheckVerdict::NoData,
        reason: String::new(),
    };
    let cmp = match r.spec.comparison() {
        Ok(c) => c,
        Err((key, why)) => {
            r.reason = format!("{key}: {why}");
            return Ok(r);
        }
    };
    match judge(plan, runs, summary, &r.spec.name, cmp)? {
        Outcome::NotJudged(why) => {
            if plan.quick_skip_reason(&r.spec.name).is_some() {
                r.verdict = CheckVerdict::NotRun;
            }
            r.reason = why;
        }
        Outcome::Judged(j) => {
            let worst = j.points.iter().map(|p| p.verdict).max().flatten();
            let unjudged = j.points.iter().any(|p| p.verdict.is_none());
            r.verdict = match worst {
                _ if unjudged => CheckVerdict::NoData,
                Some(Verdict::Holds) => CheckVerdict::Holds,
                Some(Verdict::Inconclusive) => CheckVerdict::Inconclusive,
                Some(Verdict::Fails) => CheckVerdict::Fails,
                None => CheckVerdict::NoData,
            };
            let words: Vec<Option<&str>> = j
                .points
                .iter()
                .map(|p| p.verdict.map(Verdict::as_str))
                .collect();
            r.reason = points_reason(&j.points, &words, Some("holds"));
            r.judged = j;
        }
    }
    Ok(r)
}

fn evaluate_claim(
    plan: &Plan,
    runs: &Table,
    summary: &Table,
    spec: &ClaimSpec,
) -> Result<ClaimResult, CsvError> {
    let published = spec.published().ok().flatten();
    let mut r = ClaimResult {
        spec: spec.clone(),
        tolerance: spec.tolerance(),
        published,
        judged: Judged::default(),
        point_status: Vec::new(),
        status: ClaimStatus::NotRun,
        reason: String::new(),
    };
    if let Some(why) = &spec.not_run {
        r.reason = why.trim().to_string();
        return Ok(r);
    }
    let cmp = match spec.comparison() {
        Ok(Some(c)) => c,
        Ok(None) => return Ok(r),
        Err((key, why)) => {
            r.reason = format!("{key}: {why}");
            return Ok(r);
        }
    };
    match judge(plan, runs, summary, &spec.name, cmp)? {
        Outcome::NotJudged(why) => r.reason = why,
        Outcome::Judged(j) => {
            r.point_status = j
                .points
                .iter()
                .map(|p| claim_status(p, r.published.as_ref(), r.tolerance))
                .collect();
            if r.point_status.iter().any(Option::is_none) {
                r.reason = points_reason(&j.points, &vec![None; j.points.len()], None);
            } else {
                r.status = r
                    .point_status
                    .iter()
                    .flatten()
                    .copied()
                    .max()
                    .unwrap_or(ClaimStatus::NotRun);
                let words: Vec<Option<&str>> = r
                    .point_status
                    .iter()
                    .map(|s| s.map(ClaimStatus::as_str))
                    .collect();
                r.reason = points_reason(&j.points, &words, Some("reproduced"));
            }
            r.judged = j;
        }
    }
    Ok(r)
}

/// One line naming the points that are not at `best` ("fails at p = 0.05;
/// inconclusive at p = 0.01 (3 pairs, fewer than the 5 required)"), or the reason of
/// a single point. Empty when every point is at `best` and none has a note.
fn points_reason(points: &[PointResult], words: &[Option<&str>], best: Option<&str>) -> String {
    let mut by_word: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (p, w) in points.iter().zip(words) {
        let w = w.unwrap_or("no verdict");
        if Some(w) == best && p.reason.is_empty() {
            continue;
        }
        let mut at = if p.label.is_empty() {
            "the point".to_string()
        } else {
            p.label.clone()
        };
        if !p.reason.is_empty() {
            at = format!("{at} ({})", p.reason);
        }
        by_word.entry(w).or_default().push(at);
    }
    let mut parts: Vec<String> = if points.len() == 1 {
        (!points[0].reason.is_empty())
            .then(|| points[0].reason.clone())
            .into_iter()
            .collect()
    } else {
        by_word
            .into_iter()
            .map(|(w, at)| format!("{w} at {}", at.join("; ")))
            .collect()
    };
    if points.iter().any(|p| p.identical_repetitions) {
        parts.push("repetitions identical: deterministic".into());
    }
    parts.join("; ")
}

/// Counts of checks by verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckCounts(pub BTreeMap<CheckVerdict, usize>);

impl CheckCounts {
    pub fn add(&mut self, v: CheckVerdict) {
        *self.0.entry(v).or_default() += 1;
    }

    pub fn get(&self, v: CheckVerdict) -> usize {
        self.0.get(&v).copied().unwrap_or(0)
    }

    pub fn total(&self) -> usize {
        self.0.values().sum()
    }
}

impl std::fmt::Display for CheckCounts {
    /// "40 hold, 0 fail, 1 inconclusive, 0 no data, 2 not run".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = CheckVerdict::ALL
            .iter()
            .map(|&v| {
                let word = match v {
                    CheckVerdict::Holds => "hold",
                    CheckVerdict::Fails => "fail",
                    other => other.as_str(),
                };
                format!("{} {word}", self.get(v))
            })
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// Counts of claims by status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClaimCounts(pub BTreeMap<ClaimStatus, usize>);

impl ClaimCounts {
    pub fn add(&mut self, s: ClaimStatus) {
        *self.0.entry(s).or_default() += 1;
    }

    pub fn get(&self, s: ClaimStatus) -> usize {
        self.0.get(&s).copied().unwrap_or(0)
    }
}

impl std::fmt::Display for ClaimCounts {
    /// "3 reproduced, 1 direction only, 0 not reproduced, 1 inconclusive, 0 not run".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = ClaimStatus::ALL
            .iter()
            .map(|&s| format!("{} {}", self.get(s), s.as_str()))
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// The statements of several results directories: claim counts per source, check
/// counts, and one line per check that fails the run ("dir: name: verdict (reason)").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gate {
    pub claims: BTreeMap<String, ClaimCounts>,
    pub checks: CheckCounts,
    pub failing: Vec<String>,
}

impl Gate {
    /// Whether any statement was evaluated.
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.checks.total() == 0
    }

    /// What `quiclab reproduce` and `lab run` print: "claims by source:", one line per
    /// source with its counts by status, then "checks: ..." with theirs.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut sources: Vec<&String> = self.claims.keys().collect();
        sources.sort_by(|a, b| source_order(a, b));
        let mut lines = Vec::new();
        if !sources.is_empty() {
            lines.push("claims by source:".to_string());
            for s in sources {
                lines.push(format!("  {}: {}", source_title(s), self.claims[s]));
            }
        }
        if self.checks.total() > 0 {
            lines.push(format!("checks: {}", self.checks));
        }
        lines
    }
}

/// Evaluates the statements of `dirs` for the exit status of `quiclab reproduce` and
/// `lab run` (see [`Gate`]).
pub fn gate(dirs: &[PathBuf]) -> Result<Gate, LabError> {
    let mut g = Gate::default();
    for dir in dirs {
        let e = evaluate_dir(dir)?;
        for c in &e.claims {
            g.claims
                .entry(c.spec.source.clone())
                .or_default()
                .add(c.status);
        }
        for c in &e.checks {
            g.checks.add(c.verdict);
            if c.verdict.is_failure() {
                let mut line =
                    format!("{}: {}: {}", dir.display(), c.spec.name, c.verdict.as_str());
                if !c.reason.is_empty() {
                    line += &format!(" ({})", c.reason);
                }
                g.failing.push(line);
            }
        }
    }
    Ok(g)
}
